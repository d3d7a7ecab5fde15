"""The CUDA device, through NVIDIA's ``numba-cuda`` (``pip install -e ".[cuda]"``).

Storage is :class:`.array.CudaArray` (strided views over blocks from a caching
allocator).  Kernels are generated source (:mod:`.templates`: grid-stride loops and
block reductions around an op's scalar expression; :mod:`.kernels`: a tiled GEMM,
counter-based random numbers, the NLL loss) compiled by ``numba.cuda.jit`` and launched
by :meth:`CUDA.launch`.  Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run in
numba-cuda's simulator (about 170 us per simulated thread), with small launch shapes.

When ``DYNGRAPH_CUDA_KERNEL_LOG`` names a directory, every kernel launched is recorded
there (source, name, argument types) so that CI can compile each one to PTX and link it
for real GPUs without one (``python -m runtime.cuda.ptxcheck DIR``).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os

import numpy as np
from numba import cuda
from numba.cuda import config as _cuda_config

from ..cache import load_module, patch_index_data_cache_file
from ..cpu import CPU as _CPU
from ..device import Device
from .array import ALLOCATOR, CudaArray

SIMULATED = bool(getattr(_cuda_config, "ENABLE_CUDASIM", False))

_MATH = ("exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "sqrt", "isnan", "isinf",
         "isfinite")

#: scalar math names -> numba-cuda source (libdevice through ``math``; the float type is
#: restated where Python's ``math`` would give an int, and for float32 results: a no-op on
#: a GPU, where ``math.tanh`` of a float32 is libdevice's float32 ``tanhf``, but in the
#: simulator ``math`` returns a Python float, and the rest of a fused kernel would go on in
#: float64 where eager's one-op kernel stored a float32; per dtype char, ``*``: the others)
MATH = {**{f: f"math.{f}({{0}})" for f in _MATH},
        **{f: {"f": f"np.float32(math.{f}({{0}}))", "*": f"math.{f}({{0}})"}
           for f in ("exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "sqrt")},
        **{f: {"f": f"np.float32(math.{f}({{0}}))", "d": f"np.float64(math.{f}({{0}}))"}
           for f in ("floor", "ceil")},
        "trunc": {"f": "trunc32({0})", "d": "trunc64({0})"},
        "rint": {"f": "rint32({0})", "d": "rint64({0})"},
        "sigmoid": {"f": "sigmoid32({0})", "d": "sigmoid64({0})"},
        "erf": {"d": "math.erf({0})", "f": "np.float32(math.erf(np.float64({0})))"}}


#: NVVM's ``-fma`` for the kernel being compiled (None: numba-cuda's default, on)
_NVVM_FMA: contextvars.ContextVar = contextvars.ContextVar("dyngraph_nvvm_fma", default=None)


def _install_nvvm_fma_option() -> None:
    """Make numba-cuda's NVVM call pass ``-fma=<_NVVM_FMA>`` while one of our kernels
    compiles.  numba-cuda (0.30) compiles every kernel with NVVM's default ``-fma=1``,
    contracting ``a*b+c`` into one ``fma.rn`` (one rounding), and its ``cuda.jit`` has no
    option for it (NVIDIA/numba-cuda issue 118); a fused kernel would then differ from
    eager's separate multiply and add kernels in the last bit.  Only kernels launched or
    checked here, inside :func:`nvvm_fma`, get the option (a user's own kernels keep
    numba-cuda's default); their source says which (``NVVM_FMA`` in the module), so the
    policy is part of the source text, hence of every cache key."""
    from numba.cuda.cudadrv import nvvm
    real = nvvm.compile_ir
    if getattr(real, "_dyngraph_fma", False):
        return

    def compile_ir(llvmir, **options):
        fma = _NVVM_FMA.get()
        if fma is not None and not options.get("fastmath"):
            options["fma"] = bool(fma)
        return real(llvmir, **options)
    compile_ir._dyngraph_fma = True
    nvvm.compile_ir = compile_ir


@contextlib.contextmanager
def nvvm_fma(module):
    """Kernels of ``module`` compiled in this block get NVVM's ``-fma`` from the module's
    ``NVVM_FMA`` (False for every template and kernel but the GEMM)."""
    token = _NVVM_FMA.set(bool(getattr(module, "NVVM_FMA", False)))
    try:
        yield
    finally:
        _NVVM_FMA.reset(token)


_trusted_cuda_cache = False


def _trust_cuda_cache_files() -> None:
    """Numba-cuda keeps its own copy of Numba's cache files (``numba.cuda.core.caching``):
    give it the checks :mod:`runtime.cache` gives Numba's (a pickle is read only when it
    matches the record written beside it, for the modules loaded there)."""
    global _trusted_cuda_cache
    if _trusted_cuda_cache:
        return
    try:
        from numba.cuda.core.caching import IndexDataCacheFile
    except ImportError:  # Numba's own (deprecated) numba.cuda, not NVIDIA's numba-cuda:
        return           # its kernels cache through numba.core.caching, checked already
    patch_index_data_cache_file(IndexDataCacheFile)
    _trusted_cuda_cache = True


def _guard_kernel_caches(mod) -> None:
    """Every kernel of ``mod`` with a disk cache (``cuda.jit(cache=True)``): a cache file
    that fails to load (corrupt, from another numba-cuda) is discarded and the kernel
    compiled, instead of the launch failing."""
    for obj in list(vars(mod).values()):
        cache = getattr(obj, "_cache", None)
        if cache is None or not hasattr(cache, "load_overload") or \
                "load_overload" in vars(cache):
            continue
        load = cache.load_overload

        def load_overload(sig, target_context, load=load, cache=cache):
            try:
                return load(sig, target_context)
            except Exception:    # noqa: BLE001 - unreadable cache files: recompile
                try:
                    cache.flush()
                except Exception:  # noqa: BLE001
                    cache.disable()
                return None
        cache.load_overload = load_overload


if not SIMULATED:
    _install_nvvm_fma_option()
    _trust_cuda_cache_files()


class CUDA(Device):
    type = "cuda"
    storage_types = (CudaArray,)
    dtypes = _CPU.dtypes
    math = MATH
    reductions = frozenset({"sum", "mean", "amax", "amin"})
    singleton_min = 0       # every op is a kernel on the GPU
    #: launch shapes: threads per block of elementwise kernels, of reductions (a power
    #: of two: the shared-memory tree), the GEMM tile, and the most blocks of a grid
    threads = 32 if SIMULATED else 256
    reduce_threads = 8 if SIMULATED else 256
    tile = 4 if SIMULATED else 16
    max_blocks = 4 if SIMULATED else 65535
    #: a reduction with fewer output elements than this splits each row over several
    #: blocks (two passes: runtime.cuda.launch.reduce_parts)
    reduce_rows_full = 4 if SIMULATED else 1024

    def __init__(self):
        self._logged: set = set()

    def is_available(self) -> bool:
        try:
            return bool(cuda.is_available())
        except Exception:
            return False

    def device_count(self) -> int:
        return len(cuda.gpus) if self.is_available() else 0

    def empty(self, shape, dtype):
        return CudaArray.empty(shape, dtype)

    def from_host(self, array):
        return CudaArray.from_host(np.asarray(array))

    def to_host(self, storage):
        return storage.to_host()

    def synchronize(self) -> None:
        cuda.synchronize()

    def allocator_stats(self) -> dict:
        return ALLOCATOR.stats()

    def from_interface(self, obj):
        """Storage sharing memory with ``obj`` (anything with ``__cuda_array_interface__``:
        CuPy, PyTorch, Numba arrays)."""
        return CudaArray.from_interface(obj)

    @property
    def allocator(self):
        """The caching allocator (its ``allocated`` and ``peak`` counters, ``empty_cache``)."""
        return ALLOCATOR

    def load(self, source: str):
        """The module of kernel ``source``: its kernels are ``cuda.jit(cache=True)``, so
        a later process loads their machine code from numba-cuda's cache beside the
        source file (:mod:`runtime.cache`) instead of compiling through NVVM again (not
        in the simulator, nor with ``DYNGRAPH_CACHE_DIR=off``)."""
        # (the simulator's cuda.jit takes no lto; the source as written is what the
        # kernel log records, for the PTX check)
        mod = load_module(source.replace(", lto=False)", ")") if SIMULATED else source,
                          prefix="dgc")
        if not SIMULATED and "__dyngraph_source__" not in vars(mod):
            _guard_kernel_caches(mod)
        mod.__dyngraph_source__ = source
        return mod

    # -- launching ---------------------------------------------------------------------
    def grid(self, n: int, threads: int | None = None) -> tuple:
        """(blocks, threads) covering ``n`` work items (grid-stride beyond max_blocks)."""
        t = threads or self.threads
        return max(1, min(self.max_blocks, -(-n // t))), t

    def launch(self, module, name: str, blocks: int | tuple, threads: int | tuple,
               args: list) -> None:
        """Run ``module.name[blocks, threads](*args)`` (recorded for the PTX check when
        ``DYNGRAPH_CUDA_KERNEL_LOG`` is set)."""
        log = os.environ.get("DYNGRAPH_CUDA_KERNEL_LOG")
        if log:
            self._record(log, module, name, args)
        if min(blocks) < 1 if isinstance(blocks, tuple) else blocks < 1:
            return   # no work (an empty batch): a GPU refuses an empty grid (the simulator
            #          ran it), and a launch of no thread would do nothing
        token = _NVVM_FMA.set(bool(getattr(module, "NVVM_FMA", False)))
        try:      # (a first launch compiles: with this module's -fma)
            getattr(module, name)[blocks, threads](*args)
        finally:
            _NVVM_FMA.reset(token)

    def _record(self, log: str, module, name: str, args: list) -> None:
        sig = [_type_of(a) for a in args]
        source = getattr(module, "__dyngraph_source__", None)
        if source is None:
            return
        key = hashlib.sha256(repr((source, name, sig)).encode()).hexdigest()[:24]
        if key in self._logged:
            return
        self._logged.add(key)
        os.makedirs(log, exist_ok=True)
        path = os.path.join(log, f"{key}.json")
        tmp = path + f".{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump({"source": source, "name": name, "signature": sig}, f)
        os.replace(tmp, path)


def _type_of(a):
    """A JSON description of a kernel argument's Numba type (see :mod:`.ptxcheck`)."""
    if isinstance(a, np.generic):          # a NumPy scalar: its own dtype
        return ["scalar", a.dtype.name]
    if isinstance(a, (bool, np.bool_)):
        return ["bool"]
    if isinstance(a, (int, np.integer)):
        return ["int64"]
    if isinstance(a, (float, np.floating)):
        return ["float64"]
    if isinstance(a, tuple):
        return ["tuple", [_type_of(x) for x in a]]
    return ["array", np.dtype(a.dtype).name, int(a.ndim)]


DEVICE = CUDA()
