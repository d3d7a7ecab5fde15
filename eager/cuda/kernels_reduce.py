"""Reductions on CUDA: sum/mean/amax/amin/prod/any/all in the block-reduction template (one
block per output element, :func:`runtime.cuda.launch.run_reduce_core`), softmax,
log-softmax, var, logsumexp and norms composed from them, arg-reductions and scans
(cumsum, cumprod, logcumsumexp) with their own kernels."""

from __future__ import annotations

import math

import numpy as np

from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from ..ops import OPS
from ..ops import elementwise as E
from ..ops import reduce as R
from .elementwise import _BOOL, _I64, contiguous, run_elementwise


def reduce(kind: str, a: CudaArray, dims: tuple, keepdim: bool, out_dtype) -> CudaArray:
    """``kind`` (sum, mean, amax, amin, prod, any, all) of ``a`` over ``dims``."""
    kept = [d for d in range(a.ndim) if d not in dims]
    view = a.transpose(kept + list(dims))
    out_shape = tuple(1 if d in dims else a.shape[d] for d in range(a.ndim)) if keepdim \
        else tuple(a.shape[d] for d in kept)
    if kind in ("amax", "amin") and not all(a.shape[d] for d in dims):
        raise RuntimeError(f"{kind}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return launch.run_reduce_core((), "a0", [view], view.shape, len(dims), kind, a.dtype,
                                  out_dtype, out_shape, f"{kind} of {a.dtype}")


def sum_(a, dim, keepdim=False, dtype=None):
    out = R._int_acc(a, dtype) if dtype is None and a.dtype.kind in "biu" else dtype
    return reduce("sum", a, dim, keepdim, a.dtype if out is None else out)


def mean(a, dim, keepdim=False, dtype=None):
    return reduce("mean", a, dim, keepdim, a.dtype if dtype is None else dtype)


def sum_to(a, shape):
    shape = tuple(shape)
    if a.shape == shape:
        return a
    lead = a.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and a.shape[i + lead] != 1)
    return sum_(a, dims, True).reshape(shape) if dims else a.reshape(shape)


def _shifted(a, dim):
    """``a - max`` along ``dim`` with a -inf maximum taken as 0 (as eager's
    ``_softmax_shifted``: a row holding +inf or NaN is all NaN, as in PyTorch)."""
    m = reduce("amax", a, (dim,), True, a.dtype)
    m = run_elementwise(E.Where, [run_elementwise(E.Eq, [m, -np.inf], {}), 0.0, m], {})
    return run_elementwise(E.Sub, [a, m], {})


def softmax(a, dim):
    if a.ndim == 0:
        return run_elementwise(E.Add, [run_elementwise(E.Mul, [a, 0], {}), 1], {})
    e = run_elementwise(E.Exp, [_shifted(a, dim)], {})
    return run_elementwise(E.Div, [e, reduce("sum", e, (dim,), True, e.dtype)], {})


def log_softmax(a, dim):
    if a.ndim == 0:
        return run_elementwise(E.Mul, [a, 0], {})
    z = _shifted(a, dim)
    s = reduce("sum", run_elementwise(E.Exp, [z], {}), (dim,), True, a.dtype)
    return run_elementwise(E.Sub, [z, run_elementwise(E.Log, [s], {})], {})


def var(a, dim, correction=1, keepdim=False):
    n = int(np.prod([a.shape[d] for d in dim])) if dim else 1
    mean = reduce("mean", a, dim, True, a.dtype)
    dev = run_elementwise(E.Sub, [a, mean], {})
    s = reduce("sum", run_elementwise(E.Mul, [dev, dev], {}), dim, keepdim, a.dtype)
    return run_elementwise(E.Div, [s, float(max(n - correction, 0))], {})


def std(a, dim, correction=1, keepdim=False):
    return run_elementwise(E.Sqrt, [var(a, dim, correction, keepdim)], {})


def logsumexp(a, dim, keepdim=False):
    a = a if a.dtype.kind == "f" else run_elementwise(E.Cast, [a], {"dtype": np.float32})
    m = reduce("amax", a, dim, True, a.dtype)
    m = run_elementwise(E.Where, [run_elementwise(E.Isfinite, [m], {}), m, 0.0], {})
    e = run_elementwise(E.Exp, [run_elementwise(E.Sub, [a, m], {})], {})
    out = run_elementwise(E.Add, [run_elementwise(E.Log, [reduce("sum", e, dim, True,
                                                                  a.dtype)], {}), m], {})
    return out if keepdim else out.squeeze(dim)


