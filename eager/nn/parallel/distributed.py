"""``DistributedDataParallel``: the same model on every rank, gradients averaged.

    # mpiexec -n 2 python train.py
    import eager as torch
    import eager.distributed as dist
    from eager.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group(backend="mpi")
    model = DDP(make_model())          # rank 0's parameters and buffers on every rank
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for xb, yb in batches:             # each rank its own slice of the global batch
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()   # gradients averaged over the ranks here
        opt.step()                     # so every rank takes the same step

Gradients are averaged in flat buckets while the backward runs (:mod:`.reducer`).  Inside
a compiled training step the all-reduces are graph ops replayed on every call, so a
compiled DDP step computes what the eager one does.  ``find_unused_parameters=True``
lets some parameters go without a gradient on some ranks (it reads which ones into
Python, so such a step runs eagerly under ``compile``); without it a parameter that got
no gradient is an error, as in PyTorch.
"""

from __future__ import annotations

import weakref

from ..._state import guarded
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...distributed import all_gather_object, broadcast
from ...distributed.group import resolve
from ..module import Module
from .reducer import FIRST_BUCKET_BYTES, Reducer, assign_buckets


class DistributedDataParallel(Module):
    """Data parallelism over the ranks of a process group (PyTorch's signature)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False):
        super().__init__()
        if device_ids is not None or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters on the "
                "CPU: leave them None")
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a Module, got "
                            f"{type(module).__name__}")
        pg = resolve(process_group)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        d = self.__dict__
        d["process_group"] = pg
        d["dim"] = dim
        d["broadcast_buffers"] = broadcast_buffers
        d["find_unused_parameters"] = find_unused_parameters
        d["gradient_as_bucket_view"] = gradient_as_bucket_view
        d["static_graph"] = static_graph
        d["require_backward_grad_sync"] = True
        d["modules_buffers"] = list(module.buffers())  # as PyTorch: the buffers at wrapping
        _verify_same_model(module, pg)
        if init_sync:
            _sync_states(module, pg)
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * (1 << 20))
        params = [p for _, p in named]
        buckets = assign_buckets(params, cap, min(cap, FIRST_BUCKET_BYTES))
        _verify_same_buckets(params, buckets, pg)
        me = weakref.ref(self)  # no cycle: a dropped wrapper is freed and stops reducing
        d["reducer"] = Reducer(
            params, [n for n, _ in named], pg, buckets,
            find_unused_parameters, lambda: me()._sync_in_backward())

    def _sync_in_backward(self) -> bool:
        d = self.__dict__
        return guarded(f"DistributedDataParallel@{id(self):x}.require_backward_grad_sync",
                       lambda: d["require_backward_grad_sync"])

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self.process_group.size() > 1 and is_grad_enabled() \
                and self._sync_in_backward():
            with no_grad():
                for b in self.modules_buffers:
                    broadcast(b, 0, group=self.process_group)
        return self.module(*inputs, **kwargs)

    def no_sync(self) -> _NoSync:
        """Inside this block backward passes accumulate gradients locally without
        averaging them; the first backward after it averages the accumulated sum."""
        return _NoSync(self.__dict__)

    def extra_repr(self) -> str:
        return ""


class _NoSync:
    """``no_sync()``'s context (a plain class: a compiled step can use it and replay)."""

    __slots__ = ("_state", "_old")

    def __init__(self, state: dict):
        self._state = state

    def __enter__(self) -> None:
        self._old = self._state["require_backward_grad_sync"]
        self._state["require_backward_grad_sync"] = False

    def __exit__(self, *exc) -> bool:
        self._state["require_backward_grad_sync"] = self._old
        return False


def _verify_same_model(module: Module, pg) -> None:
    """Every rank raises the same clear error when the ranks' models differ."""
    mine = [("parameter", n, tuple(p._data.shape), p._data.dtype.name)
            for n, p in module.named_parameters()]
    mine += [("buffer", n, tuple(b._data.shape), b._data.dtype.name)
             for n, b in module.named_buffers()]
    every = [None] * pg.size()
    all_gather_object(every, mine, group=pg)
    ref = every[0]
    for r, theirs in enumerate(every[1:], 1):
        if len(theirs) != len(ref):
            raise RuntimeError(
                "DistributedDataParallel expects the same model on every rank, but rank "
                f"{r} has {len(theirs)} parameters and buffers, while rank 0 has {len(ref)}")
        for i, (a, b) in enumerate(zip(ref, theirs)):
            if a != b:
                raise RuntimeError(
                    "DistributedDataParallel expects the same model on every rank, but "
                    f"{b[0]} {i} ({b[1]}) is {b[3]}{list(b[2])} on rank {r}, while rank 0 has "
                    f"{a[0]} {a[1]} as {a[3]}{list(a[2])}")


def _verify_same_buckets(params: list, buckets: list, pg) -> None:
    """Every rank raises the same clear error unless the ranks' gradient buckets (which
    parameters, how many elements, which dtype: they follow from the model and
    ``bucket_cap_mb``) are the same: checked once, as the buckets are all-reduced as flat
    tensors at every backward."""
    mine = [(params[b[0]]._data.dtype.name, sum(params[i]._data.size for i in b), tuple(b))
            for b in buckets]
    every = [None] * pg.size()
    all_gather_object(every, mine, group=pg)
    for r, theirs in enumerate(every[1:], 1):
        if theirs == every[0]:
            continue
        def text(layout):
            return ", ".join(f"{d}[{n}] (parameters {list(m)})" for d, n, m in layout)
        raise RuntimeError(
            "DistributedDataParallel expects the same gradient buckets on every rank (the "
            "same model and bucket_cap_mb), but rank 0 has "
            f"{len(every[0])} bucket(s): {text(every[0])}, while rank {r} has {len(theirs)}: "
            f"{text(theirs)}")


def _sync_states(module: Module, pg) -> None:
    """Rank 0's parameters and buffers on every rank."""
    with no_grad():
        for p in module.parameters():
            broadcast(p, 0, group=pg)
        for b in module.buffers():
            broadcast(b, 0, group=pg)
