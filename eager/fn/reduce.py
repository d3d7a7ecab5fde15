"""Reduction functions with PyTorch's names, signatures and semantics: ``sum``, ``mean``,
``prod``, ``amax``/``amin``, ``max``/``min`` (all three forms), ``argmax``/``argmin``,
``var``/``std``, ``logsumexp``, ``softmax``/``log_softmax``, ``cumsum``,
``all``/``any``, ``count_nonzero``.

They check arguments (PyTorch's errors), make the params canonical (``dim`` a sorted tuple
of non-negative ints, see :mod:`eager.ops.reduce`) and call the dispatch point.

Empty ``dim`` (``()``/``[]``) reduces over every dimension, as PyTorch does, except for
``all``/``any``, where it reduces over none (also as PyTorch).  A 0-d tensor accepts
``dim`` 0 or -1 and reduces over nothing.  This module shadows the builtins ``sum``,
``max``, ``min``, ``all`` and ``any``: do not use them here.
"""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np

from .. import dtypes as _dt
from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..ops import reduce as _red
from ..ops import shape as _shp
from ..tensor import Tensor, _wrap_dim
from .args import is_empty_dims as _is_empty_dims
from .args import is_int as _is_int
from .args import reduce_dims as _dims
from .elementwise import cast, maximum, minimum
from .norms import norm  # noqa: F401  (torch.norm lives with the linalg norms)

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumsum", "log_softmax",
    "logsumexp", "max", "mean", "min", "prod", "softmax", "std", "sum", "var",
]

# what max(input, dim)/min(input, dim) return, like torch.return_types.max/min
_MaxResult = namedtuple("max", ["values", "indices"])
_MinResult = namedtuple("min", ["values", "indices"])
_MaxResult.__module__ = _MinResult.__module__ = "eager.return_types"

# PyTorch's scalar-type names, as its error messages spell them
_TORCH_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
                "float64": "Double"}


def _tname(np_dtype) -> str:
    return _TORCH_NAMES.get(np.dtype(np_dtype).name, str(np_dtype))


def _np_dtype(dtype):
    return None if dtype is None else _dt.to_numpy(dtype)


def _one_dim(input, dim, op: str) -> int:
    """A single ``dim`` argument as a non-negative int (0 for a 0-d input)."""
    if not _is_int(dim):
        raise TypeError(f"{op}(): argument 'dim' (position 1) must be int, not "
                        f"{type(dim).__name__}")
    return _wrap_dim(int(dim), input.ndim, op)


def _check_nonempty(input, dims: tuple, op: str, full: bool, full_exc=RuntimeError,
                    hint: bool = True) -> None:
    """Reductions without an identity (max, argmax...) reject empty reduced dims."""
    if input.numel() != 0:
        return
    if full:
        msg = f"{op}(): Expected reduction dim to be specified for input.numel() == 0."
        if hint:
            msg += " Specify the reduction dim with the 'dim' argument."
        raise full_exc(msg)
    shape = tuple(input.shape)
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


# -- sum, mean, prod -----------------------------------------------------------------------

