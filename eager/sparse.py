"""``eager.sparse``: ``mm``, ``addmm``, ``sum``, ``softmax`` for the dense-backed COO
tensors of :func:`eager.sparse_coo_tensor` (see ``eager.compat``): each is the dense op."""

from __future__ import annotations

from .nn.functional import softmax as _softmax

__all__ = ["addmm", "mm", "softmax", "sum"]


def mm(mat1, mat2):
    """``mat1 @ mat2`` (gradients flow to both, as for dense tensors)."""
    return mat1 @ mat2


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    return mat * beta + (mat1 @ mat2) * alpha


def sum(input, dim=None, dtype=None):
    return input.sum() if dim is None else input.sum(dim)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype=dtype)
