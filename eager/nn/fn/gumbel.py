"""``gumbel_softmax``: differentiable samples of a categorical distribution (the
Gumbel-softmax / Concrete relaxation), soft or straight-through hard, as PyTorch's.

The Gumbel noise is ``-log(E)`` with ``E`` drawn by ``exponential_`` (a random op, so a
compiled function redraws it on every call)."""

from __future__ import annotations

import warnings

from ...factories import empty_like, zeros_like
from ...fn import elementwise as _ew
from ...fn import reduce as _red
from ...fn.index import scatter

__all__ = ["gumbel_softmax"]


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1):
    r"""Sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` along
    ``dim`` with ``g`` i.i.d. Gumbel(0, 1) noise.  With ``hard=True`` the result is the
    one-hot vector of the sample's largest entry in value, while its gradient is the soft
    sample's (the straight-through estimator).

    Args:
        logits (Tensor): ``(*, num_features)``, unnormalized log-probabilities.
        tau (float): the temperature (> 0); lower is nearer one-hot. Default: 1.
        hard (bool): return one-hot samples (straight-through gradient). Default: False.
        eps (float): deprecated and unused (a value other than 1e-10 warns).
        dim (int): the dimension the softmax runs over. Default: -1.

    Returns:
        Tensor: the shape of ``logits``, each slice along ``dim`` summing to 1.

    Example::

        >>> logits = eager.randn(4, 5, requires_grad=True)
        >>> y = F.gumbel_softmax(logits, tau=0.5, hard=True)
        >>> y.sum(-1)
        tensor([1., 1., 1., 1.], grad_fn=<...>)
        >>> (y * eager.arange(5.0)).sum().backward()
        >>> logits.grad.shape
        eager.Size([4, 5])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = _ew.neg(_ew.log(empty_like(logits).exponential_()))
    y_soft = _red.softmax(_ew.div(_ew.add(logits, noise), tau), dim)
    if not hard:
        return y_soft
    index = _red.max(y_soft, dim, keepdim=True)[1]
    y_hard = scatter(zeros_like(logits), dim, index, 1.0)
    return _ew.add(_ew.sub(y_hard, y_soft.detach()), y_soft)
