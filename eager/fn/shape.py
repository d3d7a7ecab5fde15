"""Shape functions with PyTorch's signatures: ``reshape``, ``view``, ``flatten``,
``squeeze``, ``permute``, ``expand``, ``cat``, ``stack``, ``split``, ``chunk``, ``narrow``...

Views (``view``, ``reshape`` when the strides allow it, ``permute``/``transpose``,
``expand``, ``squeeze``/``unsqueeze``, ``narrow``/``select`` and the pieces of
``split``/``chunk``/``unbind``) share storage and the version counter with their input.
Multi-output functions return several single-output slicing ops (``basic_index``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..dispatch import dispatch
from ..ops import index as _ix
from ..ops import shape as _shp
from ..tensor import Size, Tensor, _wrap_dim
from .args import infer_shape, norm_dims, norm_shape

__all__ = [
    "broadcast_shapes",
    "broadcast_tensors",
    "broadcast_to",
    "cat",
    "chunk",
    "clone",
    "concat",
    "concatenate",
    "expand",
    "expand_as",
    "flatten",
    "flip",
    "fliplr",
    "flipud",
    "hstack",
    "moveaxis",
    "movedim",
    "narrow",
    "permute",
    "ravel",
    "reshape",
    "roll",
    "rot90",
    "select",
    "split",
    "squeeze",
    "stack",
    "sum_to",
    "swapaxes",
    "swapdims",
    "t",
    "tile",
    "transpose",
    "unbind",
    "unflatten",
    "unsqueeze",
    "view",
    "vstack",
]


def _full_key(shape: tuple) -> list:
    return [(0, s, 1) for s in shape]


def _slice_dim(input, dim: int, start: int, stop: int):
    """``input`` narrowed to ``[start, stop)`` along ``dim`` (a view)."""
    key = _full_key(input._data.shape)
    key[dim] = (start, stop, 1)
    return dispatch(_ix.BasicIndex, input, key=tuple(key))


def _select_dim(input, dim: int, index: int):
    key = _full_key(input._data.shape)
    key[dim] = index
    return dispatch(_ix.BasicIndex, input, key=tuple(key))


def _int(x) -> int:
    """An int argument; a 0-d tensor is read (as PyTorch does)."""
    return int(x)


# -- reshaping ----------------------------------------------------------------------------

def _reshape(input, shape: tuple):
    """A view when the strides allow it, else a copy that is not a view (as PyTorch)."""
    if _shp.can_view(input._data, shape):
        return dispatch(_shp.View, input, shape=shape)
    return dispatch(_shp.ReshapeCopy, input, shape=shape)


def reshape(input, *shape):
    shape = infer_shape(norm_shape(shape, "reshape"), input.numel(), "reshape",
                        tuple(input.shape))
    return _reshape(input, shape)


def _is_dtype_arg(x) -> bool:
    return not isinstance(x, (tuple, list, int, np.integer, Tensor, Size))


def view(input, *shape):
    if len(shape) == 1 and _is_dtype_arg(shape[0]):
        dtype = _dt.to_numpy(shape[0])
        if dtype == input._data.dtype:
            return dispatch(_shp.View, input, shape=tuple(input._data.shape))
        return dispatch(_shp.ViewDtype, input, dtype=dtype)
    shape = infer_shape(norm_shape(shape, "view"), input.numel(), "view", tuple(input.shape))
    return dispatch(_shp.View, input, shape=shape)


def view_as(input, other):
    return view(input, tuple(other.shape))


def reshape_as(input, other):
    return reshape(input, tuple(other.shape))


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    nd = input.ndim
    if nd == 0:
        return _reshape(input, (1,))
    s = _wrap_dim(start_dim, nd, "flatten")
    e = _wrap_dim(end_dim, nd, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._data.shape
    new = shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:]
    return _reshape(input, new)


def ravel(input):
    return _reshape(input, (input.numel(),))


def unflatten(input, dim: int, sizes):
    d = _wrap_dim(dim, input.ndim, "unflatten")
    sizes = norm_shape((sizes,), "unflatten")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input._data.shape[d]
    if sum(1 for s in sizes if s == -1) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        ok = known != 0 and n % known == 0
        if ok:
            sizes = tuple(n // known if s == -1 else s for s in sizes)
    else:
        ok = known == n
    if not ok:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {d} ({n}) in the input tensor")
    shape = input._data.shape
    return dispatch(_shp.View, input, shape=shape[:d] + tuple(sizes) + shape[d + 1:])


def squeeze(input, dim=None):
    shape = input._data.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        if isinstance(dim, (list, tuple)):
            dims = norm_dims(dim, input.ndim, "squeeze")
        else:
            dims = (_wrap_dim(_int(dim), input.ndim, "squeeze"),)
        dims = tuple(d for d in dims if input.ndim and shape[d] == 1)
    return dispatch(_shp.Squeeze, input, dims=dims)


def unsqueeze(input, dim: int):
    d = _wrap_dim(_int(dim), input.ndim + 1, "unsqueeze")
    return dispatch(_shp.Unsqueeze, input, dims=(d,))


# -- permutations -------------------------------------------------------------------------

def permute(input, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(_int(d), nd, "permute") for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dispatch(_shp.Permute, input, dims=dims)


def transpose(input, dim0: int, dim1: int):
    nd = input.ndim
    d0, d1 = _wrap_dim(dim0, nd, "transpose"), _wrap_dim(dim1, nd, "transpose")
    dims = list(range(nd))
    if nd:
        dims[d0], dims[d1] = dims[d1], dims[d0]
    return dispatch(_shp.Permute, input, dims=tuple(dims))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else \
        dispatch(_shp.Permute, input, dims=tuple(range(input.ndim)))


def movedim(input, source, destination):
    nd = input.ndim
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(int(d), nd, "movedim") for d in src]
    dst = [_wrap_dim(int(d), nd, "movedim") for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [next(rest) if o == -1 else o for o in order]
    return dispatch(_shp.Permute, input, dims=tuple(order))


moveaxis = movedim


# -- broadcasting -------------------------------------------------------------------------

def expand(input, *sizes):
    sizes = norm_shape(sizes, "expand")
    nd = input.ndim
    if len(sizes) < nd:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({nd})")
    src = (1,) * (len(sizes) - nd) + tuple(input.shape)
    shape = []
    for i, (s, n) in enumerate(zip(src, sizes)):
        if n == -1:
            if i < len(sizes) - nd:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
            n = s
        elif s != 1 and s != n:
            raise RuntimeError(f"The expanded size of the tensor ({n}) must match the existing "
                               f"size ({s}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(input.shape)}")
        elif n < 0:
            raise RuntimeError(f"expand: invalid size {n} at dimension {i}")
        shape.append(n)
    return dispatch(_shp.Expand, input, shape=tuple(shape))


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    return expand(input, tuple(size))


def broadcast_shapes(*shapes) -> Size:
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape "
                           f"({', '.join(str(list(s)) for s in shapes)})") from None


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = tuple(broadcast_shapes(*[tuple(x.shape) for x in tensors]))
    return tuple(expand(x, shape) for x in tensors)


def sum_to(input, shape):
    return dispatch(_shp.SumTo, input, shape=tuple(shape))


# -- copies -------------------------------------------------------------------------------

def contiguous(input, memory_format=None):
    """``input`` itself when C-contiguous, else a C-contiguous copy."""
    if input._data.flags.c_contiguous:
        return input
    return dispatch(_shp.Contiguous, input)


def clone(input, *, memory_format=None):
    if memory_format is not None and "contiguous" in str(memory_format):
        return dispatch(_shp.Contiguous, input)
    return dispatch(_shp.Clone, input)


def repeat(input, *sizes):
    reps = norm_shape(sizes, "repeat")
    nd = input.ndim
    if len(reps) < nd:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(reps) - nd) + tuple(input._data.shape)
    out = [r * s for r, s in zip(reps, padded)]
    if any(r < 0 for r in reps):
        bad = next((o for o in out if o < 0), min(reps))
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {out}")
    return dispatch(_shp.Repeat, input, repeats=reps)


def tile(input, dims):
    reps = norm_shape((dims,) if isinstance(dims, (int, np.integer)) else (tuple(dims),), "tile")
    if len(reps) < input.ndim:
        reps = (1,) * (input.ndim - len(reps)) + reps
    return repeat(input, reps)


# -- joining ------------------------------------------------------------------------------

def _tensor_list(tensors, op: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor")
    tensors = list(tensors)
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(x).__name__}")
    return tensors


def cat(tensors, dim: int = 0):
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    # legacy behaviour (as PyTorch): 1-D empty tensors are skipped
    used = [(i, x) for i, x in enumerate(tensors) if not (x.ndim == 1 and x._data.shape[0] == 0)]
    if not used:
        used = [(0, tensors[0])]
    rs = used[0][1]._data.shape
    d = _wrap_dim(dim, len(rs), "cat")
    for i, x in used:
        xs = x._data.shape
        if len(xs) != len(rs):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(rs)} and "
                               f"{len(xs)}")
        for k in range(len(rs)):
            if k != d and xs[k] != rs[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {rs[k]} but got size {xs[k]} for tensor "
                                   f"number {i} in the list.")
    used = [x for _, x in used]
    return dispatch(_shp.Cat, *used, dim=d)


concat = concatenate = cat


def stack(tensors, dim: int = 0):
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0]._data.shape
    for i, x in enumerate(tensors[1:], 1):
        if x._data.shape != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} "
                               f"at entry 0 and {list(x._data.shape)} at entry {i}")
    d = _wrap_dim(dim, len(s0) + 1, "stack")
    return dispatch(_shp.Stack, *tensors, dim=d)


def _atleast(x, n: int):
    while x.ndim < n:
        x = unsqueeze(x, 0 if x.ndim == 0 or n == 2 else x.ndim)
    return x


def hstack(tensors):
    tensors = [_atleast(x, 1) for x in _tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([_atleast(x, 2) for x in _tensor_list(tensors, "vstack")], 0)


# -- splitting (views) ----------------------------------------------------------------------

def split(tensor, split_size_or_sections, dim: int = 0):
    d = _wrap_dim(dim, tensor.ndim, "split")
    n = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [_int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sizes}")
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    else:
        size = _int(split_size_or_sections)
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        if size == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        count = max(-(-n // size), 1) if size else 1
        sizes = [min(size, n - i * size) for i in range(count)]
    out = []
    start = 0
    for s in sizes:
        out.append(_slice_dim(tensor, d, start, start + s))
        start += s
    return tuple(out)


def chunk(input, chunks: int, dim: int = 0):
    chunks = _int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, input.ndim, "chunk")
    n = input._data.shape[d]
    size = -(-n // chunks)
    if size == 0 and n == 0:
        return split(input, [0] * chunks, d)
    return split(input, size, d)


def unbind(input, dim: int = 0):
    d = _wrap_dim(dim, input.ndim, "unbind")
    return tuple(_select_dim(input, d, i) for i in range(input._data.shape[d]))


def narrow(input, dim: int, start, length: int):
    d = _wrap_dim(dim, input.ndim, "narrow")
    n = input._data.shape[d]
    start, length = _int(start), _int(length)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice_dim(input, d, start, start + length)


def select(input, dim: int, index: int):
    d = _wrap_dim(dim, input.ndim, "select")
    n = input._data.shape[d]
    i = _int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(input._data.shape)} at dimension {d}")
    return _select_dim(input, d, i + n if i < 0 else i)


# -- reordering (copies) ------------------------------------------------------------------

def flip(input, *dims, **kwargs):
    if "dims" in kwargs:  # flip(dims=...) as PyTorch names it
        if dims:
            raise TypeError("flip() got multiple values for argument 'dims'")
        dims = (kwargs.pop("dims"),)
    if kwargs:
        raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(dims) == 1 and isinstance(dims[0], int):
        dims = (dims[0],)
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    nd = input.ndim
    wrapped = [_wrap_dim(_int(d), nd, "flip") for d in dims]
    if len(set(wrapped)) != len(wrapped):
        dup = next(d for d in wrapped if wrapped.count(d) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return dispatch(_shp.Flip, input, dims=tuple(sorted(wrapped)) if nd else ())


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def roll(input, shifts, dims=None):
    shifts = [shifts] if isinstance(shifts, (int, np.integer, Tensor)) else list(shifts)
    shifts = [_int(s) for s in shifts]
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        n = input.numel()
        return dispatch(_shp.Roll, input, shifts=(shifts[0] % n if n else 0,), dims=None)
    dims = [dims] if isinstance(dims, (int, np.integer)) else list(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    shape = input._data.shape
    total: dict = {}
    for s, d in zip(shifts, dims):
        d = _wrap_dim(_int(d), input.ndim, "roll")
        total[d] = total.get(d, 0) + s
    ds = tuple(sorted(total))
    ss = tuple(total[d] % shape[d] if shape[d] else 0 for d in ds)
    return dispatch(_shp.Roll, input, shifts=ss, dims=ds)



def rot90(input, k: int = 1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first towards
    the second (PyTorch's flips and transposes)."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (_wrap_dim(_int(d), input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k = _int(k) % 4
    if k == 1:
        return transpose(flip(input, d1), d0, d1)
    if k == 2:
        return flip(input, d0, d1)
    if k == 3:
        return transpose(flip(input, d0), d0, d1)
    return clone(input)

METHODS = [
    "reshape", "view", "view_as", "reshape_as", "flatten", "unflatten", "ravel", "squeeze",
    "unsqueeze", "permute", "transpose", "swapaxes", "swapdims", "movedim", "moveaxis", "t",
    "expand", "expand_as", "broadcast_to", "sum_to", "contiguous", "clone", "repeat", "tile",
    "chunk", "split", "unbind", "narrow", "select", "flip", "fliplr", "flipud", "roll",
    "rot90",
]
INPLACE = {}
