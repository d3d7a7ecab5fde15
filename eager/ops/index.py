"""Indexing ops: basic indexing (a view), advanced indexing and its scatter-add adjoint,
``setitem`` as a functional op, gather/scatter, masked_fill, nonzero.

Canonical params (the public functions in :mod:`eager.fn.index` build them):

* a *basic key* is a tuple with one entry per input dimension, plus ``None`` entries for
  new axes: an ``int`` in ``[0, size)`` selects (drops the dimension), a tuple
  ``(start, stop, step)`` with ``0 <= start <= stop <= size`` and ``step > 0`` slices,
  ``None`` inserts a dimension of size 1.  Ellipsis is expanded and full slices are
  written out, so the same indexing of the same shape always gives the same key.
* advanced indexing is applied *after* basic indexing (as PyTorch does): one int64/int32
  tensor ``idx`` of shape ``(k, *B)`` holds the ``k`` index arrays (broadcast to the
  common shape ``B``) for the strictly increasing dimensions ``dims`` (len ``k``) of its
  input.  Boolean masks are turned into their ``nonzero`` rows before.  Index tensors
  are op *arguments*, never params: they are data, so a compiled graph that computes
  them stays correct.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import scalar_name
from .base import Op
from .factory import device_params

# -- helpers (NumPy only) -----------------------------------------------------------------

def np_key(key: tuple) -> tuple:
    """A canonical basic key as a NumPy index (the trailing Ellipsis makes an all-int key
    give a 0-d view rather than a NumPy scalar)."""
    return tuple([slice(*e) if type(e) is tuple else e for e in key]) + (Ellipsis,)


def adv_key(idx, dims: tuple) -> tuple:
    """The NumPy advanced index for ``idx`` (``(k, *B)``) applied at ``dims``."""
    out = [slice(None)] * (dims[-1] + 1)
    for j, d in enumerate(dims):
        out[d] = idx[j]
    return tuple(out)


def check_bounds(idx, dims: tuple, shape: tuple) -> None:
    """PyTorch's IndexError for an advanced index out of ``[-size, size)``."""
    for j, d in enumerate(dims):
        ix = idx[j]
        if ix.size == 0:
            continue
        n = shape[d]
        lo, hi = ix.min(), ix.max()
        if lo < -n or hi >= n:
            bad = int(hi) if hi >= n else int(lo)
            raise IndexError(f"index {bad} is out of bounds for dimension {j} with size {n}")


def along(index: np.ndarray, dim: int) -> tuple:
    """The NumPy index taking ``index`` along ``dim`` and the positions elsewhere."""
    nd = index.ndim
    out = []
    for d in range(nd):
        if d == dim:
            out.append(index)
        else:
            shape = [1] * nd
            shape[d] = index.shape[d]
            out.append(np.arange(index.shape[d]).reshape(shape))
    return tuple(out)


def _head(shape: tuple) -> tuple:
    return tuple(slice(0, s) for s in shape)


def _shape_list(shape) -> str:
    return str(list(shape))


def adv_shape(shape: tuple, batch: tuple, dims: tuple) -> tuple:
    """The shape of ``a[adv_key(idx, dims)]`` for ``a.shape == shape`` and
    ``idx.shape == (k, *batch)`` (NumPy's rule, which PyTorch follows)."""
    rest = tuple(s for d, s in enumerate(shape) if d not in dims)
    if dims[-1] - dims[0] == len(dims) - 1:  # adjacent: the batch dims replace them
        return tuple(shape[:dims[0]]) + tuple(batch) + tuple(shape[dims[-1] + 1:])
    return tuple(batch) + rest


