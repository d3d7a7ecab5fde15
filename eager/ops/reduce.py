"""Reductions over dimensions: sum, mean, prod, amax/amin, argmax/argmin (with the
index gather behind ``max(dim)``), var, std, logsumexp, softmax, log_softmax, norm,
cumsum, all, any, count_nonzero.

Reduction params are canonical: ``dim`` is a sorted tuple of non-negative ints (all
dimensions when the user gave none; ``()`` for a 0-d input), ``keepdim`` a bool,
``dtype`` a NumPy dtype or None.  The public functions (:mod:`eager.fn.reduce`) make
them so and always pass every param, and so do the backward formulas here, so that one
op call has one params form.  ``softmax``/``log_softmax``/``cumsum`` and the gather ops
take ``dim`` as a single non-negative int.

Backward formulas get the output gradient ``g`` in the output's shape; reductions put
it back in keepdim form (:func:`_keep`) and let broadcasting spread it over the input.
"""

from __future__ import annotations

import math

import numpy as np

from .base import OUT, Op

_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_I64 = np.dtype(np.int64)
_add_reduce = np.add.reduce


def keep_shape(shape: tuple, dims: tuple) -> tuple:
    """``shape`` with each reduced dimension set to 1 (keepdim form)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def reduced_numel(shape: tuple, dims: tuple) -> int:
    """Number of input elements that go into one output element."""
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _int_acc(a: np.ndarray, dtype):
    """PyTorch's accumulation dtype for sum/prod/cumsum: bool and integers give int64."""
    if dtype is None and a.dtype.kind in "biu":
        return _I64
    return dtype


def _float(a: np.ndarray) -> np.ndarray:
    return a if a.dtype.kind == "f" else a.astype(_F32)


# -- backward helpers (F calls only) -----------------------------------------------------

def _keep(F, t, node):
    """An output-shaped tensor (the gradient, the output) in keepdim form."""
    p = node.params
    if p.get("keepdim", False):
        return t
    shape = keep_shape(node.shapes[0], p["dim"])
    if tuple(t.shape) == shape:
        return t
    return F.reshape(t, shape=shape)


def _expand(F, t, node):
    """A keepdim-form tensor spread over the input's shape."""
    shape = node.shapes[0]
    if tuple(t.shape) == shape:
        return t
    return F.expand(t, shape=shape)


def _sum(F, x, dims, keepdim=True):
    return F.sum(x, dim=dims, keepdim=keepdim, dtype=None)


def _safe(F, x, bad):
    """``x`` with 1 where ``bad``: a divisor that never makes 0/0 or x/0."""
    return F.where(bad, 1.0, x)


# -- sum, mean, prod -------------------------------------------------------------------

class Sum(Op):
    def forward(a, dim, keepdim=False, dtype=None):
        dtype = _int_acc(a, dtype)
        if dtype is None and a.dtype == _F16:  # accumulate half in float, as PyTorch
            return np.sum(a, axis=dim, keepdims=keepdim, dtype=_F32).astype(_F16)
        return np.sum(a, axis=dim, keepdims=keepdim, dtype=dtype)

    def backward(F, g, saved, node):
        if not g.shape:     # a full sum (``loss.sum()``): spread the 0-d gradient at once
            return (F.expand(g, shape=node.shapes[0]),)
        return (_expand(F, _keep(F, g, node), node),)


class Mean(Op):
    """Mean over ``dim``; ``dtype`` (a float dtype) is the dtype computed in and returned."""

    def forward(a, dim, keepdim=False, dtype=None):
        out_dt = np.dtype(dtype) if dtype is not None else a.dtype
        acc = _F32 if out_dt == _F16 else out_dt
        s = _add_reduce(a, axis=dim, keepdims=keepdim, dtype=acc)  # np.sum's own call
        n = reduced_numel(a.shape, dim)
        if n:  # (dividing by a positive count cannot warn)
            out = np.true_divide(s, n)
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.true_divide(s, n)
        return np.asarray(out).astype(out_dt, copy=False)

    def backward(F, g, saved, node):
        n = reduced_numel(node.shapes[0], node.params["dim"])
        gk = _keep(F, g, node)
        gk = F.div(gk, float(n)) if n else F.mul(gk, 0.0)  # n == 0: the input is empty
        return (_expand(F, gk, node),)


