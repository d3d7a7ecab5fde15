"""``kl_div``: the Kullback-Leibler divergence loss with PyTorch's reductions (including
``'batchmean'``) and ``log_target``."""

from __future__ import annotations

import warnings

import numpy as np

from ..._state import STATE
from ...amp.autocast_mode import cast_inputs as _autocast
from ...dispatch import dispatch, unwrap_storage
from ...dtypes import is_float as _isf
from ...fn import elementwise as _ew
from ...fn import reduce as _red
from ...fn.index import gather as _gather
from ...fn.reduce import sum as _sum
from ...ops import loss as _loss
from ...ops import shape as _shp
from .linear import _reshape

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
           "huber_loss", "kl_div", "l1_loss", "mse_loss", "nll_loss", "smooth_l1_loss"]

_REDUCTIONS = ("none", "mean", "sum", "batchmean")


def _legacy(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False):
    """Kullback-Leibler divergence loss.

    ``input`` holds log-probabilities, ``target`` probabilities (or log-probabilities with
    ``log_target``).

    The elementwise loss is ``target * (log(target) - input)`` (0 where ``target`` is 0), or
    ``exp(target) * (target - input)`` with ``log_target=True``.  ``"batchmean"`` (the sum
    divided by the batch size, ``input.shape[0]``) gives the actual KL divergence;
    ``"mean"`` divides by the number of elements and warns, as PyTorch.

    Args:
        input (Tensor): log-probabilities, of any shape.
        target (Tensor): probabilities (or log-probabilities), of the input's shape.
        size_average (bool, optional): deprecated (use ``reduction``). Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``). Default: ``None``
        reduction (str, optional): ``"none"``, ``"batchmean"``, ``"sum"`` or ``"mean"``.
            Default: ``"mean"``
        log_target (bool, optional): ``target`` holds log-probabilities. Default: ``False``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> logq = eager.tensor([[0.25, 0.75]]).log()
        >>> F.kl_div(logq, eager.tensor([[0.5, 0.5]]), reduction="batchmean")
        tensor(0.1438)
        >>> F.kl_div(logq, eager.tensor([[0.5, 0.5]]).log(), reduction="batchmean",
        ...          log_target=True)
        tensor(0.1438)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    input, target = _autocast("kl_div", input, target)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        loss = _ew.mul(_ew.exp(target), _ew.sub(target, input))
    else:
        # xlogy(t, t): t * log(t), 0 where t == 0 (the log of a safe 1 there keeps the
        # gradient finite)
        pos = _ew.gt(target, 0)
        tlogt = _ew.where(pos, _ew.mul(target, _ew.log(_ew.where(pos, target, 1.0))), 0.0)
        loss = _ew.sub(tlogt, _ew.mul(target, input))
    if reduction == "none":
        return loss
    if reduction == "mean":
        return _red.mean(loss)
    total = _red.sum(loss)
    if reduction == "batchmean" and input.ndim != 0:
        return _ew.div(total, input.shape[0])
    return total


def _legacy_reduction(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return _red.mean(loss)
    if reduction == "sum":
        return _sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
             weight=None):
    """Mean squared error: the elementwise ``(input - target) ** 2``, reduced.

    A ``target`` whose shape differs from ``input``'s is broadcast, with a warning (as
    PyTorch).

    Args:
        input (Tensor): the predictions, of any shape.
        target (Tensor): the targets, normally of the input's shape.
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        weight (Tensor, optional): multiplies the elementwise loss (broadcast) before the
            reduction; ``"mean"`` still divides by the number of elements. Default: ``None``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> x, y = eager.tensor([1.0, 2.0, 3.0]), eager.tensor([1.0, 0.0, 0.0])
        >>> F.mse_loss(x, y)
        tensor(4.3333)
        >>> F.mse_loss(x, y, reduction="none")
        tensor([0., 4., 9.])
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight = _autocast("mse_loss", input, target, weight)
    _check_size(input, target, "mse_loss")
    d = _ew.sub(input, target)
    loss = _ew.mul(d, d)
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
            weight=None):
    """Mean absolute error: the elementwise ``|input - target|``, reduced.

    A ``target`` whose shape differs from ``input``'s is broadcast, with a warning.

    Args:
        input (Tensor): the predictions, of any shape.
        target (Tensor): the targets, normally of the input's shape.
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        weight (Tensor, optional): multiplies the elementwise loss (broadcast) before the
            reduction. Default: ``None``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> x, y = eager.tensor([1.0, 2.0, 3.0]), eager.tensor([1.0, 0.0, 0.0])
        >>> F.l1_loss(x, y)
        tensor(1.6667)
        >>> F.l1_loss(x, y, reduction="sum")
        tensor(5.)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight = _autocast("l1_loss", input, target, weight)
    _check_size(input, target, "l1_loss")
    loss = _ew.abs(_ew.sub(input, target))
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0):
    """Smooth L1 loss: quadratic below ``beta``, linear above.

    With ``d = |input - target|``, the elementwise loss is ``0.5 * d ** 2 / beta`` where
    ``d < beta``, else ``d - 0.5 * beta``; then reduced.

    Quadratic near zero and linear further out, so less sensitive to outliers than
    :func:`mse_loss`.  ``beta=0`` gives :func:`l1_loss`.  It equals ``huber_loss / beta``
    with ``delta=beta``.

    Args:
        input (Tensor): the predictions, of any shape.
        target (Tensor): the targets, normally of the input's shape.
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        beta (float, optional): where the loss turns from quadratic to linear; a negative
            (or NaN) value raises ``RuntimeError``. Default: ``1.0``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> F.smooth_l1_loss(eager.tensor([0.0, 0.5, 3.0]), eager.zeros(3), reduction="none")
        tensor([0.0000, 0.1250, 2.5000])
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target = _autocast("smooth_l1_loss", input, target)
    _check_size(input, target, "smooth_l1_loss")
    d = _ew.abs(_ew.sub(input, target))
    if beta == 0.0:
        return _reduce(d, reduction)
    _check_reduction(reduction)
    if not beta >= 0:  # NaN too, as PyTorch's check
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    loss = _ew.where(_ew.lt(d, beta), _ew.mul(_ew.mul(d, d), 0.5 / beta), _ew.sub(d, 0.5 * beta))
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """Huber loss: quadratic for small errors, linear for large ones.

    With ``d = |input - target|``, the elementwise loss is ``0.5 * d ** 2`` where
    ``d < delta``, else ``delta * (d - 0.5 * delta)``; then reduced.

    Args:
        input (Tensor): the predictions, of any shape.
        target (Tensor): the targets, normally of the input's shape (else broadcast, with a
            warning).
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        delta (float, optional): where the loss turns from quadratic to linear; it must be
            positive (else ``RuntimeError``). Default: ``1.0``
        weight (Tensor, optional): multiplies the elementwise loss before the reduction; of
            the input's shape (else ``ValueError``). Default: ``None``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> x = eager.tensor([0.0, 0.5, 3.0])
        >>> F.huber_loss(x, eager.zeros(3), reduction="none", delta=2.0)
        tensor([0.0000, 0.1250, 4.0000])
    """
    input, target, weight = _autocast("huber_loss", input, target, weight)
    _check_size(input, target, "huber_loss")
    d = _ew.abs(_ew.sub(input, target))
    if weight is None:
        _check_reduction(reduction)
    elif tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    if not delta > 0:  # NaN too, as PyTorch's check
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    loss = _ew.where(_ew.lt(d, delta), _ew.mul(_ew.mul(d, d), 0.5),
                     _ew.mul(_ew.sub(d, 0.5 * delta), delta))
    if weight is not None:
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                             "'mean', 'sum'.")
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def _check_size(input, target, name):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=3)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """Binary cross entropy between probabilities ``input`` and targets ``target``.

    The elementwise loss is ``-(t * log(x) + (1 - t) * log(1 - x))``, then reduced.

    Each log is clamped below at ``-100`` (as PyTorch), so a probability of exactly 0 or 1
    gives a finite loss of at most 100.  For logits, use
    :func:`binary_cross_entropy_with_logits` instead: it is numerically safer.

    Args:
        input (Tensor): probabilities in ``[0, 1]``, of any shape.
        target (Tensor): targets in ``[0, 1]``, of the same shape (else ``ValueError``).
        weight (Tensor, optional): multiplies the elementwise loss (broadcast).
            Default: ``None``
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> p, t = eager.tensor([0.9, 0.2]), eager.tensor([1.0, 0.0])
        >>> F.binary_cross_entropy(p, t, reduction="none")
        tensor([0.1054, 0.2231])
        >>> F.binary_cross_entropy(p, t)
        tensor(0.1643)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight = _autocast("binary_cross_entropy", input, target, weight)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the "
                         "same size.")
    _check_reduction(reduction)
    # -(t*log(x) + (1-t)*log(1-x)), each log clamped at -100 (as PyTorch)
    lx = _ew.clamp(_ew.log(input), min=-100.0)
    l1x = _ew.clamp(_ew.log(_ew.sub(1.0, input)), min=-100.0)
    loss = _ew.neg(_ew.add(_ew.mul(target, _ew.sub(lx, l1x)), l1x))
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction: str = "mean", pos_weight=None):
    """Binary cross entropy on logits, computed stably for any logit.

    It equals :func:`binary_cross_entropy` of ``sigmoid(input)``.

    The elementwise loss is ``(1 - t) * x + w * softplus(-x)`` with
    ``w = 1 + (pos_weight - 1) * t`` (``w = 1`` without ``pos_weight``).

    Args:
        input (Tensor): logits, of any shape.
        target (Tensor): targets in ``[0, 1]``, of the same shape (else ``ValueError``).
        weight (Tensor, optional): multiplies the elementwise loss (broadcast).
            Default: ``None``
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        pos_weight (Tensor, optional): a weight on the positive term, broadcast against the
            input (typically one per class, along the last dimension). Default: ``None``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> x, t = eager.tensor([2.0, -1.0]), eager.tensor([1.0, 0.0])
        >>> F.binary_cross_entropy_with_logits(x, t)
        tensor(0.2201)
        >>> F.binary_cross_entropy_with_logits(x, t, pos_weight=eager.tensor([3.0]),
        ...                                    reduction="none")
        tensor([0.3808, 0.3133])
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight, pos_weight = _autocast("binary_cross_entropy_with_logits", input,
                                                  target, weight, pos_weight)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _check_reduction(reduction)
    sp = _ew.softplus(_ew.neg(input), threshold=50.0)   # = -log_sigmoid(x)
    if pos_weight is not None:
        sp = _ew.mul(sp, _ew.add(_ew.mul(_ew.sub(pos_weight, 1.0), target), 1.0))
    loss = _ew.add(_ew.mul(_ew.sub(1.0, target), input), sp)
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    """Negative log-likelihood loss for log-probabilities and class-index targets.

    The elementwise loss is ``-input[n, target[n]]``, then reduced.

    Combined with :func:`log_softmax` it gives :func:`cross_entropy`.  With ``weight``, each
    element is scaled by ``weight[target[n]]`` and ``"mean"`` divides by the sum of those
    weights.  Targets equal to ``ignore_index`` contribute nothing (and do not count in the
    mean); other out-of-range targets raise ``IndexError``.

    Args:
        input (Tensor): log-probabilities, ``(C)``, ``(N, C)`` or ``(N, C, d_1, ..., d_K)``.
        target (Tensor): int64 class indices in ``[0, C)``, ``()``, ``(N)`` or
            ``(N, d_1, ..., d_K)``.
        weight (Tensor, optional): a rescaling weight per class, ``(C,)``. Default: ``None``
        size_average (bool, optional): deprecated (use ``reduction``). Default: ``None``
        ignore_index (int, optional): a target value that is ignored. Default: ``-100``
        reduce (bool, optional): deprecated (use ``reduction``). Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``

    Shape:
        - Input: ``(C)``, ``(N, C)`` or ``(N, C, d_1, ..., d_K)``.
        - Target: ``()``, ``(N)`` or ``(N, d_1, ..., d_K)``.
        - Output: a scalar, or the target's shape with ``reduction="none"``.

    Example::

        >>> logp = eager.tensor([[-0.5, -1.0, -2.0], [-1.5, -0.2, -3.0]])
        >>> F.nll_loss(logp, eager.tensor([0, 1]))
        tensor(0.3500)
        >>> F.nll_loss(logp, eager.tensor([0, -100]))
        tensor(0.5000)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _class_index_loss(input, target, weight, ignore_index, reduction, 0.0)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """The cross entropy between logits ``input`` and ``target``: ``log_softmax`` over the
    class dimension (1, or 0 for unbatched input), then the negative log-likelihood of
    class-index targets (with ``ignore_index``, ``weight`` and ``label_smoothing``) or of
    class-probability targets (a floating ``target`` shaped like ``input``).

    Args:
        input (Tensor): logits, ``(C)``, ``(N, C)`` or ``(N, C, d_1, ..., d_K)``.
        target (Tensor): class indices ``()``, ``(N)`` or ``(N, d_1, ..., d_K)``, or
            probabilities of the input's shape.
        weight (Tensor, optional): a rescaling weight per class, ``(C,)``.
        ignore_index (int): a class-index target ignored. Default: -100.
        reduction (str): ``"mean"``, ``"sum"`` or ``"none"``. Default: ``"mean"``.
        label_smoothing (float): in ``[0, 1]``. Default: 0.
        size_average, reduce: deprecated, as PyTorch.

    Shape:
        - Output: a scalar, or the target's batch shape with ``reduction="none"``.

    Example::

        >>> logits = eager.randn(3, 5, requires_grad=True)
        >>> F.cross_entropy(logits, eager.tensor([1, 0, 4])).backward()
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight = _autocast("cross_entropy", input, target, weight)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if input.ndim == 0:
        raise ValueError("cross_entropy: expected input with at least 1 dimension")
    cd = 0 if input.ndim == 1 else 1
    logp = _red.log_softmax(input, cd)
    if _isf(target._data.dtype):
        return _prob_target_loss(logp, target, weight, reduction, label_smoothing)
    return _class_index_loss(logp, target, weight, ignore_index, reduction, label_smoothing)


