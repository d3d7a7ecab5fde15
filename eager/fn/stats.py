"""Order statistics and descriptive statistics with PyTorch's signatures: ``median``,
``nanmedian``, ``mode`` (named tuples ``(values, indices)`` along a dimension),
``quantile``/``nanquantile``, ``aminmax``, ``nansum``/``nanmean``, ``std_mean``/
``var_mean``, ``cov``/``corrcoef``, ``trapezoid``/``trapz``, and the builders
``repeat_interleave`` and ``vander``.

All are compositions of existing ops: positions come from a stable ``sort`` (NaN last)
and counting ops, values are taken from the input with ``gather``, so the gradient goes
to the selected element as PyTorch's (``median()`` without ``dim``, like PyTorch, spreads
it evenly over the elements equal to the median, through ``amax``'s tie rule).  Which of
several equal elements ``median``/``nanmedian`` with ``dim`` report is the one a stable
sort puts at the median (PyTorch's choice is unspecified); ``mode`` reports the last
index of the most frequent value (the smallest such value on ties).
``repeat_interleave`` with a tensor of repeats has a data-dependent shape: it reads the
repeats back to build the index.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from .. import return_types as _rt
from ..construct import tensor
from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..dtypes import promote_np, scalar_name
from ..ops import factory as _f
from ..tensor import Tensor, _wrap_dim
from .args import is_int
from .elementwise import (
    add,
    cast,
    ceil,
    clamp,
    div,
    eq,
    floor,
    isnan,
    le,
    lerp,
    logical_and,
    logical_not,
    logical_or,
    lt,
    mul,
    ne,
    round,
    sqrt,
    sub,
    where,
)
from .index import gather, index_select, scatter_add
from .linalg import _need_tensor, diagonal, mm
from .reduce import amax, amin, any, argmax, mean, std, var
from .reduce import cumsum as _cumsum
from .reduce import sum as _sum
from .scan import cumprod
from .shape import cat, expand, flip, movedim, narrow, reshape, select, squeeze, t, unsqueeze
from .sort import sort

__all__ = ["aminmax", "corrcoef", "cov", "median", "mode", "nanmean", "nanmedian",
           "nanquantile", "nansum", "quantile", "repeat_interleave", "std_mean", "trapezoid",
           "trapz", "vander", "var_mean"]

_I64 = np.dtype(np.int64)


def _full(shape, value, np_dtype, like: Tensor) -> Tensor:
    out = dispatch(_f.Full, shape=tuple(shape), value=value, dtype=np.dtype(np_dtype))
    return out if like.device.type == "cpu" else out.to(like.device)


def _nonempty(input: Tensor, d: int, op: str, sep: str = "():") -> None:
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{op}{sep} Expected reduction dim {d} to have non-zero size.")


# -- median, nanmedian ------------------------------------------------------------------

def _spread(x: Tensor, v: Tensor) -> Tensor:
    """``v`` (a value of ``x``, NaN if ``x`` has one) with its gradient spread evenly over
    the elements of ``x`` equal to it (``amax``/``amin`` split ties evenly)."""
    mask = logical_or(eq(x, v), logical_and(isnan(x), isnan(v)))
    top = amax(where(mask, x, -math.inf))
    bottom = amin(where(mask, x, math.inf))
    return where(eq(v, -math.inf), bottom, top)


def _median_k(s: Tensor, d: int, ignore_nan: bool) -> Tensor:
    """The position (keepdim) in the sorted ``s`` that ``median``/``nanmedian`` pick."""
    n = s.shape[d]
    count = _sum(logical_not(isnan(s)), d, keepdim=True)
    if ignore_nan:
        return clamp(div(sub(count, 1), 2, rounding_mode="floor"), min=0)
    return where(lt(count, n), count, (n - 1) // 2)


def _median(op: str, input, dim, keepdim: bool, ignore_nan: bool):
    _need_tensor(op, input, "input", 1)
    if input._data.dtype.kind == "b":
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for 'Bool'")
    if dim is None:
        flat = reshape(input, (-1,))
        if flat.shape[0] == 0:
            return _full((), math.nan, _dt.floating(input._data.dtype), input)
        s = sort(flat.detach()).values
        v = squeeze(gather(s, 0, _median_k(s, 0, ignore_nan)), 0)
        return _spread(flat, v) if input.requires_grad else v
    d = _wrap_dim(dim, input.ndim, op)
    _nonempty(input, d, op)
    x = unsqueeze(input, 0) if input.ndim == 0 else input
    s, si = sort(x.detach(), d, stable=True)
    idx = gather(si, d, _median_k(s, d, ignore_nan))
    values = gather(x, d, idx)
    if not keepdim or input.ndim == 0:
        values, idx = squeeze(values, d), squeeze(idx, d)
    return getattr(_rt, op)(values, idx)


def median(input, dim=None, keepdim: bool = False):
    """The median: with no ``dim``, the lower of the two middle values of all elements
    (NaN if there is one); with ``dim``, the named tuple ``(values, indices)`` of the
    medians along ``dim``.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce; ``None`` reduces all and returns
            only the value. Default: ``None``.
        keepdim (bool, optional): keep ``dim`` with size 1. Default: ``False``.

    Example::

        >>> eager.median(eager.tensor([4.0, 1.0, 3.0, 2.0]))
        tensor(2.)
        >>> eager.median(eager.tensor([[1.0, 5.0, 3.0]]), dim=1)
        median(values=tensor([3.]), indices=tensor([2]))
    """
    return _median("median", input, dim, keepdim, False)


def nanmedian(input, dim=None, keepdim: bool = False):
    """:func:`median` ignoring NaN (NaN only where every element is NaN).

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce; ``None`` reduces all and returns
            only the value. Default: ``None``.
        keepdim (bool, optional): keep ``dim`` with size 1. Default: ``False``.

    Example::

        >>> eager.nanmedian(eager.tensor([1.0, float("nan"), 3.0, 2.0]))
        tensor(2.)
    """
    return _median("nanmedian", input, dim, keepdim, True)


def mode(input, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` (the smallest one on ties) and the index of its
    last occurrence, as the named tuple ``(values, indices)``.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: -1.
        keepdim (bool, optional): keep ``dim`` with size 1. Default: ``False``.

    Example::

        >>> eager.mode(eager.tensor([[1, 2, 2, 3, 3, 3]]))
        mode(values=tensor([3]), indices=tensor([5]))
    """
    _need_tensor("mode", input, "input", 1)
    d = _wrap_dim(dim, input.ndim, "mode")
    _nonempty(input, d, "mode")
    x = unsqueeze(input, 0) if input.ndim == 0 else input
    s, si = sort(x.detach(), d, stable=True)
    n = s.shape[d]
    first = _full(narrow(s, d, 0, 1).shape, True, np.bool_, s)   # a run starts at 0
    new_run = cat([first, ne(narrow(s, d, 1, n - 1), narrow(s, d, 0, n - 1))], d)
    run = sub(_cumsum(new_run, d), 1)                             # run id of each position
    counts = scatter_add(mul(run, 0), d, run, add(mul(run, 0), 1))
    freq = gather(counts, d, run)
    best = amax(freq, d, keepdim=True)
    start = argmax(cast(eq(freq, best), _dt.int64), d, keepdim=True)   # first longest run
    idx = gather(si, d, add(start, sub(best, 1)))                 # its last element
    values = gather(x, d, idx)
    if not keepdim or input.ndim == 0:
        values, idx = squeeze(values, d), squeeze(idx, d)
    return _rt.mode(values, idx)


