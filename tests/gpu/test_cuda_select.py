"""Boolean masks (x[mask], x[mask] = v, masked_select, nonzero, argwhere, masked_scatter and
their gradients), searchsorted/bucketize, bincount and histc run on the device
(eager/cuda/kernels_select.py), with the CPU's results, dtypes, errors and gradients, and
never through the host fallback.  Tiny shapes: the simulator runs ~170 us a thread."""

from __future__ import annotations

import numpy as np
import pytest

import eager
import eager.cuda.ops as cuda_ops
from eager.cuda import kernels_select as KSe
from tests.gpu.test_cuda_ops_coverage import check

RNG = np.random.default_rng(11)
#: none of these goes through the host fallback in any test here (tests/gpu/conftest.py)
ON_DEVICE = ("nonzero", "masked_scatter", "masked_gather", "searchsorted", "bincount",
             "histc")

X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
XZ = np.array([[1.5, 0.0, -2.0, 0.0], [0.5, np.nan, 0.0, -0.0]], np.float32)


def test_no_longer_host_fallbacks():
    assert not set(ON_DEVICE) & set(cuda_ops.HOST_FALLBACK)


# -- boolean indexing, nonzero ----------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: x[x > 0],                        # N-D mask, every dim
    lambda x: x[x[:, :, 0] > 0],               # 2-D mask over the leading dims
    lambda x: x[:, x[0, :, 1] > 0],            # 1-D mask in the middle
    lambda x: x[x > 10],                       # all False
    lambda x: x[x == x],                       # all True
    lambda x: x[0, 0][x[0, 0] < 0],            # 1-D
    lambda x: eager.masked_select(x, x > 0),
    lambda x: eager.masked_select(x, x[0, 0] > 0),    # the mask broadcast over x
    lambda x: eager.masked_select(x[0, :, :1], x[0] > 0),   # x broadcast over the mask
], ids=["nd", "leading", "middle", "none", "all", "1d", "select", "select-bmask",
        "select-bx"])
def test_boolean_indexing_and_its_gradient(f):
    check(f, X, grad=True)


def test_mask_shape_errors_are_the_cpus():
    check(lambda x: x[(x > 0)[:, :2]], X)
    check(lambda x: eager.masked_select(x, (x > 0)[:, :2]), X)
    check(lambda x: eager.masked_select(x, x), X)          # not a bool mask


@pytest.mark.parametrize("x", [
    XZ, XZ[0], np.array(3.0, np.float32), np.array(0.0, np.float32), np.zeros((0, 3), np.float32),
    np.array([[0, 3], [-1, 0]], np.int64), np.array([[True, False], [True, True]]),
    np.array([0, 2, 0, 7], np.uint8), XZ.astype(np.float16), np.zeros((2, 0, 2), np.float32),
], ids=["f32", "1d", "0d", "0d-zero", "empty", "int", "bool", "uint8", "f16", "empty-mid"])
def test_nonzero_argwhere_and_as_tuple(x):
    check(lambda t: t.nonzero(), x)
    check(lambda t: eager.nonzero(t, as_tuple=True), x)
    check(lambda t: eager.argwhere(t), x)


def test_nonzero_of_views_and_many_chunks():
    big = (RNG.standard_normal(70) > 0.3).reshape(7, 10)      # three chunks of 32
    check(lambda t: t.nonzero(), big)
    check(lambda t: t.t().nonzero(), big)                      # a transposed view
    check(lambda t: t[:, ::3].nonzero(), big)
    assert KSe._chunk(70) == 32 and KSe._chunk(1 << 20) == 1024


@pytest.mark.parametrize("x", [X, (X * 5).astype(np.int64), X > 0, X.astype(np.float16)],
                         ids=["f32", "int", "bool", "f16"])
def test_boolean_indexing_of_other_dtypes(x):
    check(lambda t, m: t[t != 0][:5], x, X)
    check(lambda t, m: t[m[..., 0] > 0], x, X)


def test_bfloat16_boolean_indexing_and_masked_scatter():
    def f(t):
        b = t.to(eager.bfloat16)
        m = t > 0
        return b[m], b.masked_scatter(m, b.flip(-1))
    check(f, X)


# -- writes through masks: x[mask] = v, masked_scatter ---------------------------------------------

def _setitem(value):
    def f(x):
        y = x.clone()
        y[x > 0] = value(x) if callable(value) else value
        return y
    return f


@pytest.mark.parametrize("value", [
    2.5, lambda x: eager.tensor(-1.0, device=x.device),
    lambda x: eager.arange(int((x > 0).sum()), device=x.device).to(x.dtype),
    lambda x: eager.ones(3, device=x.device),                 # wrong length: the CPU's error
], ids=["scalar", "0d", "values", "wrong-length"])
def test_setitem_through_a_mask(value):
    check(_setitem(value), X, grad=True)