def _prob_target_loss(logp, target, weight, reduction, label_smoothing):
    if tuple(target.shape) != tuple(logp.shape):
        raise RuntimeError(f"Expected floating point target (class probabilities) to have the "
                           f"same shape as input {list(logp.shape)}, got {list(target.shape)}")
    _check_reduction(reduction)
    cd = 0 if logp.ndim == 1 else 1
    C = logp.shape[cd]
    if label_smoothing > 0.0:
        target = _ew.add(_ew.mul(target, 1.0 - label_smoothing), label_smoothing / C)
    x = _ew.mul(logp, target)
    if weight is not None:
        x = _ew.mul(x, _reshape(weight, [C if i == cd else 1 for i in range(logp.ndim)]))
    if reduction == "none":
        return _ew.neg(_sum(x, cd))
    if reduction == "sum":
        return _ew.neg(_sum(x))
    n = logp.numel() // C if C else 0
    return _ew.mul(_sum(x), -1.0 / n if n else float("nan"))


def _needs_mask(target, C: int, ignore_index: int) -> bool:
    """Whether some target equals ``ignore_index`` (masking needed).  Checks bounds as it
    goes.  While a tracer records, the answer is always yes: the masked form is right for
    any data, so the recording does not depend on this batch's targets.  Inside vmap the
    targets of every sample are read (the physical values under the batched storage): one
    answer for the whole batch, the masked form if any sample needs it."""
    if STATE.tracer is not None:
        return True
    t = unwrap_storage(target._data)
    if t.size == 0:
        return False
    if type(t) is not np.ndarray:   # device targets: read once (as their bounds check is)
        t = t.to_host()
    lo, hi = t.min(), t.max()
    if lo >= 0 and hi < C:
        return bool(0 <= ignore_index < C and (t == ignore_index).any())
    bad = t[(t != ignore_index) & ((t < 0) | (t >= C))]
    if bad.size:
        raise IndexError(f"Target {bad.flat[0]} is out of bounds.")
    return True


