"""A compiled function and ``eager.autocast``: the autocast state is part of the guard key,
so calls inside and outside autocast (bfloat16 or float16) each get eager's dtypes and
values; keys that hold float16/bfloat16 values run eagerly, the others replay."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager
import eager.nn.functional as F
from compiler import compile
from eager._state import STATE

RNG = np.random.default_rng(3)
W = RNG.standard_normal((4, 5)).astype(np.float32)
X = RNG.standard_normal((3, 4)).astype(np.float32)


@pytest.fixture(autouse=True)
def _autocast_off():
    STATE.autocast = None
    yield
    STATE.autocast = None


def _same(got, want):
    """Eager's dtype, and its values: exactly for half types (those keys run eagerly),
    to float32 rounding for fused float32 kernels (as tests/compiler/test_api.py)."""
    assert got.dtype is want.dtype, (got.dtype, want.dtype)
    assert got.requires_grad == want.requires_grad
    g, w = got.float().detach().numpy(), want.float().detach().numpy()
    if got.dtype is eager.float32:
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(g, w)


def _model(x, w):
    h = eager.tanh(x @ w) * 1.5 + 0.25
    return eager.softmax(h, -1), F.mse_loss(h, eager.zeros(3, 5))


CONTEXTS = [None, "bfloat16", None, "float16", "bfloat16", None, None, "float16"]


def _call(fn, low, *args):
    if low is None:
        out = fn(*args)
    else:
        with eager.autocast("cpu", dtype=getattr(eager, low)):
            out = fn(*args)
    compiler.wait()
    return out


def test_alternating_inside_and_outside_autocast_gets_eagers_results(backend):
    f = compile(_model, backend=backend)
    x, w = eager.tensor(X), eager.tensor(W)
    for low in CONTEXTS:
        got = _call(f, low, x, w)
        want = _call(_model, low, x, w)
        for g, e in zip(got, want):
            _same(g, e)
        assert got[0].dtype is (eager.float32 if low is None else getattr(eager, low))
        assert got[1].dtype is eager.float32  # mse_loss: PyTorch's float32 list
    stats = f.stats()
    assert stats["calls"] == len(CONTEXTS)
    assert stats["traces"] == 3  # one per autocast state
    if backend != "eager":
        assert stats["hits"] == CONTEXTS.count(None) - 1  # plain float32 calls replay


def test_matches_torch_values_under_autocast():
    torch = pytest.importorskip("torch")
    f = compile(_model)
    for low in ("bfloat16", None, "bfloat16"):
        got = _call(f, low, eager.tensor(X), eager.tensor(W))
        if low is None:
            continue
        with torch.autocast("cpu", dtype=getattr(torch, low)):
            h = torch.tanh(torch.tensor(X) @ torch.tensor(W)) * 1.5 + 0.25
            want = (torch.softmax(h, -1), torch.nn.functional.mse_loss(h, torch.zeros(3, 5)))
        for g, t in zip(got, want):
            assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            np.testing.assert_allclose(g.float().numpy(), t.float().numpy(), rtol=2e-2,
                                       atol=2e-2)


def test_gradients_inside_and_outside_autocast(backend):
    def step(x, w):
        out = eager.tanh(x @ w).sum()
        out.backward()
        return out

    f = compile(step, backend=backend)
    for low in ("bfloat16", None, "bfloat16", None):
        ws, we = eager.tensor(W, requires_grad=True), eager.tensor(W, requires_grad=True)
        got = _call(f, low, eager.tensor(X), ws)
        want = _call(step, low, eager.tensor(X), we)
        _same(got, want)
        assert ws.grad.dtype is eager.float32
        np.testing.assert_allclose(ws.grad.numpy(), we.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_key_without_half_values_under_autocast_replays(backend):
    """Elementwise ops are not on autocast's lists: the trace under autocast holds float32
    only and is compiled, behind its own guard."""
    def g(x):
        return eager.sigmoid(x * 2.0) - x

    f = compile(g, backend=backend)
    x = eager.tensor(X)
    for _ in range(3):
        with eager.autocast("cpu"):
            got = f(x)
        compiler.wait()
        _same(got, g(x))
    assert f.stats()["traces"] == 1
    text = str(f.explain())
    assert "autocast == ('cpu', 'bfloat16')" in text


def test_half_inputs_run_eagerly_with_eagers_results(backend):
    f = compile(_model, backend=backend)
    for dt in ("bfloat16", "float16", "bfloat16"):
        x = eager.tensor(X).to(getattr(eager, dt))
        w = eager.tensor(W).to(getattr(eager, dt))
        got = _call(f, None, x, w)
        want = _call(_model, None, x, w)
        for g, e in zip(got, want):
            _same(g, e)
    assert "float16/bfloat16 tensors: this key runs eagerly" in str(f.explain())


def test_recompile_reason_names_autocast(recompile_log):
    f = compile(lambda x: x * 2.0)
    x = eager.tensor(X)
    f(x)
    with eager.autocast("cpu"):
        f(x)
    assert any("autocast: None != ('cpu', 'bfloat16')" in m for m in recompile_log())


def test_autocast_inside_the_compiled_function(backend):
    def h(x, w):
        with eager.autocast("cpu", dtype=eager.bfloat16):
            y = x @ w
        return y.float() * 2

    f = compile(h, backend=backend)
    x, w = eager.tensor(X), eager.tensor(W)
    for _ in range(3):
        got = _call(f, None, x, w)
        _same(got, h(x, w))
        assert STATE.autocast is None
