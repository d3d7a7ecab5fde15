"""CUDA matrix products through :mod:`runtime.cuda.blas`: the cuBLAS route (CuPy) against the
tiled GEMM kernel, exercised in the simulator with NumPy standing in for CuPy on the
simulator's host-backed device arrays, and on a GPU through CuPy itself with its calls
recorded; and the fallback to the kernel where CuPy is absent."""

from __future__ import annotations

import contextlib
import sys
import types

import numpy as np
import pytest

import eager
from runtime.cuda import SIMULATED, blas, launch
from runtime.cuda.array import CudaArray


class FakeCupy(types.ModuleType):
    """The slice of CuPy that :mod:`runtime.cuda.blas` uses, on NumPy: ``asarray`` of a
    :class:`CudaArray` is a NumPy view of the simulator's memory with the view's shape and
    strides (what ``__cuda_array_interface__`` describes: zero-copy), ``matmul(a, b,
    out=)`` follows ``cupy.matmul``'s rules for ``out`` and records what it was given."""

    def __init__(self):
        super().__init__("cupy")
        self.calls = []
        self.streams = []
        fake = self

        class ExternalStream:
            def __init__(self, ptr, device_id=-1):
                self.ptr = ptr

            def __enter__(self):
                fake.streams.append(self.ptr)
                return self

            def __exit__(self, *exc):
                fake.streams.append(None)

        self.cuda = types.SimpleNamespace(ExternalStream=ExternalStream,
                                          Device=lambda dev: contextlib.nullcontext(),
                                          is_available=lambda: True)

    @staticmethod
    def asarray(x):
        assert isinstance(x, CudaArray)
        mem = x.base._ary            # the simulator's device array is a NumPy array
        return np.lib.stride_tricks.as_strided(mem[x.offset:], x.shape, x.strides)

    def matmul(self, a, b, out=None):
        assert self.streams and self.streams[-1] is not None, "called off numba's stream"
        assert out is not None and out.flags.c_contiguous and out.dtype == a.dtype
        assert out.shape == np.matmul(np.zeros(a.shape), np.zeros(b.shape)).shape
        self.calls.append({"a": a, "b": b, "out": out})
        np.matmul(a, b, out=out)
        return out


class RecordedCupy(types.ModuleType):
    """On a GPU: CuPy itself, each ``matmul`` recorded with the stream it ran on and held
    to the same rules for ``out`` as :class:`FakeCupy`."""

    def __init__(self, cp):
        super().__init__("cupy")
        self.cp, self.cuda = cp, cp.cuda
        self.calls, self.streams = [], []

    def asarray(self, x):
        assert isinstance(x, CudaArray)
        return self.cp.asarray(x)

    def matmul(self, a, b, out=None):
        self.streams.append(self.cp.cuda.get_current_stream().ptr)
        assert out is not None and out.flags.c_contiguous and out.dtype == a.dtype
        self.calls.append({"a": a, "b": b, "out": out})
        return self.cp.matmul(a, b, out=out)


def _in_memory_of(arr, x: CudaArray) -> bool:
    """Whether the array ``arr`` handed to (fake) CuPy lies in the device memory of ``x``."""
    if SIMULATED:
        return np.shares_memory(arr, x.base._ary)
    lo = x.base.__cuda_array_interface__["data"][0]
    return lo <= arr.data.ptr < lo + x.base.size * x.base.dtype.itemsize


def _cublas_takes_without_copy(x) -> bool:
    """Whether cupy.matmul hands ``x`` to cuBLAS as it is: a C- or F-contiguous 2-D
    matrix (cupy.dot's transpose flags), or a C-contiguous batch."""
    if x.ndim == 2:
        return x.flags.c_contiguous or x.flags.f_contiguous
    return x.flags.c_contiguous


@pytest.fixture
def fake_cupy(monkeypatch):
    """NumPy standing in for CuPy in the simulator; CuPy itself, recorded, on a GPU."""
    fake = FakeCupy() if SIMULATED else RecordedCupy(pytest.importorskip("cupy"))
    monkeypatch.setattr(blas, "_CUPY", fake)
    monkeypatch.setattr(blas, "_STREAM", None)
    return fake