def value_shape(vshape: tuple, tshape: tuple, advanced: bool) -> tuple:
    """The shape ``value`` is written with into a region of shape ``tshape``: leading 1s
    beyond the region's rank dropped; PyTorch's error when it cannot broadcast."""
    vs = tuple(vshape)
    while len(vs) > len(tshape) and vs[0] == 1:
        vs = vs[1:]
    bad = None
    if len(vs) > len(tshape):
        bad = -1
    else:
        for i in range(1, len(vs) + 1):
            if vs[-i] != 1 and vs[-i] != tshape[-i]:
                bad = len(tshape) - i
                break
    if bad is None:
        return vs
    if advanced:
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_list(vshape)} cannot "
                           f"be broadcast to indexing result of shape {_shape_list(tshape)}")
    if bad < 0:
        raise RuntimeError(f"expand(tensor of shape {_shape_list(vshape)}, size="
                           f"{_shape_list(tshape)}): the number of sizes provided "
                           f"({len(tshape)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(vs)})")
    v = vs[bad - len(tshape)]
    raise RuntimeError(f"The expanded size of the tensor ({tshape[bad]}) must match the existing "
                       f"size ({v}) at non-singleton dimension {bad}.  Target sizes: "
                       f"{_shape_list(tshape)}.  Tensor sizes: {_shape_list(vshape)}")


def assign(dst: np.ndarray, key: tuple, idx, dims: tuple, value) -> None:
    """``dst[key][idx at dims] = value`` in place, with PyTorch's errors."""
    view = dst[np_key(key)]
    if idx is not None:
        check_bounds(idx, dims, view.shape)
        akey = adv_key(idx, dims)
        tshape = adv_shape(view.shape, idx.shape[1:], dims)
    else:
        akey = Ellipsis
        tshape = view.shape
    if type(value) is np.ndarray:
        vs = value_shape(value.shape, tshape, idx is not None)
        if vs != value.shape:
            value = value.reshape(vs)
    if not view.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    view[akey] = value


# -- basic indexing -------------------------------------------------------------------------

class BasicIndex(Op):
    """``a[key]`` for a canonical basic key: a view."""
    view = True

    def forward(a, key):
        return a[np_key(key)]

    def backward(F, g, saved, node):
        return (F.basic_scatter(g, shape=node.shapes[0], key=node.params["key"]),)


class BasicScatter(Op):
    """Adjoint of :class:`BasicIndex`: zeros of ``shape`` with ``g`` placed at ``key``."""

    def forward(g, shape, key):
        out = np.zeros(shape, dtype=g.dtype)
        out[np_key(key)] = g
        return out

    def backward(F, g, saved, node):
        return (F.basic_index(g, key=node.params["key"]),)


# -- advanced indexing ----------------------------------------------------------------------

class Index(Op):
    """``a[..., idx[0], ..., idx[k-1], ...]`` with the index arrays at ``dims``: a copy."""
    saves = (1,)

    def forward(a, idx, dims):
        check_bounds(idx, dims, a.shape)
        return a[adv_key(idx, dims)]

    def backward(F, g, saved, node):
        idx = saved[0]
        return (F.index_put_add(g, idx, shape=node.shapes[0], dims=node.params["dims"]), None)


class IndexPutAdd(Op):
    """Adjoint of :class:`Index`: zeros of ``shape`` with ``g`` added at the indexed
    positions (``np.add.at``: repeated indices accumulate)."""
    saves = (1,)

    def forward(g, idx, shape, dims):
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out, adv_key(idx, dims), g)
        return out

    def backward(F, g, saved, node):
        return (F.index(g, saved[0], dims=node.params["dims"]), None)


class SetItem(Op):
    """``x`` with ``x[key][idx at dims] = value`` (out of place; ``Tensor.__setitem__``
    writes the result back into x's storage).  ``idx`` is None for basic keys."""
    saves = (2,)

    def forward(x, value, idx, key, dims):
        out = np.array(x)  # a copy, and an array even for a NumPy scalar (0-d gradient)
        assign(out, key, idx, dims, value)
        return out

    def backward(F, g, saved, node):
        idx = saved[0]
        key, dims = node.params["key"], node.params["dims"]
        gx = F.set_item(g, 0.0, idx, key=key, dims=dims) if node.needs[0] else None
        gv = None
        if node.needs[1]:
            gv = F.basic_index(g, key=key)
            if idx is not None:
                gv = F.index(gv, idx, dims=dims)
            vshape = node.shapes[1]
            gshape = tuple(gv.shape)
            if len(vshape) > len(gshape):
                gv = F.reshape(gv, shape=(1,) * (len(vshape) - len(gshape)) + gshape)
        return gx, gv, None


# -- gather / scatter -----------------------------------------------------------------------

_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _check_index_dtype(index, op: str) -> None:
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")