def test_setitem_through_a_mask_of_other_dtypes():
    check(_setitem(7), (X * 5).astype(np.int32))
    check(_setitem(1.5), X.astype(np.float16))
    check(_setitem(False), X > 0.5)


def _masked_scatter(mask, count=None):
    def f(x, s):
        src = s if count is None else s.reshape(-1)[:count]
        return x.masked_scatter(mask(x), src)
    return f


S = RNG.standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("mask", [
    lambda x: x > 0, lambda x: x > 10, lambda x: x == x, lambda x: x[0, :, :1] > 0,
], ids=["some", "none", "all", "broadcast"])
def test_masked_scatter_and_its_gradients(mask):
    check(_masked_scatter(mask), X, S, grad=True)
    check(_masked_scatter(mask), X, S[:, :2], grad=True)      # a smaller source


def test_masked_scatter_of_other_dtypes_and_inplace():
    check(lambda x, s: x.masked_scatter(x > 0, s), (X * 5).astype(np.int64),
          (S * 5).astype(np.int64))
    check(lambda x, s: x.masked_scatter(s, x), X > 0, S > 0)
    check(lambda x, s: x.masked_scatter(x > 0, s), X.astype(np.float16), S.astype(np.float16),
          grad=True)

    def inplace(x, s):
        y = x.clone()
        y.masked_scatter_(x < 0, s)
        return y
    check(inplace, X, S, grad=True)


def test_masked_scatter_errors_are_the_cpus():
    check(_masked_scatter(lambda x: x == x, 5), X, S)          # too few source elements
    check(lambda x, s: x.masked_scatter((x > 0).to(eager.uint8), s), X, S)   # mask dtype
    check(lambda x, s: x.masked_scatter(x > 0, s), X, S.astype(np.float64))  # source dtype
    check(lambda x, s: x.masked_scatter(x[:1, :2] > 0, s), X, S)   # not broadcastable


def test_empty_masks():
    e = np.zeros((0, 3), np.float32)
    check(lambda x: x[x > 0], e)
    check(lambda x, s: x.masked_scatter(x > 0, s), e, S)
    check(lambda x: x[x > 0], e, grad=True)


# -- searchsorted, bucketize ----------------------------------------------------------------------

SEQ = np.array([-1.0, 0.5, 0.5, 0.5, 2.0, 3.0], np.float32)
VALS = np.array([[0.5, -3.0, 2.0], [9.0, 0.49, 3.0]], np.float32)


@pytest.mark.parametrize("kw", [{}, {"right": True}, {"side": "right"}, {"side": "left"},
                                {"out_int32": True}, {"out_int32": True, "right": True}],
                         ids=["left", "right", "side-right", "side-left", "int32",
                              "int32-right"])
def test_searchsorted_sides_ties_and_dtypes(kw):
    check(lambda s, v: eager.searchsorted(s, v, **kw), SEQ, VALS)
    check(lambda s, v: eager.bucketize(v, s, **{k: w for k, w in kw.items() if k != "side"}),
          SEQ, VALS)


def test_searchsorted_rows_scalars_sorter_and_nan():
    rows = np.sort(RNG.standard_normal((2, 3, 5)).astype(np.float32), -1)
    vals = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    check(lambda s, v: eager.searchsorted(s, v), rows, vals)
    check(lambda s, v: eager.searchsorted(s, v, right=True), rows, vals)
    check(lambda s: eager.searchsorted(s, 0.5), SEQ)
    check(lambda s: eager.searchsorted(s, 0.5, right=True), SEQ)
    nan_seq = np.array([0.0, 1.0, np.nan, np.nan], np.float32)
    nan_vals = np.array([np.nan, 1.0, 5.0, -np.inf], np.float32)
    for right in (False, True):
        check(lambda s, v: eager.searchsorted(s, v, right=right), nan_seq, nan_vals)
        check(lambda s, v: eager.searchsorted(s, v, right=right), SEQ, nan_vals)
    perm = np.array([3, 0, 5, 1, 4, 2], np.int64)
    check(lambda s, p, v: eager.searchsorted(s, v, sorter=p), SEQ[np.argsort(perm)], perm, VALS)
    check(lambda s, v: eager.searchsorted(s, v), np.zeros(0, np.float32), VALS)
    check(lambda s, v: eager.searchsorted(s, v), SEQ, np.zeros((2, 0), np.float32))


