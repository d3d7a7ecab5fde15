"""Norms with PyTorch's signatures: ``norm`` (``torch.norm``), and the ``torch.linalg``
functions ``linalg_vector_norm``, ``linalg_matrix_norm``, ``linalg_norm`` (public as
``eager.linalg.vector_norm``...).

Vector norms are one op (:class:`eager.ops.reduce.Norm`); matrix norms are compositions:
``'fro'`` the vector 2-norm over two dimensions, ``1``/``inf`` (and negatives) sums of
absolute values and a max/min, ``2``/``-2``/``'nuc'`` the largest/smallest/sum of the
singular values, so gradients are PyTorch's (ties of max/min split evenly).
"""

from __future__ import annotations

import math

from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..dtypes import scalar_name
from ..ops import elementwise as _ew
from ..ops import reduce as _red
from ..ops import shape as _shp
from ..tensor import Tensor, _wrap_dim
from .args import is_empty_dims as _is_empty_dims
from .args import is_int as _is_int
from .args import reduce_dims as _dims
from .decomp import linalg_svdvals
from .elementwise import cast

__all__ = ["norm"]


def _check_float(x: Tensor, op: str) -> None:
    if not _isf(x._data.dtype):
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(x._data.dtype)}")


def linalg_vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all when None); ``ord`` inf/-inf: max/min of
    ``|x|``, 0: the count of non-zeros.  ``dtype`` casts ``x`` first.  The gradient is 0
    where the norm is 0 (as PyTorch)."""
    p = float(ord)
    _check_float(x, "linalg.vector_norm")
    if dtype is not None:
        x = cast(x, dtype)
    dims = _dims(x, dim, "norm")
    if math.isinf(p) and x.numel() == 0:
        what = "inf" if p > 0 else "-inf"
        if dim is None or _is_empty_dims(dim):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {what} norm on an empty "
                               "tensor because the operation does not have an identity")
        shape = tuple(x.shape)
        for d in dims:
            if shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {what} norm on the "
                                   f"dimension {d} because this dimension is empty and the "
                                   "operation does not have an identity")
    return dispatch(_red.Norm, x, p=p, dim=dims, keepdim=bool(keepdim))


_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _matrix_dims(A: Tensor, dim, op: str) -> tuple:
    if _is_int(dim) or len(dim) != 2:
        got = dim if _is_int(dim) else " ".join(str(d) for d in dim)
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {got}")
    d0, d1 = (_wrap_dim(int(d), A.ndim, op) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *,
                       dtype=None) -> Tensor:
    """Matrix norm of the matrices in dimensions ``dim``: ``ord`` ``'fro'``, ``'nuc'``,
    ``inf``/``-inf`` (max/min row sum of ``|A|``), ``1``/``-1`` (column sums), ``2``/``-2``
    (largest/smallest singular value)."""
    op = "linalg.matrix_norm"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    _check_float(A, op)
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    d0, d1 = _matrix_dims(A, dim, op)
    if dtype is not None:
        A = cast(A, dtype)
    if ord == "fro":
        return linalg_vector_norm(A, 2, (d0, d1), keepdim)
    both = tuple(sorted((d0, d1)))
    if ord in ("nuc", 2, -2):
        rest = tuple(i for i in range(A.ndim) if i not in (d0, d1))
        s = linalg_svdvals(dispatch(_shp.Permute, A, dims=rest + (d0, d1)))
        last = (s.ndim - 1,)
        reduce = _red.Sum if ord == "nuc" else _red.Amax if ord == 2 else _red.Amin
        params = {"dtype": None} if ord == "nuc" else {}
        out = dispatch(reduce, s, dim=last, keepdim=False, **params)
        return dispatch(_shp.Unsqueeze, out, dims=both) if keepdim else out
    inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
    sums = dispatch(_red.Sum, dispatch(_ew.Abs, A), dim=(inner,), keepdim=True, dtype=None)
    pick = _red.Amax if ord > 0 else _red.Amin
    out = dispatch(pick, sums, dim=(outer,), keepdim=True)
    return out if keepdim else dispatch(_shp.Squeeze, out, dims=both)


def linalg_norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``torch.linalg.norm``: a vector norm when ``dim`` is one dimension (or ``A`` is 1-D
    and ``dim`` None), a matrix norm for two dimensions (or a 2-D ``A`` with ``ord``
    given); with neither ``ord`` nor ``dim``, the 2-norm of all elements."""
    if dim is not None:
        dims = (dim,) if _is_int(dim) else tuple(dim)
        if len(dims) == 1:
            if isinstance(ord, str):
                return linalg_matrix_norm(A, ord, dims, keepdim, dtype=dtype)
            return linalg_vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return linalg_matrix_norm(A, "fro" if ord is None else ord, dims, keepdim,
                                      dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dims)}")
    if ord is None:
        return linalg_vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.ndim}D.")
    if A.ndim == 2 or isinstance(ord, str):
        return linalg_matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    return linalg_vector_norm(A, ord, None, keepdim, dtype=dtype)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """``torch.norm``: the vector ``p``-norm over ``dim`` (all when None) for a number ``p``
    or ``'fro'``; ``'nuc'``: the nuclear norm of the matrices in ``dim`` (a 2-D input
    when None).  The gradient is 0 where the norm is 0 (as PyTorch)."""
    if p is None:
        p = 2.0
    if isinstance(p, str):
        if p == "nuc":
            dims = tuple(range(input.ndim)) if dim is None else dim
            return linalg_matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
        if p != "fro":
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if dim is not None and not _is_int(dim) and len(dim) > 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(str(d) for d in dim))
        p = 2.0
    return linalg_vector_norm(input, p, dim, keepdim, dtype=dtype)


METHODS = ["norm"]
INPLACE: dict = {}