def sum(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Sum over ``dim`` (all when None or empty).  bool/integer inputs sum to int64."""
    dims = _dims(input, dim, "sum")
    return dispatch(_red.Sum, input, dim=dims, keepdim=bool(keepdim), dtype=_np_dtype(dtype))


def mean(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Mean over ``dim``; floating inputs only unless ``dtype`` (a float dtype) is given."""
    npd = _np_dtype(dtype)
    if npd is not None:
        if not _isf(npd):
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: {_tname(npd)}")
    elif not _isf(input._data.dtype):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {_tname(input._data.dtype)}")
    dims = _dims(input, dim, "mean")
    return dispatch(_red.Mean, input, dim=dims, keepdim=bool(keepdim), dtype=npd)


def prod(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Product of all elements, or along one ``dim`` (an int, as PyTorch)."""
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        d = _one_dim(input, dim, "prod")
        dims = (d,) if input.ndim else ()
    return dispatch(_red.Prod, input, dim=dims, keepdim=bool(keepdim), dtype=_np_dtype(dtype))


# -- amax / amin, max / min, argmax / argmin -------------------------------------------------

def _extreme(op, name, input, dim, keepdim):
    dims = _dims(input, dim, name)
    _check_nonempty(input, dims, name, dim is None or _is_empty_dims(dim))
    return dispatch(op, input, dim=dims, keepdim=bool(keepdim))


def amax(input, dim=(), keepdim: bool = False):
    """Maximum over ``dim`` (all when empty); the gradient is split evenly among ties."""
    return _extreme(_red.Amax, "amax", input, dim, keepdim)


def amin(input, dim=(), keepdim: bool = False):
    return _extreme(_red.Amin, "amin", input, dim, keepdim)


def _max_min(name, input, dim, keepdim, other):
    red, arg, elementwise, result = (
        (_red.Amax, _red.Argmax, maximum, _MaxResult) if name == "max" else
        (_red.Amin, _red.Argmin, minimum, _MinResult))
    if other is not None:
        if dim is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments: both "
                            "'dim' and 'other' given")
        return elementwise(input, other)
    if isinstance(dim, Tensor):               # max(input, other)
        return elementwise(input, dim)
    if dim is None:                           # max(input): 0-d result
        _check_nonempty(input, (), name, True)
        return dispatch(red, input, dim=tuple(range(input.ndim)), keepdim=False)
    d = _one_dim(input, dim, name)            # max(input, dim, keepdim): (values, indices)
    if input.ndim == 0:
        idx = dispatch(arg, input, dim=(), keepdim=False)
        values = dispatch(_red.PickAlongDim, input, idx, dim=0, keepdim=False)
        return result(values, idx)
    _check_nonempty(input, (d,), name, False)
    idx = dispatch(arg, input, dim=(d,), keepdim=True)
    values = dispatch(_red.PickAlongDim, input, idx, dim=d, keepdim=bool(keepdim))
    if not keepdim:
        idx = dispatch(_shp.Reshape, idx, shape=tuple(values.shape))
    return result(values, idx)


def max(input, dim=None, keepdim: bool = False, *, other=None):
    """``max(input)`` -> 0-d tensor (gradient split evenly among ties);
    ``max(input, dim, keepdim=False)`` -> ``(values, indices)`` (gradient to the index
    picked); ``max(input, other)`` -> elementwise :func:`maximum`."""
    return _max_min("max", input, dim, keepdim, other)


def min(input, dim=None, keepdim: bool = False, *, other=None):
    return _max_min("min", input, dim, keepdim, other)


def _argext(op, name, input, dim, keepdim):
    if input._data.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        _check_nonempty(input, (), name, True, IndexError, hint=False)
        dims = tuple(range(input.ndim))
    else:
        d = _one_dim(input, dim, name)
        dims = (d,) if input.ndim else ()
        _check_nonempty(input, dims, name, False)
    return dispatch(op, input, dim=dims, keepdim=bool(keepdim))


def argmax(input, dim=None, keepdim: bool = False):
    """Index of the maximum along ``dim``, or into the flattened tensor when None."""
    return _argext(_red.Argmax, "argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim: bool = False):
    return _argext(_red.Argmin, "argmin", input, dim, keepdim)


# -- var, std --------------------------------------------------------------------------------

def _var_std(op, name, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):                 # legacy var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        unbiased, dim = dim, None
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): cannot specify both 'unbiased' and 'correction'")
    if correction is None:
        c = 0 if unbiased is False else 1
    else:
        c = float(correction)
        c = int(c) if c.is_integer() else c
    if not _isf(input._data.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _dims(input, dim, name)
    if _red.reduced_numel(tuple(input.shape), dims) - c <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return dispatch(op, input, dim=dims, correction=c, keepdim=bool(keepdim))


def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Variance over ``dim`` with divisor ``N - correction`` (``correction=1`` by default;
    the legacy ``unbiased=False`` means ``correction=0``)."""
    return _var_std(_red.Var, "var", input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Standard deviation; arguments as :func:`var`."""
    return _var_std(_red.Std, "std", input, dim, unbiased, keepdim, correction)


# -- logsumexp, softmax, log_softmax ---------------------------------------------------------

def logsumexp(input, dim, keepdim: bool = False):
    """``log(sum(exp(input)))`` over ``dim``, numerically stable.  Integer inputs give
    float32."""
    dims = _dims(input, dim, "logsumexp")
    return dispatch(_red.Logsumexp, input, dim=dims, keepdim=bool(keepdim))


def _softmax(op, name, input, dim, dtype):
    if dtype is not None:
        input = cast(input, dtype)
    if not _isf(input._data.dtype):
        raise NotImplementedError(f"\"{name}_kernel_impl\" not implemented for "
                                  f"'{_tname(input._data.dtype)}'")
    return dispatch(op, input, dim=_one_dim(input, dim, name))


def softmax(input, dim, dtype=None):
    """Softmax along ``dim``; ``dtype`` casts the input first."""
    return _softmax(_red.Softmax, "softmax", input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """Log-softmax along ``dim`` (stable; backward ``g - exp(out) * sum(g)``)."""
    return _softmax(_red.LogSoftmax, "log_softmax", input, dim, dtype)


# -- cumsum ----------------------------------------------------------------------------------

def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``; bool/integer inputs give int64."""
    d = _one_dim(input, dim, "cumsum")
    return dispatch(_red.Cumsum, input, dim=d, reverse=False, dtype=_np_dtype(dtype))


# -- all, any, count_nonzero -----------------------------------------------------------------

def all(input, dim=None, keepdim: bool = False):
    """True where all elements along ``dim`` are non-zero (bool; uint8 for uint8 input)."""
    dims = _dims(input, dim, "all", empty_all=False)
    return dispatch(_red.All, input, dim=dims, keepdim=bool(keepdim))


def any(input, dim=None, keepdim: bool = False):
    """True where any element along ``dim`` is non-zero (bool; uint8 for uint8 input)."""
    dims = _dims(input, dim, "any", empty_all=False)
    return dispatch(_red.Any, input, dim=dims, keepdim=bool(keepdim))


def count_nonzero(input, dim=None):
    """Number of non-zero elements over ``dim`` (int64)."""
    dims = _dims(input, dim, "count_nonzero")
    return dispatch(_red.CountNonzero, input, dim=dims)


METHODS = list(__all__)
INPLACE = {}
