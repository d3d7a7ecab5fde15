"""Inverses, linear solves and determinants, batched over leading dimensions and
differentiable with PyTorch's backward formulas: ``inv``, ``solve``, ``det`` (whose
gradient, the cofactor matrix, is exact for singular matrices too), ``slogdet`` (packed
``(sign, logabsdet)``, see :func:`eager.ops.decomp.pack`), ``pinv``.

A singular matrix is an error naming the batch element and LU pivot, as PyTorch's
``LinAlgError``; with ``check=False`` (``inv_ex``/``solve_ex``) its result is NaN and
``lu_info`` reports it instead.
"""

from __future__ import annotations

import numpy as np

from .base import OUT, Op
from .decomp import LinAlgError, _t, check_square, pack, unpack
from .factory import device_params


def _first_zero_pivot(m: np.ndarray) -> int:
    """1-based index of the first exactly-zero pivot of ``m``'s LU factorization with
    partial pivoting (LAPACK ``getrf``'s ``info``), 0 if there is none."""
    u = np.array(m, dtype=np.float64)
    n = u.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        if u[p, j] == 0:
            return j + 1
        u[[j, p]] = u[[p, j]]
        u[j + 1:, j:] -= np.outer(u[j + 1:, j] / u[j, j], u[j, j:])
    return 0


def lu_info(a: np.ndarray) -> np.ndarray:
    """Per matrix of the batch ``a``: 0 if it is invertible, else the first zero pivot of
    its LU factorization (``inv_ex``'s and ``solve_ex``'s ``info``, int32)."""
    flat = a.reshape((-1,) + a.shape[-2:])
    info = np.zeros(len(flat), dtype=np.int32)
    try:
        np.linalg.inv(flat)
        return info.reshape(a.shape[:-2])
    except np.linalg.LinAlgError:
        pass
    for b, m in enumerate(flat):
        try:
            np.linalg.inv(m)
        except np.linalg.LinAlgError:
            info[b] = _first_zero_pivot(m) or m.shape[-1]
    return info.reshape(a.shape[:-2])


def _singular(a: np.ndarray, op: str, detail) -> LinAlgError:
    info = lu_info(a).reshape(-1)
    b = int(np.flatnonzero(info)[0]) if info.any() else 0
    where = f"(Batch element {b}): " if a.ndim > 2 else ""
    return LinAlgError(f"{op}: {where}{detail(int(info[b]))}")


def _inverse_or_nan(a: np.ndarray, op: str, check: bool, detail) -> np.ndarray:
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        if check:
            raise _singular(a, op, detail) from None
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.full(flat.shape, np.nan, dtype=a.dtype)
    good = lu_info(flat) == 0
    out[good] = np.linalg.inv(flat[good])
    return out.reshape(a.shape)


def _inv_detail(k: int) -> str:
    return (f"The diagonal element {k} is zero, the inversion could not be completed because "
            "the input matrix is singular.")


def _solve_detail(k: int) -> str:
    return "The solver failed because the input matrix is singular."


class Inv(Op):
    """Inverse of square matrices (``check=False``: NaN for singular ones instead of an
    error).  Backward: ``gA = -A^-T g A^-T``."""
    saves = (OUT,)

    def forward(a, check=True):
        check_square(a, "linalg.inv")
        return _inverse_or_nan(a, "linalg.inv", check, _inv_detail)

    def backward(F, g, saved, node):
        inv_t = _t(F, saved[0])
        return (F.neg(F.matmul(F.matmul(inv_t, g), inv_t)),)


class LuInfo(Op):
    """``info`` of ``inv_ex``/``solve_ex``: 0 per invertible matrix, else the first zero
    pivot of its LU factorization (int32)."""
    differentiable = False

    def forward(a):
        return lu_info(a)


class Solve(Op):
    """``X`` with ``A X = B`` (``left``) or ``X A = B``; ``B`` a batch of matrices, batch
    dimensions broadcast.  Backward: ``gB = solve(A^T, g)``, ``gA = -gB X^T`` (left) or
    ``gB = g A^-T``, ``gA = -X^T gB``."""
    saves = (0, OUT)

    def forward(a, b, left=True, check=True):
        op = "torch.linalg.solve"
        if not left:
            return np.swapaxes(Solve.forward(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2),
                                             True, check), -1, -2).copy()
        try:
            return np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            big = np.broadcast_to(a, batch + a.shape[-2:])
            if check:
                raise _singular(big, op, _solve_detail) from None
            inv = _inverse_or_nan(np.ascontiguousarray(big), op, False, _solve_detail)
            return np.matmul(inv, b)

    def backward(F, g, saved, node):
        a, x = saved
        left = node.params.get("left", True)
        gb = F.solve(_t(F, a), g, left=left, check=False)
        ga = None
        if node.needs[0]:
            ga = F.neg(F.matmul(gb, _t(F, x)) if left else F.matmul(_t(F, x), gb))
        return ga, (gb if node.needs[1] else None)


