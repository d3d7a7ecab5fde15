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


def test_a_matrix_times_its_own_transpose_equals_numpy():
    """NumPy computes ``a @ a.T`` with syrk: matmul leaves it to np.dot, whose values are
    then those of a product (the test checks it is not a wrong one)."""
    a = np.random.default_rng(0).standard_normal((20, 30)).astype(np.float32)
    got, want = _b_t(a, a), a @ a.T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_numpy_blas_is_found_on_numpys_wheels():
    """The wheels CI installs bundle scipy-openblas: native code must not silently fall
    back to SciPy's BLAS there."""
    cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    if cfg.get("name", "").startswith("scipy-openblas"):
        assert blas.AVAILABLE
