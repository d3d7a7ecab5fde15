"""Vector normalization and distances: ``normalize``, ``cosine_similarity``,
``pairwise_distance``, with PyTorch's signatures, defaults and gradients."""

from __future__ import annotations

import numpy as np

from ...fn import elementwise as _ew
from ...fn import reduce as _red
from ...fn.shape import expand, reshape
from ...tensor import _wrap_dim

__all__ = ["cosine_similarity", "normalize", "pairwise_distance"]


def _broadcast(x1, x2):
    a, b = tuple(x1.shape), tuple(x2.shape)
    if a == b:
        return x1, x2
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for d in range(n - 1, -1, -1):
        if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
            raise RuntimeError(f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                               f"({pb[d]}) at non-singleton dimension {d}")
    shape = tuple(np.broadcast_shapes(a, b))
    return expand(x1, shape), expand(x2, shape)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    denom = _ew.clamp(_red.norm(input, p, dim, keepdim=True), min=eps)
    result = _ew.div(input, denom)
    if out is not None:
        return out.copy_(result)
    return result


def _clamped_norm(x, dim: int, eps: float):
    """``||x||`` clamped below at ``eps`` in value only: the gradient is the norm's, as
    PyTorch's in-place clamp under no_grad leaves it."""
    n = _red.norm(x, 2, dim, keepdim=True)
    return _ew.add(n, _ew.sub(_ew.clamp(n, min=eps), n).detach())


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))`` along ``dim`` (after
    broadcasting ``x1`` and ``x2``)."""
    x1, x2 = _broadcast(x1, x2)
    d = _wrap_dim(dim, x1.ndim, "cosine_similarity")
    a = _ew.div(x1, _clamped_norm(x1, d, eps))
    b = _ew.div(x2, _clamped_norm(x2, d, eps))
    return _red.sum(_ew.mul(a, b), d)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """``||x1 - x2 + eps||_p`` over the last dimension."""
    diff = _ew.add(_ew.sub(x1, x2), eps)
    if diff.ndim == 0:  # a scalar's norm over its only "dimension"
        return _red.norm(reshape(diff, (1,)), p, 0)
    return _red.norm(diff, p, diff.ndim - 1, keepdim=keepdim)