class Prod(Op):
    """Product over ``dim``.  The gradient is right with zeros in the input: where a slice
    has one zero, that element gets the product of the others and the rest 0; where it
    has more, all get 0 (as PyTorch)."""
    saves = (0,)

    def forward(a, dim, keepdim=False, dtype=None):
        return np.prod(a, axis=dim, keepdims=keepdim, dtype=_int_acc(a, dtype))

    def backward(F, g, saved, node):
        a = saved[0]
        dims = node.params["dim"]
        gk = _keep(F, g, node)
        zero = F.eq(a, 0.0)
        nzero = _sum(F, zero, dims)
        safe = _safe(F, a, zero)
        p = F.prod(safe, dim=dims, keepdim=True, dtype=None)   # product of the non-zeros
        only_zero = F.logical_and(zero, F.eq(nzero, 1))
        d = F.where(F.eq(nzero, 0), F.div(p, safe), F.where(only_zero, p, 0.0))
        return (F.mul(gk, d),)


# -- amax / amin, argmax / argmin, and the gather behind max(dim) ----------------------

class _Extreme(Op):
    """amax/amin: the gradient is split evenly among the elements equal to the result."""
    abstract = True
    saves = (0, OUT)

    def backward(F, g, saved, node):
        a, out = saved
        mask = F.eq(a, _keep(F, out, node))
        count = _sum(F, mask, node.params["dim"])
        return (F.div(F.where(mask, _keep(F, g, node), 0.0), count),)


class Amax(_Extreme):
    def forward(a, dim, keepdim=False):
        return np.amax(a, axis=dim, keepdims=keepdim)


class Amin(_Extreme):
    def forward(a, dim, keepdim=False):
        return np.amin(a, axis=dim, keepdims=keepdim)


#: the widest dimension the small-dimension paths below reduce by a loop over its entries
_SMALL_DIM = 32


def _split3(shape: tuple, d: int) -> tuple:
    """``(P, K, Q)``: the sizes before dimension ``d``, of it, and after it."""
    p = q = 1
    for s in shape[:d]:
        p *= s
    for s in shape[d + 1:]:
        q *= s
    return p, shape[d], q


def _small_dim(a, d: int) -> bool:
    """Whether ``a`` is best reduced over ``d`` by a loop over its entries: a short
    dimension that is not the last (NumPy's arg-reductions move it last, copy, and then
    pay a call per row of a few elements) in a real or bool array of some size."""
    return (d < a.ndim - 1 and 1 < a.shape[d] <= _SMALL_DIM and a.size >= 256
            and a.dtype.kind in "fiub" and a.dtype.char != "e")


def _arg_small(a, d: int, keepdim: bool, largest: bool):
    """argmax (``largest``) or argmin over the short dimension ``d`` of ``a``: NumPy's
    result (the first extreme; the first NaN wins, as NaN counts as the extreme) from one
    pass over contiguous rows per entry of ``d``."""
    p, k, q = _split3(a.shape, d)
    rows = np.ascontiguousarray(a.reshape(p, k, q).transpose(1, 0, 2)).reshape(k, p * q)
    best = rows[0].copy()
    idx = np.zeros(p * q, _I64)
    hit = np.empty(p * q, np.bool_)
    ok = np.empty(p * q, np.bool_) if a.dtype.kind == "f" else None
    step = np.empty(p * q, _I64)
    for j in range(1, k):
        v = rows[j]
        if ok is not None:  # v beats best: v > best, or v is NaN and best is not
            (np.less_equal if largest else np.greater_equal)(v, best, out=hit)
            np.equal(best, best, out=ok)
            np.greater(ok, hit, out=hit)          # ok and not (v <= best)
        else:
            (np.greater if largest else np.less)(v, best, out=hit)
        (np.maximum if largest else np.minimum)(best, v, out=best)  # NaN sticks
        np.multiply(hit, j, out=step)
        np.maximum(idx, step, out=idx)            # j exceeds every earlier index
    shape = a.shape[:d] + ((1,) if keepdim else ()) + a.shape[d + 1:]
    return idx.reshape(shape)


def _flat_index(idx, p: int, k: int, q: int):
    """Flat positions in a C-ordered ``(p, k, q)`` array of entry ``idx[i, j]`` (an array
    of ``p * q`` in-range indices along the middle dimension) at ``(i, idx, j)``."""
    flat = idx.reshape(p, q) * q
    flat += np.arange(q, dtype=_I64)
    flat += np.arange(0, p * k * q, k * q, dtype=_I64)[:, None]
    return flat


def _arg(fn, a, dim, keepdim):
    if len(dim) == 1 and a.ndim >= 1 and _small_dim(a, dim[0]):
        return _arg_small(a, dim[0], keepdim, fn is np.argmax)
    if len(dim) == 1 and a.ndim >= 1:
        out = fn(a, axis=dim[0], keepdims=keepdim)
    else:  # all dimensions: index into the flattened tensor
        out = fn(a.reshape(-1)) if a.ndim else np.int64(0)
        if keepdim:
            out = np.reshape(out, (1,) * a.ndim)
    return np.asarray(out, dtype=_I64)