def _class_index_loss(logp, target, weight, ignore_index, reduction, label_smoothing):
    _check_reduction(reduction)
    nd = logp.ndim
    if nd == 0:
        raise ValueError("nll_loss: expected input with at least 1 dimension")
    cd = 0 if nd == 1 else 1
    C = logp.shape[cd]
    expected = () if nd == 1 else (logp.shape[0],) + tuple(logp.shape[2:])
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if tuple(target.shape) != expected:
        if nd >= 2 and target.ndim >= 1 and target.shape[0] != logp.shape[0]:
            raise ValueError(f"Expected input batch_size ({logp.shape[0]}) to match target "
                             f"batch_size ({target.shape[0]}).")
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    if weight is not None and tuple(weight.shape) != (C,):
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")

    if nd == 2 and weight is None and label_smoothing == 0.0 and reduction != "none":
        # the common classifier case: one op (and one for its gradient)
        return dispatch(_loss.NllLoss, logp, target, ignore_index=int(ignore_index),
                        reduction=reduction)
    valid = None
    idx = target
    if _needs_mask(target, C, ignore_index):
        valid = _ew.ne(target, ignore_index)
        idx = _ew.where(valid, target, 0)
    gshape = list(target.shape)
    gshape.insert(cd, 1)
    picked = _gather(logp, cd, _reshape(idx, gshape))          # log p[target]
    w = None                                                          # per-element weight
    wview = None
    if weight is not None:
        wview = _reshape(weight, [C if i == cd else 1 for i in range(nd)])
        w = _gather(dispatch(_shp.Expand, wview, shape=tuple(logp.shape)), cd,
                          _reshape(idx, gshape))
    if valid is not None:
        v = _ew.cast(_reshape(valid, gshape), logp.dtype)
        w = v if w is None else _ew.mul(w, v)
    if w is not None:
        picked = _ew.mul(picked, w)
    n = target.numel()
    loss = _finish_nll(picked, w, n, reduction, target.shape, valid is not None)
    if label_smoothing > 0.0:
        lp = logp if wview is None else _ew.mul(logp, wview)
        smooth = _sum(lp, cd, keepdim=True)
        if valid is not None:
            smooth = _ew.mul(smooth, v)
        s = _finish_nll(smooth, w, n, reduction, target.shape, valid is not None)
        loss = _ew.add(_ew.mul(loss, 1.0 - label_smoothing), _ew.mul(s, label_smoothing / C))
    return loss


def _finish_nll(picked, w, n, reduction, shape, masked):
    """Negate and reduce per-element (weighted) log-likelihoods."""
    if reduction == "none":
        return _ew.neg(_reshape(picked, tuple(shape)))
    if reduction == "sum":
        return _ew.neg(_sum(picked))
    if w is None:
        return _ew.mul(_sum(picked), -1.0 / n if n else float("nan"))
    sw = _sum(w)
    if not masked:
        return _ew.neg(_ew.div(_sum(picked), sw))
    # everything ignored: NaN loss but zero gradients, as PyTorch
    empty = _ew.eq(sw, 0)
    return _ew.where(empty, float("nan"),
                     _ew.neg(_ew.div(_sum(picked), _ew.where(empty, 1.0, sw))))
