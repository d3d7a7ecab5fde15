"""The collectives with PyTorch's names and semantics: in place on the caller's tensors.

Two ways to run one collective:

* eagerly, MPI works on the tensor's own memory (a contiguous copy only for a
  non-contiguous tensor): the non-blocking call (``Iallreduce``, ...) starts, and a
  :class:`Work` finishes it — at once for a blocking call, at ``wait()`` for
  ``async_op=True``;
* while a compiler tracer is active, the op of :mod:`.ops` is dispatched (blocking), so a
  compiled function records it and runs it on every replay, and its result is written
  into the caller's tensor in place; ``async_op=True`` returns a completed Work.

Either way the write happens outside autograd (as ``torch.distributed``'s) and bumps the
tensor's version counter, so a backward that saved the old value raises.
"""

from __future__ import annotations

import time

import numpy as np

from .._state import STATE
from ..autograd.grad_mode import no_grad
from ..dispatch import dispatch
from ..fn.shape import stack
from ..inplace import inplace
from ..tensor import Tensor
from .group import ReduceOp, finish_reduce, reduce_op_name, resolve
from .ops import AllGather, AllReduce, Barrier, Broadcast, ReduceScatter


class Work:
    """A collective started with ``async_op=True``; ``wait()`` finishes it."""

    __slots__ = ("_pg", "_request", "_finish", "_what", "_result", "touches")

    def __init__(self, pg=None, request=None, finish=None, what=None, result=(), touches=()):
        self._pg = pg
        self._request = request
        self._finish = finish
        self._what = what
        self._result = list(result)
        self.touches = touches  # the arrays it reads or writes until finished
        if request is not None:
            pg.pending.append(self)

    def _complete(self) -> None:
        if self._request is not None:
            self._request = None
            self._pg.pending.remove(self)
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def is_completed(self) -> bool:
        """Whether the collective has finished (drives MPI's progress; never blocks)."""
        if self._request is not None and self._request.Test():
            self._complete()
        return self._request is None

    def wait(self, timeout=None) -> bool:
        """Block until the collective has finished and its result is in the tensors.
        ``timeout`` (a ``datetime.timedelta``) raises RuntimeError when exceeded."""
        if self._request is None:
            self._complete()
            return True
        if timeout is None:
            self._pg.wait(self._request, self._what)
        else:
            deadline = time.monotonic() + timeout.total_seconds()
            while not self._request.Test():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Work.wait: {self._what[0]} did not finish within "
                                       f"{timeout}")
        self._complete()
        return True

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self):
        return None

    def result(self) -> list:
        return self._result


def _check_tensor(t, what: str, name: str = "tensor", written: bool = True) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: {name} must be a Tensor, got {type(t).__name__}")
    if written and not t._data.flags.writeable:
        raise RuntimeError(f"{what}: the {name} is read-only (more than one element of it may "
                           "refer to a single memory location, as after expand(); clone() it "
                           "first)")


def _write(dst: Tensor, value: Tensor, what: str) -> None:
    """``dst`` holds ``value`` now (in place, outside autograd)."""
    with no_grad():
        inplace(dst, value, what)


def _bump(t: Tensor, what: str) -> None:
    v = t._version
    v[0] += 1
    v[1] = what


def _own_buffer(arr: np.ndarray) -> np.ndarray:
    """``arr`` itself when MPI can write it in place, else a C-contiguous copy."""
    return arr if arr.flags.c_contiguous else np.array(arr, order="C")


def _start(pg, async_op: bool, touches: tuple, start, finish, what, result=()):
    """Start a collective on arrays ``touches`` (after the started ones that use the same
    memory have finished: a process group runs collectives in order, as PyTorch's do);
    return its Work for ``async_op``, else wait for it here."""
    pg.settle(touches)
    work = Work(pg, start(), finish, what, result, touches)
    if async_op:
        return work
    work.wait()
    return None