class Argmax(Op):
    """Index of the (first) maximum along ``dim`` = ``(d,)``, or into the flattened input
    when ``dim`` is all dimensions.  NaN counts as the maximum (as PyTorch)."""
    differentiable = False

    def forward(a, dim, keepdim=False):
        return _arg(np.argmax, a, dim, keepdim)


class Argmin(Op):
    differentiable = False

    def forward(a, dim, keepdim=False):
        return _arg(np.argmin, a, dim, keepdim)


class PickAlongDim(Op):
    """``take_along_dim(a, idx, dim)`` with ``idx`` of size 1 along ``dim`` (keepdim form,
    as argmax gives it); ``keepdim=False`` drops that dimension.  The values of
    ``max(dim)``/``min(dim)``: the gradient goes to the picked element only."""
    saves = (1,)

    def forward(a, idx, dim, keepdim=True):
        if a.ndim == 0:
            return a.copy()
        if a.ndim >= 2 and a.size >= 256 and idx.shape == a.shape[:dim] + (1,) + \
                a.shape[dim + 1:]:  # (argmax's indices: in range) one flat take
            p, k, q = _split3(a.shape, dim)
            out = a.reshape(-1).take(_flat_index(idx, p, k, q)).reshape(idx.shape)
        else:
            out = np.take_along_axis(a, idx, axis=dim)
        return out if keepdim else np.squeeze(out, axis=dim)

    def backward(F, g, saved, node):
        idx = saved[0]
        return F.place_along_dim(g, idx, dim=node.params["dim"], shape=node.shapes[0]), None


class PlaceAlongDim(Op):
    """Adjoint of :class:`PickAlongDim`: zeros of ``shape`` with ``g`` put at ``idx``
    along ``dim`` (``g`` in either keepdim or reduced form)."""
    saves = (1,)

    def forward(g, idx, dim, shape):
        g = np.asarray(g)
        out = np.zeros(shape, dtype=g.dtype)
        if out.ndim == 0:
            out[()] = g
            return out
        if g.ndim != idx.ndim:
            g = np.expand_dims(g, dim)
        if out.size >= 256 and g.shape == idx.shape == shape[:dim] + (1,) + shape[dim + 1:]:
            p, k, q = _split3(shape, dim)  # one flat assignment (the positions are distinct)
            out.reshape(-1)[_flat_index(idx, p, k, q)] = g.reshape(p, q)
            return out
        np.put_along_axis(out, idx, g, axis=dim)
        return out

    def backward(F, gg, saved, node):
        idx = saved[0]
        keep = len(node.shapes[0]) == len(node.shapes[1])
        return F.pick_along_dim(gg, idx, dim=node.params["dim"], keepdim=keep), None


# -- var, std --------------------------------------------------------------------------

def _var(a, dim, correction, keepdim):
    acc = _F32 if a.dtype == _F16 else a.dtype
    x = a.astype(acc, copy=False)
    n = reduced_numel(a.shape, dim)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.sum(x, axis=dim, keepdims=True) / n
        dev = x - mean
        s = np.sum(dev * dev, axis=dim, keepdims=keepdim)
        out = np.true_divide(s, max(n - correction, 0))
    return np.asarray(out), a.dtype


def _var_grad(F, gk, a, node):
    """d var / d a = 2 (a - mean) / (N - correction), times the keepdim gradient."""
    p = node.params
    dims = p["dim"]
    div = reduced_numel(node.shapes[0], dims) - p.get("correction", 1)
    scale = 2.0 / div if div > 0 else math.inf
    mean = F.mean(a, dim=dims, keepdim=True, dtype=None)
    return F.mul(F.mul(gk, F.sub(a, mean)), scale)


class Var(Op):
    """Variance over ``dim`` with divisor ``max(N - correction, 0)``."""
    saves = (0,)

    def forward(a, dim, correction=1, keepdim=False):
        out, dt = _var(a, dim, correction, keepdim)
        return out.astype(dt, copy=False)

    def backward(F, g, saved, node):
        return (_var_grad(F, _keep(F, g, node), saved[0], node),)


class Std(Op):
    """Standard deviation; the gradient is 0 where the result is 0 (as PyTorch)."""
    saves = (0, OUT)

    def forward(a, dim, correction=1, keepdim=False):
        out, dt = _var(a, dim, correction, keepdim)
        return np.sqrt(out).astype(dt, copy=False)

    def backward(F, g, saved, node):
        a, out = saved
        ok = _keep(F, out, node)
        zero = F.eq(ok, 0.0)
        gv = F.where(zero, 0.0, F.div(_keep(F, g, node), F.mul(_safe(F, ok, zero), 2.0)))
        return (_var_grad(F, gv, a, node),)


