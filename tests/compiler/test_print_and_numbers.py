"""Printing and Python numbers inside a compiled function, against eager over calls whose
values change: ``print(tensor)`` and ``print(loss.item())`` are replayed with each call's
values (no graph break, no guard on the value), a comparison of a dynamic number guards
its outcome only, and containers stored into Python state hold each call's values."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import compiler
import eager
from eager import nn


def _twins(make, inputs, wait_after=2):
    """Runs eager and compiled copies of ``make()`` on the same inputs; returns the
    compiled function and both printed texts (kernels loaded after ``wait_after`` calls)."""
    fe, fc = make(), make()
    cf = compiler.compile(fc)
    out_e, out_c = io.StringIO(), io.StringIO()
    for i, x in enumerate(inputs):
        with contextlib.redirect_stdout(out_e):
            a = fe(x)
        with contextlib.redirect_stdout(out_c):
            b = cf(x)
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        if i == wait_after:
            compiler.wait()
    return cf, out_e.getvalue(), out_c.getvalue()


def _xs(n=7):
    return [eager.ones(4, 3) * (0.5 + i) for i in range(n)]


def _net():
    eager.manual_seed(0)
    return nn.Linear(3, 2)


def test_print_of_a_tensor_and_of_item_is_replayed_with_each_calls_values():
    def make():
        lin = _net()

        def f(x):
            y = lin(x).relu()
            print("y", y, "sum", y.sum().item(), sep="|")
            y.add_(1)                        # printed before: the old value is printed
            print(y[0], x.sum().item() > 3, end=";\n")
            return y * 2
        return f
    cf, out_e, out_c = _twins(make, _xs())
    assert out_e == out_c
    assert out_e.count("grad_fn=<ReluBackward0>") == 7  # the traced tensor's autograd text
    st = cf.stats()
    assert st["traces"] <= 2 and st["hits"] >= 5, st  # (one trace per branch outcome)
    assert not cf.explain().graph_breaks


def test_printing_a_parameter_and_an_int():
    def make():
        lin = _net()

        def f(x):
            n = (x > 1).sum().item()        # an int
            print(n, lin.bias)
            return lin(x)
        return f
    cf, out_e, out_c = _twins(make, _xs())
    assert out_e == out_c and "requires_grad=True" in out_c
    assert cf.stats()["hits"] >= 5


def test_a_comparison_of_a_number_guards_its_outcome_not_its_value():
    def make():
        def f(x):
            if x.sum().item() > 20:
                return x * 2
            return x - 1
        return f
    cf, _, _ = _twins(make, _xs(8))
    st = cf.stats()
    assert st["traces"] == 2, st   # one per outcome, not one per value
    assert st["hits"] == 6


def test_a_comparison_python_makes_without_asking_the_number_guards_its_value():
    """``1.5 < n`` with ``n`` a dynamic int: float's comparison reads the int itself."""
    def make():
        def f(x):
            n = (x > 0).sum().item()
            if 1.5 < n:
                return x * 2
            return x - 1
        return f
    xs = [eager.tensor([1.0, 0.0, 0.0]), eager.tensor([1.0, 1.0, 0.0]),
          eager.tensor([1.0, 0.0, 0.0]), eager.tensor([0.0, 0.0, 0.0]),
          eager.tensor([1.0, 1.0, 1.0]), eager.tensor([1.0, 1.0, 0.0])]
    _twins(make, xs)   # equal results on every call is the check


@pytest.mark.parametrize("make_container,shape", [
    (lambda t: t.split(1), (2,)),   # a tuple
    (lambda t: t.max(0), (2, 2)),   # a return_types named tuple (values, indices)
], ids=["split", "max"])
def test_a_tuple_of_new_tensors_stored_in_python_state_holds_each_calls_tensors(
        make_container, shape):
    """``s.res = t.split(1)`` or ``s.res = t.max(0)``: a container eager's code made during
    the call (the observer does not watch inside it) is not stored as the traced call's
    object on replays."""
    class S:
        pass

    def run(fn, s):
        got = []
        for i in range(4):
            fn(eager.ones(*shape) * i)
            got.append([p.numpy().copy() for p in s.res])
        return got

    def make(s):
        def f(x):
            s.res = make_container(x * 2)
            return x + 1
        return f
    se, sc = S(), S()
    ref = run(make(se), se)
    got = run(compiler.compile(make(sc)), sc)
    for a, b in zip(ref, got):
        assert len(a) == len(b) == 2
        for p, q in zip(a, b):
            np.testing.assert_array_equal(p, q)


def test_a_scheduler_step_replays_with_its_learning_rate_an_input():
    """ExponentialLR inside the step: ``last_epoch == 0`` guards its outcome, the new
    learning rates (in a list made by a comprehension) are the trace's numbers."""
    def build():
        eager.manual_seed(0)
        m = nn.Linear(3, 1)
        opt = eager.optim.SGD(m.parameters(), lr=0.1)
        sched = eager.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)

        def step(x):
            opt.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
            return loss
        return step, opt, sched
    (se, oe, ce), (sc, oc, cc) = build(), build()
    cf = compiler.compile(sc)
    for i in range(8):
        x = eager.ones(4, 3)
        se(x)
        cf(x)
        assert oe.param_groups[0]["lr"] == oc.param_groups[0]["lr"]
        assert ce.get_last_lr() == cc.get_last_lr()
        assert ce.last_epoch == cc.last_epoch
    assert cf.stats()["hits"] >= 5


def test_a_formatted_number_that_changes_is_a_graph_break_at_once():
    """``f"{loss.item():.3f}"`` needs the value as text: when a replay meets another value
    the function breaks there (split: that statement eager, the lines around it compiled)
    instead of retracing for every new value until max_traces."""
    def make():
        lin = _net()

        def f(x):
            y = lin(x).relu().sum()
            print(f"loss {y.item():.3f} {y.item()!r}")
            return y * 2
        return f
    cf, out_e, out_c = _twins(make, _xs())
    assert out_e == out_c
    assert cf.stats()["traces"] == 2, cf.stats()  # call 0, and call 1 where the text changed
    ex = cf.explain()
    assert len(ex.graph_breaks) == 1 and "formatted into text" in ex.graph_breaks[0]
    assert "test_print_and_numbers.py" in ex.graph_breaks[0]
    (_, before), (_, printing), (_, after) = ex.pieces
    assert printing is None and before.stats["hits"] >= 3 and after.stats["hits"] >= 3


def test_a_formatted_number_that_stays_the_same_replays():
    def make():
        def f(x):
            n = (x > 0).sum().item()
            print(f"{n} positive")
            return x * 2
        return f
    cf, out_e, out_c = _twins(make, [eager.ones(3) * (i + 1) for i in range(5)])
    assert out_e == out_c
    assert cf.stats()["hits"] == 4 and not cf.explain().graph_breaks
