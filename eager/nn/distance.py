"""``CosineSimilarity`` and ``PairwiseDistance`` layers."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Computes the cosine similarity of two inputs along one dimension.

    ``similarity = sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))``, the sum and
    the Euclidean norms taken along ``dim``; each input is divided by its own clamped norm
    before the product.  ``x1`` and ``x2`` are broadcast to a common shape first.  The
    result lies in ``[-1, 1]``.

    Args:
        dim (int): the dimension along which the similarity is computed. Default: ``1``.
        eps (float): lower bound for each norm, to avoid division by zero.
            Default: ``1e-8``.

    Shape:
        - Input1: ``(*_1, D, *_2)``, where ``D`` is at position ``dim``.
        - Input2: ``(*_1, D, *_2)``, or any shape that broadcasts with Input1.
        - Output: ``(*_1, *_2)``: the broadcast shape without dimension ``dim``.

    Example::

        >>> cos = nn.CosineSimilarity(dim=1)
        >>> a = eager.tensor([[1.0, 0.0], [1.0, 1.0]])
        >>> b = eager.tensor([[0.0, 1.0], [2.0, 2.0]])
        >>> cos(a, b)
        tensor([0.0000, 1.0000])
        >>> cos(eager.randn(100, 128), eager.randn(100, 128)).shape
        eager.Size([100])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """Computes the ``p``-norm distance between two batches of vectors.

    ``dist(x1, x2) = ||x1 - x2 + eps||_p``, the norm taken over the last dimension (so
    ``eps`` is added to every difference, as PyTorch does).  ``x1`` and ``x2`` broadcast
    against each other.  The norm degree is stored as the attribute ``norm``.

    Args:
        p (float): the norm degree; may be ``float("inf")`` or negative. Default: ``2.0``.
        eps (float): small value added to the differences to avoid a zero norm, whose
            gradient is undefined. Default: ``1e-6``.
        keepdim (bool): if ``True``, keep the last dimension with size 1. Default:
            ``False``.

    Shape:
        - Input1: ``(N, D)`` or ``(D)``.
        - Input2: ``(N, D)`` or ``(D)``, or any shape that broadcasts with Input1.
        - Output: ``(N)``, or ``(N, 1)`` with ``keepdim=True``; a 0-dim tensor for two
          ``(D)`` inputs (``(1)`` with ``keepdim=True``).

    Example::

        >>> pdist = nn.PairwiseDistance(p=2.0)
        >>> pdist(eager.tensor([3.0, 0.0]), eager.tensor([0.0, 4.0]))
        tensor(5.)
        >>> pdist(eager.randn(100, 128), eager.randn(100, 128)).shape
        eager.Size([100])
        >>> nn.PairwiseDistance(keepdim=True)(eager.randn(100, 128), eager.randn(128)).shape
        eager.Size([100, 1])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
