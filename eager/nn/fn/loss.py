"""``kl_div``: the Kullback-Leibler divergence loss with PyTorch's reductions (including
``'batchmean'``) and ``log_target``."""

from __future__ import annotations

import warnings

from ...amp.autocast_mode import cast_inputs as _autocast
from ...fn import elementwise as _ew
from ...fn import reduce as _red

__all__ = ["kl_div"]

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
