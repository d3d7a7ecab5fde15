"""Process groups over MPI: the communicator, the reduce ops, and the default group.

A :class:`ProcessGroup` wraps its own duplicate of an ``mpi4py`` communicator (so that a
program's own MPI traffic never matches ours) and starts collectives on NumPy arrays, in
place.  Every wait is watched (:mod:`.watchdog`): past the group's timeout the
whole job is aborted with a message instead of hanging.  Groups are registered by a small
integer id, which is what graph ops carry as a parameter (:mod:`.ops`).

``mpi4py`` is imported when a group is first made, never when ``eager`` is imported.
"""

from __future__ import annotations

import datetime
import enum
import importlib.util
import os
import warnings

import numpy as np

from .watchdog import Watchdog, install_abort_on_uncaught, remove_abort_on_uncaught

#: PyTorch's ``default_pg_timeout``
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


def load_mpi():
    """``mpi4py.MPI`` (initializes MPI on first import), or a clear ImportError."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError(
            "eager.distributed runs on MPI through mpi4py, which is not installed: "
            "pip install 'dyngraph[distributed]' (mpi4py and the mpich wheel), or "
            "pip install mpi4py next to your cluster's MPI") from exc
    return MPI


class Backend(str):
    """Backend names, as ``torch.distributed.Backend``; only ``"mpi"`` exists here."""

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        return str.__new__(cls, name.lower())


class ReduceOp(enum.Enum):
    """How ``all_reduce`` and ``reduce_scatter`` combine the ranks' values."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {list(ReduceOp).index(self)}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


_BITWISE = ("band", "bor", "bxor")


def reduce_op_name(op, what: str, dtype: np.dtype) -> str:
    """The canonical name of ``op`` (a ReduceOp), checked against the tensor's dtype."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{what}: op must be a ReduceOp (e.g. ReduceOp.SUM), got {op!r}")
    name = op.value
    kind = np.dtype(dtype).kind
    if name == "avg" and kind != "f":
        raise RuntimeError(f"{what}: ReduceOp.AVG needs a floating-point tensor, got "
                           f"{np.dtype(dtype).name}")
    if name in _BITWISE and kind == "f":
        raise RuntimeError(f"{what}: ReduceOp.{op.name} needs an integer or bool tensor, got "
                           f"{np.dtype(dtype).name}")
    return name


def _mpi_op(MPI, name: str, dtype: np.dtype):
    if dtype.kind == "b":  # reduced as uint8 0/1: or and and (as PyTorch's NCCL does)
        name = {"sum": "max", "product": "min"}.get(name, name)
    return {"sum": MPI.SUM, "avg": MPI.SUM, "product": MPI.PROD, "min": MPI.MIN,
            "max": MPI.MAX, "band": MPI.BAND, "bor": MPI.BOR, "bxor": MPI.BXOR}[name]


def finish_reduce(arr: np.ndarray, op: str, size: int) -> None:
    """What is left after MPI's reduction: AVG is a SUM divided by the number of ranks."""
    if op == "avg":
        np.divide(arr, size, out=arr)


def _buffer(arr: np.ndarray) -> np.ndarray:
    return arr.view(np.uint8) if arr.dtype.kind == "b" else arr


class ProcessGroup:
    """A set of ranks that run collectives together (here: all the ranks of the job)."""

    _next_id = 0

    def __init__(self, comm, timeout: datetime.timedelta):
        self.MPI = load_mpi()
        self.comm = comm
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self.timeout = timeout
        self.id = ProcessGroup._next_id
        ProcessGroup._next_id += 1
        self.watchdog = Watchdog(self._rank, timeout.total_seconds(), self._abort)
        self.pending: list = []  # started collectives not finished yet (collectives.Work)

    def __repr__(self) -> str:
        return f"<ProcessGroup mpi rank={self._rank} size={self._size}>"

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def _abort(self) -> None:
        self.MPI.COMM_WORLD.Abort(1)

    def all_gather_object(self, obj) -> list:
        wd = self.watchdog
        wd.begin(("all_gather_object", None, None))
        try:
            return self.comm.allgather(obj)
        finally:
            wd.end()

    def broadcast_object(self, obj, src: int):
        wd = self.watchdog
        wd.begin(("broadcast_object_list", None, src))
        try:
            return self.comm.bcast(obj, root=src)
        finally:
            wd.end()

    # -- collectives on arrays, in place: a started request, finished by wait() ---------
    # Only MPI's non-blocking collectives are used (a blocking call waits at once): MPI
    # never matches a blocking collective with a non-blocking one, and one rank's call may
    # be eager and blocking while another's is async or part of a compiled replay.
    def start_all_reduce(self, arr: np.ndarray, op: str):
        return self.comm.Iallreduce(self.MPI.IN_PLACE, _buffer(arr),
                                    _mpi_op(self.MPI, op, arr.dtype))

    def start_broadcast(self, arr: np.ndarray, src: int):
        return self.comm.Ibcast(_buffer(arr), root=src)

    def start_all_gather(self, send: np.ndarray, recv: np.ndarray):
        return self.comm.Iallgather(_buffer(send), _buffer(recv))

    def start_reduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: str):
        return self.comm.Ireduce_scatter_block(_buffer(send), _buffer(recv),
                                               _mpi_op(self.MPI, op, send.dtype))

    def start_barrier(self):
        return self.comm.Ibarrier()

    def settle(self, arrays) -> None:
        """Finish the started collectives that use memory of ``arrays``, so that the next
        one sees their results (collectives on independent memory stay overlapped)."""
        for work in list(self.pending):
            if any(np.may_share_memory(a, b) for a in arrays for b in work.touches):
                work.wait()

    def wait(self, request, what) -> None:
        """Wait for a started collective; past the timeout the watchdog ends the job."""
        wd = self.watchdog
        wd.begin(what)
        try:
            request.Wait()
        finally:
            wd.end()

    def destroy(self) -> None:
        for work in list(self.pending):
            work.wait()
        self.watchdog.stop()
        self.comm.Free()


