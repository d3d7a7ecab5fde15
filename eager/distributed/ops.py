"""Collectives as eager ops, so that a compiled function replays them.

Each op's forward runs the collective on a fresh copy of its input (blocking, on the
group registered under the ``group`` id) and returns the result; the public functions in
:mod:`.collectives` write it into the user's tensors in place.  The ops declare
``effect = True``: the compiler runs them on every replay, in order, and never folds,
merges, drops or fuses them (``compiler/passes``), so a compiled step communicates
exactly as the eager one.  They are not differentiable (as ``torch.distributed``'s).
"""

from __future__ import annotations

import numpy as np

from ..ops.base import Op
from .group import group_by_id


class AllReduce(Op):
    """``x`` combined over the ranks with ``reduce_op`` (a :class:`ReduceOp` value name)."""
    differentiable = False
    effect = True

    def forward(x, reduce_op, group):
        out = np.array(x, order="C")
        group_by_id(group).all_reduce(out, reduce_op)
        return out


class Broadcast(Op):
    """Rank ``src``'s ``x`` on every rank."""
    differentiable = False
    effect = True

    def forward(x, src, group):
        out = np.array(x, order="C")
        group_by_id(group).broadcast(out, src)
        return out


class AllGather(Op):
    """Every rank's ``x`` stacked along a new first dimension (one row per rank)."""
    differentiable = False
    effect = True

    def forward(x, group):
        pg = group_by_id(group)
        out = np.empty((pg.size(),) + x.shape, x.dtype)
        pg.all_gather(np.ascontiguousarray(x), out)
        return out


class ReduceScatter(Op):
    """Row ``rank`` of ``x`` (shape ``(world_size, ...)``) combined over the ranks."""
    differentiable = False
    effect = True

    def forward(x, reduce_op, group):
        pg = group_by_id(group)
        out = np.empty(x.shape[1:], x.dtype)
        pg.reduce_scatter(np.ascontiguousarray(x), out, reduce_op)
        return out


class Barrier(Op):
    """Returns (a 0-d ``True``) once every rank has reached it."""
    differentiable = False
    effect = True

    def forward(group):
        group_by_id(group).barrier()
        return np.ones((), np.bool_)
