"""``eager.linalg``: PyTorch's ``torch.linalg`` functions that eager has so far —
``cholesky``, ``cholesky_ex``, ``solve_triangular`` (batched, differentiable) — and
``LinAlgError``."""

from __future__ import annotations

from .dispatch import dispatch
from .dtypes import int32
from .factories import from_numpy, zeros, zeros_like
from .fn.args import as_tensor_arg
from .ops import decomp as _d
from .ops.decomp import LinAlgError
from .tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "solve_triangular"]


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """Lower-triangular ``L`` with ``A = L L^T`` (``upper=True``: ``L^T``); ``A`` symmetric
    positive-definite, only its lower triangle is read.  Raises :class:`LinAlgError`
    naming the leading minor that is not positive-definite."""
    return dispatch(_d.Cholesky, as_tensor_arg(A), upper=bool(upper))


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """``(L, info)``: ``info`` (int32, one per matrix) is 0 where the factorization
    succeeded, else the order of the first leading minor that is not positive-definite
    (``L`` is then zeros)."""
    A = as_tensor_arg(A)
    try:
        return cholesky(A, upper=upper), zeros(tuple(A.shape[:-2]), dtype=int32)
    except LinAlgError:
        if check_errors:
            raise
    return zeros_like(A), from_numpy(_d.first_bad_minor(A._data))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """``X`` with ``A X = B`` (``left=True``) or ``X A = B``; ``A`` upper or lower
    triangular (the other triangle is not read); batch dimensions broadcast."""
    return dispatch(_d.SolveTriangular, as_tensor_arg(A), as_tensor_arg(B), upper=bool(upper),
                    left=bool(left), unitriangular=bool(unitriangular))
