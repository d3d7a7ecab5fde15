"""Margin, embedding and likelihood loss modules: ``CosineEmbeddingLoss``,
``MarginRankingLoss``, ``TripletMarginLoss``, ``HingeEmbeddingLoss``, ``SoftMarginLoss``,
``MultiLabelSoftMarginLoss``, ``GaussianNLLLoss`` and ``PoissonNLLLoss``: PyTorch's
constructor arguments, each forward one call of :mod:`eager.nn.fn.extra_losses`."""

from __future__ import annotations

from .fn import extra_losses as _fn
from .loss import _Loss, _WeightedLoss

__all__ = ["CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss",
           "MultiLabelSoftMarginLoss", "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss"]


class CosineEmbeddingLoss(_Loss):
    """Whether pairs of vectors are similar (target 1) or dissimilar (target -1), by their
    cosine similarity: ``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)``
    for target -1.

    Args:
        margin (float): in ``[-1, 1]``. Default: 0.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Input1: ``(N, D)`` or ``(D)``; Input2: the same shape.
        - Target: ``(N)`` or ``()``.
        - Output: a scalar, or ``(N)`` / ``()`` with ``reduction="none"``.

    Example::

        >>> loss = nn.CosineEmbeddingLoss(margin=0.2)
        >>> x1 = eager.randn(4, 8, requires_grad=True)
        >>> loss(x1, eager.randn(4, 8), eager.tensor([1, -1, -1, 1])).backward()
        >>> x1.grad.shape
        eager.Size([4, 8])
    """
    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return _fn.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                         reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """Whether ``input1`` should rank above (target 1) or below (target -1) ``input2``:
    ``max(0, -target * (input1 - input2) + margin)``.

    Args:
        margin (float): Default: 0.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Input1: ``(N)`` or ``()``; Input2 and Target: the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> loss = nn.MarginRankingLoss(margin=0.1)
        >>> s1, s2 = eager.randn(6, requires_grad=True), eager.randn(6, requires_grad=True)
        >>> loss(s1, s2, eager.tensor([1.0, -1, 1, 1, -1, -1])).backward()
        >>> s2.grad.shape
        eager.Size([6])
    """
    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return _fn.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """The triplet loss ``max(0, d(a, p) - d(a, n) + margin)``, ``d`` the ``p``-norm
    pairwise distance over the last dimension: anchors nearer their positives than their
    negatives by ``margin``.

    Args:
        margin (float): greater than 0. Default: 1.
        p (float): the norm's degree. Default: 2.
        eps (float): added to the differences. Default: 1e-6.
        swap (bool): the distance swap: the negative distance is
            ``min(d(a, n), d(p, n))``. Default: False.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Anchor, Positive, Negative: ``(N, D)`` or ``(D)``.
        - Output: a scalar, or ``(N)`` with ``reduction="none"``.

    Example::

        >>> loss = nn.TripletMarginLoss(margin=1.0, p=2)
        >>> a = eager.randn(8, 16, requires_grad=True)
        >>> loss(a, eager.randn(8, 16), eager.randn(8, 16)).backward()
        >>> a.grad.shape
        eager.Size([8, 16])
    """
    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return _fn.triplet_margin_loss(anchor, positive, negative, margin=self.margin,
                                       p=self.p, eps=self.eps, swap=self.swap,
                                       reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """For inputs holding distances: the distance itself where target is 1,
    ``max(0, margin - distance)`` where target is -1.

    Args:
        margin (float): Default: 1.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or ``(*)`` with ``reduction="none"``.

    Example::

        >>> loss = nn.HingeEmbeddingLoss(margin=2.0, reduction="none")
        >>> loss(eager.tensor([0.5, 0.5, 3.0]), eager.tensor([1.0, -1.0, -1.0]))
        tensor([0.5000, 1.5000, 0.0000])
    """
    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return _fn.hinge_embedding_loss(input, target, margin=self.margin,
                                        reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """The two-class logistic loss ``log(1 + exp(-target * input))`` for targets 1 or -1.

    Args:
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or ``(*)`` with ``reduction="none"``.

    Example::

        >>> loss = nn.SoftMarginLoss()
        >>> x = eager.randn(3, 4, requires_grad=True)
        >>> loss(x, eager.ones(3, 4)).backward()
        >>> x.grad.shape
        eager.Size([3, 4])
    """
    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return _fn.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss: the binary cross entropy of
    ``sigmoid(input)`` against 0/1 targets, averaged over the ``C`` classes.

    Args:
        weight (Tensor, optional): a rescaling weight per class, ``(C)``.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Input: ``(N, C)`` or ``(C)``; Target: the same shape, 0 or 1.
        - Output: a scalar, or ``(N)`` with ``reduction="none"``.

    Example::

        >>> loss = nn.MultiLabelSoftMarginLoss(weight=eager.tensor([1.0, 2.0, 1.0]))
        >>> logits = eager.randn(2, 3, requires_grad=True)
        >>> loss(logits, eager.tensor([[1.0, 0, 1], [0, 1, 0]])).backward()
        >>> logits.grad.shape
        eager.Size([2, 3])
    """
    __constants__ = ["reduction"]

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input, target):
        return _fn.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                               reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """The negative log likelihood of targets under Gaussians with predicted means and
    variances: ``0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps))``, plus
    ``0.5 * log(2 * pi)`` with ``full``.

    Args:
        full (bool): add the constant term. Default: False.
        eps (float): the smallest variance used (the clamp does not stop the variance's
            gradient). Default: 1e-6.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.

    Shape:
        - Input: ``(N, *)`` or ``(*)``; Target: the same shape (or broadcastable).
        - Var: the input's shape, or it with one dimension of size 1, or without the last
          dimension (homoscedastic); or a float.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> loss = nn.GaussianNLLLoss()
        >>> mu = eager.randn(5, 2, requires_grad=True)
        >>> var = eager.ones(5, 2, requires_grad=True)
        >>> loss(mu, eager.randn(5, 2), var).backward()
        >>> var.grad.shape
        eager.Size([5, 2])
    """
    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return _fn.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                     reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """The negative log likelihood of counts under Poisson distributions of predicted
    rates: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``, plus the Stirling term with ``full``.

    Args:
        log_input (bool): the input is the log of the rate. Default: True.
        full (bool): add the Stirling approximation of ``log(target!)`` where
            ``target > 1``. Default: False.
        eps (float): keeps ``log`` finite when ``log_input=False``. Default: 1e-8.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or ``(*)`` with ``reduction="none"``.

    Example::

        >>> loss = nn.PoissonNLLLoss()
        >>> log_rate = eager.randn(5, 2, requires_grad=True)
        >>> loss(log_rate, eager.tensor([[0.0, 3], [1, 1], [2, 0], [5, 1], [0, 0]])).backward()
        >>> log_rate.grad.shape
        eager.Size([5, 2])
    """
    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return _fn.poisson_nll_loss(log_input, target, log_input=self.log_input,
                                    full=self.full, eps=self.eps, reduction=self.reduction)
