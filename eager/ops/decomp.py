"""Matrix decompositions and triangular solves, batched over leading dimensions and
differentiable with PyTorch's backward formulas: ``cholesky``, ``solve_triangular``,
``qr``, ``svd``/``svdvals``, ``eigh``/``eigvalsh`` (used by ``eager.linalg``, the
matrix norms and the multivariate normal distribution).

An op has one output, so a factorization with several (``qr``, ``svd``, ``eigh``) returns
its parts *packed*: each flattened into the last dimension of one array of shape
``batch + (total,)`` (:func:`pack`); the public functions cut them out again
(:func:`unpack`), and the backward receives the gradients of all parts packed the same
way.  ``svdvals``/``eigvalsh`` are ops of their own: their gradient needs no division by
gaps between singular values or eigenvalues, so it is finite for repeated ones."""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import scalar_name
from .base import OUT, Op


class LinAlgError(RuntimeError):
    """A matrix the operation cannot handle (``torch.linalg.LinAlgError``)."""


def _t(F, x):
    """Swap the last two dimensions."""
    nd = len(x.shape)
    return F.permute(x, dims=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def check_square(a: np.ndarray, op: str, name: str = "A") -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if a.dtype.kind != "f" and a.dtype.char != "E":  # bfloat16: dispatch decides
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(a.dtype)}")


def first_bad_minor(a: np.ndarray) -> np.ndarray:
    """Per matrix of the batch ``a``: 0 if it has a Cholesky factor, else the order of its
    first leading minor that is not positive-definite (``cholesky_ex``'s ``info``)."""
    flat = a.reshape((-1,) + a.shape[-2:])
    info = np.zeros(len(flat), dtype=np.int32)
    for b, m in enumerate(flat):
        try:
            np.linalg.cholesky(m)
            continue
        except np.linalg.LinAlgError:
            pass
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                info[b] = k
                break
    return info.reshape(a.shape[:-2])


def _not_pd(a: np.ndarray) -> LinAlgError:
    """PyTorch's error naming the first batch element and leading minor that fail."""
    info = first_bad_minor(a).reshape(-1)
    b = int(np.flatnonzero(info)[0]) if info.any() else 0
    where = f"(Batch element {b}): " if a.ndim > 2 else ""
    return LinAlgError(f"linalg.cholesky: {where}The factorization could not be completed "
                       f"because the input is not positive-definite (the leading minor of "
                       f"order {int(info[b])} is not positive-definite).")


def _cholesky_or_zeros(a: np.ndarray) -> np.ndarray:
    """Cholesky factors of the batch ``a``, zeros for the matrices that have none
    (``cholesky_ex`` without ``check_errors``)."""
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.zeros_like(flat)
    good = first_bad_minor(flat) == 0
    out[good] = np.linalg.cholesky(flat[good])
    return out.reshape(a.shape)


class CholeskyInfo(Op):
    """``info`` of ``cholesky_ex``: per matrix 0, or the order of the first leading minor
    that is not positive-definite (int32)."""
    differentiable = False

    def forward(a):
        check_square(a, "linalg.cholesky")
        return first_bad_minor(a)


class Cholesky(Op):
    """Lower factor ``L`` of ``A = L L^T`` (``upper``: ``L^T``); only ``A``'s lower
    triangle is read (``check=False``: zeros for matrices that are not positive-definite,
    instead of an error).  Backward (PyTorch's): ``gA = L^-T Phi(L^T gL) L^-1``, symmetric."""
    saves = (OUT,)

    def forward(a, upper=False, check=True):
        check_square(a, "linalg.cholesky")
        try:
            out = np.linalg.cholesky(a)          # reads the lower triangle only
        except np.linalg.LinAlgError:
            if check:
                raise _not_pd(a) from None
            out = _cholesky_or_zeros(a)
        return np.ascontiguousarray(np.swapaxes(out, -1, -2)) if upper else out

    def backward(F, g, saved, node):
        (L,) = saved
        if node.params.get("upper", False):
            L, g = _t(F, L), _t(F, g)
        p = F.tril(F.matmul(_t(F, L), g))
        s = F.mul(F.add(p, _t(F, F.tril(p, diagonal=-1))), 0.5)
        x = F.solve_triangular(_t(F, L), s, upper=True, left=True, unitriangular=False)
        return (F.solve_triangular(L, x, upper=False, left=False, unitriangular=False),)


