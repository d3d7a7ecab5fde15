"""Collectives as eager ops, so that a compiled function replays them.

Each op's forward runs the collective (after started ones on the same memory have
finished) on a fresh copy of its input (started and waited
for, on the group registered under the ``group`` id) and returns the result; the public functions in
:mod:`.collectives` write it into the user's tensors in place.  The ops declare
``effect = True``: the compiler runs them on every replay, in order, and never folds,
merges, drops or fuses them (``compiler/passes``), so a compiled step communicates
exactly as the eager one.  They are not differentiable (as ``torch.distributed``'s).
"""

from __future__ import annotations

import numpy as np

from ..ops.base import Op
from .group import finish_reduce, group_by_id


class AllReduce(Op):
    """``x`` combined over the ranks with ``reduce_op`` (a :class:`ReduceOp` value name)."""
    differentiable = False
    effect = True

    def forward(x, reduce_op, group):
        pg = group_by_id(group)
        pg.settle((x,))
        out = np.array(x, order="C")
        pg.wait(pg.start_all_reduce(out, reduce_op), ("all_reduce", out, reduce_op))
        finish_reduce(out, reduce_op, pg.size())
        return out


class Broadcast(Op):
    """Rank ``src``'s ``x`` on every rank."""
    differentiable = False
    effect = True

    def forward(x, src, group):
        pg = group_by_id(group)
        pg.settle((x,))
        out = np.array(x, order="C")
        pg.wait(pg.start_broadcast(out, src), ("broadcast", out, src))
        return out


class AllGather(Op):
    """Every rank's ``x`` stacked along a new first dimension (one row per rank)."""
    differentiable = False
    effect = True

    def forward(x, group):
        pg = group_by_id(group)
        pg.settle((x,))
        out = np.empty((pg.size(),) + x.shape, x.dtype)
        pg.wait(pg.start_all_gather(np.ascontiguousarray(x), out), ("all_gather", x, None))
        return out


class ReduceScatter(Op):
    """Row ``rank`` of ``x`` (shape ``(world_size, ...)``) combined over the ranks."""
    differentiable = False
    effect = True

    def forward(x, reduce_op, group):
        pg = group_by_id(group)
        pg.settle((x,))
        out = np.empty(x.shape[1:], x.dtype)
        send = np.ascontiguousarray(x)
        pg.wait(pg.start_reduce_scatter(send, out, reduce_op),
                ("reduce_scatter", send, reduce_op))
        finish_reduce(out, reduce_op, pg.size())
        return out


class Barrier(Op):
    """Returns (a 0-d ``True``) once every rank has reached it."""
    differentiable = False
    effect = True

    def forward(group):
        pg = group_by_id(group)
        pg.wait(pg.start_barrier(), ("barrier", None, None))
        return np.ones((), np.bool_)
