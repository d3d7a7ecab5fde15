"""NumPy's own BLAS, called from native code: :func:`matmul` is ``np.matmul`` of two float
matrices inside ``@njit`` code, with the same library call NumPy makes.

Why
    Numba's ``np.dot`` calls SciPy's BLAS.  SciPy's wheel bundles its own OpenBLAS, built
    apart from NumPy's: for the main example's products it is up to 25% slower here (a
    transposed operand: 9.8 against 8.0 µs) and rounds differently from it.  Eager runs
    ``np.matmul``, so native code that calls the very ``cblas_?gemm`` NumPy calls, with
    NumPy's arguments, computes eager's products bit for bit at NumPy's speed (the main
    example's whole compiled step: 49 -> 41 µs).

How
    NumPy's BLAS is found from its build configuration (``numpy.show_config``): the
    ``scipy-openblas`` wheels export ``scipy_cblas_sgemm`` (with a ``64_`` suffix when
    built with 64-bit integers) from the library bundled beside NumPy.  Its address is
    registered with LLVM under a fixed name (``llvmlite.binding.add_symbol``), and the
    njit code calls that name (``numba.types.ExternalFunction``): the compiled code holds
    no address, so it is cached on disk like any other and linked again in each process
    that imports this module.  Where NumPy's BLAS is not found (another build of NumPy),
    :data:`AVAILABLE` is False and :func:`matmul` is ``np.dot`` (SciPy's BLAS).

Which call
    NumPy's ``matmul`` loop (``numpy/_core/src/umath/matmul.c.src``) calls ``cblas_?gemm``
    in row-major order, each operand transposed or not by its layout, when no dimension
    is 1, and ``cblas_?syrk`` (then copies the upper triangle down) when the operands are
    one matrix and its transpose.  Where a dimension is 1 it calls ``cblas_?dot`` for a
    row times a column (its sum starting from a double ``0.0``), its own loop for an
    inner dimension of 1 (``0 + a b``), and ``cblas_?gemv`` for a vector times a matrix
    or a matrix times a vector (column-major when the matrix's rows have unit stride).
    :func:`matmul` makes each of those calls in those cases, so native code never
    reaches Numba's ``np.dot`` (SciPy's BLAS, imported at its first call: ~0.4 s) but
    for strides BLAS cannot take, where NumPy runs its own loops.
"""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

_ROW_MAJOR, _NO_TRANS, _TRANS, _UPPER = 101, 111, 112, 121


def _numpy_blas():
    """(library path, symbol suffix, 64-bit integers) of the BLAS NumPy calls, or None."""
    try:
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:  # noqa: BLE001 - an older NumPy, or another layout of the dict
        return None
    if cfg.get("name") not in ("scipy-openblas", "scipy-openblas64") or not cfg.get("found"):
        return None
    wide = "USE64BITINT" in str(cfg.get("openblas configuration", "")) or \
        cfg.get("name") == "scipy-openblas64"
    here = os.path.dirname(np.__file__)
    for pattern in (os.path.join(os.path.dirname(here), "numpy.libs", "*openblas*"),
                    os.path.join(here, ".dylibs", "*openblas*")):
        for path in sorted(glob.glob(pattern)):
            return path, "64_" if wide else "", wide
    return None


def _register() -> bool:
    found = _numpy_blas()
    if found is None:
        return False
    path, suffix, _ = found
    try:
        lib = ctypes.CDLL(path)  # the library NumPy loaded: the same handle
        import llvmlite.binding as llvm
        for kind in "sd":
            for routine in ("gemm", "syrk", "gemv", "dot"):
                fn = getattr(lib, f"scipy_cblas_{kind}{routine}{suffix}")
                llvm.add_symbol(f"dyngraph_cblas_{kind}{routine}",
                                ctypes.cast(fn, ctypes.c_void_p).value)
    except (OSError, AttributeError):
        return False
    return True


#: whether native code calls NumPy's BLAS (else :func:`matmul` is Numba's ``np.dot``)
AVAILABLE = _register()
_WIDE = AVAILABLE and _numpy_blas()[2]

