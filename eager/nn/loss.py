"""Loss modules: ``MSELoss``, ``L1Loss``, ``SmoothL1Loss``, ``HuberLoss``,
``CrossEntropyLoss``, ``NLLLoss``, ``BCELoss``, ``BCEWithLogitsLoss``, ``KLDivLoss``."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MSELoss", "NLLLoss", "SmoothL1Loss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """The mean squared error between ``input`` and ``target``: ``(x_n - y_n)^2`` per
    element, reduced.

    Args:
        reduction (str): ``"mean"``, ``"sum"`` or ``"none"``. Default: ``"mean"``.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or ``(*)`` with ``reduction="none"``.

    Example::

        >>> loss = nn.MSELoss()
        >>> x = eager.randn(3, 5, requires_grad=True)
        >>> loss(x, eager.randn(3, 5)).backward()
    """
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """The cross entropy between unnormalized logits and targets: ``log_softmax`` over the
    class dimension, then the negative log-likelihood of class indices (or of class
    probabilities).

    Args:
        weight (Tensor, optional): a rescaling weight per class, ``(C,)``.
        ignore_index (int): a class-index target ignored (no loss, no gradient).
            Default: -100.
        reduction (str): ``"mean"`` (weighted mean over non-ignored targets), ``"sum"`` or
            ``"none"``. Default: ``"mean"``.
        label_smoothing (float): in ``[0, 1]``, mixes the target with the uniform
            distribution. Default: 0.
        size_average, reduce: deprecated, as PyTorch (they set ``reduction``).

    Shape:
        - Input: ``(C)``, ``(N, C)`` or ``(N, C, d_1, ..., d_K)``.
        - Target: class indices ``()``, ``(N)`` or ``(N, d_1, ..., d_K)`` in ``[0, C)``;
          or probabilities of the input's shape.
        - Output: a scalar, or the target's batch shape with ``reduction="none"``.

    Example::

        >>> loss = nn.CrossEntropyLoss()
        >>> logits = eager.randn(3, 5, requires_grad=True)
        >>> loss(logits, eager.tensor([1, 0, 4])).backward()
    """
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """``F.kl_div`` as a layer: ``input`` holds log-probabilities; use
    ``reduction='batchmean'`` for the KL divergence."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