class Det(Op):
    """Determinant.  Backward: ``g * cofactor(A)`` (exact for singular matrices)."""
    saves = (0,)

    def forward(a):
        check_square(a, "linalg.det")
        return np.asarray(np.linalg.det(a))

    def backward(F, g, saved, node):
        return (F.mul(_as_scalar_per_matrix(F, g), F.cofactor(saved[0])),)


def _as_scalar_per_matrix(F, x):
    """``(...)`` as ``(..., 1, 1)``."""
    nd = len(x.shape)
    return F.unsqueeze(x, dims=(nd, nd + 1))


class Cofactor(Op):
    """The cofactor matrix ``det(A) A^-T`` (the gradient of ``det``): through ``inv`` where
    ``det(A) != 0``, else from the SVD ``A = U S Vh`` as ``det(U Vh) U diag(prod_{j != i}
    s_j) Vh``, which is defined for singular matrices.  Its own gradient (second
    derivatives of ``det``) is ``(<g, C> I - C g^T) A^-T``: invertible matrices only."""
    saves = (0, OUT)

    def forward(a):
        flat = a.reshape((-1,) + a.shape[-2:])
        det = np.linalg.det(flat)
        out = np.empty_like(flat)
        ok = det != 0
        if ok.any():
            out[ok] = det[ok, None, None] * np.swapaxes(np.linalg.inv(flat[ok]), -1, -2)
        if not ok.all():
            u, s, vh = np.linalg.svd(flat[~ok])
            n = s.shape[-1]
            others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)],
                              axis=-1)
            sign = np.linalg.det(u) * np.linalg.det(vh)
            out[~ok] = sign[:, None, None] * np.matmul(u * others[:, None, :], vh)
        return out.reshape(a.shape)

    def backward(F, g, saved, node):
        a, c = saved
        dot = F.sum(F.mul(g, c), dim=(len(c.shape) - 2, len(c.shape) - 1), keepdim=True,
                    dtype=None)
        n = node.shapes[0][-1]
        eye = F.eye(n=n, m=n, dtype=node.dtypes[0], **device_params(g))
        inv_t = _t(F, F.inv(a, check=False))
        return (F.matmul(F.sub(F.mul(dot, eye), F.matmul(c, _t(F, g))), inv_t),)


class Slogdet(Op):
    """Sign and log of the absolute value of the determinant, packed ``(sign, logabsdet)``.
    Backward: ``g_logabsdet * A^-T`` (the sign has no gradient)."""
    saves = (0,)

    def forward(a):
        check_square(a, "linalg.slogdet")
        sign, logabs = np.linalg.slogdet(a)
        return pack(a.shape[:-2], np.asarray(sign), np.asarray(logabs))

    def backward(F, g, saved, node):
        batch = tuple(node.shapes[0][:-2])
        _, glog = unpack(F, g, batch, [(), ()])
        inv_t = _t(F, F.inv(saved[0], check=False))
        return (F.mul(_as_scalar_per_matrix(F, glog), inv_t),)


class Pinv(Op):
    """Moore-Penrose pseudo-inverse: singular values (``hermitian``: eigenvalues) at most
    ``max(atol, rtol * largest)`` count as zero.  Backward: PyTorch's ``pinv_backward``."""
    saves = (0, OUT)

    def forward(a, atol, rtol, hermitian=False):
        m, n = a.shape[-2:]
        if min(m, n) == 0:
            return np.zeros(a.shape[:-2] + (n, m), dtype=a.dtype)
        with np.errstate(divide="ignore"):
            if hermitian:
                w, v = np.linalg.eigh(a)
                big = np.abs(w)
                cut = np.maximum(atol, rtol * big.max(axis=-1, keepdims=True))
                return np.matmul(v * np.where(big > cut, 1.0 / w, 0.0)[..., None, :],
                                 np.swapaxes(v, -1, -2)).astype(a.dtype, copy=False)
            u, s, vh = np.linalg.svd(a, full_matrices=False)
            cut = np.maximum(atol, rtol * s[..., :1])
            s_inv = np.where(s > cut, 1.0 / s, 0.0).astype(a.dtype, copy=False)
        return np.matmul(np.swapaxes(vh, -1, -2) * s_inv[..., None, :], np.swapaxes(u, -1, -2))

    def backward(F, g, saved, node):
        a, p = saved
        m, n = node.shapes[0][-2:]
        p_t, g_t = _t(F, p), _t(F, g)
        if m <= n:
            k = F.matmul(g_t, p)
            k_p_t = F.matmul(k, p_t)
            out = F.add(F.neg(_t(F, F.matmul(p, k))), k_p_t)
            out = F.sub(out, F.matmul(F.matmul(a, p), k_p_t))
            return (F.add(out, F.matmul(F.matmul(p_t, p), F.sub(g_t, F.matmul(k, a)))),)
        k = F.matmul(p, g_t)
        p_t_k = F.matmul(p_t, k)
        out = F.neg(_t(F, F.matmul(k, p)))
        out = F.add(out, F.matmul(F.matmul(F.sub(g_t, F.matmul(a, k)), p), p_t))
        return (F.sub(F.add(out, p_t_k), F.matmul(F.matmul(p_t_k, p), a)),)

