"""Sorting, selection and searching with PyTorch's signatures: ``sort``, ``argsort``,
``msort``, ``topk``, ``kthvalue`` (named tuples ``(values, indices)``), ``searchsorted``,
``bucketize``, ``histc``, ``bincount``, ``unique``.

``sort``/``topk``/``kthvalue`` compute the indices with a non-differentiable op and take
the values with ``gather`` (``pick_along_dim`` for ``kthvalue``), so the gradient goes to
the selected elements and every step replays under ``compile``.  Sorting is always
stable (``stable=False`` allows any order of equal elements; this one is as good).
``unique`` and ``bincount`` have data-dependent output shapes: a compiled function using
them runs eagerly.
"""

from __future__ import annotations

import numpy as np

from .. import return_types as _rt
from ..construct import tensor
from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..dtypes import scalar_name
from ..ops import index as _ix
from ..ops import reduce as _red
from ..ops import sort as _so
from ..tensor import Tensor, _wrap_dim
from .args import as_tensor_arg
from .shape import reshape, squeeze

__all__ = ["argsort", "bincount", "bucketize", "histc", "kthvalue", "msort", "searchsorted",
           "sort", "topk", "unique"]

_INTS = "iu"


def _size(input: Tensor, d: int) -> int:
    return input._data.shape[d] if input.ndim else 1


def _as_1d(input: Tensor) -> Tensor:
    return reshape(input, (1,)) if input.ndim == 0 else input


def _from_1d(t: Tensor, like: Tensor) -> Tensor:
    return reshape(t, ()) if like.ndim == 0 else t


# -- sort, argsort, topk, kthvalue ---------------------------------------------------------

def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """Indices that sort ``input`` along ``dim`` (int64)."""
    d = _wrap_dim(dim, input.ndim, "argsort")
    out = dispatch(_so.Argsort, _as_1d(input), dim=d, descending=bool(descending))
    return _from_1d(out, input)


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """``(values, indices)`` sorted along ``dim``; NaN sorts after every number (before,
    when ``descending``).  The gradient goes back to the positions the values came from."""
    d = _wrap_dim(dim, input.ndim, "sort")
    x = _as_1d(input)
    idx = dispatch(_so.Argsort, x, dim=d, descending=bool(descending))
    values = dispatch(_ix.Gather, x, idx, dim=d)
    return _rt.sort(_from_1d(values, input), _from_1d(idx, input))


def msort(input):
    """``sort(input, dim=0).values``."""
    return sort(input, 0).values


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements
    along ``dim``, in sorted order (also when ``sorted=False``)."""
    d = _wrap_dim(dim, input.ndim, "topk")
    k = int(k)
    if not 0 <= k <= _size(input, d):
        raise RuntimeError("selected index k out of range")
    x = _as_1d(input)
    idx = dispatch(_so.TopkIndices, x, k=k, dim=d, largest=bool(largest))
    values = dispatch(_ix.Gather, x, idx, dim=d)
    return _rt.topk(_from_1d(values, input), _from_1d(idx, input))


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):
    """``(values, indices)`` of the ``k``-th smallest element (1-based) along ``dim``."""
    d = _wrap_dim(dim, input.ndim, "kthvalue")
    k = int(k)
    if not 1 <= k <= _size(input, d):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    x = _as_1d(input)
    idx = dispatch(_so.KthvalueIndex, x, k=k, dim=d)
    keep = bool(keepdim) or input.ndim == 0
    values = dispatch(_red.PickAlongDim, x, idx, dim=d, keepdim=keep)
    if not keep:
        idx = squeeze(idx, d)
    return _rt.kthvalue(_from_1d(values, input), _from_1d(idx, input))


# -- searching -------------------------------------------------------------------------------

def _side(side, right: bool) -> bool:
    if side is None:
        return bool(right)
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                           "side of left while right was True")
    return side == "right"


def _values_arg(values, seq: Tensor) -> Tensor:
    """``input`` of ``searchsorted``: a Python scalar becomes a 0-d tensor of the dtype it
    compares in with ``seq`` (NumPy's weak-scalar rule)."""
    if isinstance(values, Tensor):
        return values
    if isinstance(values, (list, tuple)):
        return tensor(values)
    return tensor(np.asarray(values, dtype=np.result_type(seq._data.dtype, values)))


def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False,
                 side=None, sorter=None):
    """Insertion indices of ``input`` into the innermost dimension of ``sorted_sequence``
    (1-D, or with the same leading dimensions as ``input``); ``right``/``side='right'``
    inserts after equal elements; ``sorter`` sorts ``sorted_sequence`` first."""
    seq = sorted_sequence
    right = _side(side, right)
    scalar = not isinstance(input, Tensor)
    values = _values_arg(input, seq)
    if scalar and seq.ndim != 1:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({seq.ndim}) and input value's dim({values.ndim}) numel("
                           f"{values.numel()})")
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           "tensor must match, but we got boundaries tensor [] and input "
                           f"value tensor {list(values.shape)}")
    if seq.ndim != 1 and (seq.ndim != values.ndim or
                          tuple(seq.shape[:-1]) != tuple(values.shape[:-1])):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           "tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(values.shape)}")
    if sorter is not None:
        if sorter._data.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype "
                               f"but got {scalar_name(sorter._data.dtype)}")
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(sorter.shape)}")
        seq = dispatch(_ix.Gather, seq, sorter, dim=seq.ndim - 1)
    return dispatch(_so.Searchsorted, seq, values, right=right, out_int32=bool(out_int32))


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False):
    """Index of the bucket of each element of ``input`` given the sorted 1-D
    ``boundaries`` (``right=False``: ``boundaries[i-1] < x <= boundaries[i]``)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# -- counting ----------------------------------------------------------------------------------

def histc(input, bins: int = 100, min=0, max=0):
    """Histogram with ``bins`` equal bins over ``[min, max]`` (the data's range when
    ``min == max``); elements outside are ignored.  Not differentiable."""
    if not _isf(input._data.dtype):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{scalar_name(input._data.dtype)}'")
    return dispatch(_so.Histc, input, bins=int(bins), min=float(min), max=float(max))


def bincount(input, weights=None, minlength: int = 0):
    """Count of each value of the 1-D non-negative integer ``input`` (or the sum of
    ``weights`` at each value), ``max(input) + 1`` entries but at least ``minlength``."""
    if input._data.dtype.kind not in _INTS:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{scalar_name(input._data.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    data = input._data
    if data.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None:
        weights = as_tensor_arg(weights)
        if weights.ndim != 1 or weights.shape[0] != data.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
    return dispatch(_so.Bincount, input, weights, minlength=int(minlength))


def unique(input, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim=None):
    """Distinct elements of ``input`` in ascending order (or distinct slices along
    ``dim``); with ``return_inverse`` also where each element went, with
    ``return_counts`` how often each occurs.  NaNs are all distinct (as PyTorch)."""
    d = None if dim is None else _wrap_dim(dim, input.ndim, "unique")
    out = [dispatch(_so.Unique, input, dim=d, part="values")]
    if return_inverse:
        out.append(dispatch(_so.Unique, input, dim=d, part="inverse"))
    if return_counts:
        out.append(dispatch(_so.Unique, input, dim=d, part="counts"))
    return out[0] if len(out) == 1 else tuple(out)


METHODS = ["argsort", "bincount", "histc", "kthvalue", "msort", "sort", "topk", "unique"]
INPLACE: dict = {}
