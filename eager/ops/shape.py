"""Shape ops: reshape/view, permute/transpose, expand and its adjoint sum_to, squeeze,
unsqueeze, flatten, cat/stack/split, repeat, contiguous.

Ops flagged ``view = True`` return NumPy views: the result shares memory and the
version counter with argument 0.
"""

from __future__ import annotations

import numpy as np

from .base import Op


def sum_to_shape(a: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``a`` over the dimensions that broadcasting added or stretched to reach
    ``a.shape`` from ``shape``."""
    if a.shape == shape:
        return a
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and a.shape[i + lead] != 1)
    out = a.sum(axis=axes, keepdims=True) if axes else a
    if lead:
        out = out.reshape(out.shape[lead:])
    return out.reshape(shape)


class SumTo(Op):
    """Adjoint of broadcasting: reduce to ``shape``."""

    def forward(a, shape):
        return sum_to_shape(np.asarray(a), tuple(shape))

    def backward(F, g, saved, node):
        return (F.expand(g, shape=node.shapes[0]),)


class Expand(Op):
    view = True

    def forward(a, shape):
        return np.broadcast_to(a, shape)

    def backward(F, g, saved, node):
        return (F.sum_to(g, shape=node.shapes[0]),)


class Reshape(Op):
    """Reshape; a view when the strides allow it (NumPy decides), else a copy."""
    view = True

    def forward(a, shape):
        return a.reshape(shape)

    def backward(F, g, saved, node):
        return (F.reshape(g, shape=node.shapes[0]),)


class View(Op):
    """Like reshape, but an error when the data would have to be copied (as PyTorch)."""
    view = True

    def forward(a, shape):
        out = a.view()
        try:
            out.shape = shape
        except AttributeError:
            raise RuntimeError(
                f"view size is not compatible with input tensor's size and stride (at least one "
                f"dimension spans across two contiguous subspaces) for shape {tuple(a.shape)} -> "
                f"{tuple(shape)}. Use .reshape(...) instead.") from None
        return out

    def backward(F, g, saved, node):
        return (F.reshape(g, shape=node.shapes[0]),)


class Permute(Op):
    view = True

    def forward(a, dims):
        return np.transpose(a, dims)

    def backward(F, g, saved, node):
        dims = node.params["dims"]
        return (F.permute(g, dims=tuple(np.argsort(dims).tolist())),)