def _substitute(a, b, upper, unitriangular):
    """``A X = B`` for triangular ``A`` by forward (lower) or back (upper) substitution, as
    LAPACK's trtrs: a zero on the diagonal gives inf/nan, not an error."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 dtype=np.result_type(a, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        rest = slice(i + 1, n) if upper else slice(0, i)
        r = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, rest], x[..., rest, :])
        x[..., i, :] = r if unitriangular else r / a[..., i, i][..., None]
    return x


class SolveTriangular(Op):
    """``X`` with ``A X = B`` (``left``) or ``X A = B``; ``A`` triangular (only that triangle
    is read; ``unitriangular``: its diagonal is taken as ones); batch dims broadcast."""
    saves = (0, OUT)
    promotes = True

    def forward(a, b, upper, left=True, unitriangular=False):
        op = "linalg.solve_triangular"
        check_square(a, op)
        if b.ndim < 2:
            raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
        n = a.shape[-1]
        if (b.shape[-2] if left else b.shape[-1]) != n:
            eq = "AX = B" if left else "XA = B"
            raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} "
                               f"({a.shape[-2]}x{n} and {b.shape[-2]}x{b.shape[-1]})")
        with np.errstate(divide="ignore", invalid="ignore"):
            if left:
                return _substitute(a, b, upper, unitriangular)
            # X A = B  <=>  A^T X^T = B^T
            return np.ascontiguousarray(np.swapaxes(_substitute(
                np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper, unitriangular),
                -1, -2))

    def backward(F, g, saved, node):
        a, x = saved
        p = node.params
        upper, left, unit = p["upper"], p.get("left", True), p.get("unitriangular", False)
        need_a, need_b = node.needs
        gb = F.solve_triangular(_t(F, a), g, upper=not upper, left=left, unitriangular=unit)
        ga = None
        if need_a:
            ga = F.neg(F.matmul(gb, _t(F, x)) if left else F.matmul(_t(F, x), gb))
            ga = F.triu(ga, diagonal=1 if unit else 0) if upper else \
                F.tril(ga, diagonal=-1 if unit else 0)
        return ga, (gb if need_b else None)


# -- packed outputs ----------------------------------------------------------------------

def _numel(shape: tuple) -> int:
    return math.prod(shape)


def pack(batch: tuple, *parts: np.ndarray) -> np.ndarray:
    """The parts (each ``batch + shape``) flattened and joined along a last dimension."""
    return np.concatenate([p.reshape(batch + (-1,)) for p in parts], axis=-1)


def unpack(F, packed, batch: tuple, shapes: list, *, copy: bool = False) -> list:
    """The parts of ``packed``, one per shape in ``shapes`` (each ``batch + shape``), cut out
    with ``F`` ops (``copy``: as new tensors, not views of the packed one)."""
    out = []
    start = 0
    head = tuple((0, b, 1) for b in batch)
    for shape in shapes:
        stop = start + _numel(shape)
        flat = F.basic_index(packed, key=head + ((start, stop, 1),))
        out.append(F.reshape_copy(flat, shape=batch + tuple(shape)) if copy else
                   F.reshape(flat, shape=batch + tuple(shape)))
        start = stop
    return out


def check_float_matrix(a: np.ndarray, op: str, name: str = "A") -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if a.dtype.kind != "f" and a.dtype.char != "E":  # bfloat16: dispatch decides
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(a.dtype)}")


def _diag_embed(F, v):
    """Square matrices with ``v``'s last dimension on the diagonal."""
    n = v.shape[-1]
    shape = tuple(v.shape) + (n,)
    nd = len(shape)
    return F.diagonal_scatter(v, shape=shape, offset=0, dim1=nd - 2, dim2=nd - 1)


def _divide_gaps(F, x, gaps):
    """``x / gaps`` where the gap is non-zero; 0 where ``x`` is 0 too (e.g. the diagonal, or
    a part of the output that was not used); nan where a non-zero ``x`` meets a repeated
    value (the quantity is not differentiable there).  No division by zero is performed."""
    zero = F.eq(gaps, 0.0)
    ratio = F.div(x, F.where(zero, 1.0, gaps))
    return F.where(zero, F.where(F.eq(x, 0.0), 0.0, math.nan), ratio)


def _as_row(F, v):
    """``(..., k)`` as ``(..., 1, k)``: multiplying a matrix by it scales its columns."""
    return F.unsqueeze(v, dims=(len(v.shape) - 1,))


