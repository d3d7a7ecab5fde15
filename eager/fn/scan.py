"""Scans and differences along a dimension with PyTorch's signatures: ``cumprod``,
``logcumsumexp``, ``diff`` (``cumsum`` is with the reductions)."""

from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..dtypes import scalar_name
from ..ops import scan as _sc
from ..tensor import _wrap_dim
from .elementwise import cast, logical_xor, sub
from .shape import cat, narrow

__all__ = ["cumprod", "diff", "logcumsumexp"]


def cumprod(input, dim: int = None, *, dtype=None, axis=None):
    """Cumulative product along ``dim`` (``axis`` is PyTorch's NumPy-style alias);
    bool/integer inputs give int64; ``dtype`` casts the input first.  The gradient is exact
    where the input has zeros."""
    if axis is not None:
        if dim is not None:
            raise TypeError("cumprod() got both 'dim' and its alias 'axis'")
        dim = axis
    if dim is None:
        raise TypeError("cumprod() missing 1 required positional argument: 'dim'")
    d = _wrap_dim(dim, input.ndim, "cumprod")
    if dtype is not None:
        input = cast(input, dtype)
    return dispatch(_sc.Cumprod, input, dim=d, dtype=None)


def logcumsumexp(input, dim: int):
    """``log(cumsum(exp(input)))`` along ``dim``, without overflow."""
    d = _wrap_dim(dim, input.ndim, "logcumsumexp")
    if not _isf(input._data.dtype):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{scalar_name(input._data.dtype)}'")
    return dispatch(_sc.Logcumsumexp, input, dim=d)


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``logical_xor`` for bool), after
    joining ``prepend`` and ``append`` to ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim, "diff")
    parts = []
    for extra in (prepend, input, append):
        if extra is None:
            continue
        if extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        parts.append(extra)
    x = cat(parts, d) if len(parts) > 1 else input
    step = logical_xor if x._data.dtype == _dt.bool_.np else sub
    for _ in range(n):
        size = x._data.shape[d]
        if size == 0:
            break
        x = step(narrow(x, d, 1, size - 1), narrow(x, d, 0, size - 1))
    return x


METHODS = ["cumprod", "diff", "logcumsumexp"]
INPLACE = {"cumprod": None}