import numba  # noqa: E402  (after the symbols exist: a cached function links them)
from numba import types as _nt  # noqa: E402

_int = _nt.int64 if _WIDE else _nt.int32


def _gemm_type(real):
    i32, p = _nt.int32, _nt.intp
    return _nt.void(i32, i32, i32, _int, _int, _int, real, p, _int, p, _int, real, p, _int)


def _syrk_type(real):
    i32, p = _nt.int32, _nt.intp
    return _nt.void(i32, i32, i32, _int, _int, real, p, _int, real, p, _int)


def _gemv_type(real):
    i32, p = _nt.int32, _nt.intp
    return _nt.void(i32, i32, _int, _int, real, p, _int, p, _int, real, p, _int)


def _dot_type(real):
    p = _nt.intp
    return real(_int, p, _int, p, _int)


_sgemm = _nt.ExternalFunction("dyngraph_cblas_sgemm", _gemm_type(_nt.float32))
_dgemm = _nt.ExternalFunction("dyngraph_cblas_dgemm", _gemm_type(_nt.float64))
_ssyrk = _nt.ExternalFunction("dyngraph_cblas_ssyrk", _syrk_type(_nt.float32))
_dsyrk = _nt.ExternalFunction("dyngraph_cblas_dsyrk", _syrk_type(_nt.float64))
_sgemv = _nt.ExternalFunction("dyngraph_cblas_sgemv", _gemv_type(_nt.float32))
_dgemv = _nt.ExternalFunction("dyngraph_cblas_dgemv", _gemv_type(_nt.float64))
_sdot = _nt.ExternalFunction("dyngraph_cblas_sdot", _dot_type(_nt.float32))
_ddot = _nt.ExternalFunction("dyngraph_cblas_ddot", _dot_type(_nt.float64))
_COL_MAJOR = 102


@numba.njit(cache=True, nogil=True)
def _layout(a):
    """(transposed flag, leading dimension) of a 2-D operand as NumPy's matmul picks them,
    or (0, 0) when it is neither C- nor F-contiguous by rows/columns."""
    item = a.itemsize
    rows, cols = a.shape
    s0, s1 = a.strides
    if s1 == item and s0 % item == 0 and s0 // item >= cols:
        return _NO_TRANS, s0 // item
    if s0 == item and s1 % item == 0 and s1 // item >= rows:
        return _TRANS, s1 // item
    return 0, 0


@numba.njit(cache=True, nogil=True)
def _step(stride, item):
    """A vector's BLAS increment (NumPy's ``blas_stride``), or 0 when BLAS cannot take it."""
    return stride // item if stride > 0 and stride % item == 0 else 0


@numba.njit(cache=True, nogil=True)
def _special(a, b, ta, lda, tb, ldb):
    """NumPy's matmul where a dimension is 1 (``matmul.c.src``'s special cases, in its
    order): a row times a column by ``dot`` (its sum starts at a double 0.0), a product
    over ``k == 1`` by its own loop (``0 + a b``), a vector times a matrix or a matrix
    times a vector by ``gemv``; a (0, 0) array where it would take another loop."""
    m, k = a.shape
    n = b.shape[1]
    item = a.itemsize
    if m == 1 and n == 1:
        ia, ib = _step(a.strides[1], item), _step(b.strides[0], item)
        if ia == 0 or ib == 0:
            return np.empty((0, 0), a.dtype)
        out = np.empty((1, 1), a.dtype)
        if item == 4:
            out[0, 0] = np.float64(0.0) + np.float64(_sdot(k, a.ctypes.data, ia,
                                                            b.ctypes.data, ib))
        else:
            out[0, 0] = 0.0 + _ddot(k, a.ctypes.data, ia, b.ctypes.data, ib)
        return out
    if k == 1:
        out = np.zeros((m, n), a.dtype)
        for i in range(m):
            for j in range(n):
                out[i, j] += a[i, 0] * b[0, j]
        return out
    if m == 1:   # y = B^T x, B seen as the (n, k) matrix of b's columns
        mat, tm, ld = b, tb, ldb
        x, ix, rows, cols = a, _step(a.strides[1], item), n, k
    else:        # y = A x
        mat, tm, ld = a, ta, lda
        x, ix, rows, cols = b, _step(b.strides[0], item), m, k
    if tm == 0 or ix == 0:
        return np.empty((0, 0), a.dtype)
    # NumPy's gemv: column-major with the rows' stride when the matrix (rows, cols) has
    # unit column stride, else row-major with the columns'; transposed either way
    if m == 1:
        order = _COL_MAJOR if tm == _TRANS else _ROW_MAJOR
    else:
        order = _COL_MAJOR if tm == _NO_TRANS else _ROW_MAJOR
    out = np.empty((m, n), a.dtype)
    if item == 4:
        _sgemv(order, _TRANS, cols, rows, np.float32(1.0), mat.ctypes.data, ld,
               x.ctypes.data, ix, np.float32(0.0), out.ctypes.data, 1)
    else:
        _dgemv(order, _TRANS, cols, rows, 1.0, mat.ctypes.data, ld, x.ctypes.data, ix,
               0.0, out.ctypes.data, 1)
    return out