def _check_along_bounds(index: np.ndarray, dim: int, size: int) -> None:
    if index.size == 0:
        return
    lo, hi = index.min(), index.max()
    if lo < 0 or hi >= size:
        bad = int(lo) if lo < 0 else int(hi)
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


class Gather(Op):
    """``out[i][j][k] = a[index[i][j][k]][j][k]`` (for ``dim=0``)."""
    saves = (1,)

    def forward(a, index, dim):
        _check_index_dtype(index, "gather")
        if index.ndim != a.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as input "
                               "tensor")
        for d in range(a.ndim):
            if d != dim and index.shape[d] > a.shape[d]:
                raise RuntimeError(f"Size does not match at dimension {d} expected index "
                                   f"{_shape_list(index.shape)} to be no larger than self "
                                   f"{_shape_list(a.shape)} apart from dimension {dim}")
        _check_along_bounds(index, dim, a.shape[dim])
        return a[along(index, dim)]

    def backward(F, g, saved, node):
        index = saved[0]
        zeros = F.full(shape=node.shapes[0], value=0, dtype=node.dtypes[0],
                       **device_params(g))
        return F.scatter_add(zeros, index, g, dim=node.params["dim"]), None


def _check_scatter(a, index, src, dim) -> None:
    _check_index_dtype(index, "scatter")
    if index.ndim != a.ndim and not (index.ndim <= 1 and a.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    is_arr = type(src) is np.ndarray
    if is_arr and src.dtype != a.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    bad = any(index.shape[d] > a.shape[d] for d in range(a.ndim) if d != dim)
    if is_arr:
        bad = bad or src.ndim != index.ndim or any(
            index.shape[d] > src.shape[d] for d in range(index.ndim))
    if bad:
        msg = (f"Expected index {_shape_list(index.shape)} to be no larger than self "
               f"{_shape_list(a.shape)} apart from dimension {dim}")
        if is_arr:
            msg += f" and to be no larger size than src {_shape_list(src.shape)}"
        raise RuntimeError(msg)
    _check_along_bounds(index, dim, a.shape[dim])


class ScatterAdd(Op):
    """``a`` with ``src`` added at ``index`` along ``dim`` (repeated indices accumulate)."""
    saves = (1,)

    def forward(a, index, src, dim):
        _check_scatter(a, index, src, dim)
        out = np.array(a)
        np.add.at(out, along(index, dim), src[_head(index.shape)])
        return out

    def backward(F, g, saved, node):
        index = saved[0]
        dim = node.params["dim"]
        gsrc = None
        if node.needs[2]:
            gsrc = _gather_padded(F, g, index, dim, node.shapes[2], node.shapes[1])
        return g, None, gsrc


class Scatter(Op):
    """``a`` with ``src`` (a tensor or a Python scalar) written at ``index`` along ``dim``."""
    saves = (1,)

    def forward(a, index, src, dim):
        _check_scatter(a, index, src, dim)
        out = np.array(a)
        if type(src) is np.ndarray:
            src = src[_head(index.shape)]
        out[along(index, dim)] = src
        return out

    def backward(F, g, saved, node):
        index = saved[0]
        dim = node.params["dim"]
        ga = F.scatter(g, index, 0.0, dim=dim) if node.needs[0] else None
        gsrc = None
        if node.needs[2]:
            gsrc = _gather_padded(F, g, index, dim, node.shapes[2], node.shapes[1])
        return ga, None, gsrc


def _gather_padded(F, g, index, dim, src_shape, index_shape):
    """``gather(g, dim, index)`` placed in zeros of ``src_shape`` (src may be larger)."""
    out = F.gather(g, index, dim=dim)
    if tuple(src_shape) != tuple(index_shape):
        key = tuple((0, s, 1) for s in index_shape)
        out = F.basic_scatter(out, shape=tuple(src_shape), key=key)
    return out


# -- masks ----------------------------------------------------------------------------------

_TORCH_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                "uint8": "unsigned char", "float32": "float", "float64": "double",
                "float16": "c10::Half"}


