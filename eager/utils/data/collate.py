"""``default_collate`` (a list of samples -> one batch) and ``default_convert`` (one sample,
NumPy arrays -> tensors), with PyTorch's rules: tensors are stacked along a new first
dimension, NumPy arrays and numbers become tensors (Python floats float64, ints int64,
bools bool), strings stay lists, and mappings, named tuples and sequences are collated
field by field (a tuple of fields becomes a list, as in PyTorch)."""

from __future__ import annotations

import collections.abc

import numpy as np

from ...dtypes import float64
from ...factories import as_tensor, tensor
from ...fn.shape import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _rebuild(elem, items):
    """A container of ``elem``'s type holding ``items`` (a plain one if that fails)."""
    if isinstance(elem, collections.abc.Mapping):
        if isinstance(elem, collections.abc.MutableMapping):
            try:
                clone = elem.copy() if hasattr(elem, "copy") else None
                if clone is not None:
                    clone.update(items)
                    return clone
            except Exception:
                pass
        try:
            return type(elem)(items)
        except TypeError:
            return dict(items)
    try:
        return type(elem)(items)
    except TypeError:
        return list(items)


def default_collate(batch):
    """Collate a list of samples into a batch (see the module docstring)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "USO":
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        return as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):                     # bool included: a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, np.ndarray):
        raise TypeError(_ERR.format(elem.dtype))
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):   # namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        return _rebuild(elem, [default_collate(samples) for samples in transposed])
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """One sample (no batching, ``batch_size=None``): NumPy arrays and scalars to tensors,
    recursively through mappings and sequences; everything else unchanged."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in "USO" else as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data
