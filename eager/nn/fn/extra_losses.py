"""Margin, embedding and likelihood losses: ``cosine_embedding_loss``,
``margin_ranking_loss``, ``triplet_margin_loss``, ``hinge_embedding_loss``,
``soft_margin_loss``, ``multilabel_soft_margin_loss``, ``gaussian_nll_loss`` and
``poisson_nll_loss``, with PyTorch's signatures, reductions and errors.

Each is a composition of differentiable elementwise ops and reductions, so autograd (and a
compiler trace) needs nothing of its own; the gradients are those of PyTorch's kernels.
"""

from __future__ import annotations

import math
import warnings

from ...autograd.grad_mode import is_grad_enabled
from ...factories import ones_like
from ...fn import elementwise as _ew
from ...fn import reduce as _red
from .activation import logsigmoid
from .distance import pairwise_distance

__all__ = ["cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss",
           "margin_ranking_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
           "soft_margin_loss", "triplet_margin_loss"]

#: added to each squared norm in ``cosine_embedding_loss`` (PyTorch's constant)
_COSINE_EPS = 1e-12


def _legacy(size_average, reduce, reduction: str) -> str:
    """``reduction``, or the string the deprecated ``size_average``/``reduce`` flags stand
    for (with PyTorch's deprecation warning)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", stacklevel=3)
    return reduction


def _checked(reduction: str) -> str:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return _red.mean(loss)
    if reduction == "sum":
        return _red.sum(loss)
    return loss


def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean"):
    r"""Whether pairs of vectors are similar (``target = 1``) or dissimilar
    (``target = -1``), judged by their cosine similarity: the loss of a pair is
    ``1 - cos(x1, x2)`` for ``target = 1`` and ``max(0, cos(x1, x2) - margin)`` for
    ``target = -1`` (0 for any other target value).

    Args:
        input1 (Tensor): ``(N, D)`` or ``(D)``.
        input2 (Tensor): the same shape as ``input1``.
        target (Tensor): ``(N)`` or ``()``, holding 1 or -1.
        margin (float): in ``[-1, 1]``; 0 to 0.5 is a common choice. Default: 0.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated (they set ``reduction``, with a warning).

    Example::

        >>> a = eager.randn(4, 8, requires_grad=True)
        >>> loss = F.cosine_embedding_loss(a, eager.randn(4, 8), eager.tensor([1, -1, 1, -1]))
        >>> loss.backward()
        >>> loss.shape, a.grad.shape
        (eager.Size([]), eager.Size([4, 8]))
    """
    reduction = _checked(_legacy(size_average, reduce, reduction))
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if td == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dot = _red.sum(_ew.mul(input1, input2), td)
    sq1 = _ew.add(_red.sum(_ew.mul(input1, input1), td), _COSINE_EPS)
    sq2 = _ew.add(_red.sum(_ew.mul(input2, input2), td), _COSINE_EPS)
    cos = _ew.div(dot, _ew.sqrt(_ew.mul(sq1, sq2)))
    similar = _ew.where(_ew.eq(target, 1), _ew.sub(1.0, cos), 0.0)
    apart = _ew.where(_ew.eq(target, -1), _ew.clamp_min(_ew.sub(cos, margin), 0.0), 0.0)
    return _reduce(_ew.add(similar, apart), reduction)


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    r"""Whether ``input1`` should rank above ``input2`` (``target = 1``) or below
    (``target = -1``): ``max(0, -target * (input1 - input2) + margin)`` per element.

    Args:
        input1 (Tensor): ``(N)`` or ``()``.
        input2 (Tensor): the same number of dimensions as ``input1``.
        target (Tensor): 1 or -1, the same number of dimensions.
        margin (float): Default: 0.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated (they set ``reduction``, with a warning).

    Example::

        >>> x1 = eager.tensor([0.5, 2.0, -1.0], requires_grad=True)
        >>> x2 = eager.tensor([1.0, 1.0, 1.0])
        >>> F.margin_ranking_loss(x1, x2, eager.tensor([1.0, 1.0, -1.0]), reduction="none")
        tensor([0.5000, 0.0000, 0.0000], grad_fn=<...>)
    """
    reduction = _legacy(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    _checked(reduction)
    loss = _ew.add(_ew.mul(_ew.neg(target), _ew.sub(input1, input2)), margin)
    return _reduce(_ew.clamp_min(loss, 0.0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean"):
    r"""The triplet loss ``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the
    :func:`pairwise_distance` (``p``-norm of the difference plus ``eps``) over the last
    dimension: anchors should be nearer their positives than their negatives by
    ``margin``.

    Args:
        anchor (Tensor): ``(N, D)`` or ``(D)``.
        positive (Tensor): like ``anchor``.
        negative (Tensor): like ``anchor``.
        margin (float): greater than 0. Default: 1.
        p (float): the norm's degree. Default: 2.
        eps (float): added to the differences. Default: 1e-6.
        swap (bool): use ``min(d(a, n), d(p, n))`` as the negative distance (the distance
            swap of Balntas et al.). Default: False.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated (they set ``reduction``, with a warning).

    Example::

        >>> a = eager.randn(5, 16, requires_grad=True)
        >>> pos, neg = eager.randn(5, 16), eager.randn(5, 16)
        >>> F.triplet_margin_loss(a, pos, neg, margin=0.5, reduction="none").shape
        eager.Size([5])
    """
    reduction = _legacy(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _checked(reduction)
    da, dp, dn = anchor.ndim, positive.ndim, negative.ndim
    if not da == dp == dn:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {da}D, positive {dp}D, "
                           f"and negative {dn}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _ew.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = _ew.clamp_min(_ew.sub(_ew.add(d_pos, margin), d_neg), 0.0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    r"""For ``input`` holding distances (e.g. an L1 distance between two embeddings):
    ``input`` where ``target = 1`` and ``max(0, margin - input)`` where ``target = -1``
    (the two terms are summed, so other target values get both).

    Args:
        input (Tensor): ``(*)``.
        target (Tensor): 1 or -1, broadcastable with ``input``.
        margin (float): Default: 1.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated (they set ``reduction``, with a warning).

    Example::

        >>> d = eager.tensor([0.2, 0.3, 1.5], requires_grad=True)
        >>> F.hinge_embedding_loss(d, eager.tensor([1.0, -1.0, -1.0]), reduction="none")
        tensor([0.2000, 0.7000, 0.0000], grad_fn=<...>)
    """
    reduction = _checked(_legacy(size_average, reduce, reduction))
    below = _ew.clamp_min(_ew.sub(margin, input), 0.0)
    loss = _ew.add(_ew.where(_ew.ne(target, 1), below, 0.0),
                   _ew.where(_ew.ne(target, -1), input, 0.0))
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    r"""The two-class logistic loss ``log(1 + exp(-target * input))`` per element, for
    targets 1 or -1.

    Args:
        input (Tensor): ``(*)``.
        target (Tensor): 1 or -1, broadcastable with ``input``.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated (they set ``reduction``, with a warning).

    Example::

        >>> x = eager.tensor([0.0, 2.0], requires_grad=True)
        >>> F.soft_margin_loss(x, eager.tensor([1.0, -1.0]), reduction="sum")
        tensor(2.8201, grad_fn=<...>)
    """
    reduction = _checked(_legacy(size_average, reduce, reduction))
    if target.requires_grad and is_grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    loss = _ew.log1p(_ew.exp(_ew.mul(_ew.neg(input), target)))
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    r"""Multi-label one-versus-all logistic loss: the binary cross entropy of
    ``sigmoid(input)`` against 0/1 ``target`` for each class, averaged over the classes
    (the last dimension), giving one value per sample.

    Args:
        input (Tensor): logits, ``(N, C)`` or ``(C)``.
        target (Tensor): 0 or 1 per class, the shape of ``input``.
        weight (Tensor, optional): a rescaling weight per class, ``(C)``.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated (they set ``reduction``, with a warning).

    Example::

        >>> logits = eager.randn(3, 4, requires_grad=True)
        >>> target = eager.tensor([[1.0, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0]])
        >>> F.multilabel_soft_margin_loss(logits, target, reduction="none").shape
        eager.Size([3])
    """
    reduction = _legacy(size_average, reduce, reduction)
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    loss = _ew.neg(_ew.add(_ew.mul(target, logsigmoid(input)),
                           _ew.mul(_ew.sub(1.0, target), logsigmoid(_ew.neg(input)))))
    if weight is not None:
        loss = _ew.mul(loss, weight)
    cd = input.ndim - 1
    loss = _ew.div(_red.sum(loss, cd), input.shape[cd])
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean"):
    r"""The negative log likelihood of ``target`` under Gaussians with mean ``input`` and
    variance ``var``: ``0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps))``
    per element, plus ``0.5 * log(2 * pi)`` with ``full``.  The clamp of ``var`` at ``eps``
    changes its value, not its gradient (as PyTorch, which clamps a copy without grad).

    Args:
        input (Tensor): the means, ``(N, *)`` or ``(*)``.
        target (Tensor): samples, the shape of ``input`` (or broadcastable to it).
        var (Tensor or float): the variances: the shape of ``input``; or that shape with one
            dimension of size 1, or without the last dimension (one variance shared
            by a group, the homoscedastic case); or a float.  No entry may be negative.
        full (bool): add the constant term. Default: False.
        eps (float): the smallest variance used. Default: 1e-6.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.

    Example::

        >>> mu = eager.randn(5, 2, requires_grad=True)
        >>> var = eager.ones(5, 1, requires_grad=True)
        >>> F.gaussian_nll_loss(mu, eager.randn(5, 2), var).backward()
        >>> var.grad.shape
        eager.Size([5, 1])
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _ew.mul(ones_like(input), var)
    elif bool(_red.any(_ew.lt(var, 0))):
        raise ValueError("var has negative entry/entries")
    shape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape != shape:
        if shape[:-1] == vshape:
            var = var.unsqueeze(-1)
        elif not (len(shape) == len(vshape)
                  and sum(v for s, v in zip(shape, vshape) if s != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    var = _ew.add(var, _ew.sub(_ew.clamp_min(var, eps), var).detach())
    diff = _ew.sub(input, target)
    loss = _ew.mul(_ew.add(_ew.log(var), _ew.div(_ew.mul(diff, diff), var)), 0.5)
    if full:
        loss = _ew.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean"):
    r"""The negative log likelihood of counts ``target`` under Poisson distributions with
    rate ``input``: ``exp(input) - target * input`` with ``log_input`` (``input`` is the
    log of the rate), else ``input - target * log(input + eps)``.  With ``full``, the
    Stirling approximation of ``log(target!)``,
    ``target * log(target) - target + 0.5 * log(2 * pi * target)``, is added where
    ``target > 1``.

    Args:
        input (Tensor): the (log) rates, ``(*)``.
        target (Tensor): the counts, broadcastable with ``input``.
        log_input (bool): whether ``input`` is the log of the rate. Default: True.
        full (bool): add the Stirling term. Default: False.
        eps (float): keeps ``log`` finite when ``log_input=False``. Default: 1e-8.
        reduction (str): ``"none"``, ``"mean"`` or ``"sum"``. Default: ``"mean"``.
        size_average, reduce: deprecated (they set ``reduction``, with a warning).

    Example::

        >>> log_rate = eager.randn(5, 2, requires_grad=True)
        >>> counts = eager.tensor([[0.0, 3], [1, 1], [2, 0], [5, 1], [0, 0]])
        >>> F.poisson_nll_loss(log_rate, counts, full=True).backward()
        >>> log_rate.grad.shape
        eager.Size([5, 2])
    """
    reduction = _checked(_legacy(size_average, reduce, reduction))
    if log_input:
        loss = _ew.sub(_ew.exp(input), _ew.mul(target, input))
    else:
        loss = _ew.sub(input, _ew.mul(target, _ew.log(_ew.add(input, eps))))
    if full:
        big = _ew.gt(target, 1)
        t = _ew.where(big, target, 2.0)   # a safe value where masked: finite gradients
        stirling = _ew.add(_ew.sub(_ew.mul(t, _ew.log(t)), t),
                           _ew.mul(_ew.log(_ew.mul(t, 2 * math.pi)), 0.5))
        loss = _ew.add(loss, _ew.where(big, stirling, 0.0))
    return _reduce(loss, reduction)
