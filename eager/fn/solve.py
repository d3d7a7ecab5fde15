"""Inverses, solves, determinants and matrix products with PyTorch's signatures: the
``torch.linalg`` functions (``linalg_inv``, ``linalg_inv_ex``, ``linalg_solve``,
``linalg_solve_ex``, ``linalg_solve_triangular``, ``linalg_lstsq``, ``linalg_pinv``,
``linalg_matrix_rank``, ``linalg_slogdet``, ``linalg_multi_dot``; public as
``eager.linalg.inv``...) and the top-level ``det``, ``logdet``, ``slogdet``, ``inverse``,
``pinverse``, ``matrix_power`` (also Tensor methods).

Batched over leading dimensions and differentiable (see :mod:`eager.ops.solve`).
"""

from __future__ import annotations

import numpy as np

from .. import return_types as _rt
from .._state import STATE
from ..amp.autocast_mode import cast_inputs as _autocast
from ..amp.autocast_mode import suspended
from ..dispatch import T, dispatch
from ..dtypes import cpp_name, scalar_name
from ..dtypes import finfo as _finfo
from ..ops import decomp as _d
from ..ops import factory as _f
from ..ops import reduce as _red
from ..ops import solve as _s
from ..tensor import Tensor
from .args import as_tensor_arg
from .decomp import linalg_eigvalsh, linalg_svdvals
from .elementwise import abs as tensor_abs
from .elementwise import gt, maximum, mul, sub, where
from .linalg import matmul
from .shape import expand, squeeze, unsqueeze

__all__ = ["det", "inverse", "logdet", "matrix_power", "pinverse", "slogdet"]


def _batch(A: Tensor) -> tuple:
    return tuple(A._data.shape[:-2])


# -- inverse, determinant --------------------------------------------------------------------

def linalg_inv(A) -> Tensor:
    """Inverse of square matrices; a singular one raises :class:`eager.linalg.LinAlgError`
    naming the batch element and the zero pivot."""
    return dispatch(_s.Inv, as_tensor_arg(A), check=True)


def linalg_inv_ex(A, *, check_errors: bool = False):
    """``(inverse, info)``: ``info`` (int32 per matrix) is 0 or the first zero pivot of a
    singular matrix, whose inverse is NaN."""
    A = as_tensor_arg(A)
    inv = dispatch(_s.Inv, A, check=bool(check_errors))
    return _rt.linalg_inv_ex(inv, dispatch(_s.LuInfo, A))


inverse = linalg_inv


def det(A) -> Tensor:
    """Determinant (``torch.det`` and ``torch.linalg.det``); its gradient, the cofactor
    matrix, is exact for singular matrices too."""
    return dispatch(_s.Det, as_tensor_arg(A))


def linalg_slogdet(A):
    """``(sign, logabsdet)`` of the determinant (sign 0 and ``-inf`` when singular)."""
    A = as_tensor_arg(A)
    packed = dispatch(_s.Slogdet, A)
    return _rt.linalg_slogdet(*_d.unpack(T, packed, _batch(A), [(), ()], copy=True))


def slogdet(input):
    """``torch.slogdet``: as ``linalg.slogdet``."""
    return _rt.slogdet(*linalg_slogdet(input))


def logdet(input) -> Tensor:
    """``log(det(input))``: NaN for a negative determinant, ``-inf`` for zero."""
    sign, logabs = linalg_slogdet(input)
    return where(gt(0.0, sign), float("nan"), logabs)


# -- solves ------------------------------------------------------------------------------------

def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule: ``B`` is a (batch of) vector(s) if it is 1-D, or has one dimension
    less than ``A`` and ``A``'s shape without its last dimension."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_args(A, B, left: bool, op: str):
    A, B = as_tensor_arg(A), as_tensor_arg(B)
    _d.check_square(A._data, op)
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type "
                           f"{scalar_name(A._data.dtype)} and B of type "
                           f"{scalar_name(B._data.dtype)} instead")
    vector = _is_vector_rhs(A, B)
    B2 = unsqueeze(B, -1 if left else -2) if vector else B
    n = A._data.shape[-1]
    r, c = B2._data.shape[-2:]
    if (r if left else c) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {r}x{c})")
    return A, B2, vector


