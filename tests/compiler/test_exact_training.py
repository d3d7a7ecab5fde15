"""The generated-Python tier computes eager's bits: whole training steps (forward,
backward, optimizer) of the examples' models, compiled with ``backend="python"``, give
the same losses and parameters as eager, bit for bit, step after step."""

import math
import os
import sys

import numpy as np
import pytest

import eager as torch
from compiler import compile, wait
from eager import nn, optim

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")


def _examples():
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)


def _train(make, batches, order, compiled, lr, max_traces=8):
    torch.manual_seed(0)
    model = make()
    opt = optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()

    def train_step(*batch):
        opt.zero_grad()
        loss = loss_fn(model(*batch[:-1]), batch[-1])
        loss.backward()
        opt.step()
        return loss

    step = compile(train_step, backend="python", max_traces=max_traces) if compiled \
        else train_step
    losses, params = [], []
    for k, i in enumerate(order):
        losses.append(step(*batches[i]).item())
        params.append([p.detach().numpy().copy() for p in model.parameters()])
        if compiled and k == len(batches):
            wait()
    return losses, params, step


def _assert_bitwise(eager, compiled):
    le, pe, _ = eager
    lc, pc, step = compiled
    for k in range(len(le)):
        assert le[k] == lc[k], f"loss of step {k}: eager {le[k]!r}, compiled {lc[k]!r}"
        for j, (a, b) in enumerate(zip(pe[k], pc[k])):
            assert np.array_equal(a, b), \
                f"parameter {j} after step {k}: {(a != b).sum()} of {a.size} elements differ"
    s = step.stats()
    assert s["hits"] > s["traces"], s   # the comparison covered replays, not just traces


def test_lstm_training_python_tier_bitwise():
    _examples()
    import lstm_sequences as L
    seqs, labels = L.make_sequences(128, 0)
    batches = L.make_batches(seqs, labels, 32)           # 4 batches, 4 lengths lists
    order = [i for e in range(4) for i in np.random.default_rng(e).permutation(4)]
    args = (lambda: L.SequenceClassifier(16), batches, order)
    _assert_bitwise(_train(*args, False, 0.02), _train(*args, True, 0.02, max_traces=6))


def test_cnn_training_python_tier_bitwise():
    _examples()
    import train_cnn as C
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.random((64, 1, 8, 8), dtype=np.float32))
    y = torch.tensor(rng.integers(0, 10, 64))
    batches = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 64, 16)]
    order = [i for e in range(5) for i in range(4)]
    args = (C.make_model, batches, order)
    _assert_bitwise(_train(*args, False, 0.005), _train(*args, True, 0.005))


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_traced_adam_step_equals_eager_bitwise(amsgrad, weight_decay):
    """A traced Adam step computes the bias corrections as 0-d float64 ops on the step
    tensor: the same bits as eager's Python floats, at every step count."""
    def run(compiled):
        torch.manual_seed(1)
        w = torch.randn(5, 7, requires_grad=True)
        opt = optim.AdamW([w], lr=0.01, amsgrad=amsgrad, weight_decay=weight_decay)

        def step(x):
            opt.zero_grad()
            (w * x).tanh().sum().backward()
            opt.step()
        fn = compile(step, backend="python") if compiled else step
        out = []
        for k in range(40):
            fn(torch.full((5, 7), 0.1 * (k % 7) - 0.3))
            out.append(w.detach().numpy().copy())
        return out
    for a, b in zip(run(False), run(True)):
        assert np.array_equal(a, b)


def test_pow_of_0d_floats_is_c_pow():
    """0-d float pow is C's pow() (Python's float ``**``), which the generated Python and
    the kernels compute too; NumPy's ufunc on a 0-d array may take a SIMD pow that
    differs in the last bit."""
    for base in (0.9, 0.999, 0.99):
        for k in range(1, 3000):
            want = base ** float(k)
            t = torch.tensor(float(k), dtype=torch.float64)
            assert torch.pow(base, t).item() == want
            assert torch.pow(torch.tensor(base, dtype=torch.float64), float(k)).item() == want
            assert (torch.tensor(base, dtype=torch.float64) ** t).item() == want
    assert math.isnan(torch.pow(torch.tensor(-1.0), 0.5).item())
    t32 = torch.tensor(2.5)
    assert (t32 ** 1.5).dtype == torch.float32
    assert (t32 ** 1.5).item() == float(np.float32(2.5) ** np.float32(1.5))


def test_check_mode_is_bitwise_where_promised():
    """check=True compares bit for bit when the program promises eager's bits (the
    generated Python, kernels of arithmetic), within the bound where a kernel runs a
    runtime.cpu.mathlib transcendental."""
    from compiler.check import exact, inexact_ops
    from compiler.codegen.pysource import CompiledGraph
    assert exact(CompiledGraph(None, "", []))
    assert exact(CompiledGraph(None, "", [("k", "t0 = a0 * np.float32(2.0) + a1")]))
    assert not exact(CompiledGraph(None, "", [("k", "t0 = mathlib.tanh(a0)")]))
    assert inexact_ops([("k", "t0 = mathlib.tanh(a0)\nt1 = radd(acc, t0)")]) == \
        ["float64 sum", "mathlib.tanh"]
    w = torch.randn(4, 3, requires_grad=True)
    opt = optim.Adam([w], lr=0.01)

    def step(x):
        opt.zero_grad()
        (w * x).tanh().sum().backward()
        opt.step()
    fn = compile(step, backend="python", check=True)
    for k in range(6):   # bitwise checks of every replay: they pass
        fn(torch.full((4, 3), 0.1 * k))
    assert fn.stats()["hits"] >= 4