def test_searchsorted_of_other_dtypes_and_errors():
    ints = np.array([1, 3, 3, 7], np.int64)
    check(lambda s, v: eager.searchsorted(s, v), ints, np.array([3, 0, 8], np.int32))
    check(lambda s, v: eager.searchsorted(s, v, right=True), ints, np.array([2.5, 3.0, 7.5],
                                                                           np.float32))
    check(lambda s, v: eager.searchsorted(s, v), SEQ.astype(np.float16),
          VALS.astype(np.float16))
    check(lambda s, v: eager.searchsorted(s, v), SEQ, VALS.astype(np.float64))
    check(lambda s, v: eager.searchsorted(s, v), np.array([False, True]), np.array([True]))
    check(lambda s, v: eager.searchsorted(s, v), np.zeros((2, 3), np.float32), VALS[:1])
    check(lambda s, v: eager.bucketize(v, s), np.zeros((2, 3), np.float32), VALS)


# -- bincount, histc ------------------------------------------------------------------------------

IDX = np.array([1, 4, 1, 0, 4, 4, 2], np.int64)


def test_bincount_counts_weights_and_minlength():
    check(lambda i: eager.bincount(i), IDX)
    check(lambda i: eager.bincount(i, minlength=9), IDX)
    check(lambda i: eager.bincount(i, minlength=2), IDX)
    for dt in (np.uint8, np.int8, np.int16, np.int32):
        check(lambda i: eager.bincount(i), IDX.astype(dt))
    w = np.array([0.5, 0.25, 1.5, -2.0, 0.125, 3.0, 1.0])   # exact in any order
    for wd in (np.float32, np.float64, np.int64, np.float16):
        check(lambda i, w: eager.bincount(i, w), IDX, w.astype(wd))
        check(lambda i, w: eager.bincount(i, w, minlength=7), IDX, w.astype(wd))
    rw = RNG.standard_normal(7)
    check(lambda i, w: eager.bincount(i, w), IDX, rw, rtol=1e-12, atol=1e-12)


def test_bincount_empty_and_errors():
    e = np.zeros(0, np.int64)
    check(lambda i: eager.bincount(i), e)
    check(lambda i: eager.bincount(i, minlength=3), e)
    check(lambda i, w: eager.bincount(i, w, minlength=2), e, np.zeros(0, np.float32))
    check(lambda i: eager.bincount(i), np.array([1, -1, 2], np.int64))     # negative
    check(lambda i: eager.bincount(i), IDX.reshape(7, 1))                   # not 1-D
    check(lambda i: eager.bincount(i), IDX.astype(np.float32))              # not integers
    check(lambda i: eager.bincount(i, minlength=-1), IDX)
    check(lambda i, w: eager.bincount(i, w), IDX, np.ones(6, np.float32))   # weights' length


H = np.array([0.0, 1.0, 2.0, 2.5, 3.0, 4.0, -1.0, 5.0, np.nan], np.float32)


@pytest.mark.parametrize("kw", [
    {"bins": 4, "min": 0, "max": 4},     # a value at max goes into the last bin; outside: none
    {"bins": 3, "min": 1, "max": 3},
    {"bins": 5},                          # min == max == 0: the data's range (NaN: an error)
    {"bins": 1, "min": -2, "max": 8},
    {"bins": 7, "min": 0.1, "max": 0.7},  # edges not representable
    {"bins": 0, "min": 0, "max": 4},      # errors
    {"bins": 3, "min": 4, "max": 0},
    {"bins": 3, "min": 0, "max": float("inf")},
], ids=["edges", "narrow", "data-range", "one", "inexact", "no-bins", "reversed", "inf"])
def test_histc(kw):
    check(lambda x: eager.histc(x, **kw), H)
    check(lambda x: eager.histc(x, **kw), H[:-1].astype(np.float64))


def test_histc_data_range_half_empty_and_constant():
    check(lambda x: eager.histc(x, bins=4), H[:-1])
    check(lambda x: eager.histc(x, bins=4), H[:-1].astype(np.float16))
    check(lambda x: eager.histc(x, bins=4, min=0, max=3), (H[:-1] * 0.37).reshape(2, 4))
    check(lambda x: eager.histc(x, bins=3), np.zeros(0, np.float32))
    check(lambda x: eager.histc(x, bins=3), np.full(4, 2.0, np.float32))
    check(lambda x: eager.histc(x, bins=3), np.arange(4, dtype=np.int64))   # the CPU's error
    lin = np.linspace(0, 1, 11, dtype=np.float32)    # float32 bin arithmetic at the edges
    check(lambda x: eager.histc(x, bins=10, min=0, max=1), lin)
    check(lambda x: eager.histc(x, bins=3, min=0.1, max=0.9), lin)