def _dev(x):
    return CudaArray.from_host(np.ascontiguousarray(x))


def _tile(a3, b3, bias=None):
    return launch.gemm_tile(a3, b3, bias).to_host()


def _check(fake, a3, b3, bias=None, dtype=np.float32):
    n_calls = len(fake.calls)
    got = blas.gemm(a3, b3, bias)
    assert len(fake.calls) == n_calls + 1                    # cuBLAS's route was taken
    call = fake.calls[-1]
    # the result was written by matmul's out= into our block: no copy after
    assert _in_memory_of(call["out"], got)
    assert got.shape == (max(a3.shape[0], b3.shape[0]), a3.shape[1], b3.shape[2])
    assert got.dtype == dtype and got.is_contiguous
    want = _tile(a3, b3, bias)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.to_host(), want, rtol=tol, atol=tol)
    return call


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_2d_products_and_transposes_reach_cublas_without_copies(fake_cupy, dtype):
    rng = np.random.default_rng(0)
    a = _dev(rng.standard_normal((5, 3)).astype(dtype))
    b = _dev(rng.standard_normal((3, 6)).astype(dtype))
    w = _dev(rng.standard_normal((6, 3)).astype(dtype))       # linear's (out, in) weight
    cases = [(a, b), (a, w.transpose((1, 0))),                 # x @ W.T
             (b.transpose((1, 0)), a.transpose((1, 0)))]       # both transposed (grads)
    for x, y in cases:
        call = _check(fake_cupy, x.unsqueeze((0,)), y.unsqueeze((0,)), dtype=dtype)
        assert call["a"].ndim == call["b"].ndim == 2
        assert _cublas_takes_without_copy(call["a"]) and _cublas_takes_without_copy(call["b"])
        assert _in_memory_of(call["a"], x)                     # the operand itself
        assert _in_memory_of(call["b"], y)
    assert set(p for p in fake_cupy.streams if p is not None) == {blas.numba_stream_ptr()}


def test_batched_broadcast_and_folded_products(fake_cupy):
    rng = np.random.default_rng(1)
    a = _dev(rng.standard_normal((3, 4, 5)).astype(np.float32))
    b = _dev(rng.standard_normal((3, 5, 2)).astype(np.float32))
    w = _dev(rng.standard_normal((5, 2)).astype(np.float32))
    m = _dev(rng.standard_normal((4, 5)).astype(np.float32))
    call = _check(fake_cupy, a, b)                                    # bmm
    assert call["a"].shape == (3, 4, 5) and call["out"].shape == (3, 4, 2)
    # a shared weight against a batch: one (12, 5) @ (5, 2) product
    call = _check(fake_cupy, a, w.unsqueeze((0,)))
    assert call["a"].shape == (12, 5) and call["b"].shape == (5, 2)
    assert call["out"].shape == (12, 2)
    # a shared left matrix (batch of stride 0) against a batch: CuPy broadcasts the 2-D one
    call = _check(fake_cupy, m.unsqueeze((0,)).broadcast_to((3, 4, 5)), b)
    assert call["a"].shape == (4, 5) and call["b"].shape == (3, 5, 2)
    # a batch whose rows do not merge (transposed matrices) stays batched
    at = _dev(rng.standard_normal((3, 5, 4)).astype(np.float32)).transpose((0, 2, 1))
    call = _check(fake_cupy, at, w.unsqueeze((0,)))
    assert call["a"].shape == (3, 4, 5) and call["b"].shape == (5, 2)