# -- quantile, nanquantile -------------------------------------------------------------

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    _need_tensor(op, input, "input", 1)
    dt = input._data.dtype
    if input.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if q._data.dtype != dt:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
        qd = q.detach()
        if bool(any(logical_or(lt(qd, 0), lt(1, qd)))):
            raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
        scalar_q = q.ndim == 0
        qt = reshape(q, (-1,))
    else:
        q = float(q)
        if not 0 <= q <= 1:
            raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
        scalar_q = True
        qt = _full((1,), q, dt, input)
    if interpolation not in _MODES:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if dim is None:
        xs = reshape(input, (-1,))
        rest = (1,) * input.ndim if keepdim else ()
    else:
        d = _wrap_dim(dim, input.ndim, op)
        xs = movedim(input, d, -1) if input.ndim else reshape(input, (1,))
        shape = list(input.shape)
        if shape:
            if keepdim:
                shape[d] = 1
            else:
                del shape[d]
        rest = tuple(shape)
    s = sort(xs, -1).values                                     # (*B, n), NaN last
    n = s.shape[-1]
    nq = qt.shape[0]
    qb = reshape(qt, (1,) * (s.ndim - 1) + (nq,))               # (1.., Q)
    if ignore_nan:
        count = _sum(logical_not(isnan(s)), -1, keepdim=True)
        ranks = mul(qb, sub(count, 1))
        ranks = where(lt(ranks, 0), 0.0, ranks)
    else:
        has_nan = any(isnan(s), -1, keepdim=True)
        ranks = where(has_nan, float(n - 1), mul(qb, n - 1))
    ranks = cast(ranks, _dt.from_numpy(dt))
    if interpolation == "lower":
        ranks = floor(ranks)
    elif interpolation == "higher":
        ranks = ceil(ranks)
    elif interpolation == "nearest":
        ranks = round(ranks)
    below = cast(ranks, _dt.int64)
    out = gather(s, -1, below)
    if interpolation in ("linear", "midpoint"):
        w = sub(ranks, below) if interpolation == "linear" else add(mul(ranks, 0.0), 0.5)
        above = gather(s, -1, cast(ceil(ranks), _dt.int64))
        out = lerp(out, above, cast(w, _dt.from_numpy(dt)))
    out = movedim(out, -1, 0)                                    # (Q, *B)
    out = reshape(out, (nq,) + rest)
    return squeeze(out, 0) if scalar_q else out


