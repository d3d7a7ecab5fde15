"""Scans along one dimension besides ``cumsum`` (which lives with the reductions):
``cumprod`` and ``logcumsumexp``, with PyTorch's gradients (``cumprod``'s is exact
where the input has zeros; ``logcumsumexp``'s is computed in log space).  ``dim`` is a
single non-negative int."""

from __future__ import annotations

import numpy as np

from .base import OUT, Op
from .reduce import _int_acc


class Cumprod(Op):
    """Cumulative product along ``dim``; bool/integer inputs give int64 (as ``cumsum``)."""
    saves = (0, OUT)

    def forward(a, dim, dtype=None):
        dtype = _int_acc(a, dtype)
        if a.ndim == 0:
            return a.astype(dtype if dtype is not None else a.dtype)
        return np.cumprod(a, axis=dim, dtype=dtype)

    def backward(F, g, saved, node):
        # d out_j / d x_i = prod_{k <= j, k != i} x_k.  Before the first zero of a slice
        # that is out_j / x_i; at the first zero it is the product with that zero taken
        # as 1; after it, 0.
        x, out = saved
        d = node.params["dim"]
        if not node.shapes[0]:
            return (g,)
        zero = F.eq(x, 0.0)
        zeros_so_far = F.cumsum(zero, dim=d, reverse=False, dtype=None)
        before = F.eq(zeros_so_far, 0)
        first = F.logical_and(zero, F.eq(zeros_so_far, 1))
        g_before = F.div(F.cumsum(F.mul(g, out), dim=d, reverse=True, dtype=None),
                         F.where(before, x, 1.0))
        x_first_one = F.where(first, 1.0, x)
        g_first = F.cumsum(F.mul(g, F.cumprod(x_first_one, dim=d, dtype=None)), dim=d,
                           reverse=True, dtype=None)
        return (F.where(before, g_before, F.where(first, g_first, 0.0)),)


class Logcumsumexp(Op):
    """``log(cumsum(exp(a)))`` along ``dim``, computed stably (``np.logaddexp``)."""
    saves = (0, OUT)

    def forward(a, dim):
        if a.ndim == 0:
            return a.copy()
        return np.logaddexp.accumulate(a, axis=dim)

    def backward(F, g, saved, node):
        # grad_i = sum_{j >= i} g_j exp(x_i - out_j), summed for the positive and the
        # negative parts of g separately in log space (PyTorch's formula)
        x, out = saved
        if not node.shapes[0]:
            return (g,)
        d = node.params["dim"]
        log_abs = F.log(F.where(F.eq(g, 0.0), 1.0, F.abs(g)))
        shifted = F.sub(log_abs, out)

        def reverse_lcse(t):
            return F.flip(F.logcumsumexp(F.flip(t, dims=(d,)), dim=d), dims=(d,))

        pos = reverse_lcse(F.where(F.gt(g, 0.0), shifted, -np.inf))
        neg = reverse_lcse(F.where(F.lt(g, 0.0), shifted, -np.inf))
        return (F.sub(F.exp(F.add(pos, x)), F.exp(F.add(neg, x))),)