# -- logsumexp, softmax, log_softmax -----------------------------------------------------

def _shifted(a, axis):
    """``a - max`` along ``axis`` with non-finite maxima replaced by 0, and the shift."""
    m = np.amax(a, axis=axis, keepdims=True) if a.size else np.zeros(
        keep_shape(a.shape, axis if isinstance(axis, tuple) else (axis,)), a.dtype)
    if not np.isfinite(m).all():
        m = np.where(np.isfinite(m), m, 0).astype(a.dtype, copy=False)
    return a - m, m


class _quiet_if_nonfinite:
    """``np.errstate`` costs microseconds: only inf/nan inputs can warn here, so only
    then silence them (a finite maximum keeps ``a - max <= 0``: no overflow, sums >= 1)."""

    __slots__ = ("a", "cm")

    def __init__(self, a):
        self.a = a
        self.cm = None

    def __enter__(self):
        if not np.isfinite(self.a).all():
            self.cm = np.errstate(divide="ignore", invalid="ignore", over="ignore")
            self.cm.__enter__()

    def __exit__(self, *exc):
        if self.cm is not None:
            self.cm.__exit__(*exc)
        return False


class Logsumexp(Op):
    """``log(sum(exp(a)))`` over ``dim``, stable: the max is taken out first; all -inf
    slices give -inf, any +inf gives +inf."""
    saves = (0, OUT)

    def forward(a, dim, keepdim=False):
        a = _float(a)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            z, m = _shifted(a, dim)
            out = np.log(np.sum(np.exp(z), axis=dim, keepdims=True)) + m
        if not keepdim:
            out = out.reshape(tuple(s for i, s in enumerate(a.shape) if i not in dim))
        return out

    def backward(F, g, saved, node):
        a, out = saved
        return (F.mul(_keep(F, g, node), F.exp(F.sub(a, _keep(F, out, node)))),)


def _softmax_shifted(a, axis):
    """``a - max`` along ``axis`` as PyTorch's softmax shifts: a maximum of ``-inf`` (a row
    of -inf) shifts by 0, while ``+inf`` and NaN maxima stay, so such a row is all NaN
    (``inf - inf``), as in PyTorch: ``softmax([inf, 1, -inf])`` is ``[nan, nan, nan]``."""
    m = a.max(axis=axis, keepdims=True)
    m = np.where(m == -np.inf, 0, m).astype(a.dtype, copy=False)
    return a - m


class Softmax(Op):
    """``exp(a) / sum(exp(a))`` along one ``dim``; backward ``out * (g - sum(g * out))``."""
    saves = (OUT,)

    def forward(a, dim):
        if a.ndim == 0:
            return np.ones_like(a)
        if a.size:
            m = a.max(axis=dim, keepdims=True)  # (methods: np.amax/np.sum add ~1 us)
            if np.isfinite(m).all():  # nothing can warn (see LogSoftmax)
                e = np.exp(a - m)
                return np.divide(e, e.sum(axis=dim, keepdims=True), out=e)
        with _quiet_if_nonfinite(a):
            e = np.exp(_softmax_shifted(a, dim) if a.size else a)
            return (e / np.sum(e, axis=dim, keepdims=True)).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        out = saved[0]
        if not node.shapes[0]:
            return (F.mul(g, 0.0),)
        s = _sum(F, F.mul(g, out), (node.params["dim"],))
        return (F.mul(out, F.sub(g, s)),)


class LogSoftmax(Op):
    """``a - logsumexp(a)`` along one ``dim``; backward ``g - exp(out) * sum(g)``."""
    saves = (OUT,)

    def forward(a, dim):
        if a.ndim == 0:
            return np.zeros_like(a)
        if a.size:
            m = a.max(axis=dim, keepdims=True)  # (methods: np.amax/np.sum add ~1 us)
            if np.isfinite(m).all():  # no nan or +inf in a; a -inf gives exp(-inf) = 0
                z = a - m             # (nothing can warn: the checks below are not needed)
                lse = np.log(np.exp(z).sum(axis=dim, keepdims=True))
                return np.subtract(z, lse, out=z)
        with _quiet_if_nonfinite(a):
            z = _softmax_shifted(a, dim) if a.size else a
            lse = np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
            return (z - lse).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        out = saved[0]
        if not node.shapes[0]:
            return (F.mul(g, 0.0),)
        s = _sum(F, g, (node.params["dim"],))
        return (F.sub(g, F.mul(F.exp(out), s)),)