def _as_col(F, v):
    """``(..., k)`` as ``(..., k, 1)``: multiplying a matrix by it scales its rows."""
    return F.unsqueeze(v, dims=(len(v.shape),))


def _skew(F, x):
    return F.sub(x, _t(F, x))


def _copyltu(F, m):
    """The symmetric matrix whose lower triangle is ``m``'s."""
    return F.add(F.tril(m, diagonal=0), _t(F, F.tril(m, diagonal=-1)))


# -- QR ----------------------------------------------------------------------------------

def qr_shapes(m: int, n: int, mode: str) -> list:
    k = min(m, n)
    if mode == "r":
        return [(0,), (k, n)]
    if mode == "complete":
        return [(m, m), (m, n)]
    return [(m, k), (k, n)]


class Qr(Op):
    """``A = Q R`` (``mode``: ``'reduced'``, ``'complete'`` or ``'r'``), packed ``(Q, R)``.
    Backward (PyTorch's): for ``m >= n``, ``gA = (gQ + Q copyltu(M)) R^-T`` with
    ``M = R gR^T - gQ^T Q``; for ``m < n`` the same on the first ``m`` columns."""
    saves = (OUT,)

    def forward(a, mode="reduced"):
        check_float_matrix(a, "linalg.qr")
        batch = a.shape[:-2]
        if mode == "r":
            return pack(batch, np.zeros(batch + (0,), a.dtype), np.linalg.qr(a, mode="r"))
        q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
        return pack(batch, q, r)

    def backward(F, g, saved, node):
        mode = node.params.get("mode", "reduced")
        shape = node.shapes[0]
        batch, (m, n) = tuple(shape[:-2]), shape[-2:]
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        shapes = qr_shapes(m, n, mode)
        q, r = unpack(F, saved[0], batch, shapes)
        gq, gr = unpack(F, g, batch, shapes)
        if m >= n:
            return (_qr_square_grad(F, q, r, gq, gr),)
        # A = [X | Y] with X = Q U square: Y = Q V, and X's gradient sees gQ + Y gV^T
        u, v = _cols(F, r, 0, m), _cols(F, r, m, n)
        gu, gv = _cols(F, gr, 0, m), _cols(F, gr, m, n)
        gy = F.matmul(q, gv)
        gx = _qr_square_grad(F, q, u, F.add(gq, F.matmul(F.matmul(q, v), _t(F, gv))), gu)
        return (F.cat(gx, gy, dim=len(shape) - 1),)


def _cols(F, x, start: int, stop: int):
    """Columns ``[start, stop)`` of a batch of matrices."""
    shape = tuple(x.shape)
    return F.basic_index(x, key=tuple((0, d, 1) for d in shape[:-1]) + ((start, stop, 1),))


def _rows(F, x, start: int, stop: int):
    """Rows ``[start, stop)`` of a batch of matrices."""
    shape = tuple(x.shape)
    return F.basic_index(x, key=tuple((0, d, 1) for d in shape[:-2]) + ((start, stop, 1),
                                                                        (0, shape[-1], 1)))


def _qr_square_grad(F, q, r, gq, gr):
    """``(gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T`` (R square upper triangular)."""
    m = F.sub(F.matmul(r, _t(F, gr)), F.matmul(_t(F, gq), q))
    b = F.add(gq, F.matmul(q, _copyltu(F, m)))
    return F.solve_triangular(_t(F, r), b, upper=False, left=False, unitriangular=False)


# -- SVD ---------------------------------------------------------------------------------

def svd_shapes(m: int, n: int, full_matrices: bool) -> list:
    k = min(m, n)
    if full_matrices:
        return [(m, m), (k,), (n, n)]
    return [(m, k), (k,), (k, n)]


class Svd(Op):
    """``A = U diag(S) Vh``, packed ``(U, S, Vh)`` (``full_matrices``: square U and Vh).
    Backward (PyTorch's ``svd_backward``, on the first ``k = min(m, n)`` singular vectors):
    ``gA = U [skew(U^T gU)/E S + S skew(V^T gV)/E + diag(gS)] Vh`` plus the parts of ``gU``
    and ``gV`` outside the spans of U and V, with ``E_jk = S_k^2 - S_j^2``."""
    saves = (OUT,)

    def forward(a, full_matrices=True):
        check_float_matrix(a, "linalg.svd")
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        return pack(a.shape[:-2], u, s, vh)

    def backward(F, g, saved, node):
        full = node.params.get("full_matrices", True)
        shape = node.shapes[0]
        batch, (m, n) = tuple(shape[:-2]), shape[-2:]
        k = min(m, n)
        shapes = svd_shapes(m, n, full)
        u, s, vh = unpack(F, saved[0], batch, shapes)
        gu, gs, gvh = unpack(F, g, batch, shapes)
        if full and m != n:  # only the first k singular vectors are determined
            u, gu = _cols(F, u, 0, k), _cols(F, gu, 0, k)
            vh, gvh = _rows(F, vh, 0, k), _rows(F, gvh, 0, k)
        return (svd_grad(F, u, s, vh, gu, gs, gvh, m, n),)


