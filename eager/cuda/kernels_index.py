"""Indexing on CUDA: gather/scatter along a dimension, advanced indexing and its writes
(index_put, set_item, index_add, index_copy) through the gather and scatter kernels of
:mod:`runtime.cuda.launch` (atomic adds; an out-of-range index raises the CPU's IndexError
after the index's min/max are read back), masked_fill as a where."""

from __future__ import annotations

import numpy as np

from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from ..ops import elementwise as E
from ..ops import index as I
from .elementwise import (
    _HALF,
    _I64,
    bits,
    broadcast_shape,
    clone,
    copy_into,
    full,
    on_device,
    run_elementwise,
)
from .kernels_reduce import reduce


def masked_fill(a, mask, value):
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype}")
    out = CudaArray.empty(broadcast_shape([a.shape, mask.shape]), a.dtype)
    run_elementwise(E.Where, [mask, value, a], {}, out=out)
    return out


# -- along one dimension ------------------------------------------------------------------------

def gather(a, index, dim):
    if index.ndim != a.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    return launch.gather(a, index, dim, CudaArray.empty(index.shape, a.dtype))


def pick_along_dim(a, idx, dim, keepdim=True):
    if a.ndim == 0:
        return clone(a)
    out = gather(a, idx, dim)
    return out if keepdim else out.squeeze((dim,))


def _scatter_into(out, index, src, dim, add):
    """Write (or add) ``src`` at ``index`` along ``dim`` into the contiguous ``out``."""
    if not index.size:
        return out
    given = not isinstance(src, CudaArray) or src.host is not None
    if add and out.dtype.char not in _ATOMIC:   # bool / narrow ints: accumulate in int64
        wide = run_elementwise(E.Cast, [out], {"dtype": _I64})
        _scatter_into(wide, index, src, dim, add)
        copy_into(out, wide)
        return out
    src = on_device(src, out.dtype)       # a scalar: filled on the device, no copy
    if given:
        src = src.broadcast_to(index.shape)
    launch.scatter(out, index, src, dim, add)
    return out


def scatter(add):
    def impl(a, index, src, dim):
        if index.ndim != a.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as "
                               "self tensor")
        return _scatter_into(clone(a), index, src, dim, add)
    return impl


def place_along_dim(g, idx, dim, shape):
    out = full(shape, 0, g.dtype)
    if out.ndim == 0:
        copy_into(out, g)
        return out
    if g.ndim != idx.ndim:
        g = g.unsqueeze((dim,))
    return _scatter_into(out, idx, g, dim, False)


# -- advanced indexing: gather and scatter kernels -----------------------------------------------

def _check_adv_bounds(idx, dims, shape):
    """PyTorch's IndexError for an index outside ``[-size, size)`` (I.check_bounds), from
    the extremes of each index array (two reductions read back: a synchronizing check)."""
    if idx.size == 0:
        return
    rest = tuple(range(1, idx.ndim))
    lo = reduce("amin", idx, rest, False, idx.dtype).to_host()
    hi = reduce("amax", idx, rest, False, idx.dtype).to_host()
    I.check_bounds(lo.reshape(-1, 1), dims, shape)
    I.check_bounds(hi.reshape(-1, 1), dims, shape)


def _adv_layout(shape, estrides, idx, dims):
    """(region shape, strides into the indexed array, strides into the index's batch) per
    region dimension, NumPy's rule: adjacent indexed dims are replaced in place by the
    index's batch dims, otherwise the batch dims go first."""
    batch = idx.shape[1:]
    ib = idx.estrides[1:]
    if dims[-1] - dims[0] == len(dims) - 1:
        order = [("a", d) for d in range(dims[0])] + [("b", j) for j in range(len(batch))] + \
            [("a", d) for d in range(dims[-1] + 1, len(shape))]
    else:
        order = [("b", j) for j in range(len(batch))] + \
            [("a", d) for d in range(len(shape)) if d not in dims]
    rshape = tuple(shape[d] if t == "a" else batch[d] for t, d in order)
    sa = tuple(estrides[d] if t == "a" else 0 for t, d in order)
    si = tuple(0 if t == "a" else ib[d] for t, d in order)
    return rshape, sa, si