def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """The ``q``-th quantiles of ``input`` (of all elements, or along ``dim``); NaN where
    the reduced elements contain NaN.

    Args:
        input (Tensor): a float32 or float64 tensor.
        q (float or Tensor): quantiles in ``[0, 1]``; a 1-D tensor adds a leading
            dimension of its size to the result.
        dim (int, optional): the dimension to reduce. Default: ``None`` (all).
        keepdim (bool, optional): keep the reduced dimension(s) with size 1.
            Default: ``False``.
        interpolation (str, optional): between the two nearest data points ``i < j``:
            ``'linear'``, ``'lower'`` (``i``), ``'higher'`` (``j``), ``'midpoint'``,
            ``'nearest'`` (half to even rank). Default: ``'linear'``.

    Example::

        >>> x = eager.tensor([0.0, 1.0, 2.0, 3.0])
        >>> eager.quantile(x, eager.tensor([0.25, 0.5]))
        tensor([0.7500, 1.5000])
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear"):
    """:func:`quantile` ignoring NaN (NaN only where every reduced element is NaN).

    Args:
        input (Tensor): a float32 or float64 tensor.
        q (float or Tensor): quantiles in ``[0, 1]``.
        dim (int, optional): the dimension to reduce. Default: ``None`` (all).
        keepdim (bool, optional): keep the reduced dimension(s). Default: ``False``.
        interpolation (str, optional): as :func:`quantile`. Default: ``'linear'``.

    Example::

        >>> eager.nanquantile(eager.tensor([1.0, float("nan"), 3.0]), 0.5)
        tensor(2.)
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# -- aminmax, nansum, nanmean, std_mean, var_mean ---------------------------------------

