"""Reductions over dimensions: sum, mean, prod, amax/amin, max/min, argmax/argmin, var,
std, logsumexp, softmax, log_softmax, norm, cumsum, all, any.

Reduction params are canonical: ``dim`` is a sorted tuple of non-negative ints (all
dimensions when the user gave none), ``keepdim`` a bool.
"""

from __future__ import annotations

import numpy as np

from .base import Op


def keep_shape(shape: tuple, dims: tuple) -> tuple:
    """``shape`` with each reduced dimension set to 1 (keepdim form)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


class Sum(Op):
    def forward(a, dim, keepdim=False, dtype=None):
        if dtype is None and a.dtype.kind in "bi" and a.dtype.itemsize < 8 or \
                dtype is None and a.dtype.kind == "b":
            dtype = np.int64
        return np.sum(a, axis=dim, keepdims=keepdim, dtype=dtype)

    def backward(F, g, saved, node):
        shape = node.shapes[0]
        if not node.params.get("keepdim", False):
            g = F.reshape(g, shape=keep_shape(shape, node.params["dim"]))
        return (F.expand(g, shape=shape),)
