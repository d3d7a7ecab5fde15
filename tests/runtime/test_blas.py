"""runtime.cpu.blas: native code's matrix product is ``np.matmul``'s, bit for bit, for
every layout a trace hands it (NumPy's own BLAS call where NumPy makes it, ``np.dot``
where NumPy calls gemv or syrk instead)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from runtime.cpu import blas


@numba.njit
def _plain(a, b):
    return blas.matmul(a, b)


@numba.njit
def _a_t(a, b):
    return blas.matmul(a.T, b)


@numba.njit
def _b_t(a, b):
    return blas.matmul(a, b.T)


@numba.njit
def _both_t(a, b):
    return blas.matmul(a.T, b.T)


_LAYOUTS = {"nn": (_plain, lambda a, b: a @ b, False, False),
            "tn": (_a_t, lambda a, b: a.T @ b, True, False),
            "nt": (_b_t, lambda a, b: a @ b.T, False, True),
            "tt": (_both_t, lambda a, b: a.T @ b.T, True, True)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("m, k, n", [(100, 64, 64), (100, 2, 64), (64, 100, 2), (7, 13, 5),
                                     (1, 8, 9), (9, 8, 1), (3, 0, 4)])
def test_matmul_equals_numpy_bit_for_bit(dtype, layout, m, k, n):
    fn, ref, ta, tb = _LAYOUTS[layout]
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    got, want = fn(a, b), ref(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)


@pytest.mark.regression("a @ a.T went to np.dot (gemm) while NumPy calls syrk: other bits")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k", [(20, 30), (5, 784), (100, 2)])
def test_a_matrix_times_its_own_transpose_equals_numpy(dtype, m, k):
    """NumPy computes ``a @ a.T`` and ``a.T @ a`` with syrk: so does matmul."""
    a = np.random.default_rng(m + k).standard_normal((m, k)).astype(dtype)
    assert np.array_equal(_b_t(a, a), a @ a.T)
    assert np.array_equal(_a_t(a, a), a.T @ a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("m, k, n", [(1, 784, 256), (1, 37, 129), (256, 784, 1), (1, 1000, 1),
                                     (64, 1, 64), (1, 1, 64), (64, 1, 1), (1, 1, 1),
                                     (1, 2, 3), (3, 2, 1)])
def test_products_with_a_dimension_of_one_equal_numpy(dtype, layout, m, k, n):
    """Vector-matrix, matrix-vector, dot and outer products (batch-1 ``Linear``, a GRU cell on
    one sequence, the last steps of a packed LSTM) in every layout: the gemv, dot and loop
    NumPy's matmul picks, bit for bit (signed zeros included)."""
    fn, ref, ta, tb = _LAYOUTS[layout]
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    a.flat[::3] = 0.0
    b.flat[1::4] = -0.0
    got, want = fn(a, b), ref(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_strided_vector_times_a_matrix_equals_numpy(dtype):
    """A row of a matrix read with a stride (a column of a C array, as a (1, k) matrix)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 5)).astype(dtype)[:, 1:2].T   # (1, 6), stride 5 items
    b = rng.standard_normal((6, 4)).astype(dtype)
    assert np.array_equal(_plain(a, b), a @ b)
    at = np.ascontiguousarray(a.T)
    assert np.array_equal(_a_t(at, b), at.T @ b)


def test_numpy_blas_is_found_on_numpys_wheels():
    """The wheels CI installs bundle scipy-openblas: native code must not silently fall
    back to SciPy's BLAS there."""
    cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    if cfg.get("name", "").startswith("scipy-openblas"):
        assert blas.AVAILABLE