def aminmax(input, *, dim=None, keepdim: bool = False):
    """The named tuple ``(min, max)`` of all elements or along ``dim``.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: ``None`` (all).
        keepdim (bool, optional): keep the reduced dimension(s). Default: ``False``.

    Example::

        >>> eager.aminmax(eager.tensor([1, -3, 5]))
        aminmax(min=tensor(-3), max=tensor(5))
    """
    _need_tensor("aminmax", input, "input", 1)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(input.ndim))
    else:
        d = _wrap_dim(dim, input.ndim, "aminmax")
        _nonempty(input, d, "aminmax", ":")
        dims = (d,) if input.ndim else ()
    return _rt.aminmax(amin(input, dims, keepdim), amax(input, dims, keepdim))


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum treating NaN as zero.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension(s) to reduce. Default: all.
        keepdim (bool, optional): keep the reduced dimension(s). Default: ``False``.
        dtype (eager.dtype, optional): the dtype of the sum. Default: ``None``.

    Example::

        >>> eager.nansum(eager.tensor([1.0, float("nan"), 2.0]))
        tensor(3.)
    """
    _need_tensor("nansum", input, "input", 1)
    x = where(isnan(input), 0, input) if _isf(input._data.dtype) else input
    return _sum(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean of the elements that are not NaN.

    Args:
        input (Tensor): a floating-point tensor.
        dim (int or tuple of ints, optional): the dimension(s) to reduce. Default: all.
        keepdim (bool, optional): keep the reduced dimension(s). Default: ``False``.
        dtype (eager.dtype, optional): the dtype of the sum. Default: ``None``.

    Example::

        >>> eager.nanmean(eager.tensor([1.0, float("nan"), 2.0]))
        tensor(1.5000)
    """
    _need_tensor("nanmean", input, "input", 1)
    if not _isf(input._data.dtype):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {scalar_name(input._data.dtype)}")
    count = _sum(logical_not(isnan(input)), dim, keepdim)
    return div(nansum(input, dim, keepdim, dtype=dtype), count)


