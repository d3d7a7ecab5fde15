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


@pytest.mark.parametrize("script", ["train_mlp.py", "branches.py", "dynamic_graphs.py",
                                    "debugging.py"])
def test_help(script):
    assert "usage:" in run(script, "--help")


def test_per_sample_grads():
    out = run("per_sample_grads.py", "--batch", "8", "--repeat", "2")
    assert "'0.weight': (8, 64, 8)" in out
    m = re.search(r"max difference from a loop of grad: ([\d.e+-]+)", out)
    assert m and float(m.group(1)) < 1e-5, out