def _pad1(*tuples):
    return tuple(t if t else (1,) if i == 0 else (0,) for i, t in enumerate(tuples))


def _device_index(idx):
    return idx if isinstance(idx, CudaArray) else CudaArray.from_host(np.asarray(idx))


def index(a, idx, dims):
    idx = _device_index(idx)
    _check_adv_bounds(idx, dims, a.shape)
    rshape, sa, si = _adv_layout(a.shape, a.estrides, idx, dims)
    out = CudaArray.empty(rshape, a.dtype)
    n = out.size
    if n:
        src, dst = (bits(a), bits(out)) if a.dtype.char in _HALF else (a, out)
        shp, sa, si = _pad1(rshape, sa, si)
        launch.index(src, idx, dst, shp, sa, si, tuple(a.shape[d] for d in dims),
                     tuple(a.estrides[d] for d in dims), n)
    return out


_ATOMIC = frozenset("fdil" + np.dtype(np.int64).char + np.dtype(np.uint64).char + "IL")


def _put(y, idx, dims, v, add):
    """Write (``add``: add atomically) ``v`` (broadcast to the region) at the positions of
    the view ``y`` that ``idx`` addresses along ``dims``; bounds checked first."""
    idx = _device_index(idx)
    _check_adv_bounds(idx, dims, y.shape)
    rshape, sy, si = _adv_layout(y.shape, y.estrides, idx, dims)
    n = int(np.prod(rshape)) if rshape else 1
    if not n:
        return
    if add and y.dtype.char not in _ATOMIC:   # bool / narrow ints: accumulate in int64
        wide = CudaArray.empty(y.shape, _I64)
        run_elementwise(E.Cast, [y], {"dtype": _I64}, out=wide)
        _put(wide, idx, dims, v, add)
        copy_into(y, wide)
        return
    v = on_device(v, y.dtype).broadcast_to(rshape)    # a scalar: filled, no copy
    if y.dtype.char in _HALF:
        y, v = bits(y), bits(v)
    shp, sy, si = _pad1(rshape, sy, si)
    launch.put(y, idx, v, shp, sy, si, tuple(y.shape[d] for d in dims),
               tuple(y.estrides[d] for d in dims), n, add)


def index_put_add(g, idx, shape, dims):
    out = full(shape, 0, g.dtype)
    _put(out, idx, dims, g, True)
    return out


def set_item(x, value, idx, key, dims, out=None):
    """``x`` with ``x[key][idx at dims] = value``; ``out``: write into that array instead
    of a copy of ``x`` (the in-place ``__setitem__``)."""
    out = clone(x) if out is None else out
    view = out.basic_index(key)
    if isinstance(value, np.ndarray):
        value = CudaArray.from_host(value)
    value_shape = getattr(value, "shape", ())
    if idx is None:
        I.value_shape(value_shape, view.shape, False)   # PyTorch's error
        if isinstance(value, CudaArray) and len(value.shape) > len(view.shape):
            value = value.reshape(value.shape[len(value.shape) - len(view.shape):])
        copy_into(view, value)
        return out
    idx = _device_index(idx)
    _check_adv_bounds(idx, dims, view.shape)
    tshape = I.adv_shape(view.shape, idx.shape[1:], dims)
    if isinstance(value, CudaArray):
        vs = I.value_shape(value_shape, tshape, True)
        value = value.reshape(vs) if vs != value.shape else value
    if not view.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    _put(view, idx, dims, value, False)
    return out


def _along(index, dim):
    return index.unsqueeze((0,)), (dim,)


def index_add(a, index, source, dim, alpha=1):
    n = a.shape[dim]
    if index.size and (index.min() < 0 or index.max() >= n):
        raise IndexError("index out of range in self")
    out = clone(a)
    src = source if alpha == 1 else run_elementwise(E.Mul, [source, alpha], {})
    idx, dims = _along(index, dim)
    _put(out, idx, dims, src, True)
    return out


def index_copy(a, index, source, dim):
    n = a.shape[dim]
    if index.size:
        lo, hi = index.min(), index.max()
        if lo < 0 or hi >= n:
            bad = int(lo) if lo < 0 else int(hi)
            raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} "
                             f"with size {n}")
    out = clone(a)
    idx, dims = _along(index, dim)
    _put(out, idx, dims, source, False)
    return out
