"""Bad input gives PyTorch's errors and values, eagerly and compiled: integer ``//`` and
``%`` by zero raise ("ZeroDivisionError", as PyTorch's RuntimeError says; here also a
Python ZeroDivisionError), ``one_hot`` of out-of-range classes raises, and a softmax
over a row holding ``+inf`` is all NaN."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import compiler
import eager
import eager.nn.functional as F

INT_DTYPES = [eager.int64, eager.int32, eager.int16, eager.int8, eager.uint8]


def raises_zero_division():
    return pytest.raises(ZeroDivisionError, match="^ZeroDivisionError$")


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_integer_floor_divide_and_remainder_by_zero_raise(dtype):
    x = eager.tensor([5, 7, 9], dtype=dtype)
    z = eager.tensor([2, 0, 3], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning first
        for fn in (lambda: x // z, lambda: x % z, lambda: x // 0, lambda: x % 0,
                   lambda: eager.floor_divide(x, z), lambda: eager.remainder(x, z),
                   lambda: 7 // z, lambda: 7 % z, lambda: x.div(z, rounding_mode="floor")):
            with raises_zero_division():
                fn()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):  # PyTorch's type too
        x // z
    y = x.clone()
    with raises_zero_division():
        y //= 0
    with raises_zero_division():
        y %= z
    assert y.tolist() == x.tolist()  # nothing written


def test_division_without_a_zero_integer_divisor_is_unchanged():
    x = eager.tensor([5, -7, 9])
    assert (x // 2).tolist() == [2, -4, 4]
    assert (x % -2).tolist() == [-1, -1, -1]
    assert (x // eager.tensor([2, 3, -4])).tolist() == [2, -3, -3]
    with np.errstate(all="ignore"):
        f = eager.tensor([1.0, -1.0]) // 0  # floats: inf, as PyTorch
        r = eager.tensor([1.0]) % 0
        m = eager.tensor([5, 7]) // eager.tensor([2.0, 0.0])  # promoted to float
    assert f.tolist() == [math.inf, -math.inf]
    assert math.isnan(r.item())
    assert m.tolist() == [2.0, math.inf]


def test_compiled_integer_division_checks_every_replay():
    @compiler.compile
    def f(x, y):
        return (x // y) * 2 + x % y

    x = eager.tensor([5, 7, 9])
    for _ in range(3):
        assert f(x, eager.tensor([2, 3, 4])).tolist() == [5, 5, 5]
    compiler.wait()
    for _ in range(2):
        with raises_zero_division():
            f(x, eager.tensor([2, 0, 4]))
    assert f(x, eager.tensor([2, 3, 4])).tolist() == [5, 5, 5]

    g = compiler.compile(lambda x: (x // 2 + 1) % 3)  # a literal divisor still fuses
    for _ in range(3):
        assert g(x).tolist() == [0, 1, 2]


def test_one_hot_of_out_of_range_classes_raises_as_pytorch():
    with pytest.raises(RuntimeError, match=r"^Class values must be non-negative\.$"):
        F.one_hot(eager.tensor([0, -1]), 3)
    with pytest.raises(RuntimeError, match=r"^Class values must be non-negative\.$"):
        F.one_hot(eager.tensor([0, -1]))
    with pytest.raises(RuntimeError, match=r"^Class values must be smaller than num_classes\.$"):
        F.one_hot(eager.tensor([0, 3]), 3)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty"):
        F.one_hot(eager.tensor([], dtype=eager.int64))
    assert F.one_hot(eager.tensor([], dtype=eager.int64), 3).shape == (0, 3)
    oh = F.one_hot(eager.tensor([[0, 2], [1, 1]]), 3)
    assert oh.dtype == eager.int64 and oh.tolist() == [[[1, 0, 0], [0, 0, 1]],
                                                       [[0, 1, 0], [0, 1, 0]]]


def test_compiled_one_hot_checks_every_replay():
    f = compiler.compile(lambda x: F.one_hot(x, 4) * 2)
    for _ in range(3):
        assert f(eager.tensor([0, 3])).tolist() == [[2, 0, 0, 0], [0, 0, 0, 2]]
    with pytest.raises(RuntimeError, match="non-negative"):
        f(eager.tensor([0, -1]))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        f(eager.tensor([4, 1]))


INF = math.inf


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_a_row_with_plus_inf_is_all_nan(fn):
    op = getattr(eager, fn)
    rows = eager.tensor([[INF, 1.0, -INF], [1.0, 2.0, 3.0], [-INF, 0.0, 1.0],
                         [-INF, -INF, -INF], [math.nan, 0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = op(rows, dim=1).numpy()
    assert np.isnan(out[0]).all()                       # PyTorch: [nan, nan, nan]
    assert np.isfinite(out[1]).all()
    assert np.isnan(out[3]).all() and np.isnan(out[4]).all()
    assert op(eager.tensor([INF, 1.0, -INF]), dim=0).isnan().all()
    if fn == "softmax":
        assert out[2].tolist()[0] == 0.0
    else:
        assert out[2].tolist()[0] == -INF


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_compiled_softmax_with_infinities_equals_eager(fn):
    op = getattr(eager, fn)
    def f(x):
        return op(x * 0.5 + 1.0, dim=-1)

    cf = compiler.compile(f)
    x = eager.tensor([[INF, 1.0, -INF], [1.0, 2.0, 3.0], [-INF, -INF, -INF]])
    for i in range(4):
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-6,
                                       equal_nan=True)  # NaN where eager has NaN
        if i == 1:
            compiler.wait()
    with np.errstate(all="ignore"):
        assert np.isnan(cf(eager.tensor([[INF, 1.0, 0.0]])).numpy()).all()