def _stat_mean(op, f, input, dim, unbiased, keepdim, correction):
    _need_tensor(op, input, "input", 1)
    if isinstance(dim, bool):                       # legacy op(input, unbiased)
        unbiased, dim = dim, None
    if not _isf(input._data.dtype):
        raise RuntimeError(f"{op} only support floating point and complex dtypes")
    stat = f(input, dim, unbiased, keepdim, correction=correction)
    if dim is None and keepdim:
        dim = tuple(range(input.ndim))
    return stat, mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """The tuple ``(std, mean)`` over ``dim``.

    Args:
        input (Tensor): a floating-point tensor.
        dim (int or tuple of ints, optional): the dimension(s) to reduce. Default: all.
        unbiased (bool, optional): legacy form of ``correction`` (``False``: 0).
        keepdim (bool, optional): keep the reduced dimension(s). Default: ``False``.
        correction (int, optional): the divisor is ``N - correction``. Default: 1.

    Example::

        >>> eager.std_mean(eager.tensor([1.0, 2.0, 3.0]))
        (tensor(1.), tensor(2.))
    """
    return _stat_mean("std_mean", std, input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """The tuple ``(var, mean)`` over ``dim``.

    Args:
        input (Tensor): a floating-point tensor.
        dim (int or tuple of ints, optional): the dimension(s) to reduce. Default: all.
        unbiased (bool, optional): legacy form of ``correction`` (``False``: 0).
        keepdim (bool, optional): keep the reduced dimension(s). Default: ``False``.
        correction (int, optional): the divisor is ``N - correction``. Default: 1.

    Example::

        >>> eager.var_mean(eager.tensor([1.0, 2.0, 3.0]), correction=0)
        (tensor(0.6667), tensor(2.))
    """
    return _stat_mean("var_mean", var, input, dim, unbiased, keepdim, correction)


# -- cov, corrcoef -----------------------------------------------------------------------

def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    the columns); a 1-D input is one variable.

    Args:
        input (Tensor): a 0-, 1- or 2-D tensor.
        correction (int, optional): the divisor is ``sum(w) - correction`` (with
            ``aweights``: ``sum(w) - correction * sum(w * a) / sum(w)``). Default: 1.
        fweights (Tensor, optional): integer frequency of each observation.
        aweights (Tensor, optional): floating-point weight of each observation.

    Example::

        >>> eager.cov(eager.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    _need_tensor("cov", input, "input", 1)
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = reshape(input, (1, -1)) if input.ndim < 2 else input
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but "
                               f"got fweights with {fweights.ndim} dimensions")
        if _isf(fweights._data.dtype) or fweights._data.dtype.kind == "b":
            raise RuntimeError("cov(): expected fweights to have integral dtype but got "
                               f"fweights with {scalar_name(fweights._data.dtype)} dtype")
        if fweights.numel() != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are "
                               f"observations in the input but got {fweights.numel()} != "
                               f"{n_obs}")
        if bool(any(lt(fweights, 0))):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but "
                               f"got aweights with {aweights.ndim} dimensions")
        if not _isf(aweights._data.dtype):
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {scalar_name(aweights._data.dtype)} dtype")
        if aweights.numel() != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are "
                               f"observations in the input but got {aweights.numel()} != "
                               f"{n_obs}")
        if bool(any(lt(aweights, 0))):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else mul(w, aweights)
    if w is None:
        w_sum = _full((), n_obs, _I64, x)
    else:
        w_sum = _sum(w)
        if not bool(ne(w_sum, 0)):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = div(_sum(x if w is None else mul(x, w), 1), w_sum)
    if w is not None and correction != 0 and aweights is not None:
        norm = sub(w_sum, div(mul(_sum(mul(w, aweights)), correction), w_sum))
    else:
        norm = sub(w_sum, correction)
    if bool(le(norm, 0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = mul(norm, 0)
    xm = sub(x, unsqueeze(avg, 1))
    c = mm(xm, t(xm if w is None else mul(xm, w)))
    return squeeze(div(c, norm))


def corrcoef(input) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of ``input``, clipped
    to ``[-1, 1]``.

    Args:
        input (Tensor): a 1- or 2-D tensor (variables in rows, observations in columns).

    Example::

        >>> eager.corrcoef(eager.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    _need_tensor("corrcoef", input, "input", 1)
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got"
                           f" an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return div(c, c)
    d = sqrt(diagonal(c))
    c = div(div(c, unsqueeze(d, 1)), unsqueeze(d, 0))
    return clamp(c, -1, 1)


# -- trapezoid ---------------------------------------------------------------------------

def _zeros_except(y: Tensor, d: int) -> Tensor:
    shape = tuple(s for i, s in enumerate(y.shape) if i != d)
    return _full(shape, 0, _dt.floating(y._data.dtype), y)


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: with sample points ``x`` or a constant spacing
    ``dx``.

    Args:
        y (Tensor): the values of the function.
        x (Tensor, optional): the sample points (1-D of ``y``'s size along ``dim``, or
            broadcastable with ``y``). Exclusive with ``dx``.
        dx (float, optional): the spacing of the samples. Default: 1.
        dim (int, optional): the dimension to integrate along. Default: -1.

    Example::

        >>> eager.trapezoid(eager.tensor([1.0, 5.0, 10.0]), dx=0.5)
        tensor(5.2500)
    """
    _need_tensor("trapezoid", y, "y", 1)
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - got "
                        "(Tensor, Tensor, dx=...)")
    d = _wrap_dim(dim, y.ndim, "trapezoid")
    n = y.shape[d]
    if x is None:
        if n == 0:
            return _zeros_except(y, d)
        ends = add(select(y, d, 0), select(y, d, -1))
        return mul(sub(_sum(y, d), mul(ends, 0.5)), 1 if dx is None else dx)
    _need_tensor("trapezoid", x, "x", 2)
    if n == 0:
        return _zeros_except(y, d)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[d] = n
        x = reshape(x, tuple(shape))
    elif x.ndim < y.ndim:
        x = reshape(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    m = x.shape[d]
    step = sub(narrow(x, d, 1, m - 1), narrow(x, d, 0, m - 1))
    pairs = add(narrow(y, d, 1, n - 1), narrow(y, d, 0, n - 1))
    return div(_sum(mul(step, pairs), d), 2.0)


def trapz(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """Alias of :func:`trapezoid` (``trapz(y, x, *, dim=-1)`` or
    ``trapz(y, *, dx=1, dim=-1)``).

    Args:
        y (Tensor): the values of the function.
        x (Tensor, optional): the sample points.
        dx (float, optional): the spacing of the samples. Default: 1.
        dim (int, optional): the dimension to integrate along. Default: -1.

    Example::

        >>> eager.trapz(eager.tensor([1.0, 2.0, 3.0]), eager.tensor([0.0, 1.0, 3.0]))
        tensor(6.5000)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


# -- repeat_interleave, vander -------------------------------------------------------------

def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Each element (each slice along ``dim``) repeated ``repeats`` times in place:
    ``[a, b]`` with 2 gives ``[a, a, b, b]``.  ``repeat_interleave(repeats)`` (one 1-D
    integer tensor) gives ``arange(len(repeats))`` repeated by ``repeats``.

    Args:
        input (Tensor): the input tensor.
        repeats (int or Tensor): the number of repetitions, one for all or one per slice.
        dim (int, optional): the dimension to repeat along. Default: ``None``: the
            flattened input, giving a 1-D result.
        output_size (int, optional): the total size of the result along ``dim``
            (checked).

    Example::

        >>> eager.repeat_interleave(eager.tensor([[1, 2], [3, 4]]), 2, dim=0)
        tensor([[1, 2],
                [1, 2],
                [3, 4],
                [3, 4]])
        >>> eager.repeat_interleave(eager.tensor([2, 1]))
        tensor([0, 0, 1])
    """
    _need_tensor("repeat_interleave", input, "input", 1)
    if repeats is None:                       # repeat_interleave(repeats)
        r = input
        if r.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if _isf(r._data.dtype) or r._data.dtype.kind == "b":
            raise NotImplementedError("\"repeat_interleave_cpu\" not implemented for "
                                      f"'{scalar_name(r._data.dtype)}'")
        reps = r.detach().cpu().numpy().astype(np.int64)
        if (reps < 0).any():
            raise RuntimeError("repeats can not be negative")
        if output_size is not None and int(output_size) != int(reps.sum()):
            raise RuntimeError("allocated size does not match required size")
        out = tensor(np.repeat(np.arange(len(reps), dtype=r._data.dtype), reps))
        return out if r.device.type == "cpu" else out.to(r.device)
    x = reshape(input, (-1,)) if dim is None else input
    d = 0 if dim is None else _wrap_dim(dim, input.ndim, "repeat_interleave")
    if x.ndim == 0:
        x = reshape(x, (1,))
    n = x.shape[d]
    if isinstance(repeats, Tensor) and repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if is_int(repeats) or (isinstance(repeats, Tensor) and repeats.numel() == 1
                           and repeats.ndim == 0):
        k = int(repeats)
        if k < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and int(output_size) != n * k:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * k} but "
                               f"got {output_size}")
        shape = list(x.shape)
        y = expand(unsqueeze(x, d + 1), tuple(shape[:d + 1] + [k] + shape[d + 1:]))
        shape[d] *= k
        return reshape(y, tuple(shape))
    r = repeats if isinstance(repeats, Tensor) else tensor(repeats)
    if _isf(r._data.dtype) or r._data.dtype.kind == "b":
        raise NotImplementedError("\"repeat_interleave_cpu\" not implemented for "
                                  f"'{scalar_name(r._data.dtype)}'")
    if r.numel() == 1:
        r = expand(reshape(r, (1,)), (n,))
    if r.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {r.shape[0]} and input.size({d}) = {n}")
    index = repeat_interleave(r, output_size=output_size)
    return index_select(x, d, cast(index, _dt.int64))


def vander(x, N=None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed
    when ``increasing``); integer inputs give int64.

    Args:
        x (Tensor): a 1-D tensor.
        N (int, optional): the number of columns. Default: ``len(x)``.
        increasing (bool, optional): powers increase left to right. Default: ``False``.

    Example::

        >>> eager.vander(eager.tensor([1, 2, 3]))
        tensor([[1, 1, 1],
                [4, 2, 1],
                [9, 3, 1]])
    """
    _need_tensor("vander", x, "x", 1)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    m = x.shape[0]
    n = m if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = promote_np(x._data.dtype, _I64)
    xl = cast(x, _dt.from_numpy(dt))
    if n == 0:
        return _full((m, 0), 0, dt, x)
    ones = _full((m, 1), 1, dt, x)
    if n == 1:
        out = ones
    else:
        out = cat([ones, cumprod(expand(unsqueeze(xl, 1), (m, n - 1)), 1)], 1)
    return out if increasing else flip(out, 1)


METHODS = ["median", "nanmedian", "mode", "quantile", "nanquantile", "aminmax", "nansum",
           "nanmean", "cov", "corrcoef", "repeat_interleave"]
INPLACE: dict = {}