def argreduce(largest):
    def impl(a, dim, keepdim=False):
        if len(dim) == 1 and a.ndim >= 1:
            d = dim[0]
            kept = [k for k in range(a.ndim) if k != d]
            rows_shape = tuple(a.shape[k] for k in kept)
            x = contiguous(a.transpose(kept + [d]))
            m = a.shape[d]
            out_shape = tuple(1 if k == d else a.shape[k] for k in range(a.ndim)) if keepdim \
                else rows_shape
        else:   # every dimension: an index into the flattened input
            x = contiguous(a)
            m = a.size
            out_shape = (1,) * a.ndim if keepdim else ()
        if m == 0:
            raise RuntimeError(f"{'argmax' if largest else 'argmin'}(): Expected reduction "
                               "dim to be specified for input.numel() == 0.")
        rows = x.size // m
        # compared in the input's own dtype (one kernel per direction and dtype); bool
        # as int64
        src = x if a.dtype.kind in "fiu" else run_elementwise(E.Cast, [x], {"dtype": _I64})
        return launch.argreduce(src, rows, m, largest).reshape(out_shape)
    return impl


# -- products, logical reductions, counts, norms ---------------------------------------------

def reduce_kind(kind):
    def impl(a, dim, keepdim=False, dtype=None):
        if kind == "prod":
            out = R._int_acc(a, dtype)
            out = a.dtype if out is None else np.dtype(out)
        else:   # any / all: bool, or uint8 for uint8 input (as the CPU forward)
            out = np.dtype(np.uint8) if a.dtype == np.uint8 else _BOOL
        return reduce(kind, a, dim, keepdim, out)
    impl.__name__ = f"{kind}_cuda"
    return impl


def count_nonzero(a, dim):
    nz = run_elementwise(E.Ne, [a, 0], {})
    if not dim:
        return run_elementwise(E.Cast, [nz], {"dtype": _I64})
    return reduce("sum", nz, dim, False, _I64)


def norm(a, p, dim, keepdim=False):
    x = run_elementwise(E.Abs, [a], {})
    if p in (math.inf, -math.inf) and not all(a.shape[d] for d in dim):
        # NumPy's error for an empty max/min, as the CPU forward raises it
        return CudaArray.from_host(R.Norm.forward(np.empty(a.shape, a.dtype), p, dim, keepdim))
    if p == 2.0:
        out = run_elementwise(E.Sqrt, [reduce("sum", run_elementwise(E.Mul, [x, x], {}), dim,
                                              keepdim, x.dtype)], {})
    elif p == 1.0:
        out = reduce("sum", x, dim, keepdim, x.dtype)
    elif p in (math.inf, -math.inf):
        out = reduce("amax" if p > 0 else "amin", x, dim, keepdim, x.dtype)
    elif p == 0.0:
        out = reduce("sum", run_elementwise(E.Ne, [x, 0], {}), dim, keepdim, x.dtype)
    else:
        s = reduce("sum", run_elementwise(E.Pow, [x, float(p)], {}), dim, keepdim, x.dtype)
        out = run_elementwise(E.Pow, [s, 1.0 / p], {})
    return out if out.dtype == a.dtype else run_elementwise(E.Cast, [out], {"dtype": a.dtype})


# -- scans ------------------------------------------------------------------------------------

def _scan(kind, a, dim, out_dtype, reverse=False):
    """``kind`` ("sum", "prod", "lse") scanned along ``dim``: the input moved so that
    ``dim`` is last and cast to ``out_dtype`` (one contiguous copy), scanned in place one
    row per thread, moved back (contiguous, as the CPU's result)."""
    out_dtype = np.dtype(out_dtype)
    if a.ndim == 0:
        return run_elementwise(E.Cast, [a], {"dtype": out_dtype})
    perm = [d for d in range(a.ndim) if d != dim] + [dim]
    moved = a.transpose(perm)
    y = CudaArray.empty(moved.shape, out_dtype)
    run_elementwise(E.Cast, [moved], {"dtype": out_dtype}, out=y)
    m = a.shape[dim]
    rows = y.size // m if m else 0
    launch.scan(kind, y, rows, m, reverse)
    back = [0] * a.ndim
    for i, d in enumerate(perm):
        back[d] = i
    return contiguous(y.transpose(back))


def cumsum(a, dim, reverse=False, dtype=None):
    out = R._int_acc(a, dtype)
    return _scan("sum", a, dim, a.dtype if out is None else out, reverse)


def cumprod(a, dim, dtype=None):
    out = R._int_acc(a, dtype)
    return _scan("prod", a, dim, a.dtype if out is None else out)


def logcumsumexp(a, dim):
    if a.dtype.kind != "f":   # the CPU forward's error (NumPy has no integer logaddexp)
        return CudaArray.from_host(OPS["logcumsumexp"].forward(np.zeros(a.shape, a.dtype), dim))
    return _scan("lse", a, dim, a.dtype)
