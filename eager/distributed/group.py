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
import zlib

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


# -- what the ranks agree on -----------------------------------------------------------
# Before each collective every rank sends a fixed-size descriptor of its call (which
# collective, the reduce op or source rank, the dtype and shape of its tensor) in one
# small all-gather on a communicator of its own, and raises on every rank when the
# descriptors differ: MPI itself would reduce mismatched buffers into garbage (rank 0 with
# 3 elements, rank 1 with 5) or fail with "Other MPI error".  As PyTorch's
# TORCH_DISTRIBUTED_DEBUG=DETAIL does, at the cost of one tiny all-gather per collective;
# DYNGRAPH_DISTRIBUTED_CHECK=0 (read by init_process_group) turns it off.
CHECK_ENV = "DYNGRAPH_DISTRIBUTED_CHECK"
_COLLECTIVES = ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier",
                "all_gather_object", "broadcast_object_list")
_REDUCE_NAMES = tuple(op.value for op in ReduceOp)
_MAX_DIMS = 8
_DESC_LEN = 8 + _MAX_DIMS  # magic, collective, extra, dtype (3 words), ndim, shape crc, dims


def check_enabled_by_env() -> bool:
    v = os.environ.get(CHECK_ENV, "1").strip().lower()
    return v not in ("0", "off", "false", "no")


def describe_call(name: str, extra, arr) -> np.ndarray:
    """The descriptor of one collective call (int64[_DESC_LEN]), equal on ranks that agree."""
    d = np.zeros(_DESC_LEN, np.int64)
    d[0] = 0x6467  # "dg": a call that went through this check
    d[1] = _COLLECTIVES.index(name)
    if isinstance(extra, str):
        d[2] = 1000 + _REDUCE_NAMES.index(extra)
    elif extra is not None:
        d[2] = int(extra)
    else:
        d[2] = -1
    if arr is None:
        d[6] = -1
        return d
    dname = np.dtype(arr.dtype).name.encode()[:24].ljust(24, b"\0")
    d[3:6] = np.frombuffer(dname, np.int64)
    shape = arr.shape
    d[6] = len(shape)
    d[7] = zlib.crc32(repr(tuple(shape)).encode())
    for i, n in enumerate(shape[:_MAX_DIMS]):
        d[8 + i] = n
    return d


def _call_text(d: np.ndarray) -> str:
    if d[0] != 0x6467 or not 0 <= d[1] < len(_COLLECTIVES):
        return "an unknown call"
    name = _COLLECTIVES[d[1]]
    text = name
    if d[2] >= 1000:
        text += f"(op={_REDUCE_NAMES[d[2] - 1000].upper()})"
    elif d[2] >= 0:
        text += f"(src={d[2]})"
    if d[6] >= 0:
        dtype = d[3:6].tobytes().rstrip(b"\0").decode(errors="replace")
        ndim = int(d[6])
        dims = [int(n) for n in d[8:8 + min(ndim, _MAX_DIMS)]]
        shape = str(dims) if ndim <= _MAX_DIMS else f"{ndim}-d {dims[:_MAX_DIMS]}..."
        text += f" on a {dtype}{shape} tensor"
    return text


def mismatch_message(rank: int, every: np.ndarray) -> str:
    """The error every rank raises when the ranks' descriptors differ."""
    calls = "; ".join(f"rank {r}: {_call_text(d)}" for r, d in enumerate(every))
    return (f"Detected mismatch between collectives on ranks (seen on rank {rank}): {calls}. "
            "Every rank must call the same collectives in the same order, on tensors of the "
            "same shape and dtype (and the same op or src); none of these ran, so the group "
            f"can go on. ({CHECK_ENV}=0 turns this check off.)")


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
        # the descriptors of the calls are exchanged on a communicator of their own, so
        # they never match a collective's data
        self.check = check_enabled_by_env() and self._size > 1
        self._check_comm = comm.Dup() if self.check else None
        self._desc_all = np.empty((self._size, _DESC_LEN), np.int64)
        self._descs: dict = {}  # (call, extra, dtype, shape) -> (descriptor, every rank's)

    def __repr__(self) -> str:
        return f"<ProcessGroup mpi rank={self._rank} size={self._size}>"

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def _abort(self) -> None:
        self.MPI.COMM_WORLD.Abort(1)

    def agree(self, name: str, extra=None, arr=None) -> None:
        """Raise the same RuntimeError on every rank unless every rank is calling collective
        ``name`` with the same ``extra`` (reduce op name or source rank) on an array of the
        same shape and dtype as ``arr``.  A no-op when the check is off."""
        if not self.check:
            return
        key = (name, extra) if arr is None else (name, extra, arr.dtype, arr.shape)
        known = self._descs.get(key)
        if known is None:
            if len(self._descs) > 4096:
                self._descs.clear()
            mine = describe_call(name, extra, arr)
            known = self._descs[key] = (mine, mine.tobytes() * self._size)
        every = self._desc_all
        self.wait(self._check_comm.Iallgather(known[0], every), (name, arr, extra))
        if every.tobytes() != known[1]:
            raise RuntimeError(mismatch_message(self._rank, every.copy()))

    def all_gather_object(self, obj) -> list:
        self.agree("all_gather_object")
        wd = self.watchdog
        wd.begin(("all_gather_object", None, None))
        try:
            return self.comm.allgather(obj)
        finally:
            wd.end()

    def broadcast_object(self, obj, src: int):
        self.agree("broadcast_object_list", src)
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
    # Each first checks that every rank makes the same call (:meth:`agree`).
    def start_all_reduce(self, arr: np.ndarray, op: str):
        self.agree("all_reduce", op, arr)
        return self.comm.Iallreduce(self.MPI.IN_PLACE, _buffer(arr),
                                    _mpi_op(self.MPI, op, arr.dtype))

    def start_broadcast(self, arr: np.ndarray, src: int):
        self.agree("broadcast", src, arr)
        return self.comm.Ibcast(_buffer(arr), root=src)

    def start_all_gather(self, send: np.ndarray, recv: np.ndarray):
        self.agree("all_gather", None, send)
        return self.comm.Iallgather(_buffer(send), _buffer(recv))

    def start_reduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: str):
        self.agree("reduce_scatter", op, send)
        return self.comm.Ireduce_scatter_block(_buffer(send), _buffer(recv),
                                               _mpi_op(self.MPI, op, send.dtype))

    def start_barrier(self):
        self.agree("barrier")
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
        if self._check_comm is not None:
            self._check_comm.Free()
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
    so no rank waits forever for one that died.  Every collective first checks that the
    ranks make the same call (collective, op or src, dtype, shape) and raises a clear
    RuntimeError on every rank when they do not; ``DYNGRAPH_DISTRIBUTED_CHECK=0`` in the
    environment of this call turns the check off.
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
