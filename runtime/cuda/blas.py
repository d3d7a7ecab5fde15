"""Matrix products on CUDA: cuBLAS through CuPy when it is installed on a real GPU, else the
tiled GEMM kernel of :func:`runtime.cuda.launch.gemm_tile`.

:func:`gemm` is the one entry point of every CUDA matrix product (``matmul`` in 2-D and
batched, ``bmm``, ``linear`` with its transposed weight, and their gradients, which are
matmuls of transposed views): eager's op table (:mod:`eager.cuda.kernels_linalg`) calls it,
and compiled graphs run those ops through the same table.

Why CuPy, and only as a BLAS provider (issue 23 weighed two ways):

* **CuPy as the CUDA storage** (a ``cupy.ndarray`` under every tensor, eager's NumPy
  forwards run through one array namespace) would delete most of ``eager/cuda/ops.py``,
  but it makes CuPy, a 100+ MB CUDA wheel that needs a GPU, a hard dependency of the
  ``cuda`` extra, and its kernels cannot run in numba-cuda's simulator: CI, which has no
  GPU, would test a NumPy stand-in for every op instead of the kernels that run on a GPU.
* **nvmath-python** gives cuBLAS(Lt) with epilogues (bias in the GEMM), but its
  ``matmul`` plans per shape (a planning cost to amortize with a cache of stateful
  ``Matmul`` objects per layout) and it brings another dependency with its own stream and
  memory conventions; for plain GEMMs it calls the same cuBLAS.
* **CuPy as an optional BLAS provider** (this module): ``CudaArray`` stays the storage, and
  the operands are handed to ``cupy.matmul`` zero-copy through ``__cuda_array_interface__``
  (``cupy.asarray`` of a view wraps the same device memory; the result is written with
  ``out=`` straight into a block of our allocator).  The change is one module; the
  ``cuda`` extra, the simulator and CI stay as they are; ``pip install
  "dyngraph[cuda-blas]"`` adds ``cupy-cuda13x``.

What cuBLAS gets, through ``cupy.matmul`` (``cupy/_core/_routines_linalg.pyx``):

* 2-D products go to ``cupy.dot``, which passes a C- or F-contiguous operand to
  cuBLAS with a transpose flag instead of copying it: ``linear``'s ``weight.T``, ``x.T @
  g`` and ``g @ w`` in the gradients are no copies.  A batched operand whose batch is
  broadcast (a 2-D weight against a 3-D input) is folded into one 2-D product when the
  other operand's rows merge ((B*M, K) @ (K, N)): one GEMM, no copy.
* Batched products go to ``cublasGemmStridedBatchedEx`` (``cublas<t>gemmBatched`` when a
  batch is broadcast); CuPy makes each operand C-contiguous first, so a batched operand
  that is a transposed view (``q @ k.transpose(-2, -1)``) is copied on the device by
  CuPy (a device-to-device copy, no host round trip).
* float32 stays float32: CuPy uses TF32 only when ``CUPY_TF32=1`` is set (PyTorch's
  default is no TF32 for matmul either).  float16 is computed with float32 accumulation.

Ordering: our kernels are launched by numba-cuda on stream 0, which its driver binding
makes the legacy default stream (the per-thread default stream when
``CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM`` / ``NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM``
is set).  The CuPy call runs inside ``cupy.cuda.ExternalStream`` of that very stream
(``cudaStreamLegacy`` = 1 or ``cudaStreamPerThread`` = 2), whatever CuPy's own current
stream is, so cuBLAS reads operands after the kernels that wrote them and later kernels
read its result after it: no synchronization is needed, and none is made.  Our interface
carries no ``stream`` key, so ``cupy.asarray`` does not synchronize either.  The memory is
numba-cuda's allocation in the device's primary context, the context CuPy's runtime API
uses.  CuPy's own temporaries (the contiguous copies above, pointer arrays of broadcast
batches, cuBLAS workspace) come from CuPy's memory pool, in use on the same stream.

Without CuPy (``import cupy`` fails or ``cupy.cuda.is_available()`` is false), in the
simulator (its arrays are host memory: CuPy could not read them), with
``DYNGRAPH_CUDA_BLAS=tile``, for dtypes cuBLAS does not take here, and for empty
products, the tiled kernel runs.  Shapes, dtypes and errors are the same either way
(checked before this module by the op); values differ in the last bits (cuBLAS sums in
another order, as PyTorch's do).
"""

from __future__ import annotations

import contextlib
import os
import warnings

from numba import cuda
from numba.cuda import config as _cuda_config

