"""Whole-trace native code for convolutions, pooling and arg-reductions
(``runtime.cpu.window`` called from ``compiler.codegen.native_cpu``): a CNN's trace replays
as one native function, with eager's bits where the ops only move data or make one BLAS
product per item (outputs, the input's gradient), and within a sum's rounding where the
native code accumulates in float64 (the weight's and bias' gradients)."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager as torch
from eager import nn
from eager.nn import functional as F
from tests.compiler.test_native import _forward_native, _native_used, _no_misses

pytest.importorskip("scipy")

DTYPES = [torch.float32, torch.float64]


def _arr(t):
    return t.detach().numpy()


def _twin_grads(f, args, gout_shape, dtype, calls=4):
    """Compiled and eager results of ``f(*args)`` and the gradients of ``sum(out * g)``
    over ``calls`` calls with new data (kernels waited for after the second)."""
    cf = compiler.compile(f)
    rng = np.random.default_rng(0)
    for i in range(calls):
        data = [rng.standard_normal(a.shape) for a in args]
        g = torch.tensor(rng.standard_normal(gout_shape)).to(dtype)
        res = []
        for fn in (cf, f):
            ts = [torch.tensor(d).to(dtype).requires_grad_() for d in data]
            out = fn(*ts)
            out.backward(g)
            res.append((out, [t.grad for t in ts]))
        yield i, cf, res
        if i == 1:
            compiler.wait()


@pytest.mark.parametrize("dtype,conv,pool", [
    (torch.float32, dict(padding=1), dict(kernel_size=2)),   # windows that tile
    (torch.float64, dict(stride=2, padding=(1, 0)), dict(kernel_size=2)),
    (torch.float32, dict(padding=2, dilation=2), dict(kernel_size=3, stride=2, padding=1)),
    (torch.float64, dict(padding=1), dict(kernel_size=3, stride=1))])   # overlapping
def test_conv_relu_maxpool_replays_natively_with_eagers_bits(dtype, conv, pool):
    def f(x, w, b):
        return F.max_pool2d(torch.relu(F.conv2d(x, w, b, **conv)), **pool)

    x, w, b = torch.zeros(3, 2, 9, 8), torch.zeros(4, 2, 3, 3), torch.zeros(4)
    shape = tuple(f(x, w, b).shape)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    for i, cf, ((oc, gc), (oe, ge)) in _twin_grads(f, (x, w, b), shape, dtype):
        assert np.array_equal(_arr(oc), _arr(oe)), f"call {i}: output"
        assert np.array_equal(_arr(gc[0]), _arr(ge[0])), f"call {i}: input's gradient"
        for got, want in zip(gc[1:], ge[1:]):   # summed over the batch: float64 sums
            np.testing.assert_allclose(_arr(got), _arr(want), rtol=tol, atol=tol)
    assert _forward_native(cf)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv1d_and_avg_pool_replay_natively(dtype):
    def f(x, w, b):
        return F.avg_pool1d(torch.tanh(F.conv1d(x, w, b, padding=1)), 2) * 3

    x, w, b = torch.zeros(2, 3, 10), torch.zeros(5, 3, 3), torch.zeros(5)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    for i, cf, ((oc, gc), (oe, ge)) in _twin_grads(f, (x, w, b), (2, 5, 5), dtype):
        np.testing.assert_allclose(_arr(oc), _arr(oe), rtol=tol, atol=tol)
        for got, want in zip(gc, ge):
            np.testing.assert_allclose(_arr(got), _arr(want), rtol=tol, atol=tol)
    assert _no_misses(cf)


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_and_argmin_over_a_dimension_with_ties_and_nan_equal_eager(dtype):
    """The first extreme wins, and the first NaN over any number (NumPy's argmax)."""
    def f(x):
        values, idx = x.max(dim=1)
        return values * 2, idx, x.argmin(dim=2)

    cf = compiler.compile(f)
    rng = np.random.default_rng(1)
    for i in range(5):
        a = rng.integers(-2, 3, (4, 5, 6)).astype(np.float64)  # ties everywhere
        a[0, 2, 1] = a[1, 0, 3] = a[2, 4, 0] = np.nan
        a[3, 1:, 5] = np.nan
        x = torch.tensor(a).to(dtype)
        for got, want in zip(cf(x), f(x)):
            assert np.array_equal(_arr(got), _arr(want), equal_nan=True), f"call {i}"
        if i == 1:
            compiler.wait()
    assert _forward_native(cf)


def test_a_cnn_training_step_replays_as_one_native_function():
    """The digits CNN's whole step (conv, relu, max-pool, linear, cross-entropy, Adam):
    one native function, within the stated bound of eager's losses (native log-softmax
    and float64 sums)."""
    def make():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step, model

    (se, me), (sc, mc) = make(), make()
    cf = compiler.compile(sc)
    rng = np.random.default_rng(2)
    for i in range(6):
        x = torch.tensor(rng.standard_normal((8, 1, 8, 8)).astype(np.float32))
        y = torch.tensor(rng.integers(0, 3, 8))
        assert cf(x, y).item() == pytest.approx(se(x, y).item(), rel=1e-5)
        if i == 2:
            compiler.wait()
    for a, b in zip(mc.parameters(), me.parameters()):
        np.testing.assert_allclose(_arr(a), _arr(b), rtol=1e-4, atol=1e-6)
    assert _native_used(cf)   # (the first call's trace, before Adam's state, never replays)
