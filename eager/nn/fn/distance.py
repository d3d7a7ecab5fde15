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
    """Divides ``input`` by its ``p``-norm along ``dim``: ``x / max(||x||_p, eps)``.

    Args:
        input (Tensor): the input, of any shape.
        p (float, optional): the exponent of the norm. Default: ``2.0``
        dim (int, optional): the dimension to normalize along. Default: ``1``
        eps (float, optional): the smallest divisor, so zero vectors stay zero.
            Default: ``1e-12``
        out (Tensor, optional): a tensor to copy the result into (and return).
            Default: ``None``

    Example::

        >>> F.normalize(eager.tensor([[3.0, 4.0], [0.0, 0.0]]))
        tensor([[0.6000, 0.8000],
                [0.0000, 0.0000]])
        >>> F.normalize(eager.tensor([[3.0, 4.0], [1.0, 1.0]]), p=1.0, dim=1)
        tensor([[0.4286, 0.5714],
                [0.5000, 0.5000]])
    """
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
    """Cosine similarity of ``x1`` and ``x2`` along ``dim``.

    The result is ``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))``.

    ``x1`` and ``x2`` are broadcast to a common shape first; ``dim`` is then removed.
    The ``eps`` clamp changes the value only (the gradient is that of the plain norms), as
    in PyTorch.

    Args:
        x1 (Tensor): the first input.
        x2 (Tensor): the second input, broadcastable with ``x1``.
        dim (int, optional): the dimension to compare along. Default: ``1``
        eps (float, optional): the smallest norm used as a divisor. Default: ``1e-8``

    Shape:
        - x1, x2: ``(*1, D, *2)``, broadcastable to each other.
        - Output: ``(*1, *2)``, the broadcast shape without ``dim``.

    Example::

        >>> a = eager.tensor([[1.0, 0.0], [1.0, 1.0]])
        >>> F.cosine_similarity(a, eager.tensor([[1.0, 0.0], [-1.0, 1.0]]))
        tensor([1., 0.])
        >>> F.cosine_similarity(eager.randn(4, 3), eager.randn(1, 3)).shape
        eager.Size([4])
    """
    x1, x2 = _broadcast(x1, x2)
    d = _wrap_dim(dim, x1.ndim, "cosine_similarity")
    a = _ew.div(x1, _clamped_norm(x1, d, eps))
    b = _ew.div(x2, _clamped_norm(x2, d, eps))
    return _red.sum(_ew.mul(a, b), d)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The ``p``-norm distance between ``x1`` and ``x2`` over the last dimension.

    The result is ``||x1 - x2 + eps||_p``.

    ``eps`` is added to the difference (as PyTorch) to keep the gradient finite where
    ``x1 == x2``; identical rows therefore give a small positive distance.

    Args:
        x1 (Tensor): the first input, ``(N, D)`` or ``(D)``.
        x2 (Tensor): the second input, broadcastable with ``x1``.
        p (float, optional): the exponent of the norm. Default: ``2.0``
        eps (float, optional): added to the difference. Default: ``1e-6``
        keepdim (bool, optional): keep the last dimension (with size 1). Default: ``False``

    Shape:
        - x1, x2: ``(N, D)`` or ``(D)``, broadcastable.
        - Output: ``(N)`` or ``()``; ``(N, 1)`` or ``(1)`` with ``keepdim``.

    Example::

        >>> x1 = eager.tensor([[0.0, 0.0], [1.0, 1.0]])
        >>> F.pairwise_distance(x1, eager.tensor([[3.0, 4.0], [1.0, 2.0]]), eps=0.0)
        tensor([5., 1.])
        >>> F.pairwise_distance(eager.tensor([[0.0, 0.0]]), eager.tensor([[3.0, 4.0]]), p=1.0)
        tensor([7.0000])
    """
    diff = _ew.add(_ew.sub(x1, x2), eps)
    if diff.ndim == 0:  # a scalar's norm over its only "dimension"
        return _red.norm(reshape(diff, (1,)), p, 0)
    return _red.norm(diff, p, diff.ndim - 1, keepdim=keepdim)