class MaskedFill(Op):
    """``value`` where ``mask``, ``a`` elsewhere (result has a's dtype)."""
    saves = (1,)

    def forward(a, mask, value):
        if mask.dtype.kind != "b":
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               f"dtype {_TORCH_NAMES.get(mask.dtype.name, mask.dtype.name)}")
        if type(value) is np.ndarray and value.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return np.where(mask, value, a).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        mask = saved[0]
        ga = F.where(mask, 0.0, g) if node.needs[0] else None
        gv = None
        if node.needs[2]:
            sel = F.where(mask, g, 0.0)
            gv = F.sum(sel, dim=tuple(range(len(sel.shape))), keepdim=False)
        return ga, None, gv


class Nonzero(Op):
    """Indices of the non-zero elements: an ``(n, ndim)`` int64 array."""
    differentiable = False
    data_dependent_shape = True

    def forward(a):
        return np.argwhere(a)


class MaskedScatter(Op):
    """``a`` with the positions where ``mask`` is True filled, in order, with the leading
    elements of ``source`` (``a`` and ``mask`` have one shape)."""
    saves = (1,)

    def forward(a, mask, source):
        if mask.dtype.kind != "b":
            raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                               f"dtype {scalar_name(mask.dtype)}")
        n = int(np.count_nonzero(mask))
        if n > source.size:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        out = np.array(a)
        out[mask] = source.reshape(-1)[:n]
        return out

    def backward(F, g, saved, node):
        mask = saved[0]
        ga = F.where(mask, 0.0, g) if node.needs[0] else None
        gs = F.masked_gather(g, mask, shape=node.shapes[2]) if node.needs[2] else None
        return ga, None, gs


class MaskedGather(Op):
    """Adjoint of :class:`MaskedScatter` for ``source``: zeros of ``shape`` whose leading
    elements are ``g``'s elements where ``mask`` is True, in order."""
    saves = (1,)

    def forward(g, mask, shape):
        out = np.zeros(shape, dtype=g.dtype)
        picked = g[mask]
        out.reshape(-1)[:picked.size] = picked
        return out

    def backward(F, gg, saved, node):
        mask = saved[0]
        zeros = F.full(shape=node.shapes[0], value=0, dtype=node.dtypes[0],
                       **device_params(gg))
        return F.masked_scatter(zeros, mask, gg), None


def _along_key(ndim: int, dim: int, index: np.ndarray) -> tuple:
    return (slice(None),) * dim + (index,)


class IndexAdd(Op):
    """``a`` with ``alpha * source`` added at ``index`` (1-D, in ``[0, size)``) along ``dim``;
    repeated indices accumulate.  Checked on every call (a compiled replay too)."""
    saves = (1,)

    def forward(a, index, source, dim, alpha=1):
        n = a.shape[dim]
        if index.size and (index.min() < 0 or index.max() >= n):
            raise IndexError("index out of range in self")
        out = np.array(a)
        np.add.at(out, _along_key(a.ndim, dim, index), source if alpha == 1 else source * alpha)
        return out

    def backward(F, g, saved, node):
        p = node.params
        gs = None
        if node.needs[2]:
            gs = F.index(g, F.unsqueeze(saved[0], dims=(0,)), dims=(p["dim"],))
            if p.get("alpha", 1) != 1:
                gs = F.mul(gs, p["alpha"])
        return g, None, gs


class IndexCopy(Op):
    """``a`` with the slices of ``source`` written at ``index`` (1-D, in ``[0, size)``) along
    ``dim``.  Checked on every call (a compiled replay too)."""
    saves = (1,)

    def forward(a, index, source, dim):
        n = a.shape[dim]
        if index.size and (index.min() < 0 or index.max() >= n):
            bad = int(index.min()) if index.min() < 0 else int(index.max())
            raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} "
                             f"with size {n}")
        out = np.array(a)
        out[_along_key(a.ndim, dim, index)] = source
        return out

    def backward(F, g, saved, node):
        dim = node.params["dim"]
        idx = F.unsqueeze(saved[0], dims=(0,))
        key = tuple((0, s, 1) for s in node.shapes[0])
        ga = F.set_item(g, 0.0, idx, key=key, dims=(dim,)) if node.needs[0] else None
        gs = F.index(g, idx, dims=(dim,)) if node.needs[2] else None
        return ga, None, gs
