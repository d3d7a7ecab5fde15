"""Writes at indices along one dimension, and at a mask, with PyTorch's signatures and
errors: ``index_add``, ``index_copy``, ``index_fill``, ``masked_scatter`` and
``index_put`` (each with an in-place ``name_`` method).

``index_add``, ``index_copy`` and ``masked_scatter`` are ops of their own (see
:mod:`eager.ops.index`) that check their indices on every call, compiled replays
included; ``index_fill`` is a ``set_item`` at ``index`` along ``dim`` (negative indices
count from the end, as PyTorch's).  Gradients flow to the input outside the written
positions and to ``source``/``value``.
"""

from __future__ import annotations

from ..amp.autocast_mode import cast_inputs as _autocast
from ..dispatch import dispatch
from ..dtypes import scalar_name
from ..ops import index as _ix
from ..tensor import Tensor, _wrap_dim
from .elementwise import add
from .index import _pack, _parse, setitem
from .shape import broadcast_shapes, clone, expand, reshape, unsqueeze

__all__ = ["index_add", "index_copy", "index_fill", "index_put", "masked_scatter"]


def _index_vector(index, op: str, dtypes: str, msg: str, ndim_error) -> Tensor:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype.name not in dtypes:
        raise msg[0](msg[1].format(scalar_name(index._data.dtype)))
    if index.ndim > 1:
        raise ndim_error
    return reshape(index, (1,)) if index.ndim == 0 else index


def _key(shape: tuple) -> tuple:
    return tuple((0, s, 1) for s in shape)


def _as_1d(x: Tensor) -> Tensor:
    return reshape(x, (1,)) if x.ndim == 0 else x


def index_add(input, dim: int, index, source, *, alpha=1):
    """``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeated indices
    accumulate)."""
    op = "index_add_"
    ix = _index_vector(index, op, ("int32", "int64"),
                       (RuntimeError, op + "(): Expected dtype int32/int64 for index but got: {}"),
                       IndexError(f"{op}(): Index is supposed to be a vector, but got dim: "
                                  f"{index.ndim} with type: {scalar_name(index._data.dtype)} "
                                  f"and size: {list(index.shape)}"))
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"{op}(): self ({scalar_name(input._data.dtype)}) and source "
                           f"({scalar_name(source._data.dtype)}) must have the same scalar "
                           "type")
    x, src = _as_1d(input), _as_1d(source)
    d = _wrap_dim(dim, input.ndim, op)
    k = ix._data.shape[0]
    if src.ndim != x.ndim or src._data.shape[d] != k:
        have = src._data.shape[d] if d < src.ndim else 1
        raise RuntimeError(f"{op}(): Number of indices ({k}) should be equal to "
                           f"source.size(dim): ({have}), for dim: {d}")
    if any(a != b for i, (a, b) in enumerate(zip(x._data.shape, src._data.shape)) if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(source.shape)}")
    out = dispatch(_ix.IndexAdd, x, ix, src, dim=d, alpha=alpha)
    return reshape(out, ()) if input.ndim == 0 else out


def _check_fill_bounds(ix: Tensor, n: int, d: int) -> None:
    data = ix._data
    if data.size and (data.min() < -n or data.max() >= n):
        bad = int(data.min()) if data.min() < -n else int(data.max())
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")


def index_copy(input, dim: int, index, source):
    """``input`` with the slices ``source`` written at ``index`` along ``dim``."""
    op = "index_copy_"
    input, source = _autocast("index_copy", input, source)
    ix = _index_vector(index, op, ("int64",),
                       (RuntimeError, op + "(): Expected a long tensor for index, but got {}"),
                       IndexError(f"{op}(): Index should have dimension 1 or 0 (got "
                                  f"{index.ndim})"))
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"{op}(): self and source expected to have the same dtype, but got "
                           f"(self) {scalar_name(input._data.dtype)} and (source) "
                           f"{scalar_name(source._data.dtype)}")
    d = _wrap_dim(dim, input.ndim, op)
    if input.ndim and source.ndim and input.ndim != source.ndim:
        raise IndexError(f"{op}(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({input.ndim})")
    x, src = _as_1d(input), _as_1d(source)
    k = ix._data.shape[0]
    if src._data.shape[d] != k:
        raise IndexError(f"{op}(): Number of indices ({k}) should be equal to "
                         f"source.size(dim) ({src._data.shape[d]})")
    dst_slice = [s for i, s in enumerate(x._data.shape) if i != d]
    src_slice = [s for i, s in enumerate(src._data.shape) if i != d]
    for i, (a, b) in enumerate(zip(dst_slice, src_slice)):
        if a != b:
            raise RuntimeError(f"{op}(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape: {a} at dimension {i} and "
                               f"source slice shape: {b} at dimension {i}.")
    out = dispatch(_ix.IndexCopy, x, ix, src, dim=d)
    return reshape(out, ()) if input.ndim == 0 else out


def index_fill(input, dim: int, index, value):
    """``input`` with ``value`` (a number or a 0-d tensor) written at ``index`` along
    ``dim``."""
    op = "index_fill_"
    ix = _index_vector(index, op, ("int64",),
                       (IndexError, op + "(): Expected dtype int64 for index."),
                       RuntimeError("Index has to be a vector/scalar"))
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    x = _as_1d(input)
    d = _wrap_dim(dim, input.ndim, op)
    _check_fill_bounds(ix, x._data.shape[d], d)
    out = dispatch(_ix.SetItem, x, value, unsqueeze(ix, 0), key=_key(x._data.shape),
                   dims=(d,))
    return reshape(out, ()) if input.ndim == 0 else out


def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` (broadcast with ``input``) is True
    filled, in order, with the leading elements of ``source``."""
    if input._data.dtype != source._data.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{scalar_name(input._data.dtype)} and "
                           f"{scalar_name(source._data.dtype)}")
    shape = tuple(input.shape)
    if tuple(mask.shape) != shape:
        shape = tuple(broadcast_shapes(shape, tuple(mask.shape)))
        input = input if tuple(input.shape) == shape else expand(input, shape)
        mask = mask if tuple(mask.shape) == shape else expand(mask, shape)
    return dispatch(_ix.MaskedScatter, input, mask, source)


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` written at ``input[indices]`` (``indices``: a tuple of
    index tensors, integer or boolean); ``accumulate``: added instead, repeated indices
    summing (``np.add.at``).  ``values`` broadcasts to the indexed shape."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not "
                        f"{type(values).__name__}")
    if values._data.dtype != input._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_name(input._data.dtype)} for the destination and "
                           f"{scalar_name(values._data.dtype)} for the source.")
    key = tuple(indices)
    if not accumulate:
        out = clone(input)
        setitem(out, key, values)
        return out
    _, adv = _parse(input, key)
    idx, dims = _pack(adv, tuple(input.shape), input)
    # the index tensors address the leading dimensions: the indexed shape is their
    # broadcast batch, then the dimensions not indexed
    target = tuple(idx.shape[1:]) + tuple(input.shape[len(dims):])
    g = values if tuple(values.shape) == target else expand(values, target)
    return add(input, dispatch(_ix.IndexPutAdd, g, idx, shape=tuple(input.shape), dims=dims))


METHODS = ["index_add", "index_copy", "index_fill", "index_put", "masked_scatter"]
INPLACE = {"index_add": None, "index_copy": None, "index_fill": None, "index_put": None,
           "masked_scatter": None}