def _done(async_op: bool, tensors) -> Work | None:
    return Work(result=tensors) if async_op else None


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Combine ``tensor`` over all ranks with ``op``, in place on every rank."""
    _check_tensor(tensor, "all_reduce")
    pg = resolve(group)
    name = reduce_op_name(op, "all_reduce", tensor._data.dtype)
    if STATE.tracer is None:
        arr = tensor._data
        buf = _own_buffer(arr)
        n = pg.size()

        def finish():
            finish_reduce(buf, name, n)
            if buf is not arr:
                np.copyto(arr, buf)
            _bump(tensor, "all_reduce")

        return _start(pg, async_op, (arr, buf), lambda: pg.start_all_reduce(buf, name),
                      finish, ("all_reduce", buf, name), [tensor])
    _write(tensor, dispatch(AllReduce, tensor, reduce_op=name, group=pg.id), "all_reduce")
    return _done(async_op, [tensor])


def broadcast(tensor: Tensor, src: int, group=None, async_op: bool = False):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank."""
    _check_tensor(tensor, "broadcast")
    pg = resolve(group)
    src = _check_rank(src, pg, "broadcast", "src")
    if STATE.tracer is None:
        arr = tensor._data
        buf = _own_buffer(arr)

        def finish():
            if buf is not arr:
                np.copyto(arr, buf)
            _bump(tensor, "broadcast")

        return _start(pg, async_op, (arr, buf), lambda: pg.start_broadcast(buf, src), finish,
                      ("broadcast", buf, src), [tensor])
    _write(tensor, dispatch(Broadcast, tensor, src=src, group=pg.id), "broadcast")
    return _done(async_op, [tensor])


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list[r]`` with rank ``r``'s ``tensor``, on every rank."""
    _check_tensor(tensor, "all_gather", written=False)
    pg = resolve(group)
    _check_list(tensor_list, tensor, pg, "all_gather", "tensor_list", "input tensor", True)
    if STATE.tracer is None:
        arr = tensor._data
        recv = np.empty((pg.size(),) + arr.shape, arr.dtype)

        def finish():
            for r, t in enumerate(tensor_list):
                np.copyto(t._data, recv[r])
                _bump(t, "all_gather")

        touches = (arr, recv) + tuple(t._data for t in tensor_list)
        return _start(pg, async_op, touches,
                      lambda: pg.start_all_gather(np.ascontiguousarray(arr), recv), finish,
                      ("all_gather", arr, None), tensor_list)
    gathered = dispatch(AllGather, tensor, group=pg.id)
    for r, t in enumerate(tensor_list):
        _write(t, gathered[r], "all_gather")
    return _done(async_op, tensor_list)


def reduce_scatter(output: Tensor, input_list: list, op=ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """``output`` on rank ``r`` = ``input_list[r]`` combined over all ranks with ``op``."""
    _check_tensor(output, "reduce_scatter", "output")
    pg = resolve(group)
    _check_list(input_list, output, pg, "reduce_scatter", "input_list", "output tensor",
                False)
    name = reduce_op_name(op, "reduce_scatter", output._data.dtype)
    if STATE.tracer is None:
        pg.settle(tuple(t._data for t in input_list))
        send = np.stack([t._data for t in input_list])
        recv = np.empty(output._data.shape, output._data.dtype)
        n = pg.size()

        def finish():
            finish_reduce(recv, name, n)
            np.copyto(output._data, recv)
            _bump(output, "reduce_scatter")

        return _start(pg, async_op, (send, recv, output._data),
                      lambda: pg.start_reduce_scatter(send, recv, name), finish,
                      ("reduce_scatter", send, name), [output])
    stacked = stack(list(input_list))
    result = dispatch(ReduceScatter, stacked, reduce_op=name, group=pg.id)
    _write(output, result, "reduce_scatter")
    return _done(async_op, [output])


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Return once every rank of the group has called ``barrier``."""
    pg = resolve(group)
    if STATE.tracer is None:
        return _start(pg, async_op, (), pg.start_barrier, None, ("barrier", None, None))
    dispatch(Barrier, group=pg.id)
    return _done(async_op, [])


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Fill ``object_list[r]`` with rank ``r``'s picklable ``obj``."""
    pg = resolve(group)
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have one entry per rank "
                         f"({pg.size()}), got {len(object_list)}")
    _python_data("all_gather_object")
    object_list[:] = pg.all_gather_object(obj)


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None) -> None:
    """Replace ``object_list``'s items with rank ``src``'s (picklable objects)."""
    pg = resolve(group)
    src = _check_rank(src, pg, "broadcast_object_list", "src")
    _python_data("broadcast_object_list")
    got = pg.broadcast_object(list(object_list), src)
    if len(got) != len(object_list):
        raise RuntimeError(f"broadcast_object_list: rank {src} sent {len(got)} objects, this "
                           f"rank's list has {len(object_list)}")
    object_list[:] = got


def _python_data(what: str) -> None:
    if STATE.tracer is not None:  # Python objects cannot be replayed: run eagerly
        STATE.tracer.on_unsupported(f"{what} (exchanges Python objects)")


def _check_rank(r, pg, what: str, name: str) -> int:
    if not isinstance(r, (int, np.integer)) or isinstance(r, bool):
        raise TypeError(f"{what}: {name} must be an int rank, got {type(r).__name__}")
    if not 0 <= r < pg.size():
        raise RuntimeError(f"{what}: invalid {name} rank {r} for a group of {pg.size()} "
                           "ranks")
    return int(r)


def _check_list(tensors, like: Tensor, pg, what: str, name: str, like_name: str,
                written: bool) -> None:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{what}: {name} must be a list of tensors, got "
                        f"{type(tensors).__name__}")
    if len(tensors) != pg.size():
        raise RuntimeError(f"{what}: {name} must hold one tensor per rank ({pg.size()}), got "
                           f"{len(tensors)}")
    shape, dtype = like._data.shape, like._data.dtype
    for i, t in enumerate(tensors):
        _check_tensor(t, what, f"{name}[{i}]", written)
        if t._data.shape != shape or t._data.dtype != dtype:
            raise RuntimeError(
                f"{what}: {name}[{i}] is {t._data.dtype.name}{list(t._data.shape)}, but the "
                f"{like_name} is {dtype.name}{list(shape)}: every tensor must have the same "
                "shape and dtype")