def _matmul_numpy_blas(a, b):
    """``np.matmul(a, b)`` of two float32/float64 matrices (C or F contiguous), computed by
    the BLAS call NumPy's matmul makes (module docstring)."""
    m, k = a.shape
    n = b.shape[1]
    ta, lda = _layout(a)
    tb, ldb = _layout(b)
    if m == 0 or n == 0 or k == 0:
        return np.zeros((m, n), a.dtype)   # NumPy's own loop: sums of nothing
    if m == 1 or n == 1 or k == 1:
        out = _special(a, b, ta, lda, tb, ldb)
        if out.shape[0] == m:
            return out
        return np.dot(a, b)   # strides BLAS cannot take: NumPy's own loop (rare)
    if ta == 0 or tb == 0:
        return np.dot(a, b)
    out = np.empty((m, n), a.dtype)
    if a.ctypes.data == b.ctypes.data and m == n and ta != tb and \
            a.strides[0] == b.strides[1] and a.strides[1] == b.strides[0]:
        # a matrix times its own transpose: NumPy's syrk fills the upper triangle
        if a.itemsize == 4:
            _ssyrk(_ROW_MAJOR, _UPPER, ta, n, k, np.float32(1.0), a.ctypes.data, lda,
                   np.float32(0.0), out.ctypes.data, n)
        else:
            _dsyrk(_ROW_MAJOR, _UPPER, ta, n, k, 1.0, a.ctypes.data, lda, 0.0,
                   out.ctypes.data, n)
        for i in range(n):
            for j in range(i + 1, n):
                out[j, i] = out[i, j]
        return out
    if a.itemsize == 4:  # float32 (the dtype itself does not compare in njit code)
        _sgemm(_ROW_MAJOR, ta, tb, m, n, k, np.float32(1.0), a.ctypes.data, lda,
               b.ctypes.data, ldb, np.float32(0.0), out.ctypes.data, n)
    else:
        _dgemm(_ROW_MAJOR, ta, tb, m, n, k, 1.0, a.ctypes.data, lda,
               b.ctypes.data, ldb, 0.0, out.ctypes.data, n)
    return out


def _matmul_scipy_blas(a, b):
    """``np.dot``: Numba's matrix product (SciPy's BLAS), where NumPy's is not found."""
    return np.dot(a, b)


matmul = numba.njit(cache=True, nogil=True)(
    _matmul_numpy_blas if AVAILABLE else _matmul_scipy_blas)


@numba.njit(cache=True, nogil=True)
def matmul_stack(a, b, out):
    """``out[i] = matmul(a[i], b[i])`` over stacks of matrices (``np.matmul``'s loop: one
    product per item).  A helper compiled once per layout, so that a trace calling it
    does not compile its array assignments (Numba's are slow to compile)."""
    for i in range(out.shape[0]):
        out[i] = matmul(a[i], b[i])


@numba.njit(cache=True, nogil=True)
def matmul_left(a, b, out):
    """``out[i] = matmul(a, b[i])``: one matrix times each matrix of a stack."""
    for i in range(out.shape[0]):
        out[i] = matmul(a, b[i])

