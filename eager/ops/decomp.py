"""Matrix decompositions and triangular solves: ``cholesky`` and ``solve_triangular``
(batched over leading dimensions, differentiable; used by ``eager.linalg`` and the
multivariate normal distribution)."""

from __future__ import annotations

import numpy as np

from .base import OUT, Op
from .linalg import scalar_name


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
    if a.dtype.kind != "f":
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


class Cholesky(Op):
    """Lower factor ``L`` of ``A = L L^T`` (``upper``: ``L^T``); only ``A``'s lower
    triangle is read.  Backward (PyTorch's): ``gA = L^-T Phi(L^T gL) L^-1``, symmetric."""
    saves = (OUT,)

    def forward(a, upper=False):
        check_square(a, "linalg.cholesky")
        try:
            out = np.linalg.cholesky(a)          # reads the lower triangle only
        except np.linalg.LinAlgError:
            raise _not_pd(a) from None
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