def test_linear_bias_and_eager_ops_route_through_blas(fake_cupy):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    bdev = _dev(bias)
    xd, wd = _dev(x.reshape(6, 4)), _dev(w)
    _check(fake_cupy, xd.unsqueeze((0,)), wd.transpose((1, 0)).unsqueeze((0,)), bdev)
    n = len(fake_cupy.calls)
    tx, tw, tb = (eager.tensor(v, device="cuda", requires_grad=True) for v in (x, w, bias))
    y = eager.nn.functional.linear(tx, tw, tb)
    (y * y).sum().backward()
    q = eager.tensor(x, device="cuda")
    z = q @ q.transpose(1, 2)                                  # batched, a transposed view
    assert len(fake_cupy.calls) >= n + 4       # forward, two gradient products, q @ q.T
    cx, cw, cb = (eager.tensor(v, requires_grad=True) for v in (x, w, bias))
    cy = eager.nn.functional.linear(cx, cw, cb)
    (cy * cy).sum().backward()
    np.testing.assert_allclose(y.detach().cpu().numpy(), cy.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    for d, c in ((tx, cx), (tw, cw), (tb, cb)):
        np.testing.assert_allclose(d.grad.cpu().numpy(), c.grad.numpy(), rtol=1e-4,
                                   atol=1e-4)
    np.testing.assert_allclose(z.cpu().numpy(), x @ x.transpose(0, 2, 1), rtol=1e-5,
                               atol=1e-5)


def test_empty_products_and_other_dtypes_use_the_kernel(fake_cupy):
    a = CudaArray.empty((1, 3, 0), np.float32)
    b = CudaArray.empty((1, 0, 2), np.float32)
    got = blas.gemm(a, b)
    assert not fake_cupy.calls
    np.testing.assert_array_equal(got.to_host(), np.zeros((1, 3, 2), np.float32))


def _spy_tile(monkeypatch):
    used = []
    real = launch.gemm_tile

    def spy(*args):
        used.append(1)
        return real(*args)
    monkeypatch.setattr(launch, "gemm_tile", spy)
    return used


def test_without_cupy_the_tiled_kernel_runs(monkeypatch):
    monkeypatch.setattr(blas, "SIMULATED", False)              # as on a real GPU
    monkeypatch.setitem(sys.modules, "cupy", None)             # `import cupy` fails
    monkeypatch.setattr(blas, "_CUPY", blas._UNSET)
    monkeypatch.delenv("DYNGRAPH_CUDA_BLAS", raising=False)
    assert blas.provider() is None
    used = _spy_tile(monkeypatch)
    a = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    b = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    got = blas.gemm(_dev(a), _dev(b))
    assert used
    np.testing.assert_allclose(got.to_host(), a @ b)


def test_provider_is_cupy_only_on_a_real_gpu(monkeypatch):
    fake = FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.delenv("DYNGRAPH_CUDA_BLAS", raising=False)
    for simulated, env, want in ((False, None, fake), (True, None, None),
                                 (False, "tile", None)):
        monkeypatch.setattr(blas, "SIMULATED", simulated)
        monkeypatch.setattr(blas, "_CUPY", blas._UNSET)
        if env:
            monkeypatch.setenv("DYNGRAPH_CUDA_BLAS", env)
        assert blas.provider() is want, (simulated, env)
    fake.cuda.is_available = lambda: False                     # CuPy without a device
    monkeypatch.delenv("DYNGRAPH_CUDA_BLAS")
    monkeypatch.setattr(blas, "SIMULATED", False)
    monkeypatch.setattr(blas, "_CUPY", blas._UNSET)
    assert blas.provider() is None


def test_stream_follows_numba_per_thread_default_stream(monkeypatch):
    monkeypatch.delenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", raising=False)
    monkeypatch.setattr(blas._cuda_config, "CUDA_PER_THREAD_DEFAULT_STREAM", 0,
                        raising=False)
    assert blas.numba_stream_ptr() == 1                        # cudaStreamLegacy
    monkeypatch.setenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "1")
    assert blas.numba_stream_ptr() == 2                        # cudaStreamPerThread


def test_a_batch_of_one_against_an_empty_batch_gives_an_empty_batch():
    # max(1, 0) made the product a batch of 1 read from the empty operand's memory
    one = CudaArray.from_host(np.ones((1, 2, 3), np.float32))
    none = CudaArray.from_host(np.ones((0, 3, 4), np.float32))
    assert launch.gemm_tile(one, none).shape == (0, 2, 4)
    assert blas.gemm(one, none).shape == (0, 2, 4)
    assert blas.gemm(none.transpose((0, 2, 1)), one.transpose((0, 2, 1))).shape == (0, 4, 2)
