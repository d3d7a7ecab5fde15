"""Shape ops: reshape/view, permute, expand and its adjoint sum_to, squeeze/unsqueeze,
cat/stack, repeat, flip/roll, contiguous/clone.  (Slicing, and so narrow/split/chunk/
unbind/select, is ``basic_index`` in :mod:`eager.ops.index`.)

Ops flagged ``view = True`` return NumPy views: the result shares memory and the
version counter with argument 0.  Params are canonical: dims are non-negative ints in
sorted tuples where order does not matter, shapes are tuples of ints.
"""

from __future__ import annotations

import numpy as np

from .base import Op

_add_reduce = np.add.reduce


def sum_to_shape(a: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``a`` over the dimensions that broadcasting added or stretched to reach
    ``a.shape`` from ``shape``."""
    if a.shape == shape:
        return a
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and a.shape[i + lead] != 1)
    # (``a.sum``'s own call, without its wrapper; one reshape to ``shape``)
    out = _add_reduce(a, axis=axes, keepdims=True) if axes else a
    return out.reshape(shape)


class SumTo(Op):
    """Adjoint of broadcasting: reduce to ``shape``."""

    def forward(a, shape):
        return sum_to_shape(np.asarray(a), tuple(shape))

    def backward(F, g, saved, node):
        return (F.expand(g, shape=node.shapes[0]),)


class Expand(Op):
    view = True

    def out_dtype(a, shape):
        return a.dtype

    def scalar(S, args, p, out):
        return args[0].name, args[0].dtype   # broadcasting is the loop's business

    def forward(a, shape):
        return np.broadcast_to(a, shape)

    def backward(F, g, saved, node):
        return (F.sum_to(g, shape=node.shapes[0]),)


class Reshape(Op):
    """Reshape; a NumPy view when the strides allow it, else a copy.  Flagged as a view
    either way, so a copy needlessly shares its input's version counter: the public
    ``eager.reshape`` therefore dispatches :class:`View` when a view is possible and
    :class:`ReshapeCopy` otherwise (as PyTorch).  Backward formulas use this op."""
    view = True

    def forward(a, shape):
        return a.reshape(shape)

    def backward(F, g, saved, node):
        return (F.reshape(g, shape=node.shapes[0]),)


class ReshapeCopy(Op):
    """Reshape into a new C-contiguous array (``reshape`` when no view is possible): not a
    view, as PyTorch's ``reshape`` of such input is not one either."""

    def forward(a, shape):
        return np.array(a, order="C").reshape(shape)

    def backward(F, g, saved, node):
        return (F.reshape(g, shape=node.shapes[0]),)


_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one "
               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


def can_view(a: np.ndarray, shape: tuple) -> bool:
    """Whether ``a`` can be reshaped to ``shape`` without copying its data."""
    try:
        a.reshape(shape, copy=False)
    except ValueError:
        return False
    return True


class View(Op):
    """Like reshape, but an error when the data would have to be copied (as PyTorch)."""
    view = True

    def forward(a, shape):
        a = np.asarray(a)
        try:
            return a.reshape(shape, copy=False)
        except ValueError:
            raise RuntimeError(f"{_VIEW_ERROR} (shape {list(a.shape)} -> {list(shape)}, "
                               f"strides {[s // max(a.itemsize, 1) for s in a.strides]})"
                               ) from None

    def backward(F, g, saved, node):
        return (F.reshape(g, shape=node.shapes[0]),)


class ViewDtype(Op):
    """``view(dtype)``: the same bytes read as another dtype (NumPy's ``ndarray.view``)."""
    view = True
    differentiable = False

    def forward(a, dtype):
        dtype = check_view_dtype(a, dtype)
        return a.view(dtype)


def check_view_dtype(a, dtype) -> np.dtype:
    """PyTorch's errors of ``view(dtype)`` for the array ``a`` (NumPy's or a device's:
    ``dtype``, ``ndim``, ``shape``, ``strides``, ``itemsize``); the dtype."""
    dtype = np.dtype(dtype)
    if dtype.itemsize != a.itemsize:
        if a.ndim == 0:
            raise RuntimeError("self.dim() cannot be 0 to view "
                               f"{a.dtype} as {dtype} (different element sizes)")
        if a.strides[-1] != a.itemsize and a.shape[-1] != 1:
            raise RuntimeError("self.stride(-1) must be 1 to view "
                               f"{a.dtype} as {dtype} (different element sizes)")
        ratio = dtype.itemsize // a.itemsize
        if ratio > 1:
            if a.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view "
                                   f"{a.dtype} as {dtype} (different element sizes), but "
                                   f"got {a.shape[-1]}")
            _check_whole_elements(a, dtype, ratio)
    return dtype


