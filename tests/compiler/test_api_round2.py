"""compile() front end, round 2 (issues 20 and 22): ``@compile`` on methods and modules
(hooks included), keys that keep ``-0.0``/``0.0`` and ``1``/``1.0``/``True`` apart,
torch.compile's signature, dynamic ints in factories, function transforms over compiled
functions, and the cost of calls that fall back.

Every compiled-vs-eager test runs the same program eagerly and compiled over >= 5 calls
(``compiler.wait()`` after the second) and compares outputs, gradients and side effects.
"""

from __future__ import annotations

import collections
import math
import time
import warnings

import numpy as np
import pytest

import compiler
import eager as torch
from compiler import CompileWarning, GraphBreakError, compile
from eager.tensor import Tensor


def same(got, want):
    """Equal values, bit for bit where it matters (the sign of zero), and equal types."""
    if isinstance(want, Tensor):
        assert isinstance(got, Tensor), type(got)
        assert got._data.shape == want._data.shape
        assert got._data.dtype == want._data.dtype, (got._data.dtype, want._data.dtype)
        np.testing.assert_allclose(got._data, want._data, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(np.signbit(got._data), np.signbit(want._data))
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want)
        for k in want:
            same(got[k], want[k])
    elif isinstance(want, float):
        assert type(got) is float and (got == want or (got != got and want != want))
        assert math.copysign(1, got) == math.copysign(1, want)
    else:
        assert type(got) is type(want) and got == want, (got, want)


def run_both(fn, calls, **kw):
    """``fn`` compiled and eagerly over the argument tuples of ``calls`` (>= 5); the
    compiled results, compared call by call with eager's. ``compiler.wait()`` after the
    second call."""
    assert len(calls) >= 5
    cf = compile(fn, **kw)
    outs = []
    for i, args in enumerate(calls):
        got = cf(*args)
        want = fn(*args)
        same(got, want)
        outs.append(got)
        if i == 1:
            compiler.wait()
    return cf, outs


# -- 2. keys do not conflate values ---------------------------------------------------

def test_negative_zero_float_argument_is_its_own_key():
    def f(x, s):
        return x * s, math.copysign(1.0, s)

    x = torch.tensor([1.0, 2.0, -3.0])
    calls = [(x, 0.0), (x, 0.0), (x, -0.0), (x, 0.0), (x, -0.0), (x, -0.0)]
    run_both(f, calls, backend="python")


def test_negative_zero_in_a_tuple_and_nan_identity():
    def f(x, p):
        return x * p[0] + 1.0

    x = torch.tensor([1.0, -2.0])
    nan = float("nan")
    calls = [(x, (0.0,)), (x, (0.0,)), (x, (-0.0,)), (x, (nan,)), (x, (float("nan"),)),
             (x, (-0.0,))]
    cf, _ = run_both(f, calls, backend="python")
    # a NaN is one key whatever the object: the second NaN call replays
    assert cf.stats()["traces"] <= 4


P = collections.namedtuple("P", "a b")


def _as_arg(v):
    return (v,)


def _in_namedtuple(v):
    return (P(v, 0),)


def _as_dict_key(v):
    return ({v: 0},)


def _as_dict_value(v):
    return ({"k": v},)


def _in_list(v):
    return ([v, 2],)


def _scalar_of(a):  # the number each packing carries, read back inside the function
    if isinstance(a, P):
        return a.a
    if isinstance(a, dict):
        (k, v), = a.items()
        return k if v == 0 and k != "k" else v
    if isinstance(a, list):
        return a[0]
    return a


@pytest.mark.parametrize("pack", [_as_arg, _in_namedtuple, _as_dict_key, _as_dict_value,
                                  _in_list])
@pytest.mark.parametrize("values", [(1, 1.0, True), (True, 1, 1.0), (1.0, True, 1)])
def test_one_float_one_and_true_are_distinct_keys(values, pack):
    def f(x, a):
        v = _scalar_of(a)
        return x + v, v, type(v).__name__

    x = torch.tensor([1, 2, 3])  # int64: adding 1.0 gives float32, 1 or True int64
    calls = [(x,) + pack(v) for v in values + values]
    run_both(f, calls, backend="python")


def test_namedtuple_of_tensors_is_flattened():
    """A namedtuple's tensors are arguments of the trace (its key used to hash the
    namedtuple, comparing tensors with ==: "Boolean value of Tensor ... is ambiguous")."""
    def f(p):
        return p[0] * 2 + p[1]

    calls = [(P(torch.randn(3), torch.randn(3)),) for _ in range(6)]
    cf, _ = run_both(f, calls, backend="python")
    assert cf.stats()["hits"] >= 4

    def g(p):  # read by attribute: the observer guards the field's identity (retraces)
        return p.a * 2 + p.b

    run_both(g, calls, backend="python")
