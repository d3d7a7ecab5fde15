"""Loss ops with dedicated kernels: the negative log-likelihood of class indices, and
``one_hot`` (which checks its class values as PyTorch does, on every compiled replay too).

``nll_loss`` over ``(N, C)`` log-probabilities is one op instead of a chain of gather,
masks and reductions (about 25 graph nodes with its backward), which matters for small
training steps in eager mode and in compiled traces alike.
"""

from __future__ import annotations

import numpy as np

from .base import Op


def _targets(logp, target, ignore_index):
    """(rows, class index with ignored rows set to 0, valid mask or None when no row is
    ignored); bounds checked."""
    n, c = logp.shape
    valid = target != ignore_index
    if valid.all():
        valid, idx = None, target
    else:
        idx = np.where(valid, target, 0)
    if idx.size and (idx.min() < 0 or idx.max() >= c):
        bad = idx[(idx < 0) | (idx >= c)]
        raise IndexError(f"Target {bad.flat[0]} is out of bounds.")
    return np.arange(n), idx, valid


def _scale(valid, reduction, dtype, n):
    """The factor each picked log-probability is weighted by (before the minus sign)."""
    if reduction == "sum":
        return dtype.type(1.0)
    count = n if valid is None else int(valid.sum())
    return dtype.type(np.nan) if count == 0 else dtype.type(1.0 / count)


class NllLoss(Op):
    """``-sum(logp[i, t_i]) / count`` over rows whose target is not ``ignore_index``
    (``reduction="mean"``; ``"sum"`` drops the division).  All rows ignored: NaN loss,
    zero gradient (as PyTorch)."""
    saves = (1,)

    def forward(logp, target, ignore_index=-100, reduction="mean"):
        rows, idx, valid = _targets(logp, target, ignore_index)
        if valid is None:  # no row ignored
            total = logp[rows, idx].sum(dtype=logp.dtype)
        else:
            picked = np.where(valid, logp[rows, idx], 0)  # an ignored row may hold -inf
            total = picked.sum(dtype=logp.dtype)
        return np.asarray(-total * _scale(valid, reduction, logp.dtype, len(idx)),
                          dtype=logp.dtype)

    def backward(F, g, saved, node):
        target = saved[0]
        p = node.params
        return (F.nll_loss_grad(g, target, shape=node.shapes[0],
                                ignore_index=p.get("ignore_index", -100),
                                reduction=p.get("reduction", "mean")), None)


class NllLossGrad(Op):
    """Gradient of :class:`NllLoss` w.r.t. its input: ``-g * scale`` at each row's target,
    zero elsewhere.  Linear in ``g``, so its own gradient is ``nll_loss`` again."""
    saves = (1,)

    def forward(g, target, shape, ignore_index=-100, reduction="mean"):
        out = np.zeros(shape, dtype=g.dtype)
        dummy = out  # same shape: _targets only needs it for bounds and rows
        rows, idx, valid = _targets(dummy, target, ignore_index)
        scale = _scale(valid, reduction, g.dtype, len(idx))
        if np.isnan(scale):
            return out  # everything ignored: zero gradient
        out[rows, idx] = -(g * scale) if valid is None else -(g * scale) * valid
        return out

    def backward(F, gg, saved, node):
        target = saved[0]
        p = node.params
        return F.nll_loss(gg, target, ignore_index=p["ignore_index"],
                          reduction=p["reduction"]), None



class OneHot(Op):
    """``one_hot``: an int64 tensor of shape ``x.shape + (num_classes,)`` with a 1 at each
    class index.  Out-of-range values raise PyTorch's errors (on every call: an op, so a
    compiled replay checks them as eager does)."""
    differentiable = False

    def forward(x, num_classes):
        if x.size:
            if x.min() < 0:
                raise RuntimeError("Class values must be non-negative.")
            if x.max() >= num_classes:
                raise RuntimeError("Class values must be smaller than num_classes.")
        out = np.zeros(x.shape + (num_classes,), np.int64)
        np.put_along_axis(out, x[..., None].astype(np.intp), 1, axis=-1)
        return out
