"""Argument normalization shared by the public op functions in :mod:`eager.fn`."""

from __future__ import annotations

import numpy as np

from ..construct import tensor
from ..tensor import Tensor, _wrap_dim

# -- argument normalization -------------------------------------------------------------

def as_tensor_arg(x):
    """Tensors and Python scalars pass through; lists/arrays become tensors."""
    if type(x) is Tensor or isinstance(x, (Tensor, int, float, bool)):
        return x
    if isinstance(x, (np.integer, np.floating, np.bool_)):
        return x.item()
    return tensor(x)


def norm_dims(dim, ndim: int, op: str) -> tuple:
    """``dim`` (None, int or sequence) as a sorted tuple of non-negative ints."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (_wrap_dim(int(dim), ndim, op),)
    dims = tuple(sorted(_wrap_dim(int(d), ndim, op) for d in dim))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dim {tuple(dim)} appears multiple times in the list of dims")
    return dims


def is_int(x) -> bool:
    return isinstance(x, (int, np.integer))


def is_empty_dims(dim) -> bool:
    return dim is not None and not is_int(dim) and len(dim) == 0


def reduce_dims(input, dim, op: str, empty_all: bool = True) -> tuple:
    """A reduction's canonical ``dim``: a sorted tuple of non-negative ints; ``()`` for 0-d
    inputs.  An empty ``dim`` means every dimension (``empty_all``) or none."""
    nd = input.ndim
    if is_empty_dims(dim):
        dims = tuple(range(nd)) if empty_all else ()
    else:
        dims = norm_dims(dim, nd, op)
    return dims if nd else ()


def norm_shape(shape, op: str = "") -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Tensor)):
        shape = shape[0]
    if type(shape) is tuple:
        for s in shape:
            if type(s) is not int:
                break
        else:
            return shape         # plain ints already (the common case)
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"{op}: shape must be a sequence of ints, got {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def infer_shape(shape: tuple, numel: int, op: str, src: tuple) -> tuple:
    """Resolve one ``-1`` entry; error if the total size does not match."""
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"{op}: invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel} "
                           f"({op} of a tensor of shape {src})")
    return shape
