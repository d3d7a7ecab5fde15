"""Checking mode: eager runs beside every replay; a difference raises CheckError."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager as torch
from compiler import CheckError
from eager.ops import elementwise as E
from eager.ops.scalarexpr import literal


def _train_step_fn():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, model


def test_check_mode_passes_a_training_step_and_keeps_eager_state():
    step, model = _train_step_fn()
    ref, ref_model = _train_step_fn()
    cf = compiler.compile(step, check=True)
    x = torch.randn(5, 3)
    y = torch.tensor([0, 1, 1, 0, 1])
    for i in range(5):
        got = cf(x, y)
        want = ref(x, y)
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)
        if i == 1:
            compiler.wait()
    for p, q in zip(model.parameters(), ref_model.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6,
                                   atol=1e-7)
    assert cf.stats()["hits"] >= 2


def test_check_mode_catches_a_wrong_kernel(monkeypatch):
    # a deliberately wrong scalar expression for tanh: the fused kernel computes tanh(x) + 1
    real = E.Tanh.scalar

    def wrong(S, args, p, out):
        expr, dt = real(S, args, p, out)
        return f"({expr}) + {literal(1.0, dt)}", dt

    monkeypatch.setattr(E.Tanh, "scalar", staticmethod(wrong))

    def f(x):
        return torch.tanh(x * 2.0) * 3.0

    cf = compiler.compile(f, check=True)
    x = torch.tensor([0.1, 0.2, 0.3])
    cf(x)
    cf(x)
    compiler.wait()
    with pytest.raises(CheckError, match="(?s)differs from eager.*result"):
        cf(x)


def test_check_mode_compares_python_effects():
    class C:
        def __init__(self):
            self.count = 0

    c = C()

    def f(x):
        c.count += 1
        return x * 2

    cf = compiler.compile(f, check=True)
    for i in range(4):
        cf(torch.ones(2))
    assert c.count == 4


def test_check_mode_from_the_environment(monkeypatch):
    monkeypatch.setenv("DYNGRAPH_CHECK", "1")
    assert compiler.compile(lambda x: x + 1).check
    monkeypatch.setenv("DYNGRAPH_CHECK", "0")
    assert not compiler.compile(lambda x: x + 1).check


def test_inexact_bound_allows_compounded_rounding_but_not_a_wrong_value():
    """The bound for kernels with mathlib functions, float32: a difference of 2e-5 of the
    array's largest value (what 24 LSTM time steps and Adam's squared gradient made of a few
    ulp per op, at one element near zero: the LSTM example's checked run failed on it) is
    within; 1e-3 of it is not; NaN against a number never is."""
    from compiler.check import _compare_arrays
    want = np.array([0.5, 2.0691029e-4, -0.25], dtype=np.float32)
    problems = []
    _compare_arrays(want + np.float32([0, 1e-5, 0]), want, "w", problems)
    assert problems == []
    _compare_arrays(want + np.float32([0, 5e-4, 0]), want, "w", problems)
    assert len(problems) == 1 and "at index [1]" in problems[0]
    _compare_arrays(np.float32([np.nan, 2.0691029e-4, -0.25]), want, "w", problems)
    assert len(problems) == 2 and "at index [0]" in problems[1]