def linalg_solve(A, B, *, left: bool = True) -> Tensor:
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``); ``B`` a matrix, or a vector
    (PyTorch's rule); batch dimensions broadcast."""
    A, B2, vector = _solve_args(A, B, left, "linalg.solve")
    X = dispatch(_s.Solve, A, B2, left=bool(left), check=True)
    return squeeze(X, -1 if left else -2) if vector else X


def linalg_solve_ex(A, B, *, left: bool = True, check_errors: bool = False):
    """``(result, info)`` as ``solve``; a singular matrix gives NaN and its ``info``."""
    A, B2, vector = _solve_args(A, B, left, "linalg.solve")
    X = dispatch(_s.Solve, A, B2, left=bool(left), check=bool(check_errors))
    info = dispatch(_s.LuInfo, A)
    batch = tuple(X.shape[:-2])
    if tuple(info.shape) != batch:
        info = expand(info, batch)
    return _rt.linalg_solve_ex(squeeze(X, -1 if left else -2) if vector else X, info)


def linalg_solve_triangular(A, B, *, upper: bool, left: bool = True,
                            unitriangular: bool = False) -> Tensor:
    """``X`` with ``A X = B`` (``left=True``) or ``X A = B``; ``A`` upper or lower
    triangular (the other triangle is not read); batch dimensions broadcast."""
    return dispatch(_d.SolveTriangular, as_tensor_arg(A), as_tensor_arg(B), upper=bool(upper),
                    left=bool(left), unitriangular=bool(unitriangular))


# -- pseudo-inverse, rank, least squares -----------------------------------------------------

def _tolerances(A: Tensor, atol, rtol) -> tuple:
    """PyTorch's defaults: ``rtol = eps * max(m, n)`` unless ``atol > 0`` is given."""
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):
        raise TypeError("linalg: atol and rtol must be Python numbers here")
    if rtol is None:
        m, n = A._data.shape[-2:]
        rtol = 0.0 if atol is not None and atol > 0 else \
            float(_finfo(A._data.dtype).eps) * max(m, n)
    return (0.0 if atol is None else float(atol)), float(rtol)


def _no_half(A, message: str) -> None:
    """PyTorch's CPU kernel has no float16/bfloat16 version (autocast casts first)."""
    if A._data.dtype.char in "eE":
        raise RuntimeError(message)


def linalg_pinv(A, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """Moore-Penrose pseudo-inverse; singular values (``hermitian``: absolute eigenvalues)
    at most ``max(atol, rtol * largest)`` are treated as zero."""
    A = as_tensor_arg(A)
    _d.check_float_matrix(A._data, "linalg.pinv")
    _no_half(A, f"linalg.pinv: Low precision dtypes not supported. Got "
                f"{scalar_name(A._data.dtype)}")
    atol, rtol = _tolerances(A, atol, rtol)
    return dispatch(_s.Pinv, A, atol=atol, rtol=rtol, hermitian=bool(hermitian))


def pinverse(input, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv`` with ``rtol=rcond``."""
    (input,) = _autocast("pinverse", as_tensor_arg(input))
    return linalg_pinv(input, rtol=rcond)


def linalg_matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False,
                       tol=None) -> Tensor:
    """Number of singular values (``hermitian``: absolute eigenvalues) above
    ``max(atol, rtol * largest)`` (int64, one per matrix); ``tol`` is the old spelling of
    ``atol`` with ``rtol=0``."""
    (A,) = _autocast("matrix_rank", as_tensor_arg(A))
    _d.check_float_matrix(A._data, "linalg.matrix_rank")
    _no_half(A, "This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    s = tensor_abs(linalg_eigvalsh(A)) if hermitian else linalg_svdvals(A)
    last = s.ndim - 1
    top = dispatch(_red.Amax, s, dim=(last,), keepdim=True)
    cut = maximum(mul(top, rtol), atol)
    return dispatch(_red.Sum, gt(s, cut), dim=(last,), keepdim=False, dtype=None)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||`` with
    PyTorch's CPU conventions: ``driver`` (default ``'gelsy'``) decides which of ``rank``
    (not for ``'gels'``), ``singular_values`` (``'gelsd'``/``'gelss'``) and ``residuals``
    (not ``'gelsy'``; tall full-rank ``A`` only) are computed, the others are empty.  The
    solution is ``pinv(A) @ B`` (values below ``rcond`` times the largest singular value
    count as zero), differentiable in ``A`` and ``B``."""
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    A, B = as_tensor_arg(A), as_tensor_arg(B)
    if STATE.autocast is not None:  # float32-listed: cast, then no autocast inside
        A, B = _autocast("lstsq", A, B)
        with suspended():
            return linalg_lstsq(A, B, rcond, driver=driver)
    _d.check_float_matrix(A._data, "torch.linalg.lstsq")
    _no_half(A, "This function doesn't handle types other than float and double")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {scalar_name(A._data.dtype)} and "
                           f"other's dtype {scalar_name(B._data.dtype)}")
    vector = B.ndim == A.ndim - 1
    B2 = unsqueeze(B, -1) if vector else B
    m, n = A._data.shape[-2:]
    if B2.ndim < 2 or B2._data.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    rtol = float(_finfo(A._data.dtype).eps) * max(m, n) if rcond is None else float(rcond)
    X = matmul(linalg_pinv(A, rtol=rtol), B2)
    solution = squeeze(X, -1) if vector else X
    dt = A._data.dtype

    def empty(dtype):
        return dispatch(_f.Full, shape=(0,), value=0, dtype=dtype)

    rank = empty(np.int64) if driver == "gels" else linalg_matrix_rank(A, rtol=rtol)
    sv = linalg_svdvals(A) if driver in ("gelsd", "gelss") else empty(dt)
    residuals = empty(dt)
    if driver != "gelsy" and m > n and bool((rank == n).all() if driver != "gels" else True):
        r = sub(matmul(A, X), B2)
        residuals = dispatch(_red.Sum, mul(r, r), dim=(r.ndim - 2,), keepdim=False,
                             dtype=None)
        if vector:
            residuals = squeeze(residuals, -1)
    return _rt.linalg_lstsq(solution, residuals, rank, sv)


# -- products ------------------------------------------------------------------------------------

def matrix_power(A, n: int) -> Tensor:
    """``A`` multiplied with itself ``n`` times (``n = 0``: identity; ``n < 0``: powers of
    the inverse), by repeated squaring."""
    A = as_tensor_arg(A)
    op = "linalg.matrix_power"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    r, c = A._data.shape[-2:]
    if r != c:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {r} by "
                           f"{c} matrices")
    n = int(n)
    if n == 0:
        eye = dispatch(_f.Eye, n=r, m=r, dtype=A._data.dtype)
        return dispatch(_f.Full, shape=tuple(A.shape), value=0, dtype=A._data.dtype) + eye
    base = linalg_inv(A) if n < 0 else A
    n = -n if n < 0 else n
    result = None
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