# -- norm --------------------------------------------------------------------------------

def norm_quiet(a, p, dim, keepdim=False):
    """:class:`Norm`'s values, to be called with NumPy's divide/invalid/overflow warnings
    off (the caller's ``errstate``: one context for many norms)."""
    acc = _F32 if a.dtype == _F16 else a.dtype
    x = np.abs(a).astype(acc, copy=False)
    if p == 2.0:
        out = np.sqrt(np.sum(x * x, axis=dim, keepdims=keepdim))
    elif p == 1.0:
        out = np.sum(x, axis=dim, keepdims=keepdim)
    elif p == math.inf:
        out = np.amax(x, axis=dim, keepdims=keepdim)
    elif p == -math.inf:
        out = np.amin(x, axis=dim, keepdims=keepdim)
    elif p == 0.0:
        out = np.sum(x != 0, axis=dim, keepdims=keepdim, dtype=acc)
    else:
        out = np.power(np.sum(np.power(x, p), axis=dim, keepdims=keepdim), 1.0 / p)
    return np.asarray(out).astype(a.dtype, copy=False)


class Norm(Op):
    """Vector ``p``-norm over ``dim`` (``p`` a float: 2, 1, inf, -inf, 0 or any other).
    The gradient is 0, not nan, where the norm is 0 (as PyTorch)."""
    saves = (0, OUT)

    def forward(a, p, dim, keepdim=False):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return norm_quiet(a, p, dim, keepdim)

    def backward(F, g, saved, node):
        a, out = saved
        p = node.params["p"]
        dims = node.params["dim"]
        gk = _keep(F, g, node)
        if p == 1.0:
            return (F.mul(gk, F.sign(a)),)
        if p == 0.0:
            return (F.mul(_expand(F, gk, node), 0.0),)
        ok = _keep(F, out, node)
        if p in (math.inf, -math.inf):  # split evenly among the extreme |a| (and NaNs)
            absa = F.abs(a)
            mask = F.logical_or(F.eq(absa, ok), F.isnan(absa))
            count = _sum(F, mask, dims)
            return (F.mul(F.sign(a), F.div(F.where(mask, gk, 0.0), count)),)
        zero = F.eq(ok, 0.0)
        safe = _safe(F, ok, zero)
        if p == 2.0:  # a / norm
            return (F.mul(a, F.where(zero, 0.0, F.div(gk, safe))),)
        # sign(a) |a|^(p-1) / norm^(p-1), 0 at a == 0 and where the norm is 0
        azero = F.eq(a, 0.0)
        absa = _safe(F, F.abs(a), azero)
        scaled = F.where(azero, 0.0, F.mul(F.sign(a), F.pow(absa, p - 1.0)))
        scale = F.where(zero, 0.0, F.div(gk, F.pow(safe, p - 1.0)))
        return (F.mul(scaled, scale),)


# -- cumsum ------------------------------------------------------------------------------

class Cumsum(Op):
    """Cumulative sum along one ``dim``; ``reverse=True`` sums from the end (that is the
    backward: the adjoint of a cumsum is the reverse cumsum)."""

    def forward(a, dim, reverse=False, dtype=None):
        dtype = _int_acc(a, dtype)
        if a.ndim == 0:
            return a.astype(dtype if dtype is not None else a.dtype)
        if reverse:
            a = np.flip(a, dim)
            return np.ascontiguousarray(np.flip(np.cumsum(a, axis=dim, dtype=dtype), dim))
        return np.cumsum(a, axis=dim, dtype=dtype)

    def backward(F, g, saved, node):
        p = node.params
        return (F.cumsum(g, dim=p["dim"], reverse=not p.get("reverse", False), dtype=None),)


# -- logical reductions and counts: no gradient ------------------------------------------

class All(Op):
    """True where every element is non-zero; uint8 input gives uint8 (as PyTorch)."""
    differentiable = False

    def forward(a, dim, keepdim=False):
        out = np.all(a, axis=dim, keepdims=keepdim)
        return np.asarray(out, dtype=np.uint8 if a.dtype == np.uint8 else np.bool_)


class Any(Op):
    differentiable = False

    def forward(a, dim, keepdim=False):
        out = np.any(a, axis=dim, keepdims=keepdim)
        return np.asarray(out, dtype=np.uint8 if a.dtype == np.uint8 else np.bool_)


class CountNonzero(Op):
    differentiable = False

    def forward(a, dim):
        if not dim:
            return np.asarray(a != 0, dtype=_I64)
        return np.asarray(np.count_nonzero(a, axis=dim), dtype=_I64)
