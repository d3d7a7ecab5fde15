"""Matrix factorizations with PyTorch's signatures: the ``torch.linalg`` functions
(``linalg_cholesky``, ``linalg_cholesky_ex``, ``linalg_qr``, ``linalg_svd``,
``linalg_svdvals``, ``linalg_eigh``, ``linalg_eigvalsh``, public as
``eager.linalg.cholesky``...) and the older top-level forms ``eager.cholesky``,
``eager.qr``, ``eager.svd`` (also Tensor methods).

Batched over leading dimensions and differentiable (see :mod:`eager.ops.decomp`).  The
several results of ``qr``/``svd``/``eigh`` are cut out of one packed op result, as new
tensors.
"""

from __future__ import annotations

import warnings

from .. import return_types as _rt
from ..dispatch import T, dispatch
from ..dtypes import is_float as _isf
from ..dtypes import scalar_name
from ..ops import decomp as _d
from ..ops import factory as _f
from ..tensor import Tensor
from .args import as_tensor_arg
from .shape import transpose

__all__ = ["cholesky", "qr", "svd"]


def _matrix(A, op: str) -> Tensor:
    """``A`` as a tensor, with PyTorch's error when it is not a batch of float matrices."""
    A = as_tensor_arg(A)
    _d.check_float_matrix(A._data, op)
    return A


def _batch(A: Tensor) -> tuple:
    return tuple(A._data.shape[:-2])


# -- Cholesky ------------------------------------------------------------------------------

def linalg_cholesky(A, *, upper: bool = False) -> Tensor:
    """Lower-triangular ``L`` with ``A = L L^T`` (``upper=True``: ``L^T``); ``A`` symmetric
    positive-definite, only its lower triangle is read.  Raises :class:`LinAlgError`
    naming the leading minor that is not positive-definite."""
    return dispatch(_d.Cholesky, as_tensor_arg(A), upper=bool(upper))


def linalg_cholesky_ex(A, *, upper: bool = False, check_errors: bool = False):
    """``(L, info)``: ``info`` (int32, one per matrix) is 0 where the factorization
    succeeded, else the order of the first leading minor that is not positive-definite
    (``L`` is then zeros)."""
    A = as_tensor_arg(A)
    L = dispatch(_d.Cholesky, A, upper=bool(upper), check=bool(check_errors))
    return _rt.linalg_cholesky_ex(L, dispatch(_d.CholeskyInfo, A))


def cholesky(input, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated there in favour of ``linalg.cholesky``)."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    return linalg_cholesky(input, upper=upper)


# -- QR ------------------------------------------------------------------------------------

def linalg_qr(A, mode: str = "reduced"):
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns, ``R`` upper triangular;
    ``mode``: ``'reduced'`` (``k = min(m, n)`` columns), ``'complete'`` (square ``Q``) or
    ``'r'`` (``Q`` empty, not differentiable)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    A = _matrix(A, "linalg.qr")
    m, n = A._data.shape[-2:]
    packed = dispatch(_d.Qr, A, mode=mode)
    q, r = _d.unpack(T, packed, _batch(A), _d.qr_shapes(m, n, mode), copy=True)
    if mode == "r":
        q = dispatch(_f.Full, shape=(0,), value=0, dtype=A._data.dtype)
    return _rt.linalg_qr(q, r)


def qr(input, some: bool = True):
    """``torch.qr``: ``linalg.qr`` with ``mode='reduced'`` (``some``) or ``'complete'``."""
    return _rt.qr(*linalg_qr(input, "reduced" if some else "complete"))


# -- SVD -----------------------------------------------------------------------------------

def linalg_svd(A, full_matrices: bool = True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending
    (``full_matrices=False``: ``k = min(m, n)`` singular vectors).  Gradients are
    PyTorch's; they are well defined for functions that do not depend on the signs of
    the singular vectors."""
    A = _matrix(A, "linalg.svd")
    m, n = A._data.shape[-2:]
    packed = dispatch(_d.Svd, A, full_matrices=bool(full_matrices))
    return _rt.linalg_svd(*_d.unpack(T, packed, _batch(A),
                                     _d.svd_shapes(m, n, bool(full_matrices)), copy=True))


def linalg_svdvals(A, *, driver=None) -> Tensor:
    """Singular values, descending; differentiable also where they repeat."""
    return dispatch(_d.Svdvals, _matrix(A, "linalg.svd"))


def svd(input, some: bool = True, compute_uv: bool = True):
    """``torch.svd``: ``(U, S, V)`` (``V``, not ``Vh``); ``some=False``: square ``U``,
    ``V``; ``compute_uv=False``: ``U`` and ``V`` are zero-filled."""
    A = _matrix(input, "linalg.svd")
    if not compute_uv:
        m, n = A._data.shape[-2:]
        zeros = [dispatch(_f.Full, shape=_batch(A) + (k, k), value=0, dtype=A._data.dtype)
                 for k in (m, n)]
        return _rt.svd(zeros[0], linalg_svdvals(A), zeros[1])
    u, s, vh = linalg_svd(A, full_matrices=not some)
    return _rt.svd(u, s, transpose(vh, -2, -1))


# -- symmetric eigendecomposition -----------------------------------------------------------

def _symmetric(A, UPLO: str) -> Tensor:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    A = as_tensor_arg(A)
    if not _isf(A._data.dtype):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{scalar_name(A._data.dtype)}'")
    return A


def linalg_eigh(A, UPLO: str = "L"):
    """``(eigenvalues, eigenvectors)`` of symmetric matrices, eigenvalues ascending; only
    the ``UPLO`` triangle is read."""
    A = _symmetric(A, UPLO)
    n = A._data.shape[-1]
    packed = dispatch(_d.Eigh, A, upper=UPLO == "U")
    return _rt.linalg_eigh(*_d.unpack(T, packed, _batch(A), [(n,), (n, n)], copy=True))


def linalg_eigvalsh(A, UPLO: str = "L") -> Tensor:
    """Eigenvalues of symmetric matrices, ascending; differentiable also where they
    repeat."""
    return dispatch(_d.Eigvalsh, _symmetric(A, UPLO), upper=UPLO == "U")


METHODS = ["cholesky", "qr", "svd"]
INPLACE: dict = {}
