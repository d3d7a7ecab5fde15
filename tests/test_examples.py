"""Run each example as a subprocess (small settings) and check its output markers."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def run(script, *args, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env,
                          check=False)
    assert proc.returncode == 0, f"{script} {args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_train_mlp_eager_reaches_90_percent():
    out = run("train_mlp.py")  # the default settings: what the README runs
    assert "epoch    1  loss" in out
    m = re.search(r"final accuracy: ([\d.]+)% \(([\d.]+) s training, eager\)", out)
    assert m, out
    assert float(m.group(1)) > 90.0
    assert float(m.group(2)) < 30.0


def test_train_mlp_compiled_quick():
    out = run("train_mlp.py", "--compile", "--epochs", "3")
    assert "final accuracy:" in out and "compiled)" in out
    m = re.search(r"explain: (\d+) calls, (\d+) compiled hits, (\d+) traces", out)
    assert m, out
    calls, hits, traces = map(int, m.groups())
    assert calls == 30 and traces >= 1 and hits >= 1
    assert "trace 0: recorded because: first call" in out


def test_train_mlp_sgd_quick():
    out = run("train_mlp.py", "--sgd", "--epochs", "2", "--hidden", "16")
    assert "SGD" in out and "final accuracy:" in out


def test_branches():
    out = run("branches.py", "--quick")
    assert "results equal eager on every call" in out
    assert "bool() was True" in out and "bool() was False" in out
    m = re.search(r"summary: (\d+) calls, (\d+) hits, (\d+) traces", out)
    assert m and int(m.group(3)) == 2 and int(m.group(2)) >= 1


def test_dynamic_graphs():
    out = run("dynamic_graphs.py", "--quick", "--compile")
    assert "== 1. loop with a data-dependent trip count ==" in out
    assert "traces (one per trip count)" in out and "results equal eager" in out
    assert "== 2. recursion over a tree ==" in out and "epoch 2: loss" in out
    assert "RNNCell" in out and "GRUCell" in out
    # the compiled sequence step: the same losses, one trace per length, then replays only
    compiled = re.findall(r"compiled \([\d.]+x\): (\d+) traces, (\d+) of (\d+) steps replayed, "
                          r"(\d+) eager; same losses as eager", out)
    assert len(compiled) == 2, out
    for traces, hits, calls, eager_calls in compiled:
        assert int(hits) + int(eager_calls) == int(calls) == 160
        assert int(eager_calls) == int(traces) <= 12  # only the recording calls ran eagerly
    assert out.rstrip().endswith("done")


def test_debugging(tmp_path):
    dot = tmp_path / "g.dot"
    out = run("debugging.py", "--dot", str(dot))
    assert "after layer 1 (ReLU  )" in out
    assert "leaf '0.weight' (8, 4) float32 requires_grad" in out
    assert "Function 'SqrtBackward0' returned" in out
    assert "pairwise_distance_loss" in out
    assert dot.read_text().startswith("digraph")
    assert out.rstrip().endswith("done")


#: the verdicts of a --compile run that kept the compiler's promise (README, "Exactness")
KEPT = (r"same losses and parameters as eager, bit for bit|"
        r"within the stated bound of eager at each of \d+ checked steps")


def _compiled_same_as_eager(out, calls, max_traces=2, bitwise=False, verdict=KEPT):
    """The --compile report line: every step replayed after the recording calls, and the
    run compared with eager's as promised: bit for bit, or (kernels with a transcendental)
    every checked step within the stated bound."""
    m = re.search(r"explain: (\d+) calls, (\d+) compiled hits, (\d+) traces, (\d+) eager "
                  r"fallbacks; (" + verdict + ")$", out, re.M)
    assert m, out
    assert not bitwise or m.group(5).endswith("bit for bit"), out
    if verdict is KEPT:
        assert "DIFFER" not in out and "OUTSIDE THE STATED BOUND" not in out, out
    m = re.search(r"explain: (\d+) calls, (\d+) compiled hits, (\d+) traces, (\d+) eager "
                  r"fallbacks", out)
    n, hits, traces, fallbacks = map(int, m.groups())
    assert n == calls and 1 <= traces <= max_traces and fallbacks == traces and hits == n - traces
    assert "fallback reasons:" not in out


def test_train_cnn_digits():
    pytest.importorskip("sklearn", reason='the digits come with scikit-learn (".[examples]")')
    out = run("train_cnn.py", "--quick", "--compile")
    assert "digits: 1437 train / 360 test images of 8x8" in out
    losses = [float(v) for v in re.findall(r"epoch +\d+  loss ([\d.]+)  test accuracy", out)]
    assert len(losses) == 6 and losses[2] < losses[0], out      # 3 eager + 3 compiled epochs
    accs = re.findall(r"final test accuracy: ([\d.]+)% \([\d.]+ s training, (eager|compiled)",
                      out)
    assert [mode for _, mode in accs] == ["eager", "compiled"], out
    assert all(float(a) > 90.0 for a, _ in accs), out
    _compiled_same_as_eager(out, calls=3 * (1437 // 32))


def test_char_transformer():
    out = run("char_transformer.py", "--quick", "--compile")
    assert re.search(r"text: \d+ characters, \d+ distinct; GPT with 2 blocks", out), out
    steps = re.findall(r"step +(\d+)  train loss ([\d.]+)  val loss ([\d.]+)", out)
    assert [int(s) for s, _, _ in steps] == [20, 40, 20, 40], out   # eager, then compiled
    uniform = float(re.search(r"uniform guess: loss ([\d.]+)", out).group(1))
    assert float(steps[1][1]) < float(steps[0][1]) < uniform, out
    assert float(steps[1][2]) < uniform, out
    # (still its own comparison: losses within rtol 1e-3)
    _compiled_same_as_eager(out, calls=40, verdict="same losses as eager")
    sample = out.split("sample (80 characters, temperature 0.8):\n", 1)[1][:-1]  # print's \n
    assert len(sample) == 81 and sample.startswith("T"), out   # "T" and 80 drawn characters


def test_lstm_sequences():
    out = run("lstm_sequences.py", "--quick", "--compile")
    assert "256 train (8 padded batches), 256 test; LSTM(1, 32)" in out
    losses = [float(v) for v in re.findall(r"epoch +\d+  loss ([\d.]+)  test accuracy", out)]
    assert len(losses) == 16 and losses[7] < 0.8 * losses[0], out   # 8 eager + 8 compiled
    accs = re.findall(r"final test accuracy: ([\d.]+)% \([\d.]+ s training, (eager|compiled)",
                      out)
    assert [mode for _, mode in accs] == ["eager", "compiled"], out
    assert all(float(a) > 55.0 for a, _ in accs), out           # 3 classes: chance is 33%
    # each of the 8 batches traced once (its lengths are in the key), the first one twice
    # (gradients None, then tensors); the later epochs replay only
    _compiled_same_as_eager(out, calls=8 * 8, max_traces=9)


def test_lstm_sequences_default_compile_keeps_the_promise():
    """The README's default --compile run, at its full length (20 epochs): bit for bit
    where the replays ran eager's operations, else every checked step within the bound."""
    out = run("lstm_sequences.py", "--compile", timeout=600)
    assert "512 train (16 padded batches)" in out
    _compiled_same_as_eager(out, calls=20 * 16, max_traces=17)


