"""Gradient averaging for ``DistributedDataParallel``: flat buckets, all-reduced as the
backward produces them.

Parameters are split into buckets of about ``bucket_cap_mb`` (PyTorch's 25 MiB; the first
bucket 1 MiB so that communication starts early), in reverse registration order — the
last layers' gradients are ready first — and by dtype.  Each parameter has a
post-accumulate-grad hook (:meth:`eager.Tensor.register_post_accumulate_grad_hook`): when
the engine has written its ``.grad``, the hook marks it ready; when a bucket is complete,
its gradients are concatenated into one flat tensor and a non-blocking averaging
all-reduce starts (``Iallreduce``) while the backward goes on.  Buckets start in index
order on every rank, so the ranks' collectives always match.  A callback queued on the
engine (:func:`eager.autograd.engine.queue_callback`) runs when the backward ends: it
starts what is left, waits, and points each ``.grad`` at its slice of the averaged
bucket (as PyTorch's ``gradient_as_bucket_view=True``).

The same code runs inside a compiled training step: there every collective is a
blocking graph op (see :mod:`eager.distributed.collectives`), replayed on every call.
"""

from __future__ import annotations

import weakref

from ... import dtypes as _dt
from ...autograd.engine import queue_callback
from ...autograd.grad_mode import no_grad
from ...distributed import ReduceOp, all_reduce
from ...factories import tensor, zeros
from ...fn.shape import cat

#: PyTorch's ``dist._DEFAULT_FIRST_BUCKET_BYTES``
FIRST_BUCKET_BYTES = 1 << 20


def assign_buckets(params: list, cap_bytes: int, first_cap_bytes: int) -> list[list[int]]:
    """Parameter indices per bucket: reverse order, one dtype per bucket, closed once it
    holds ``first_cap_bytes`` (the first of each dtype) or ``cap_bytes``."""
    buckets: list[list[int]] = []
    open_: dict = {}    # dtype -> [indices, bytes, limit]
    for i in range(len(params) - 1, -1, -1):
        d = params[i]._data
        cur = open_.get(d.dtype)
        if cur is None:
            limit = first_cap_bytes if not any(
                params[b[0]]._data.dtype == d.dtype for b in buckets) else cap_bytes
            cur = open_[d.dtype] = [[], 0, limit]
            buckets.append(cur[0])
        cur[0].append(i)
        cur[1] += d.nbytes
        if cur[1] >= cur[2]:
            del open_[d.dtype]
    return buckets


class _Bucket:
    __slots__ = ("members", "pending", "flat", "work")

    def __init__(self, members: list[int]):
        self.members = members
        self.pending = len(members)
        self.flat = None
        self.work = None


class Reducer:
    """Averages the gradients of ``params`` over ``group`` during each backward."""

    def __init__(self, params: list, names: list[str], group, bucket_indices: list,
                 find_unused_parameters: bool, should_sync):
        self.params = params
        self.names = names
        self.group = group
        self.bucket_indices = bucket_indices
        self.bucket_of = [0] * len(params)
        for b, members in enumerate(bucket_indices):
            for i in members:
                self.bucket_of[i] = b
        self.find_unused_parameters = find_unused_parameters
        self.should_sync = should_sync
        self._active = False
        self._reset()
        self.handles = [p.register_post_accumulate_grad_hook(self._hook(i))
                        for i, p in enumerate(params)]

    def _hook(self, i: int):
        ref = weakref.ref(self)  # a dropped DistributedDataParallel stops reducing

        def mark_ready(param):
            reducer = ref()
            if reducer is not None:
                reducer.mark_ready(i)
        return mark_ready

    def _reset(self) -> None:
        self._active = False
        self.ready = [False] * len(self.params)
        self.buckets = [_Bucket(m) for m in self.bucket_indices]
        self.next_bucket = 0

    # -- during the backward ---------------------------------------------------------
    def mark_ready(self, i: int) -> None:
        """Parameter ``i``'s ``.grad`` is final for this backward."""
        if not self._active:
            if not self.should_sync():
                return
            self._active = True
            queue_callback(self.finalize)
        if self.ready[i]:
            return
        self.ready[i] = True
        b = self.buckets[self.bucket_of[i]]
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready()
        elif self.next_bucket:
            self.buckets[self.next_bucket - 1].work.is_completed()  # lets MPI progress

    def _launch_ready(self) -> None:
        """Start every complete bucket from the next one in order (same order on all ranks)."""
        buckets = self.buckets
        while self.next_bucket < len(buckets) and buckets[self.next_bucket].pending == 0:
            self._launch(buckets[self.next_bucket])
            self.next_bucket += 1

    def _launch(self, b: _Bucket) -> None:
        grads = []
        for i in b.members:
            p = self.params[i]
            g = p.grad
            if g is None:  # unused here: contributes zeros
                g = zeros(p._data.shape, dtype=p.dtype)
            grads.append(g.reshape(-1))
        with no_grad():
            b.flat = cat(grads)
            b.work = all_reduce(b.flat, op=ReduceOp.AVG, group=self.group, async_op=True)

    # -- when the backward has finished ----------------------------------------------
    def finalize(self) -> None:
        try:
            missing = [i for i, r in enumerate(self.ready) if not r]
            if missing and not self.find_unused_parameters:
                for b in self.buckets[:self.next_bucket]:  # finish what the others share
                    b.work.wait()
                raise RuntimeError(self._unused_message(missing))
            for i in missing:
                self.buckets[self.bucket_of[i]].pending -= 1
            self._launch_ready()
            used = self._globally_used() if self.find_unused_parameters else None
            with no_grad():
                for b in self.buckets:
                    b.work.wait()
                    self._write_back(b, used)
        finally:
            self._reset()

    def _globally_used(self) -> list:
        """Per parameter, whether any rank gave it a gradient in this backward."""
        flags = tensor([1 if r else 0 for r in self.ready], dtype=_dt.uint8)
        all_reduce(flags, op=ReduceOp.MAX, group=self.group)
        return flags.tolist()  # read into Python: a compiled step with it runs eagerly

    def _write_back(self, b: _Bucket, used) -> None:
        off = 0
        for i in b.members:
            p = self.params[i]
            n = p._data.size
            if used is None or used[i]:
                p.grad = b.flat[off:off + n].view(p._data.shape)
            off += n

    def _unused_message(self, missing: list) -> str:
        names = ", ".join(f"{i} ({self.names[i]})" for i in missing)
        return (
            "DistributedDataParallel: parameters received no gradient in this backward on "
            f"rank {self.group.rank()}: {names}. This error indicates that your module has "
            "parameters that were not used in producing loss. You can enable unused "
            "parameter detection by passing the keyword argument "
            "`find_unused_parameters=True` to `DistributedDataParallel`, and by making sure "
            "all `forward` function outputs participate in calculating loss.")

    def remove_hooks(self) -> None:
        for h in self.handles:
            h.remove()