def svd_grad(F, u, s, vh, gu, gs, gvh, m: int, n: int):
    v, gv = _t(F, vh), _t(F, gvh)
    s_row, s_col = _as_row(F, s), _as_col(F, s)          # scale columns / rows
    s2 = F.mul(s, s)
    gaps = F.sub(_as_row(F, s2), _as_col(F, s2))
    core = F.add(F.mul(_divide_gaps(F, _skew(F, F.matmul(_t(F, u), gu)), gaps), s_row),
                 F.mul(s_col, _divide_gaps(F, _skew(F, F.matmul(_t(F, v), gv)), gaps)))
    core = F.add(core, _diag_embed(F, gs))
    if m > n:      # gU's part outside span(U): (I - U U^T) gU S^-1
        gus = F.div(gu, s_row)
        core = F.add(F.matmul(u, core), F.sub(gus, F.matmul(u, F.matmul(_t(F, u), gus))))
        return F.matmul(core, vh)
    if n > m:      # gV's part outside span(V): S^-1 gV^T (I - V V^T)
        gvs = F.div(gv, s_row)
        core = F.add(F.matmul(core, vh), F.sub(_t(F, gvs), F.matmul(F.matmul(_t(F, gvs), v), vh)))
        return F.matmul(u, core)
    return F.matmul(F.matmul(u, core), vh)


class Svdvals(Op):
    """Singular values, descending.  Backward: ``U diag(g) Vh`` (a fresh SVD)."""
    saves = (0,)

    def forward(a):
        check_float_matrix(a, "linalg.svd")
        return np.linalg.svd(a, compute_uv=False)

    def backward(F, g, saved, node):
        shape = node.shapes[0]
        batch, (m, n) = tuple(shape[:-2]), shape[-2:]
        u, _, vh = unpack(F, F.svd(saved[0], full_matrices=False), batch,
                          svd_shapes(m, n, False))
        return (F.matmul(F.mul(u, _as_row(F, g)), vh),)


# -- symmetric eigendecomposition ---------------------------------------------------------

class Eigh(Op):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices, packed
    ``(L, V)``; only the lower (``upper``: upper) triangle is read.  Backward (PyTorch's):
    ``gA = V (diag(gL) + skew(V^T gV) / 2E) V^T`` with ``E_ij = L_j - L_i``."""
    saves = (OUT,)

    def forward(a, upper=False):
        check_square(a, "linalg.eigh")
        w, v = np.linalg.eigh(a, UPLO="U" if upper else "L")
        return pack(a.shape[:-2], w, v)

    def backward(F, g, saved, node):
        shape = node.shapes[0]
        batch, n = tuple(shape[:-2]), shape[-1]
        shapes = [(n,), (n, n)]
        w, v = unpack(F, saved[0], batch, shapes)
        gw, gv = unpack(F, g, batch, shapes)
        gaps = F.sub(_as_row(F, w), _as_col(F, w))
        core = _divide_gaps(F, F.mul(_skew(F, F.matmul(_t(F, v), gv)), 0.5), gaps)
        core = F.add(core, _diag_embed(F, gw))
        return (F.matmul(F.matmul(v, core), _t(F, v)),)


class Eigvalsh(Op):
    """Eigenvalues of symmetric matrices, ascending.  Backward: ``V diag(g) V^T``."""
    saves = (0,)

    def forward(a, upper=False):
        check_square(a, "linalg.eigh")
        return np.linalg.eigvalsh(a, UPLO="U" if upper else "L")

    def backward(F, g, saved, node):
        shape = node.shapes[0]
        batch, n = tuple(shape[:-2]), shape[-1]
        _, v = unpack(F, F.eigh(saved[0], upper=node.params.get("upper", False)), batch,
                      [(n,), (n, n)])
        return (F.matmul(F.mul(v, _as_row(F, g)), _t(F, v)),)