def test_lstm_sequences_python_tier_bit_for_bit():
    out = run("lstm_sequences.py", "--quick", "--compile", "--backend", "python")
    _compiled_same_as_eager(out, calls=8 * 8, max_traces=9, bitwise=True)


def test_train_cnn_python_tier_bit_for_bit():
    pytest.importorskip("sklearn", reason='the digits come with scikit-learn (".[examples]")')
    out = run("train_cnn.py", "--quick", "--compile", "--backend", "python")
    _compiled_same_as_eager(out, calls=3 * (1437 // 32), bitwise=True)


@pytest.mark.parametrize("script", ["train_mlp.py", "branches.py", "dynamic_graphs.py",
                                    "debugging.py", "train_cnn.py",
                                    "char_transformer.py", "lstm_sequences.py",
                                    "per_sample_grads.py", "train_ddp.py"])
def test_help(script):
    assert "usage:" in run(script, "--help")


def test_per_sample_grads():
    out = run("per_sample_grads.py", "--batch", "8", "--repeat", "2")
    assert "'0.weight': (8, 64, 8)" in out
    m = re.search(r"max difference from a loop of grad: ([\d.e+-]+)", out)
    assert m and float(m.group(1)) < 1e-5, out


# --quick --compile of every example (issue 22): a short run, the compiled computation timed
# against eager and compared with it as the README's "Exactness" promises

def test_train_mlp_quick_compile():
    out = run("train_mlp.py", "--quick", "--compile")
    accs = re.findall(r"final accuracy: [\d.]+% \([\d.]+ s training, (eager|compiled)\)", out)
    assert accs == ["eager", "compiled"], out
    assert re.search(r"timings: eager [\d.]+ s, compiled [\d.]+ s", out), out
    _compiled_same_as_eager(out, calls=3 * 10)


def test_branches_compile():
    out = run("branches.py", "--quick", "--compile")
    assert "results equal eager on every call" in out
    assert re.search(r"eager [\d.]+ us per call, compiled [\d.]+ us per call", out), out
    assert re.search(r"compared: (same results as eager on all 20 calls, bit for bit|"
                     r"within the stated bound of eager on all 20 calls)", out), out


def test_debugging_compile():
    out = run("debugging.py", "--quick", "--compile")
    assert "== 5. the same loss and gradients compiled (20 calls each) ==" in out
    assert re.search(r"eager [\d.]+ us per call, compiled [\d.]+ us per call", out), out
    assert re.search(r"compared: (same loss and gradients as eager, bit for bit|not eager's "
                     r"bits .*within the stated bound at each of \d+ calls)", out), out
    assert out.rstrip().endswith("done")


def test_per_sample_grads_quick_compile():
    out = run("per_sample_grads.py", "--quick", "--compile")
    assert "'0.weight': (16, 64, 8)" in out
    m = re.search(r"compiled by hand: max difference from vmap\(grad\): ([\d.e+-]+)", out)
    assert m and float(m.group(1)) < 1e-5, out
    assert re.search(r"by hand: eager [\d.]+ ms, compiled [\d.]+ ms", out), out
    m = re.search(r"explain: (\d+) calls, (\d+) compiled hits, (\d+) traces, (\d+) eager "
                  r"fallbacks; (same gradients as eager, bit for bit|within the stated bound "
                  r"of eager at each of \d+ checked calls)", out)
    assert m and int(m.group(3)) == 1 and int(m.group(2)) == int(m.group(1)) - 1, out


def test_train_ddp_quick_compile_on_two_ranks():
    pytest.importorskip("mpi4py", reason='MPI comes with the ".[distributed]" extra')
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(mpiexec):
        pytest.skip("mpiexec not found next to python")
    if any(k.startswith(("PMI_", "OMPI_COMM_WORLD")) for k in os.environ):
        pytest.skip("already inside an MPI job")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "HYDRA_"))}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([mpiexec, "-n", "2", sys.executable,
                           os.path.join(EXAMPLES, "train_ddp.py"), "--quick", "--compile"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=env,
                          check=False)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "batch 100 (2 ranks x 50), 3 epochs" in out
    assert len(re.findall(r"epoch +\d+ +loss", out)) == 2, out   # epochs 1 and 3, eager only
    accs = re.findall(r"final accuracy: [\d.]+% \([\d.]+ s training, (eager|compiled), 2 "
                      r"ranks\)", out)
    assert accs == ["eager", "compiled"], out
    _compiled_same_as_eager(out, calls=3 * 10,
                            verdict=KEPT.replace("bit for bit", "bit for bit \\(every rank\\)")
                            .replace("steps", "steps \\(.*\\)"))