from . import SIMULATED, launch
from .array import CudaArray

_UNSET = object()
_CUPY = _UNSET          # the CuPy module once looked up, or None: see provider()
_STREAM = None          # (the device id, cupy.cuda.ExternalStream of numba's stream)

#: dtypes (``dtype.char``) handed to cuBLAS: float16, float32, float64
CUBLAS_DTYPES = "efd"


def provider():
    """The CuPy module when matrix products go through cuBLAS, else None (looked up once:
    see the module doc)."""
    global _CUPY
    if _CUPY is _UNSET:
        _CUPY = _load_cupy()
    return _CUPY


def _load_cupy():
    if SIMULATED or os.environ.get("DYNGRAPH_CUDA_BLAS", "").lower() == "tile":
        return None
    try:
        import cupy
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001 - a broken CuPy install: say so, use the kernel
        warnings.warn(f"CuPy failed to import ({type(exc).__name__}: {exc}); CUDA matrix "
                      f"products use dyngraph's tiled GEMM kernel", RuntimeWarning,
                      stacklevel=3)
        return None
    try:
        ok = bool(cupy.cuda.is_available())
    except Exception:  # noqa: BLE001
        ok = False
    return cupy if ok else None


def numba_stream_ptr() -> int:
    """The CUDA stream handle numba-cuda's stream-0 launches run on: ``cudaStreamPerThread``
    (2) when per-thread default streams are configured, else ``cudaStreamLegacy`` (1)."""
    ptds = os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0") not in ("", "0")
    if ptds or getattr(_cuda_config, "CUDA_PER_THREAD_DEFAULT_STREAM", 0):
        return 2
    return 1


@contextlib.contextmanager
def _on_our_stream(cp):
    """CuPy's current device and stream are numba-cuda's for the block (see the doc)."""
    global _STREAM
    if _STREAM is None:
        dev = getattr(cuda.get_current_device(), "id", 0)   # (the simulator's has none)
        with cp.cuda.Device(dev):
            _STREAM = (dev, cp.cuda.ExternalStream(numba_stream_ptr()))
    dev, stream = _STREAM
    with cp.cuda.Device(dev), stream:
        yield


def gemm(a3: CudaArray, b3: CudaArray, bias: CudaArray | None = None) -> CudaArray:
    """``a3 @ b3`` for (B|1, M, K) and (B|1, K, N) float views of one dtype (a batch of 1,
    or of stride 0, is broadcast), + ``bias`` over N: a new contiguous (B, M, N) array."""
    cp = provider()
    B = b3.shape[0] if a3.shape[0] == 1 else a3.shape[0]   # (a batch of 1 broadcasts, to 0 too)
    M, K, N = a3.shape[1], a3.shape[2], b3.shape[2]
    if cp is None or a3.dtype.char not in CUBLAS_DTYPES or not (B and M and N and K):
        return launch.gemm_tile(a3, b3, bias)
    out = CudaArray.empty((B, M, N), a3.dtype)
    a, b, c = _operands(a3, b3, out)
    with _on_our_stream(cp):
        cp.matmul(cp.asarray(a), cp.asarray(b), out=cp.asarray(c))
    if bias is not None:
        launch.run_core(("t0 = a0 + a1",), ["t0"], [out, bias], [out.dtype], out.shape,
                        "linear's bias", outs=[out])
    return out


def _shared(x3: CudaArray) -> bool:
    """Whether the batch of the 3-D view ``x3`` is one matrix (size 1 or stride 0)."""
    return x3.shape[0] == 1 or x3.estrides[0] == 0


def _operands(a3: CudaArray, b3: CudaArray, out: CudaArray) -> tuple:
    """The views handed to ``cupy.matmul``: a shared batch as its 2-D matrix (CuPy
    broadcasts it), a batched ``a3`` against a shared ``b3`` folded to (B*M, K) @ (K, N)
    when its rows merge, all-2-D products as 2-D (``cupy.dot``'s transpose flags)."""
    B, M, N = out.shape
    sa, sb = _shared(a3), _shared(b3)
    if sb and not sa:
        try:
            flat = a3.reshape((B * M, a3.shape[2]))
        except ValueError:
            flat = None
        if flat is not None:
            return flat, b3.basic_index((0,)), out.reshape((B * M, N))
    if B == 1:
        return a3.basic_index((0,)), b3.basic_index((0,)), out.basic_index((0,))
    a = a3.basic_index((0,)) if sa and not sb else a3
    b = b3.basic_index((0,)) if sb else b3
    return a, b, out