# -- the default group ---------------------------------------------------------------------
_GROUPS: dict[int, ProcessGroup] = {}   # id -> live group (graph ops look groups up here)
_DEFAULT: list = [None]


def default_group() -> ProcessGroup:
    pg = _DEFAULT[0]
    if pg is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return pg


def group_by_id(gid: int) -> ProcessGroup:
    pg = _GROUPS.get(gid)
    if pg is None:
        raise RuntimeError(
            f"process group {gid} was destroyed (destroy_process_group); a compiled function "
            "that ran collectives on it is traced again only after a new init_process_group "
            "if it is called with new arguments: recompile it (compiler.reset())")
    return pg


def resolve(group) -> ProcessGroup:
    """The group a collective runs on: ``None`` means the default group."""
    if group is None:
        return default_group()
    if isinstance(group, ProcessGroup):
        if group.id not in _GROUPS:
            raise RuntimeError("the process group was destroyed (destroy_process_group)")
        return group
    raise TypeError(f"group must be None or a ProcessGroup, got {type(group).__name__}")


def _check_env(name: str, value: int) -> None:
    got = os.environ.get(name)
    if got is not None and got.strip() and int(got) != value:
        raise ValueError(
            f"init_process_group: the environment says {name}={got}, but MPI started this "
            f"process as {'rank' if name == 'RANK' else 'one of'} {value}"
            f"{'' if name == 'RANK' else ' processes'}: launch with mpiexec -n <world size> "
            "(backend 'mpi' takes rank and world size from MPI)")


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the job's default process group (PyTorch's signature; the backend is MPI).

    Rank and world size come from MPI (``mpiexec -n N python train.py``; one process
    without ``mpiexec`` is a world of size 1).  ``init_method="env://"`` is accepted:
    ``RANK`` and ``WORLD_SIZE``, when set, must agree with MPI, as must explicit ``rank``
    and ``world_size``.  ``timeout`` (a ``datetime.timedelta``, default 30 minutes) bounds
    every wait for the other ranks: past it the job is aborted with a message naming the
    collective.  An uncaught exception on any rank aborts every rank at once (MPI_Abort),
    so no rank waits forever for one that died.
    """
    if _DEFAULT[0] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend if backend is not None else Backend.MPI)
    if name != Backend.MPI:
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in: "
                           "eager.distributed runs on MPI, use backend='mpi'")
    if store is not None:
        raise ValueError("init_process_group: backend 'mpi' takes no store (MPI connects the "
                         "ranks itself)")
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    if timeout.total_seconds() <= 0:
        raise ValueError(f"init_process_group: timeout must be positive, got {timeout}")
    if init_method is not None and not isinstance(init_method, str):
        raise TypeError("init_method must be a URL string such as 'env://'")
    MPI = load_mpi()
    comm = MPI.COMM_WORLD.Dup()
    r, n = comm.Get_rank(), comm.Get_size()
    try:
        if world_size not in (-1, n):
            raise ValueError(f"init_process_group: world_size={world_size}, but MPI started "
                             f"{n} processes (launch with mpiexec -n {world_size})")
        if rank not in (-1, r):
            raise ValueError(f"init_process_group: rank={rank}, but MPI says this process is "
                             f"rank {r}")
        if init_method is None or init_method.startswith("env://"):
            _check_env("WORLD_SIZE", n)
            _check_env("RANK", r)
    except Exception:
        comm.Free()
        raise
    if init_method is not None and not init_method.startswith("env://"):
        warnings.warn(f"init_process_group: init_method {init_method!r} is not used: with "
                      "backend 'mpi' the MPI launcher connects the ranks", stacklevel=2)
    pg = ProcessGroup(comm, timeout)
    _GROUPS[pg.id] = pg
    _DEFAULT[0] = pg
    if n > 1:
        install_abort_on_uncaught(r, n, pg._abort)


def destroy_process_group(group=None) -> None:
    """Leave the group (the default group when ``group`` is None); collectives on it raise
    afterwards, and ``init_process_group`` may be called again."""
    pg = resolve(group)
    pg.destroy()
    del _GROUPS[pg.id]
    if pg is _DEFAULT[0]:
        _DEFAULT[0] = None
        remove_abort_on_uncaught()


def is_initialized() -> bool:
    return _DEFAULT[0] is not None


def is_available() -> bool:
    """Whether ``mpi4py`` can be imported (checked without starting MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    return is_available()


def get_rank(group=None) -> int:
    return resolve(group).rank()


def get_world_size(group=None) -> int:
    return resolve(group).size()


def get_backend(group=None) -> str:
    resolve(group)
    return Backend.MPI
