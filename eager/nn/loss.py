"""Loss modules: ``MSELoss``, ``L1Loss``, ``SmoothL1Loss``, ``HuberLoss``,
``CrossEntropyLoss``, ``NLLLoss``, ``BCELoss``, ``BCEWithLogitsLoss``, ``KLDivLoss``."""

from __future__ import annotations

from . import functional as F
from .fn.loss import _legacy_reduction
from .module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MSELoss", "NLLLoss", "SmoothL1Loss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
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
    """The mean absolute error: ``|x_n - y_n|`` for each element of ``input`` and ``target``.

    The element losses ``l_n = |x_n - y_n|`` are then averaged, summed or returned as they are,
    as ``reduction`` says. This is ``F.l1_loss``.

    Args:
        size_average (bool, optional): deprecated; if this or ``reduce`` is not ``None``, the two
            set ``reduction`` as in PyTorch (``reduce=False``: ``"none"``, else
            ``size_average=False``: ``"sum"``, else ``"mean"``). Default: ``None``.
        reduce (bool, optional): deprecated, see ``size_average``. Default: ``None``.
        reduction (str): ``"none"`` (the loss of each element), ``"mean"`` (their mean) or
            ``"sum"`` (their sum); another value raises ``ValueError`` when the loss is computed.
            Default: ``"mean"``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Target: ``(*)``, the input's shape (another shape broadcasts, with a warning).
        - Output: a scalar; ``(*)``, the input's shape, with ``reduction="none"``.

    Example::

        >>> loss = nn.L1Loss()
        >>> x = eager.tensor([0.5, 2.0, -1.0], requires_grad=True)
        >>> y = eager.tensor([0.0, 0.5, 1.0])
        >>> out = loss(x, y)
        >>> out
        tensor(1.3333, grad_fn=<...>)
        >>> out.backward()
        >>> x.grad
        tensor([ 0.3333,  0.3333, -0.3333])
        >>> nn.L1Loss(reduction="none")(x, y)
        tensor([0.5000, 1.5000, 2.0000], grad_fn=<...>)
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """A smooth L1 loss: quadratic for errors below ``beta``, absolute beyond.

    With ``d = |x_n - y_n|``, the element loss is ``0.5 * d**2 / beta`` if ``d < beta`` and
    ``d - 0.5 * beta`` otherwise; ``beta=0`` gives :class:`L1Loss`. It equals
    :class:`HuberLoss` with ``delta=beta``, divided by ``beta``. As in PyTorch, a negative
    ``beta`` raises ``RuntimeError`` when the loss is computed. This is ``F.smooth_l1_loss``.

    Args:
        size_average (bool, optional): deprecated; if this or ``reduce`` is not ``None``, the two
            set ``reduction`` as in PyTorch (``reduce=False``: ``"none"``, else
            ``size_average=False``: ``"sum"``, else ``"mean"``). Default: ``None``.
        reduce (bool, optional): deprecated, see ``size_average``. Default: ``None``.
        reduction (str): ``"none"`` (the loss of each element), ``"mean"`` (their mean) or
            ``"sum"`` (their sum); another value raises ``ValueError`` when the loss is computed.
            Default: ``"mean"``.
        beta (float): where the loss changes from quadratic to linear. Default: ``1.0``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Target: ``(*)``, the input's shape (another shape broadcasts, with a warning).
        - Output: a scalar; ``(*)``, the input's shape, with ``reduction="none"``.

    Example::

        >>> loss = nn.SmoothL1Loss(reduction="none")
        >>> loss(eager.tensor([0.5, 2.0, -1.0]), eager.tensor([0.0, 0.5, 1.0]))
        tensor([0.1250, 1.0000, 1.5000])
        >>> x = eager.randn(3, 5, requires_grad=True)
        >>> nn.SmoothL1Loss(beta=0.5)(x, eager.randn(3, 5)).backward()
        >>> x.grad.shape
        eager.Size([3, 5])
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """The Huber loss: quadratic for errors below ``delta``, linear beyond.

    With ``d = |x_n - y_n|``, the element loss is ``0.5 * d**2`` if ``d < delta`` and
    ``delta * (d - 0.5 * delta)`` otherwise, so it is less sensitive to outliers than
    :class:`MSELoss`; it equals ``delta`` times :class:`SmoothL1Loss` with ``beta=delta``.
    As in PyTorch there are no ``size_average``/``reduce`` arguments, and a non-positive
    ``delta`` raises ``RuntimeError`` when the loss is computed. This is ``F.huber_loss``.

    Args:
        reduction (str): ``"none"`` (the loss of each element), ``"mean"`` (their mean) or
            ``"sum"`` (their sum); another value raises ``ValueError`` when the loss is computed.
            Default: ``"mean"``.
        delta (float): where the loss changes from quadratic to linear. Default: ``1.0``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Target: ``(*)``, the input's shape (another shape broadcasts, with a warning).
        - Output: a scalar; ``(*)``, the input's shape, with ``reduction="none"``.

    Example::

        >>> loss = nn.HuberLoss(reduction="none", delta=0.5)
        >>> loss(eager.tensor([0.5, 2.0, -1.0]), eager.tensor([0.0, 0.5, 1.0]))
        tensor([0.1250, 0.6250, 0.8750])
        >>> x = eager.randn(3, 5, requires_grad=True)
        >>> nn.HuberLoss()(x, eager.randn(3, 5)).backward()
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """The negative log-likelihood loss for classification, given log-probabilities.

    For a target class ``y_n``, the element loss is ``l_n = -w[y_n] * x[n, y_n]``, where ``x``
    holds log-probabilities over the class dimension (put a :class:`LogSoftmax` in front, or use
    :class:`CrossEntropyLoss` on logits) and ``w`` is ``weight`` (all ones when not given).
    ``"mean"`` is the weighted mean ``sum(l_n) / sum(w[y_n])`` over the targets that are not
    ``ignore_index``. Targets must be integer class indices in ``[0, C)`` (or ``ignore_index``);
    one out of range raises ``IndexError``, floating-point targets raise ``RuntimeError``.
    This is ``F.nll_loss``.

    Args:
        weight (Tensor, optional): a rescaling weight for each class, of shape ``(C,)``.
            Default: ``None``.
        size_average (bool, optional): deprecated; if this or ``reduce`` is not ``None``, the two
            set ``reduction`` as in PyTorch (``reduce=False``: ``"none"``, else
            ``size_average=False``: ``"sum"``, else ``"mean"``). Default: ``None``.
        reduce (bool, optional): deprecated, see ``size_average``. Default: ``None``.
        ignore_index (int): a target value that is ignored: its loss is 0, it gets no gradient
            and it does not count in the mean. Default: ``-100``.
        reduction (str): ``"none"`` (the loss of each element), ``"mean"`` (their mean) or
            ``"sum"`` (their sum); another value raises ``ValueError`` when the loss is computed.
            Default: ``"mean"``.

    Shape:
        - Input: ``(C)``, ``(N, C)`` or ``(N, C, d_1, ..., d_K)`` log-probabilities.
        - Target: ``()``, ``(N)`` or ``(N, d_1, ..., d_K)``, integer class indices.
        - Output: a scalar; the target's shape with ``reduction="none"``.

    Example::

        >>> loss = nn.NLLLoss()
        >>> logp = eager.tensor([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]).log()
        >>> target = eager.tensor([2, 0])
        >>> loss(logp, target)
        tensor(0.7803)
        >>> nn.NLLLoss(reduction="none")(logp, target)
        tensor([0.3567, 1.2040])
        >>> nn.NLLLoss(weight=eager.tensor([1.0, 1.0, 2.0]))(logp, target)
        tensor(0.6391)
        >>> x = eager.randn(4, 5, 8, 8, requires_grad=True)
        >>> loss(F.log_softmax(x, dim=1), eager.randint(0, 5, (4, 8, 8))).backward()
    """

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
    """The binary cross entropy between predicted probabilities and targets.

    The element loss is ``l_n = -w_n * (y_n * log(x_n) + (1 - y_n) * log(1 - x_n))``, with each
    log clamped to ``>= -100`` (as PyTorch) so that a probability of exactly 0 or 1 gives a finite
    loss. ``input`` should hold probabilities (e.g. after :class:`Sigmoid`); for logits use
    :class:`BCEWithLogitsLoss`, which is more stable. This is ``F.binary_cross_entropy``.

    Args:
        weight (Tensor, optional): a rescaling weight multiplied into the element losses; it
            broadcasts against the input. Default: ``None``.
        size_average (bool, optional): deprecated; if this or ``reduce`` is not ``None``, the two
            set ``reduction`` as in PyTorch (``reduce=False``: ``"none"``, else
            ``size_average=False``: ``"sum"``, else ``"mean"``). Default: ``None``.
        reduce (bool, optional): deprecated, see ``size_average``. Default: ``None``.
        reduction (str): ``"none"`` (the loss of each element), ``"mean"`` (their mean) or
            ``"sum"`` (their sum); another value raises ``ValueError`` when the loss is computed.
            Default: ``"mean"``.

    Shape:
        - Input: ``(*)``, probabilities in ``[0, 1]``.
        - Target: ``(*)``, the input's shape (another shape raises ``ValueError``), values in
          ``[0, 1]``.
        - Output: a scalar; ``(*)`` with ``reduction="none"``.

    Example::

        >>> loss = nn.BCELoss(reduction="none")
        >>> loss(eager.tensor([0.9, 0.2, 0.6]), eager.tensor([1.0, 0.0, 1.0]))
        tensor([0.1054, 0.2231, 0.5108])
        >>> x = eager.randn(3, requires_grad=True)
        >>> nn.BCELoss()(F.sigmoid(x), eager.tensor([0.0, 1.0, 1.0])).backward()
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy on logits: a sigmoid and :class:`BCELoss` in one stable step.

    The element loss is ``l_n = -w_n * (p * y_n * log(sigmoid(x_n)) + (1 - y_n) *
    log(1 - sigmoid(x_n)))``, computed through ``softplus`` so that large logits do not overflow;
    ``p`` is ``pos_weight`` (1 when not given). A ``pos_weight`` above 1 weighs the positive
    targets more (raising recall), below 1 less. This is ``F.binary_cross_entropy_with_logits``.

    Args:
        weight (Tensor, optional): a rescaling weight multiplied into the element losses; it
            broadcasts against the input. Default: ``None``.
        size_average (bool, optional): deprecated; if this or ``reduce`` is not ``None``, the two
            set ``reduction`` as in PyTorch (``reduce=False``: ``"none"``, else
            ``size_average=False``: ``"sum"``, else ``"mean"``). Default: ``None``.
        reduce (bool, optional): deprecated, see ``size_average``. Default: ``None``.
        reduction (str): ``"none"`` (the loss of each element), ``"mean"`` (their mean) or
            ``"sum"`` (their sum); another value raises ``ValueError`` when the loss is computed.
            Default: ``"mean"``.
        pos_weight (Tensor, optional): a weight for the positive term, broadcast against the
            target, typically of shape ``(C,)``, one per class along the last dimension.
            Default: ``None``.

    Shape:
        - Input: ``(*)``, logits.
        - Target: ``(*)``, the input's shape (another shape raises ``ValueError``), values in
          ``[0, 1]``.
        - Output: a scalar; ``(*)`` with ``reduction="none"``.

    Example::

        >>> loss = nn.BCEWithLogitsLoss()
        >>> logits = eager.tensor([2.0, -1.0, 0.0])
        >>> target = eager.tensor([1.0, 0.0, 1.0])
        >>> loss(logits, target)
        tensor(0.3778)
        >>> nn.BCEWithLogitsLoss(pos_weight=eager.tensor([3.0]))(logits, target)
        tensor(0.9245)
        >>> x = eager.randn(4, 3, requires_grad=True)
        >>> nn.BCEWithLogitsLoss(pos_weight=eager.ones(3))(x, eager.ones(4, 3)).backward()
    """

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
    """The Kullback-Leibler divergence loss; ``input`` holds log-probabilities.

    The element loss is ``target * (log(target) - input)`` (0 where ``target`` is 0), or, with
    ``log_target=True`` (``target`` also given as log-probabilities),
    ``exp(target) * (target - input)``. Summed over a batch of distributions and divided by the
    batch size (``reduction="batchmean"``), this is the KL divergence ``KL(target || P)`` of
    the input's distribution ``P`` from the target's. ``"mean"`` divides by the number of
    elements instead, which is not the divergence; it warns, as in PyTorch. This is
    ``F.kl_div``.

    Args:
        size_average (bool, optional): deprecated; if this or ``reduce`` is not ``None``, the two
            set ``reduction`` as in PyTorch (``reduce=False``: ``"none"``, else
            ``size_average=False``: ``"sum"``, else ``"mean"``). Default: ``None``.
        reduce (bool, optional): deprecated, see ``size_average``. Default: ``None``.
        reduction (str): ``"none"``, ``"batchmean"`` (the sum divided by the size of the first
            dimension), ``"sum"`` or ``"mean"`` (the mean over all elements; warns). Default:
            ``"mean"``.
        log_target (bool): whether ``target`` holds log-probabilities. Default: ``False``.

    Shape:
        - Input: ``(*)``, log-probabilities.
        - Target: ``(*)``, the input's shape.
        - Output: a scalar; ``(*)``, the input's shape, with ``reduction="none"``.

    Example::

        >>> loss = nn.KLDivLoss(reduction="batchmean")
        >>> logp = eager.tensor([[0.25, 0.75], [0.5, 0.5]]).log()
        >>> q = eager.tensor([[0.5, 0.5], [0.5, 0.5]])
        >>> loss(logp, q)
        tensor(0.0719)
        >>> nn.KLDivLoss(reduction="batchmean", log_target=True)(logp, q.log())
        tensor(0.0719)
        >>> x = eager.randn(3, 5, requires_grad=True)
        >>> loss(F.log_softmax(x, dim=1), F.softmax(eager.randn(3, 5), dim=1)).backward()
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
