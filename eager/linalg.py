"""``eager.linalg``: PyTorch's ``torch.linalg`` namespace.

Factorizations (``cholesky``, ``cholesky_ex``, ``qr``, ``svd``, ``svdvals``, ``eigh``,
``eigvalsh``), inverses and solves (``inv``, ``inv_ex``, ``solve``, ``solve_ex``,
``solve_triangular``, ``lstsq``, ``pinv``, ``matrix_rank``), determinants (``det``,
``slogdet``), norms (``norm``, ``vector_norm``, ``matrix_norm``), products (``matmul``,
``matrix_power``, ``multi_dot``, ``cross``, ``vecdot``) and ``diagonal``: batched over
leading dimensions, differentiable with PyTorch's gradients, with its error messages
(``LinAlgError`` for singular or non-positive-definite input).  The implementations are
the ``eager.fn`` families ``decomp``, ``solve``, ``norms`` and ``linalg``.
"""

from __future__ import annotations

from .amp.autocast_mode import cast_inputs
from .fn.decomp import linalg_cholesky as cholesky
from .fn.decomp import linalg_cholesky_ex as cholesky_ex
from .fn.decomp import linalg_eigh as eigh
from .fn.decomp import linalg_eigvalsh as eigvalsh
from .fn.decomp import linalg_qr as qr
from .fn.decomp import linalg_svd as svd
from .fn.decomp import linalg_svdvals as svdvals
from .fn.elementwise import mul as _mul
from .fn.linalg import diagonal as _diagonal
from .fn.linalg import linalg_cross as cross
from .fn.linalg import matmul
from .fn.norms import linalg_matrix_norm as matrix_norm
from .fn.norms import linalg_norm as norm
from .fn.norms import linalg_vector_norm as vector_norm
from .fn.reduce import sum as _sum
from .fn.solve import det, matrix_power
from .fn.solve import linalg_inv as inv
from .fn.solve import linalg_inv_ex as inv_ex
from .fn.solve import linalg_lstsq as lstsq
from .fn.solve import linalg_matrix_rank as matrix_rank
from .fn.solve import linalg_multi_dot as multi_dot
from .fn.solve import linalg_pinv as pinv
from .fn.solve import linalg_slogdet as slogdet
from .fn.solve import linalg_solve as solve
from .fn.solve import linalg_solve_ex as solve_ex
from .fn.solve import linalg_solve_triangular as solve_triangular
from .ops.decomp import LinAlgError
from .tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "inv", "inv_ex", "lstsq", "matmul", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.linalg.diagonal``: ``torch.diagonal`` with the last two dimensions as the
    default matrix dimensions (a view)."""
    return _diagonal(A, offset, dim1, dim2)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """Dot product of vectors along ``dim`` (batch dimensions broadcast)."""
    x, y = cast_inputs("vecdot", x, y)
    return _sum(_mul(x, y), dim)
