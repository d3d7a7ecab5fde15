"""Reductions: forward values against NumPy, gradients by finite differences (float64),
PyTorch's semantics for dims/keepdim/dtypes/0-d/empty tensors and its error messages,
and a comparison against torch where it is importable."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager
from tests.helpers import gradcheck

RNG = np.random.default_rng(1234)
SHAPES = [(5,), (2, 3), (2, 3, 4)]


def rand(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


def dim_cases(ndim):
    """dim None, int, negative int, tuple (when ndim allows)."""
    cases = [None, 0, -1]
    if ndim >= 2:
        cases.append((0, -1))
    if ndim >= 3:
        cases.append((2, 0))
    return cases


def np_axis(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return dim % ndim
    return tuple(sorted(d % ndim for d in dim))


def T(a, requires_grad=False):
    """A tensor holding a copy of ``a`` (NumPy dtype kept; 0-d stays 0-d)."""
    arr = np.array(a)
    if arr.ndim == 0:  # eager.tensor() of a 0-d array currently gives shape (1,)
        return eager.from_numpy(arr).requires_grad_(requires_grad)
    return eager.tensor(arr, requires_grad=requires_grad)


def close(t, expected, **kw):
    np.testing.assert_allclose(np.asarray(t._data), expected, **kw)


GRID = [(s, d, k) for s in SHAPES for d in dim_cases(len(s)) for k in (False, True)]


# -- forward against NumPy -------------------------------------------------------------------

@pytest.mark.parametrize("shape,dim,keepdim", GRID)
def test_forward_matches_numpy(shape, dim, keepdim):
    a = rand(*shape)
    x = T(a)
    ax = np_axis(dim, len(shape))
    kw = {"axis": ax, "keepdims": keepdim}
    close(eager.sum(x, dim, keepdim), a.sum(**kw))
    close(eager.mean(x, dim, keepdim), a.mean(**kw))
    close(eager.amax(x, () if dim is None else dim, keepdim), a.max(**kw))
    close(eager.amin(x, () if dim is None else dim, keepdim), a.min(**kw))
    close(eager.var(x, dim, keepdim=keepdim), a.var(ddof=1, **kw))
    close(eager.std(x, dim, keepdim=keepdim, correction=0), a.std(**kw))
    close(x.var(dim, False, keepdim), a.var(**kw))
    m = a.max(axis=ax, keepdims=True)
    close(eager.logsumexp(x, () if dim is None else dim, keepdim),
          (np.log(np.exp(a - m).sum(axis=ax, keepdims=True)) + m).reshape(a.max(**kw).shape))
    close(eager.norm(x, dim=dim, keepdim=keepdim), np.sqrt((a * a).sum(**kw)))
    close(eager.norm(x, 1, dim, keepdim), np.abs(a).sum(**kw))
    close(eager.norm(x, math.inf, dim, keepdim), np.abs(a).max(**kw))
    close(eager.norm(x, -math.inf, dim, keepdim), np.abs(a).min(**kw))
    close(eager.norm(x, 3, dim, keepdim), ((np.abs(a) ** 3).sum(**kw)) ** (1 / 3))
    close(eager.norm(x, 0, dim, keepdim), (a != 0).sum(**kw))
    b = a > 0
    assert np.array_equal(eager.all(T(b), dim, keepdim)._data, b.all(**kw))
    assert np.array_equal(eager.any(T(b), dim, keepdim)._data, b.any(**kw))
    assert np.array_equal(eager.count_nonzero(T(b), dim)._data, np.count_nonzero(b, axis=ax))
    if dim is None or isinstance(dim, int):
        close(eager.prod(x, dim, keepdim), a.prod(**kw))
        amax_ref = a.argmax() if dim is None else a.argmax(axis=ax)
        got = eager.argmax(x, dim, keepdim)._data
        assert got.dtype == np.int64
        assert np.array_equal(got.reshape(-1), np.reshape(amax_ref, -1))
        assert got.shape == (a.max(**kw).shape if dim is not None else
                             ((1,) * len(shape) if keepdim else ()))
        assert np.array_equal(eager.argmin(x, dim)._data,
                              a.argmin() if dim is None else a.argmin(axis=ax))
    if isinstance(dim, int):
        close(eager.cumsum(x, dim), np.cumsum(a, axis=ax))
        e = np.exp(a - a.max(axis=ax, keepdims=True))
        close(eager.softmax(x, dim), e / e.sum(axis=ax, keepdims=True))
        close(eager.log_softmax(x, dim), np.log(e / e.sum(axis=ax, keepdims=True)))
        values, indices = eager.max(x, dim, keepdim)
        close(values, a.max(**kw))
        assert np.array_equal(indices._data, a.argmax(axis=ax).reshape(a.max(**kw).shape))
        r = x.min(dim=dim, keepdim=keepdim)
        close(r.values, a.min(**kw))
        assert np.array_equal(r.indices._data, a.argmin(axis=ax).reshape(a.min(**kw).shape))


# -- gradients by finite differences --------------------------------------------------------

def _grad_fns(dim, keepdim):
    dim_e = () if dim is None else dim
    fns = {
        "sum": lambda x: x.sum(dim, keepdim),
        "mean": lambda x: x.mean(dim, keepdim),
        "amax": lambda x: x.amax(dim_e, keepdim),
        "amin": lambda x: x.amin(dim_e, keepdim),
        "var": lambda x: x.var(dim, keepdim=keepdim),
        "var_c0": lambda x: x.var(dim, keepdim=keepdim, correction=0),
        "std": lambda x: x.std(dim, keepdim=keepdim),
        "std_unbiased_false": lambda x: x.std(dim, False, keepdim),
        "logsumexp": lambda x: x.logsumexp(dim_e, keepdim),
        "norm2": lambda x: x.norm(dim=dim, keepdim=keepdim),
        "norm1": lambda x: x.norm(1, dim, keepdim),
        "norm_inf": lambda x: x.norm(math.inf, dim, keepdim),
        "norm_ninf": lambda x: x.norm(-math.inf, dim, keepdim),
        "norm3": lambda x: x.norm(3, dim, keepdim),
        "norm1.5": lambda x: x.norm(1.5, dim, keepdim),
        "norm0.5": lambda x: x.norm(0.5, dim, keepdim),
    }
    if dim is None or isinstance(dim, int):
        fns["prod"] = lambda x: x.prod(dim, keepdim)
    if isinstance(dim, int):
        fns.update({
            "max_dim": lambda x: x.max(dim, keepdim).values,
            "min_dim": lambda x: x.min(dim, keepdim)[0],
            "softmax": lambda x: x.softmax(dim),
            "log_softmax": lambda x: x.log_softmax(dim),
            "cumsum": lambda x: x.cumsum(dim),
        })
    if dim is None:
        fns["max_all"] = lambda x: x.max()
        fns["min_all"] = lambda x: eager.min(x)
    return fns


@pytest.mark.parametrize("shape,dim,keepdim", GRID)
def test_gradcheck(shape, dim, keepdim):
    # distinct magnitudes away from 0 so max/min/norms are differentiable
    a = RNG.permutation(np.arange(1, np.prod(shape) + 1)).reshape(shape) * 0.1
    a = a * RNG.choice([-1.0, 1.0], size=shape)
    for name, fn in _grad_fns(dim, keepdim).items():
        try:
            gradcheck(fn, a)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


@pytest.mark.parametrize("fn", [
    lambda x: x.amax(), lambda x: x.amax(1), lambda x: x.amin((0, 1), keepdim=True),
    lambda x: x.max(), lambda x: eager.min(x), lambda x: x.norm(math.inf, 1),
])
def test_gradcheck_two_way_ties(fn):
    # a 2-way tie: the central difference is exactly the even split (0.5 each)
    a = np.array([[1.0, 3.0, 3.0], [-2.0, 0.5, -2.0]])
    gradcheck(fn, a)


def test_amax_ties_split_evenly_and_max_dim_picks_one():
    x = T([[1.0, 3.0, 3.0, 3.0], [2.0, 0.0, 2.0, 1.0]], requires_grad=True)
    x.amax(1).sum().backward()
    close(x.grad, [[0, 1 / 3, 1 / 3, 1 / 3], [0.5, 0, 0.5, 0]])
    x.grad = None
    x.max().backward()
    close(x.grad, [[0, 1 / 3, 1 / 3, 1 / 3], [0, 0, 0, 0]])
    x.grad = None
    r = x.max(1)
    assert r.indices.tolist() == [1, 0]  # the first of the ties
    r.values.sum().backward()
    close(x.grad, [[0, 1, 0, 0], [1, 0, 0, 0]])
    x.grad = None
    x.min(1, keepdim=True).values.sum().backward()
    close(x.grad, [[1, 0, 0, 0], [0, 1, 0, 0]])


def test_prod_gradient_with_zeros():
    gradcheck(lambda x: x.prod(1), np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 3.0],
                                             [1.5, -2.0, 0.5]]))
    gradcheck(lambda x: x.prod(), np.array([2.0, 0.0, 3.0, -1.0]))
    x = T([[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [1.0, 2.0, 4.0]], requires_grad=True)
    x.prod(1).sum().backward()
    close(x.grad, [[6, 0, 0], [0, 0, 0], [8, 4, 2]])


def test_zero_gradients_where_pytorch_gives_zero():
    x = T([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    x.norm(dim=1).sum().backward()
    close(x.grad, [[0, 0], [0.6, 0.8]])
    x.grad = None
    x.norm(3, dim=1).sum().backward()
    assert np.isfinite(x.grad._data).all() and (x.grad._data[0] == 0).all()
    z = T([0.0, 0.0, 0.0], requires_grad=True)
    z.norm().backward()
    close(z.grad, [0, 0, 0])
    s = T([1.0, 1.0, 1.0], requires_grad=True)
    s.std().backward()
    close(s.grad, [0, 0, 0])
    y = T([0.0, 1.0, 2.0], requires_grad=True)
    y.norm(0.5).backward()
    assert y.grad._data[0] == 0 and np.isfinite(y.grad._data).all()


def _weighted_grad(fn, x, create_graph):
    out = fn(x)
    w = eager.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
    return eager.autograd.grad((out * w).sum(), x, create_graph=create_graph)[0]


def test_double_backward_through_dedicated_backwards():
    # create_graph=True runs the backward formulas through T: they must differentiate
    for fn in [lambda x: x.softmax(1), lambda x: x.log_softmax(0), lambda x: x.logsumexp(1),
               lambda x: x.norm(dim=1), lambda x: x.std(0), lambda x: x.var(1),
               lambda x: x.prod(1), lambda x: x.norm(3), lambda x: x.norm(1.5, 0)]:
        def first_grad(x, fn=fn):
            if not x.requires_grad:  # the finite-difference evaluations
                x = eager.tensor(x._data, requires_grad=True)
            g = _weighted_grad(fn, x, True)
            return g * g
        gradcheck(first_grad, rand(2, 3, lo=0.5, hi=2.0) * np.array([1, -1, 1]), atol=1e-5)


def test_backward_through_tensors_matches_arrays():
    # the same formulas run on arrays (plain backward) and on Tensors (create_graph)
    a = rand(2, 3, 4)
    for fn in [lambda x: x.sum((0, 2)), lambda x: x.mean(1, True), lambda x: x.amax(-1),
               lambda x: x.amin(), lambda x: x.cumsum(1), lambda x: x.max(2).values,
               lambda x: x.min(0, True).values, lambda x: x.norm(math.inf, 1),
               lambda x: x.norm(1, (0, 1)), lambda x: x.prod(2, True), lambda x: x.var(),
               lambda x: x.log_softmax(2), lambda x: x.logsumexp((0, 1), True)]:
        x = eager.tensor(a, requires_grad=True)
        close(_weighted_grad(fn, x, True), _weighted_grad(fn, x, False)._data, rtol=1e-12)


def test_softmax_logsoftmax_large_and_inf_inputs():
    a = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0]])
    close(T(a).softmax(1), np.exp(a - a.max(1, keepdims=True)) /
          np.exp(a - a.max(1, keepdims=True)).sum(1, keepdims=True))
    out = T(a).log_softmax(1)._data
    assert np.isfinite(out).all()
    close(T(a).logsumexp(1), a.max(1) + np.log(np.exp(a - a.max(1, keepdims=True)).sum(1)))
    inf = math.inf
    b = T([[-inf, -inf], [-inf, 0.0], [inf, 1.0]])
    close(b.logsumexp(1), [-inf, 0.0, inf])
    ls = T([[-inf, 0.0, 1.0]]).log_softmax(1)._data
    assert ls[0, 0] == -inf and np.isfinite(ls[0, 1:]).all()
    assert np.isnan(T([[-inf, -inf]]).softmax(1)._data).all()  # as PyTorch
    gradcheck(lambda x: x.log_softmax(-1), a)
    gradcheck(lambda x: x.softmax(0), a * 1e-3)


# -- hypothesis: sum/mean/amax over random shapes and dims ----------------------------------

@st.composite
def shape_and_dims(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=4)))
    nd = len(shape)
    if nd == 0:
        dim = draw(st.sampled_from([None, 0, -1, ()]))
    else:
        dims = draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda d: d % nd,
                             max_size=nd))
        dim = draw(st.sampled_from([None, tuple(dims), dims[0] if dims else None]))
    return shape, dim, draw(st.booleans())


@settings(max_examples=60, deadline=None, database=None)
@given(shape_and_dims())
def test_property_sum_mean_amax(case):
    shape, dim, keepdim = case
    a = RNG.standard_normal(shape)
    nd = len(shape)
    if nd == 0 or dim is None or dim == ():
        ax = None
    else:
        ax = np_axis(dim, nd)
    kw = {"axis": ax, "keepdims": keepdim}
    for name, ref in [("sum", a.sum(**kw)), ("mean", a.mean(**kw)), ("amax", a.max(**kw))]:
        x = T(a, requires_grad=True)
        d = (() if dim is None else dim) if name == "amax" else dim
        out = getattr(x, name)(d, keepdim)
        assert tuple(out.shape) == np.shape(ref), name
        close(out, ref, rtol=1e-12, atol=1e-12)
        out.sum().backward()
        n = a.size // max(np.size(ref), 1)
        if name == "sum":
            close(x.grad, np.ones(shape))
        elif name == "mean":
            close(x.grad, np.full(shape, 1.0 / n))
        else:
            close(x.grad, (a == a.max(axis=ax, keepdims=True)).astype(float))


# -- dtypes, 0-d tensors, empty dims and empty tensors --------------------------------------

def test_dtypes():
    i32 = T(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert i32.sum().dtype == eager.int64
    assert i32.sum(0).dtype == eager.int64
    assert T([True, False, True]).sum().dtype == eager.int64
    assert T([True, False, True]).sum().item() == 2
    assert T(np.array([200, 100], dtype=np.uint8)).sum().item() == 300
    assert i32.prod(1).dtype == eager.int64
    assert i32.cumsum(1).dtype == eager.int64
    assert T([True, True]).cumsum(0).tolist() == [1, 2]
    assert i32.sum(dtype=eager.float64).dtype == eager.float64
    assert i32.mean(dtype=eager.float64).item() == 2.5
    assert i32.amax().dtype == eager.int32
    assert i32.max(1).values.dtype == eager.int32
    assert i32.argmax().dtype == eager.int64
    assert i32.logsumexp(0).dtype == eager.float32
    assert i32.softmax(0, dtype=eager.float64).dtype == eager.float64
    f32 = T(np.ones((2, 3), dtype=np.float32))
    for out in [f32.sum(), f32.mean(0), f32.var(), f32.std(1), f32.norm(), f32.softmax(0),
                f32.logsumexp(1), f32.prod(), f32.amax(), f32.cumsum(0)]:
        assert out.dtype == eager.float32
    assert f32.sum(dtype=eager.float64).dtype == eager.float64
    assert f32.half().sum().dtype == eager.float16
    assert f32.all().dtype == eager.bool and f32.any(0).dtype == eager.bool
    u8 = T(np.array([[1, 0], [2, 3]], dtype=np.uint8))
    assert u8.all().dtype == eager.uint8 and u8.all().item() == 0
    assert u8.any(1).tolist() == [1, 1]
    assert i32.count_nonzero().dtype == eager.int64 and i32.count_nonzero().item() == 5
    assert i32.count_nonzero(0).tolist() == [1, 2, 2]
    # a float32 input reduced in float64 gets a float32 gradient
    x = T(np.ones(3, dtype=np.float32), requires_grad=True)
    x.sum(dtype=eager.float64).backward()
    assert x.grad.dtype == eager.float32


def test_empty_dim_tuple_and_zero_dim():
    a = rand(2, 3)
    x = T(a)
    close(x.sum(dim=()), a.sum())
    close(x.mean(dim=[]), a.mean())
    close(x.amax(()), a.max())
    close(eager.amax(x), a.max())
    close(x.var(dim=()), a.var(ddof=1))
    close(x.norm(dim=()), np.sqrt((a * a).sum()))
    assert x.count_nonzero(dim=()).item() == 6
    assert x.all(dim=()).shape == (2, 3)  # all/any reduce over nothing (as PyTorch)
    assert np.array_equal(x.any(dim=())._data, a != 0)
    z = T(3.0, requires_grad=True)
    for out in [z.sum(0), z.sum(-1), z.mean(0), z.amax(0), z.prod(0), z.norm(dim=0),
                z.logsumexp(0), z.cumsum(0), z.max(0).values, z.max(), z.amin(-1),
                z.sum(0, keepdim=True)]:
        assert out.shape == () and out.item() == 3.0
    assert z.softmax(0).item() == 1.0 and z.log_softmax(0).item() == 0.0
    r = z.max(0)
    assert r.indices.shape == () and r.indices.item() == 0
    assert z.argmax().item() == 0 and z.argmax(0, keepdim=True).shape == ()
    assert z.all(0).item() is True and z.count_nonzero(0).item() == 1
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert math.isnan(z.var().item())
    assert z.std(0, correction=0).item() == 0.0
    z.max(0).values.backward()
    assert z.grad.item() == 1.0
    z.grad = None
    z.softmax(0).backward()
    assert z.grad.item() == 0.0
    with pytest.raises(IndexError, match=r"\[-1, 0\], but got 1"):
        z.sum(1)


def test_empty_tensors():
    e = T(np.zeros((2, 0)))
    assert e.sum(1).tolist() == [0.0, 0.0]
    assert e.prod(1).tolist() == [1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no NumPy warnings leak out
        assert np.isnan(e.mean(1)._data).all()
        assert e.logsumexp(1).tolist() == [-math.inf, -math.inf]
        with pytest.warns(UserWarning):
            assert np.isnan(e.var(1)._data).all()
    assert e.softmax(1).shape == (2, 0)
    assert e.norm(dim=1).tolist() == [0.0, 0.0]
    assert e.all(1).tolist() == [True, True] and e.any(1).tolist() == [False, False]
    assert e.amax(0).shape == (0,)
    r = e.max(0)
    assert r.values.shape == (0,) and r.indices.shape == (0,)
    assert e.argmax(0).shape == (0,)
    assert e.cumsum(1).shape == (2, 0)


def test_params_are_canonical():
    x = T(rand(2, 3, 4), requires_grad=True)
    assert x.sum((-1, 0)).grad_fn.params == {"dim": (0, 2), "keepdim": False, "dtype": None}
    assert x.sum().grad_fn.params["dim"] == (0, 1, 2)
    assert x.mean([2]).grad_fn.params["dim"] == (2,)
    assert x.amax(-2, True).grad_fn.params == {"dim": (1,), "keepdim": True}
    assert x.var(-1).grad_fn.params == {"dim": (2,), "correction": 1, "keepdim": False}
    assert x.std(0, unbiased=False).grad_fn.params["correction"] == 0
    assert x.softmax(-1).grad_fn.params == {"dim": 2}
    assert x.log_softmax(-3).grad_fn.params == {"dim": 0}
    assert x.norm(p="fro", dim=(-1, -2)).grad_fn.params == {"p": 2.0, "dim": (1, 2),
                                                            "keepdim": False}
    assert x.cumsum(-1).grad_fn.params["dim"] == 2
    assert x.logsumexp(-1).grad_fn.params == {"dim": (2,), "keepdim": False}


def test_methods_and_call_forms():
    a = rand(3, 4)
    x = T(a)
    close(eager.max(x, T(np.zeros((3, 4)))), np.maximum(a, 0))
    close(x.max(T(0.0)), np.maximum(a, 0))
    close(eager.min(x, other=T(np.zeros(4))), np.minimum(a, 0))
    r = eager.max(x, 1, True)
    assert isinstance(r, tuple) and len(r) == 2 and type(r).__name__ == "max"
    v, i = r
    assert v.shape == (3, 1) and i.shape == (3, 1)
    assert type(x.min(0)).__name__ == "min"
    assert x.max(dim=1).values.shape == (3,)
    close(x.var(True), a.var(ddof=1))
    close(x.var(False), a.var())
    close(x.var(0, False, True), a.var(axis=0, keepdims=True))
    close(x.std(1, correction=2), a.std(axis=1, ddof=2))
    close(x.var(0, correction=0.5), a.var(axis=0) * 3 / 2.5)
    close(x.norm(p=None), np.sqrt((a * a).sum()))
    close(x.norm(dtype=eager.float32), np.sqrt((a * a).sum()), rtol=1e-6)
    close(x.softmax(1, dtype=eager.float32), x.softmax(1)._data, rtol=1e-6)
    # float32 partial sums that cancel near zero: relative error alone is no measure
    close(x.cumsum(dim=0, dtype=eager.float32), np.cumsum(a, 0), rtol=1e-6, atol=1e-6)
    assert x.argmax(keepdim=True).shape == (1, 1)
    assert x.all().item() is True and T([0, 1]).all(0).item() is False
    assert eager.sum(x).item() == pytest.approx(a.sum())


# -- error messages -------------------------------------------------------------------------

def test_errors():
    x = T(rand(2, 3))
    xi = T(np.arange(6).reshape(2, 3))
    e = T(np.zeros((2, 0)))
    msg = "mean(): could not infer output dtype. Input dtype must be either a floating point " \
          "or complex dtype. Got: Long"
    with pytest.raises(RuntimeError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        xi.mean()
    with pytest.raises(RuntimeError, match="Got: Int"):
        T(np.arange(3, dtype=np.int32)).mean()
    with pytest.raises(RuntimeError, match="Got: Bool"):
        T([True]).mean()
    with pytest.raises(RuntimeError, match="Optional dtype must be .* Got: Long"):
        x.mean(dtype=eager.int64)
    for f in [lambda: x.sum(5), lambda: x.sum(-3), lambda: x.mean((0, 2)), lambda: x.amax(2),
              lambda: x.max(2), lambda: x.argmax(-3), lambda: x.softmax(2), lambda: x.cumsum(2),
              lambda: x.var(4), lambda: x.logsumexp(3), lambda: x.norm(dim=2), lambda: x.all(2),
              lambda: x.prod(2), lambda: x.log_softmax(-3), lambda: x.count_nonzero(2)]:
        with pytest.raises(IndexError, match=r"out of range \(expected to be in range of "
                                             r"\[-2, 1\], but got -?\d\)"):
            f()
    with pytest.raises(RuntimeError, match="appears multiple times"):
        x.sum((0, -2))
    with pytest.raises(TypeError):
        x.max((0, 1))
    with pytest.raises(TypeError, match="must be int, not tuple"):
        x.argmax((0,))
    with pytest.raises(TypeError):
        x.prod((0,))
    with pytest.raises(TypeError):
        x.var(0, unbiased=False, correction=1)
    with pytest.raises(RuntimeError, match=r"argmax\(\): does not support bool input"):
        T([True, False]).argmax()
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        xi.var()
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        xi.std(0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        xi.softmax(0)
    with pytest.raises(NotImplementedError, match="log_softmax_kernel_impl"):
        xi.log_softmax(0)
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or "
                                           "complex tensor as input. Got Long"):
        xi.norm()
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified for "
                                           r"input.numel\(\) == 0"):
        e.amax()
    with pytest.raises(RuntimeError, match=r"^max\(\): Expected reduction dim to be specified"):
        e.max()
    with pytest.raises(IndexError, match=r"amin\(\): Expected reduction dim 1 to have non-zero"):
        e.amin(1)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 1 to have non-zero"):
        e.max(1)
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        e.argmax()
    with pytest.raises(IndexError, match=r"argmin\(\): Expected reduction dim 1"):
        e.argmin(1)
    with pytest.raises(RuntimeError, match="cannot compute the inf norm"):
        e.norm(math.inf)
    with pytest.raises(RuntimeError, match="cannot compute the -inf norm on the dimension 1"):
        e.norm(-math.inf, 1)
    with pytest.raises(TypeError):
        eager.logsumexp(x)  # dim is required
    with pytest.raises(TypeError):
        eager.softmax(x)


# -- against PyTorch ---------------------------------------------------------------------------

INF = math.inf
TORCH_CASES = [
    # (name, fn(m, x) using the shared API, input)
    ("sum", lambda m, x: x.sum((0, -1), keepdim=True), (2, 3, 4)),
    ("mean", lambda m, x: m.mean(x, -2), (2, 3, 4)),
    ("prod_zero", lambda m, x: x.prod(1), [[0.0, 2.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]),
    ("prod_all", lambda m, x: x.prod(), [0.5, -2.0, 3.0]),
    ("amax_ties", lambda m, x: x.amax(1), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    ("amin_ties", lambda m, x: m.amin(x, (0, 1), True), [[1.0, 3.0, 1.0], [2.0, 1.0, 2.0]]),
    ("max_all_ties", lambda m, x: x.max(), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    ("max_dim_ties", lambda m, x: m.max(x, 1).values, [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    ("min_dim_keep", lambda m, x: x.min(0, True)[0], (3, 4)),
    ("max_other", lambda m, x: m.max(x, x * 0.5 + 0.1), (3, 4)),
    ("var", lambda m, x: x.var(0), (3, 4)),
    ("var_c2", lambda m, x: m.var(x, (0, 1), correction=2, keepdim=True), (3, 4)),
    ("std_legacy", lambda m, x: x.std(1, False, True), (3, 4)),
    ("std_zero", lambda m, x: x.std(1), [[1.0, 1.0], [1.0, 2.0]]),
    ("logsumexp", lambda m, x: m.logsumexp(x, (0, 2)), (2, 3, 4)),
    ("logsumexp_inf", lambda m, x: x.logsumexp(1), [[-INF, 0.0], [1.0, 2.0]]),
    ("softmax", lambda m, x: m.softmax(x, 1), (3, 4)),
    ("log_softmax", lambda m, x: x.log_softmax(0), (3, 4)),
    ("log_softmax_inf", lambda m, x: x.log_softmax(1), [[-INF, 0.0, 1.0], [1.0, 2.0, 3.0]]),
    ("norm_fro", lambda m, x: x.norm(), (3, 4)),
    ("norm_zero_rows", lambda m, x: m.norm(x, dim=1), [[0.0, 0.0], [3.0, 4.0]]),
    ("norm1", lambda m, x: x.norm(1, 0), [[0.0, 1.0], [-2.0, 3.0]]),
    ("norm_inf", lambda m, x: x.norm(INF), [[0.0, 2.0], [-2.0, 1.0]]),
    ("norm_ninf", lambda m, x: x.norm(-INF, 1, True), (3, 4)),
    ("norm3_zero", lambda m, x: x.norm(3, 1), [[0.0, 0.0], [1.0, -2.0]]),
    ("norm0.5", lambda m, x: x.norm(0.5), [0.0, 1.0, 2.0]),
    ("norm-1", lambda m, x: x.norm(-1), [3.0, 1.0, 2.0]),
    ("cumsum", lambda m, x: m.cumsum(x, -1), (3, 4)),
    ("zero_d_max", lambda m, x: x.max(0).values, 2.5),
]


@pytest.mark.parametrize("name,fn,data", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_against_torch(name, fn, data):
    torch = pytest.importorskip("torch")
    a = rand(*data) if isinstance(data, tuple) else np.asarray(data, dtype=np.float64)
    x = T(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    out, tout = fn(eager, x), fn(torch, tx)
    np.testing.assert_allclose(out._data, tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert tuple(out.shape) == tuple(tout.shape)
    w = np.linspace(0.5, 1.5, max(out.numel(), 1)).reshape(tuple(out.shape))
    (out * eager.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad._data, tx.grad.numpy(), rtol=1e-10, atol=1e-12,
                               equal_nan=True)


def test_indices_and_dtypes_against_torch():
    torch = pytest.importorskip("torch")
    a = np.array([[1.0, np.nan, 2.0], [3.0, 3.0, -1.0]])
    x, tx = T(a), torch.tensor(a)
    for fn in [lambda m, t: m.max(t, 1).indices, lambda m, t: m.min(t, 0).indices,
               lambda m, t: t.argmax(), lambda m, t: t.argmin(1, keepdim=True),
               lambda m, t: m.max(t, 1).values, lambda m, t: t.amax(0)]:
        got, want = fn(eager, x), fn(torch, tx)
        np.testing.assert_array_equal(got._data, want.numpy())
    for dt in [np.bool_, np.uint8, np.int32, np.int64, np.float32]:
        b = (np.arange(6).reshape(2, 3) % 3).astype(dt)
        y, ty = T(b), torch.tensor(b)
        for fn in [lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.prod(1),
                   lambda t: t.cumsum(1), lambda t: t.all(1), lambda t: t.any(),
                   lambda t: t.count_nonzero(0), lambda t: t.amax(1), lambda t: t.max(1).indices,
                   lambda t, dt=dt: t.argmax(1) if dt is not np.bool_ else t.amin()]:
            got, want = fn(y), fn(ty)
            assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], (dt, got.dtype)
            np.testing.assert_array_equal(got._data, want.numpy())


# -- cumprod, logcumsumexp, diff --------------------------------------------------------------

_SCAN_DATA = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [1.0, 2.0, -3.0, 4.0, 0.5],
                       [0.0, 1.5, 2.0, -1.0, 3.0]])


def _second_order(f):
    def h(x):
        x = x if x.requires_grad else x.detach().requires_grad_(True)
        y = f(x)
        w = eager.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape)))
        return eager.autograd.grad((y * w).sum(), x, create_graph=True)[0]
    return h


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_values_and_gradients_with_zeros(dim):
    got = eager.cumprod(eager.tensor(_SCAN_DATA), dim)
    np.testing.assert_allclose(got.numpy(), np.cumprod(_SCAN_DATA, axis=dim))
    assert gradcheck(lambda x: eager.cumprod(x, dim), _SCAN_DATA)
    nonzero = np.random.default_rng(4).uniform(0.5, 2.0, (3, 4))
    assert gradcheck(_second_order(lambda x: eager.cumprod(x, dim)), nonzero, atol=1e-5)
    ints = eager.tensor([1, 2, 3], dtype=eager.int32)
    assert ints.cumprod(0).dtype == eager.int64 and ints.cumprod(0).tolist() == [1, 2, 6]
    assert eager.cumprod(ints, 0, dtype=eager.float32).dtype == eager.float32
    x = eager.tensor([1.0, 2.0, 3.0])
    x.cumprod_(0)
    assert x.tolist() == [1.0, 2.0, 6.0]


@pytest.mark.parametrize("dim", [0, 1])
def test_logcumsumexp_is_stable_with_its_gradient(dim):
    big = _SCAN_DATA * 300.0
    got = eager.logcumsumexp(eager.tensor(big), dim)
    np.testing.assert_allclose(got.numpy(), np.logaddexp.accumulate(big, axis=dim))
    assert np.isfinite(got.numpy()).all()
    assert gradcheck(lambda x: eager.logcumsumexp(x, dim), _SCAN_DATA)
    assert gradcheck(lambda x: eager.logcumsumexp(x * 100.0, dim), _SCAN_DATA)
    assert gradcheck(_second_order(lambda x: eager.logcumsumexp(x, dim)), _SCAN_DATA, atol=1e-5)
    with pytest.raises(NotImplementedError, match="\"logcumsumexp_out_cpu\" not implemented for "
                                                  "'Long'"):
        eager.logcumsumexp(eager.tensor([1, 2]), 0)


def test_diff():
    a = _SCAN_DATA
    np.testing.assert_allclose(eager.diff(eager.tensor(a)).numpy(), np.diff(a))
    np.testing.assert_allclose(eager.diff(eager.tensor(a), n=2, dim=0).numpy(),
                               np.diff(a, n=2, axis=0))
    pre, app = a[:, :1], a[:, :2]
    np.testing.assert_allclose(
        eager.tensor(a).diff(1, -1, eager.tensor(pre), eager.tensor(app)).numpy(),
        np.diff(a, prepend=pre, append=app))
    assert eager.diff(eager.tensor([1.0, 2.0]), n=5).shape == (0,)
    assert eager.diff(eager.tensor([True, False, False])).tolist() == [True, False]
    assert eager.diff(eager.tensor([1, 3, 7], dtype=eager.int32)).dtype == eager.int32
    assert gradcheck(lambda x, p: eager.diff(x, 2, 0, prepend=p), a, a[:1])
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        eager.diff(eager.ones(3), n=-1)
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        eager.diff(eager.tensor(1.0))
    with pytest.raises(RuntimeError, match="diff expects prepend or append to be the same "
                                           "dimension as input"):
        eager.diff(eager.ones(2, 3), prepend=eager.ones(3))


def test_scans_against_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs in [(lambda x: eager.cumprod(x, 1), lambda x: torch.cumprod(x, 1)),
                         (lambda x: eager.logcumsumexp(x, 0), lambda x: torch.logcumsumexp(x, 0)),
                         (lambda x: eager.diff(x, 2), lambda x: torch.diff(x, 2))]:
        e, t = eager.tensor(_SCAN_DATA, requires_grad=True), torch.tensor(_SCAN_DATA,
                                                                           requires_grad=True)
        eo, to = ours(e), theirs(t)
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
        w = np.random.default_rng(1).standard_normal(tuple(to.shape))
        (eo * eager.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