def _check_whole_elements(a, dtype, ratio: int) -> None:
    """PyTorch's errors where the storage offset or a stride (of a dimension longer than
    1) is no whole element of the larger ``dtype`` (NumPy's byte strides would allow it)."""
    what = f"to view {a.dtype} as {dtype} (different element sizes), but got"
    offset = _storage_offset(a)
    if offset % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what} {offset}")
    for d in range(a.ndim - 1):
        stride = a.strides[d] // a.itemsize
        if a.shape[d] > 1 and stride % ratio:
            raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what} {stride}")


def _storage_offset(a) -> int:
    """``a``'s offset in elements from the start of its storage: a device array's
    ``offset``, or a NumPy view's distance from the array owning the memory."""
    if type(a) is not np.ndarray:
        return a.offset
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return (a.__array_interface__["data"][0] - root.__array_interface__["data"][0]) \
        // a.itemsize


class Permute(Op):
    view = True

    def forward(a, dims):
        return np.transpose(a, dims)

    def backward(F, g, saved, node):
        dims = node.params["dims"]
        return (F.permute(g, dims=tuple(np.argsort(dims).tolist())),)


class Squeeze(Op):
    """Drop the size-1 dimensions ``dims`` (a sorted tuple): a view."""
    view = True

    def forward(a, dims):
        return np.squeeze(a, axis=dims) if dims else a.view()

    def backward(F, g, saved, node):
        return (F.unsqueeze(g, dims=node.params["dims"]),)


class Unsqueeze(Op):
    """Insert size-1 dimensions at ``dims`` (sorted positions in the output): a view."""
    view = True

    def forward(a, dims):
        return np.expand_dims(a, dims) if dims else a.view()

    def backward(F, g, saved, node):
        return (F.squeeze(g, dims=node.params["dims"]),)


class Contiguous(Op):
    """A C-contiguous copy."""

    def forward(a):
        return np.array(a, order="C")

    def backward(F, g, saved, node):
        return (g,)


class Clone(Op):
    """A copy keeping the memory layout of dense inputs (PyTorch's preserve_format)."""

    def forward(a):
        return np.array(a, order="K")

    def backward(F, g, saved, node):
        return (g,)


class Repeat(Op):
    """``np.tile``: ``repeats`` has at least ``a.ndim`` entries (leading ones pad ``a``)."""

    def forward(a, repeats):
        return np.tile(a, repeats)

    def backward(F, g, saved, node):
        reps = node.params["repeats"]
        shape = node.shapes[0]
        padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
        split = []
        for r, s in zip(reps, padded):
            split += [r, s]
        g = F.reshape(g, shape=tuple(split))
        g = F.sum(g, dim=tuple(range(0, 2 * len(reps), 2)), keepdim=False)
        return (F.reshape(g, shape=tuple(shape)),)


class Cat(Op):
    """Concatenate along ``dim``; the arguments are the tensors."""
    promotes = True

    def forward(*arrays, dim):
        return np.concatenate(arrays, axis=dim)

    def backward(F, g, saved, node):
        dim = node.params["dim"]
        shapes = node.shapes
        out = []
        off = 0
        for i, s in enumerate(shapes):
            n = s[dim]
            if node.needs[i]:
                key = tuple((off, off + n, 1) if d == dim else (0, size, 1)
                            for d, size in enumerate(s))
                out.append(F.basic_index(g, key=key))
            else:
                out.append(None)
            off += n
        return tuple(out)


class Stack(Op):
    """Stack along a new dimension ``dim``; the arguments are the tensors."""
    promotes = True

    def forward(*arrays, dim):
        return np.stack(arrays, axis=dim)

    def backward(F, g, saved, node):
        dim = node.params["dim"]
        out = []
        for i, s in enumerate(node.shapes):
            if node.needs[i]:
                full = [(0, size, 1) for size in s]
                key = tuple(full[:dim]) + (i,) + tuple(full[dim:])
                out.append(F.basic_index(g, key=key))
            else:
                out.append(None)
        return tuple(out)


class Flip(Op):
    """Reverse the order along ``dims`` (a copy, as PyTorch)."""

    def forward(a, dims):
        return np.flip(a, dims).copy()

    def backward(F, g, saved, node):
        return (F.flip(g, dims=node.params["dims"]),)


class Roll(Op):
    """Roll by ``shifts`` along ``dims`` (``dims=None``: over the flattened tensor)."""

    def forward(a, shifts, dims):
        if dims is None:
            return np.roll(a, shifts[0])
        return np.roll(a, shifts, axis=dims)

    def backward(F, g, saved, node):
        shifts = tuple(-s for s in node.params["shifts"])
        return (F.roll(g, shifts=shifts, dims=node.params["dims"]),)

