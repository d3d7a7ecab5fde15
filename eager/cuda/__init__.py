"""``eager.cuda``: PyTorch's CUDA namespace (``is_available``, ``device_count``,
``synchronize``, ``manual_seed``...).  Tensors go to the GPU with ``t.to("cuda")``,
``t.cuda()`` or ``device="cuda"`` on a factory; ops on them run kernels generated from
the same scalar expressions as the compiler's (:mod:`eager.cuda.ops`).  Needs NVIDIA's
``numba-cuda`` (``pip install -e ".[cuda]"``); importing ``eager`` never does.
"""

from __future__ import annotations

from runtime import device as _device


def is_available() -> bool:
    """Whether CUDA tensors can be made here (numba-cuda installed and a GPU, or its
    simulator under ``NUMBA_ENABLE_CUDASIM=1``)."""
    return _device.available("cuda")


def device_count() -> int:
    return _device.get("cuda").device_count() if is_available() else 0


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
    from .random import GENERATOR
    GENERATOR.seed(int(seed))


manual_seed_all = manual_seed


def memory_stats() -> dict:
    """The caching allocator's counters: blocks reused, fresh allocations, bytes cached."""
    _require()
    return _device.get("cuda").allocator_stats()


def empty_cache() -> None:
    """Give the cached free blocks back to the driver."""
    from runtime.cuda.array import ALLOCATOR
    ALLOCATOR.empty_cache()


def check_device(device) -> None:
    """PyTorch's error for a CUDA device index this machine does not have (``cuda:1`` on
    one GPU); ``device``: an ``eager.device``, a string or an int (None: the current)."""
    from ..tensor import device as _dev
    if device is None:
        return
    if isinstance(device, int):
        index = device
    else:
        dev = _dev(device)
        if dev.type != "cuda" or dev.index is None:
            return
        index = dev.index
    n = device_count()
    if not 0 <= index < n:
        raise RuntimeError("CUDA error: invalid device ordinal\nCUDA kernel errors might be "
                           "asynchronously reported at some other API call, so the stacktrace "
                           "below might be incorrect.\nFor debugging consider passing "
                           "CUDA_LAUNCH_BLOCKING=1")


def _require() -> None:
    if not is_available():
        raise RuntimeError("Found no NVIDIA driver on your system (and no numba-cuda "
                           "simulator: set NUMBA_ENABLE_CUDASIM=1, or install the 'cuda' "
                           "extra on a machine with a GPU)")
