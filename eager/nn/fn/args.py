"""Argument helpers shared by the functional forms in :mod:`eager.nn.fn`."""

from __future__ import annotations

import numpy as np

from ...amp.autocast_mode import dispatch_plain
from ...dispatch import dispatch
from ...factories import tensor
from ...ops import linalg as _la
from ...ops import shape as _shp
from ...tensor import Tensor


def ntuple(value, n: int):
    """``value`` (an int, or a sequence of 1 or ``n`` ints) as an ``n``-tuple of ints, or
    None when it is neither."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and len(value) in (1, n) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value) * (n if len(value) == 1 else 1)
    return None


def shape_list(x) -> list:
    return list(x.shape)


def reshape(x: Tensor, shape) -> Tensor:
    return dispatch(_shp.Reshape, x, shape=tuple(shape))


def matmul(a: Tensor, b: Tensor) -> Tensor:
    return dispatch(_la.Matmul, a, b)


def batched(input: Tensor, ndim: int):
    """``(input with a batch dimension, whether one was added)`` for ops that accept
    unbatched input of ``ndim - 1`` dimensions."""
    if input.ndim == ndim - 1:
        return dispatch(_shp.Unsqueeze, input, dims=(0,)), True
    return input, False


def unbatched(out: Tensor, added: bool) -> Tensor:
    return dispatch(_shp.Squeeze, out, dims=(0,)) if added else out


def size_str(sizes, sep: str = " x ") -> str:
    return "(" + sep.join(str(s) for s in sizes) + ")"


def along(x: Tensor, dim: int, matrix: np.ndarray) -> Tensor:
    """Apply ``matrix`` (``(out, size)``, a NumPy array of ``x``'s dtype) to dimension
    ``dim`` of ``x``: ``y[..., i, ...] = sum_j matrix[i, j] * x[..., j, ...]``, as one
    matmul against a constant (which a compiled trace records as such)."""
    shape = tuple(x.shape)
    out, size = matrix.shape
    lead = 1
    for s in shape[:dim]:
        lead *= s
    rest = 1
    for s in shape[dim + 1:]:
        rest *= s
    # (autocast suspended: PyTorch's pooling and upsampling kernels are no matmuls)
    if dim == len(shape) - 1:
        y = dispatch_plain(_la.Matmul, reshape(x, (lead, size)),
                           tensor(np.ascontiguousarray(matrix.T)))
    else:
        y = dispatch_plain(_la.Matmul, tensor(matrix), reshape(x, (lead, size, rest)))
    return reshape(y, shape[:dim] + (out,) + shape[dim + 1:])