def linalg_multi_dot(tensors) -> Tensor:
    """``tensors[0] @ tensors[1] @ ...`` in the cheapest order (dynamic programming on the
    shapes); the first may be 1-D (a row), the last 1-D (a column)."""
    tensors = [as_tensor_arg(t) for t in tensors]
    k = len(tensors)
    if k < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {k}")
    for i, t in enumerate(tensors):
        nd = t.ndim
        if i == 0 and nd not in (1, 2):
            raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {nd}D")
        if i == k - 1 and nd not in (1, 2):
            raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {nd}D")
        if 0 < i < k - 1 and nd != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {nd}D")
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {cpp_name(tensors[0]._data.dtype)} and tensor {i} "
                               f"{cpp_name(t._data.dtype)}")
    first_vec, last_vec = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = unsqueeze(mats[0], 0)
    if last_vec:
        mats[-1] = unsqueeze(mats[-1], -1)
    for i in range(k - 1):
        a, b = mats[i]._data.shape, mats[i + 1]._data.shape
        if a[1] != b[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    out = _chain(mats, _chain_order([m._data.shape[0] for m in mats] + [mats[-1]._data.shape[1]]))
    if first_vec:
        out = squeeze(out, 0)
    if last_vec:
        out = squeeze(out, -1)
    return out


def _chain_order(dims: list) -> list:
    """``split[i][j]``: where to split the product of matrices ``i..j`` (sizes ``dims``)."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            best = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, s
            cost[i][j] = best
    return split


def _chain(mats: list, split: list) -> Tensor:
    stack = [(0, len(mats) - 1)]
    done: dict = {}
    while stack:  # post-order over the split tree, without recursion
        i, j = stack[-1]
        if i == j:
            done[(i, j)] = mats[i]
            stack.pop()
            continue
        s = split[i][j]
        left, right = (i, s), (s + 1, j)
        todo = [p for p in (left, right) if p not in done]
        if todo:
            stack.extend(todo)
            continue
        done[(i, j)] = matmul(done[left], done[right])
        stack.pop()
    return done[(0, len(mats) - 1)]


METHODS = ["det", "inverse", "logdet", "matrix_power", "pinverse", "slogdet"]
INPLACE: dict = {}
