"""``eager.cuda``: PyTorch's CUDA namespace (``is_available``, ``device_count``,
``synchronize``, ``manual_seed``...).  Tensors go to the GPU with ``t.to("cuda")``,
``t.cuda()`` or ``device="cuda"`` on a factory; ops on them run kernels generated from
the same scalar expressions as the compiler's (:mod:`eager.cuda.ops`).  Needs NVIDIA's
``numba-cuda`` (``pip install -e ".[cuda]"``); importing ``eager`` never does.
"""

from __future__ import annotations

from runtime import device as _device

from ..devices import check_cuda_ordinal as check_device
from ..devices import device_count as _device_count
from ..random import CUDA_GENERATOR


def __getattr__(name):
    # PyTorch's torch.cuda.OutOfMemoryError (a RuntimeError) is the allocator's own class,
    # runtime.cuda.array.OutOfMemoryError: looked up on first use, so that importing
    # eager does not import numba-cuda
    if name == "OutOfMemoryError":
        from runtime.cuda.array import OutOfMemoryError
        return OutOfMemoryError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_available() -> bool:
    """Whether CUDA tensors can be made here (numba-cuda installed and a GPU, or its
    simulator under ``NUMBA_ENABLE_CUDASIM=1``)."""
    return _device.available("cuda")


def device_count() -> int:
    return _device_count("cuda")


def current_device() -> int:
    _require()
    return 0


def synchronize(device=None) -> None:
    """Wait until the kernels queued on the GPU have finished."""
    _require()
    _device.get("cuda").synchronize()


def manual_seed(seed: int) -> None:
    """Seed the CUDA random generator (counter-based: the same seed gives the same
    numbers, eager and compiled alike).  ``eager.manual_seed`` seeds it too."""
    CUDA_GENERATOR.seed(int(seed))


manual_seed_all = manual_seed


def memory_stats() -> dict:
    """The caching allocator's counters: blocks reused, fresh allocations, bytes cached."""
    _require()
    return _device.get("cuda").allocator_stats()


def empty_cache() -> None:
    """Give the cached free blocks back to the driver."""
    if is_available():
        _device.get("cuda").allocator.empty_cache()


def memory_allocated(device=None) -> int:
    """Bytes held by live CUDA tensors (their allocator blocks: size classes, see
    :func:`runtime.cuda.array.size_class`)."""
    check_device(device)
    return _device.get("cuda").allocator.allocated


def memory_reserved(device=None) -> int:
    """Bytes held from the driver by the caching allocator (live and cached blocks);
    :func:`empty_cache` gives the cached ones back."""
    check_device(device)
    return _device.get("cuda").allocator.reserved


def max_memory_reserved(device=None) -> int:
    check_device(device)
    return _device.get("cuda").allocator.peak_reserved


def max_memory_allocated(device=None) -> int:
    """The peak of :func:`memory_allocated` since start or :func:`reset_peak_memory_stats`."""
    check_device(device)
    return _device.get("cuda").allocator.peak


def reset_peak_memory_stats(device=None) -> None:
    check_device(device)
    allocator = _device.get("cuda").allocator
    allocator.peak = allocator.allocated
    allocator.peak_reserved = allocator.reserved


def _numba_device():
    _require()
    from numba import cuda
    return cuda.get_current_device()


def get_device_name(device=None) -> str:
    check_device(device)
    name = getattr(_numba_device(), "name", None)
    if name is None:
        return "numba-cuda simulator"
    return name.decode() if isinstance(name, bytes) else str(name)


class _CudaDeviceProperties:
    def __init__(self, name, major, minor, total_memory, multi_processor_count):
        self.name, self.major, self.minor = name, major, minor
        self.total_memory, self.multi_processor_count = total_memory, multi_processor_count

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    from numba import cuda
    dev = _numba_device()
    major, minor = getattr(dev, "compute_capability", (0, 0))
    try:
        total = int(cuda.current_context().get_memory_info()[1])
    except Exception:   # the simulator has no device memory to report
        total = 0
    return _CudaDeviceProperties(get_device_name(device), major, minor, total,
                                 int(getattr(dev, "MULTIPROCESSOR_COUNT", 1)))


class Event:
    """A CUDA event (``numba.cuda.event``): ``record()``, ``synchronize()``, ``query()``,
    ``elapsed_time(end)`` in milliseconds (both created with ``enable_timing=True``)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        from numba import cuda
        _require()
        self.enable_timing = enable_timing
        try:
            self._event = cuda.event(timing=enable_timing)
        except TypeError:   # the simulator's event takes no arguments
            self._event = cuda.event()
        self._recorded = False

    def record(self, stream=None) -> None:
        s = (stream or current_stream())._stream
        if s is None:
            self._event.record()
        else:
            self._event.record(s)
        self._recorded = True

    def synchronize(self) -> None:
        self._event.synchronize()

    def query(self) -> bool:
        q = getattr(self._event, "query", None)
        return True if q is None else bool(q())

    def wait(self, stream=None) -> None:
        s = (stream or current_stream())._stream
        if s is not None:
            self._event.wait(s)

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return float(self._event.elapsed_time(end_event._event))


class Stream:
    """A CUDA stream (``numba.cuda.stream``); ``with Stream():`` makes it current.  Eager's
    kernels are queued on the default stream, which orders itself with every other
    stream, so work inside the block is correct; it is not yet overlapped."""

    def __init__(self, device=None, priority: int = 0, _default: bool = False):
        from numba import cuda
        _require()
        check_device(device)
        self._stream = None if _default else cuda.stream()
        self._prev = None

    def synchronize(self) -> None:
        if self._stream is None:
            synchronize()
        else:
            self._stream.synchronize()

    def query(self) -> bool:
        return True

    def wait_event(self, event) -> None:
        event.wait(self)

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __enter__(self):
        self._prev = _CURRENT[0]
        _CURRENT[0] = self
        return self

    def __exit__(self, *exc):
        _CURRENT[0] = self._prev
        return False


_CURRENT: list = [None]


def current_stream(device=None) -> Stream:
    if _CURRENT[0] is None:
        _CURRENT[0] = Stream(_default=True)
    return _CURRENT[0]


def default_stream(device=None) -> Stream:
    return Stream(_default=True)


def stream(s):
    """``with torch.cuda.stream(s):`` (s may be None: no change)."""
    import contextlib
    return s if s is not None else contextlib.nullcontext()


def _require() -> None:
    if not is_available():
        raise RuntimeError("Found no NVIDIA driver on your system (and no numba-cuda "
                           "simulator: set NUMBA_ENABLE_CUDASIM=1, or install the 'cuda' "
                           "extra on a machine with a GPU)")
