"""Shape functions: ``reshape``, ``view``, ``permute``, ``transpose``, ``expand``... with
PyTorch's signatures."""

from __future__ import annotations

from ..dispatch import dispatch
from ..ops import shape as _shp
from ..tensor import _wrap_dim
from .args import infer_shape, norm_shape
from .elementwise import cast

def reshape(input, *shape):
    shape = infer_shape(norm_shape(shape, "reshape"), input.numel(), "reshape",
                        tuple(input.shape))
    if shape == input._data.shape:
        return dispatch(_shp.Reshape, input, shape=shape)
    return dispatch(_shp.Reshape, input, shape=shape)


def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, Tensor)):
        return cast(input, shape[0])  # view(dtype): only same-size reinterpretation in torch
    shape = infer_shape(norm_shape(shape, "view"), input.numel(), "view", tuple(input.shape))
    return dispatch(_shp.View, input, shape=shape)


def permute(input, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(int(d), nd, "permute") for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute: repeated dim")
    return dispatch(_shp.Permute, input, dims=dims)


def transpose(input, dim0: int, dim1: int):
    nd = input.ndim
    if nd == 0:
        return input
    d0, d1 = _wrap_dim(dim0, nd, "transpose"), _wrap_dim(dim1, nd, "transpose")
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return dispatch(_shp.Permute, input, dims=tuple(dims))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


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
        shape.append(n)
    return dispatch(_shp.Expand, input, shape=tuple(shape))


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def sum_to(input, shape):
    return dispatch(_shp.SumTo, input, shape=tuple(shape))


METHODS = [
    "reshape", "view", "permute", "transpose", "swapaxes", "swapdims", "t", "expand",
    "expand_as", "sum_to",
]
INPLACE = {}
