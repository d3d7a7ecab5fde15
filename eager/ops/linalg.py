"""Linear-algebra ops: matmul (every PyTorch case: dot, mat-vec, vec-mat, mat-mat, batched
with broadcast batch dimensions), linear (``x @ W.T + b`` as one op), einsum, tril/triu, diag.

As in PyTorch, matmul-like ops do not promote: both operands must have the same dtype.
``mm``/``bmm``/``dot``/``mv`` are the ``matmul`` op after the public function checked
their stricter shape rules (see :mod:`eager.fn.linalg`), so the compiler sees one op.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import cpp_name, scalar_name
from .base import Op
from .factory import device_params


def check_same_dtype(a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{cpp_name(a.dtype)} != {cpp_name(b.dtype)}")
    if a.dtype.kind == "b":
        raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _mx(rows, cols) -> str:
    return f"{rows}x{cols}"


def matmul_shape_error(op: str, sa: tuple, sb: tuple) -> RuntimeError:
    """The error for operands whose contracted dimensions differ (both shapes named)."""
    na, nb = len(sa), len(sb)
    if na == 1 and nb == 1:
        detail = (f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to "
                  f"have the same number of elements, but got {sa[0]} and {sb[0]} elements "
                  "respectively")
    elif nb == 1:
        m = _prod(sa[:-1])
        detail = f"size mismatch, got input ({m}), mat ({_mx(m, sa[-1])}), vec ({sb[0]})"
    else:
        rows = 1 if na == 1 else (_prod(sa[:-1]) if nb == 2 else sa[-2])
        detail = (f"mat1 and mat2 shapes cannot be multiplied ({_mx(rows, sa[-1])} and "
                  f"{_mx(sb[-2], sb[-1])})")
    return RuntimeError(f"{op}: shapes {sa} and {sb} cannot be multiplied ({detail})")


def _batch_shape(op: str, sa: tuple, sb: tuple) -> tuple:
    ba, bb = sa[:-2], sb[:-2]
    n = max(len(ba), len(bb))
    pa, pb = (1,) * (n - len(ba)) + ba, (1,) * (n - len(bb)) + bb
    out = []
    for d in range(n):
        x, y = pa[d], pb[d]
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"{op}: shapes {sa} and {sb} cannot be multiplied: their batch dimensions do not "
                f"broadcast (The size of tensor a ({x}) must match the size of tensor b ({y}) "
                f"at non-singleton dimension {d})")
        out.append(y if x == 1 else x)   # (1 and 0 broadcast to 0)
    return tuple(out)


def _t(F, x, nd: int):
    """Swap the last two dimensions."""
    dims = tuple(range(nd - 2)) + (nd - 1, nd - 2)
    return F.permute(x, dims=dims)


class Matmul(Op):
    """``torch.matmul``: 1-D x 1-D dot, 2-D x 1-D, 1-D x 2-D (prepended 1 removed), and
    batched N-D with broadcast batch dimensions."""
    saves = (0, 1)

    def forward(a, b):
        check_same_dtype(a, b)
        na, nb = a.ndim, b.ndim
        if na == 0 or nb == 0:
            raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                               f"{na}D and {nb}D")
        k = a.shape[-1]
        if k != b.shape[-2 if nb >= 2 else 0]:
            raise matmul_shape_error("matmul", a.shape, b.shape)
        if na > 2 and nb <= 2:
            # fold the batch into the rows: one GEMM instead of one per batch element
            out = np.matmul(a.reshape(_prod(a.shape[:-1]), k), b)
            return out.reshape(a.shape[:-1] + b.shape[1:])
        if na > 2 or nb > 2:
            _batch_shape("matmul", a.shape, b.shape)
        return np.matmul(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        sa, sb = node.shapes
        na, nb = len(sa), len(sb)
        need_a, need_b = node.needs
        ga = gb = None
        if na == 1 and nb == 1:                       # dot: g is 0-dim
            return (F.mul(g, b) if need_a else None), (F.mul(g, a) if need_b else None)
        if na == 1:                                   # (k) @ (..., k, n) -> (..., n)
            k, n = sb[-2], sb[-1]
            if need_a:
                if nb == 2:
                    ga = F.matmul(b, g)
                else:                                 # (..., k, n) @ (..., n, 1), summed
                    ga = F.reshape(F.matmul(b, F.reshape(g, shape=sb[:-2] + (n, 1))),
                                   shape=sb[:-1])
            if need_b:
                gb = F.mul(F.reshape(a, shape=(k, 1)), F.reshape(g, shape=sb[:-2] + (1, n)))
            return ga, gb
        if nb == 1:                                   # (..., m, k) @ (k) -> (..., m)
            if need_a:
                ga = F.mul(F.reshape(g, shape=sa[:-1] + (1,)), b)
            if need_b:
                if na == 2:
                    gb = F.matmul(g, a)
                else:
                    rows = _prod(sa[:-1])
                    gb = F.matmul(F.reshape(g, shape=(rows,)),
                                  F.reshape(a, shape=(rows, sa[-1])))
            return ga, gb
        # both at least 2-D; the engine sums broadcast batch dimensions away
        if need_a:
            ga = F.matmul(g, _t(F, b, nb))
        if need_b:
            if nb == 2 and na > 2:                    # fold the batch: one (k, n) GEMM
                rows = _prod(sa[:-1])
                a2 = F.reshape(a, shape=(rows, sa[-1]))
                g2 = F.reshape(g, shape=(rows, sb[-1]))
                gb = F.matmul(_t(F, a2, 2), g2)
            else:
                gb = F.matmul(_t(F, a, na), g)
        return ga, gb


class Linear(Op):
    """``x @ weight.T + bias`` in one op (``bias`` may be None): ``x`` is ``(..., in)`` or
    ``(in,)``, ``weight`` ``(out, in)``."""
    saves = (0, 1)

    def forward(x, weight, bias=None):
        check_same_dtype(x, weight)
        if bias is not None and bias.dtype != x.dtype:
            raise RuntimeError(f"linear: bias must have the same dtype as input and weight, but "
                               f"got {scalar_name(bias.dtype)} and {scalar_name(x.dtype)}")
        if weight.ndim != 2:
            raise RuntimeError(f"linear: weight must be a matrix, got {weight.ndim}-D tensor")
        if x.ndim == 0:
            raise RuntimeError("linear: input must be at least 1-D, got a 0-D tensor")
        k = x.shape[-1]
        if k != weight.shape[1]:
            rows = _prod(x.shape[:-1])
            raise RuntimeError(
                f"linear: input shape {x.shape} and weight shape {weight.shape} cannot be "
                f"multiplied (mat1 and mat2 shapes cannot be multiplied ({_mx(rows, k)} and "
                f"{_mx(weight.shape[1], weight.shape[0])}))")
        if x.ndim == 2:
            out = np.matmul(x, weight.T)
        elif x.ndim == 1:
            out = np.matmul(weight, x)
        else:
            out = np.matmul(x.reshape(_prod(x.shape[:-1]), k), weight.T)
            out = out.reshape(x.shape[:-1] + weight.shape[:1])
        if bias is not None:
            bs = bias.shape
            if (bs == out.shape[out.ndim - len(bs):] if len(bs) <= out.ndim else False) or \
                    np.broadcast_shapes(out.shape, bs) == out.shape:
                np.add(out, bias, out=out)
            else:
                out = out + bias
        return out

    def backward(F, g, saved, node):
        x, w = saved
        sx, sw = node.shapes[0], node.shapes[1]
        needs = node.needs
        gx = F.matmul(g, w) if needs[0] else None
        gw = None
        if needs[1]:
            rows = _prod(sx[:-1])
            g2 = F.reshape(g, shape=(rows, sw[0]))
            x2 = F.reshape(x, shape=(rows, sw[1]))
            gw = F.matmul(F.permute(g2, dims=(1, 0)), x2)
        gb = g if len(needs) > 2 and needs[2] else None  # the engine sums it to bias's shape
        return gx, gw, gb


class Einsum(Op):
    """``einsum`` of one or two operands (``b`` None for one) with a canonical equation:
    explicit ``->``, letters only (the public function spells ``...`` out as letters and
    splits three or more operands into a chain of pairwise contractions)."""
    saves = (0, 1)

    def forward(a, b=None, *, equation):
        if b is None:
            out = np.einsum(equation, a)
        else:
            if a.dtype != b.dtype:
                raise RuntimeError(f"einsum(): expected scalar type {scalar_name(a.dtype)} but "
                                   f"found {scalar_name(b.dtype)}")
            out = np.einsum(equation, a, b, optimize=a.ndim > 1 or b.ndim > 1)
        if type(out) is not np.ndarray:
            return np.asarray(out)
        if out.base is not None and (np.may_share_memory(out, a)
                                     or b is not None and np.may_share_memory(out, b)):
            return out.copy()  # NumPy returned a view of an operand (e.g. 'ij->ji')
        return out

    def backward(F, g, saved, node):
        a, b = saved
        lhs, out = node.params["equation"].split("->")
        labels = lhs.split(",")
        operands = (a,) if b is None else (a, b)
        grads = [None, None]
        for i in range(len(operands)):
            if node.needs[i]:
                other = None if len(operands) == 1 else (operands[1 - i], labels[1 - i])
                grads[i] = _einsum_grad(F, g, out, labels[i], other,
                                        node.shapes[i], node.dtypes[i])
        return tuple(grads)


_FRESH = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum_grad(F, g, out: str, lab: str, other, shape: tuple, dtype):
    """Gradient of ``einsum`` w.r.t. the operand with labels ``lab``: an einsum of the output
    gradient with the other operand, labels missing there broadcast back, repeated labels
    (diagonals) embedded with identity matrices."""
    uniq = "".join(dict.fromkeys(lab))
    have = set(out) | (set(other[1]) if other is not None else set())
    avail = "".join(c for c in uniq if c in have)
    if other is None:
        r = F.einsum(g, None, equation=f"{out}->{avail}")
    else:
        r = F.einsum(g, other[0], equation=f"{out},{other[1]}->{avail}")
    # labels summed over this operand alone, or broadcast from size 1: expand back
    rshape = tuple(r.shape)
    if avail != uniq:
        rshape = tuple(rshape[avail.index(c)] if c in avail else 1 for c in uniq)
        r = F.reshape(r, shape=rshape)
    target = tuple(max(n, shape[lab.index(c)]) for n, c in zip(rshape, uniq))
    if target != rshape:
        r = F.expand(r, shape=target)
    if uniq != lab:  # repeated labels: put the gradient on the diagonal
        used = set(lab) | set(out) | (set(other[1]) if other is not None else set())
        fresh = iter(c for c in _FRESH if c not in used)
        cur = uniq
        target = []
        seen = set()
        for pos, c in enumerate(lab):
            if c not in seen:
                seen.add(c)
                target.append(c)
                continue
            x = next(fresh)
            n = shape[pos]
            eye = F.eye(n=n, m=n, dtype=dtype, **device_params(r))   # on r's device
            new = cur + x
            r = F.einsum(r, eye, equation=f"{cur},{c}{x}->{new}")
            cur = new
            target.append(x)
        target = "".join(target)
        if cur != target:
            r = F.einsum(r, None, equation=f"{cur}->{target}")
    return r


class Tril(Op):
    def forward(a, diagonal=0):
        return np.tril(a, diagonal)

    def backward(F, g, saved, node):
        return (F.tril(g, diagonal=node.params.get("diagonal", 0)),)


class Triu(Op):
    def forward(a, diagonal=0):
        return np.triu(a, diagonal)

    def backward(F, g, saved, node):
        return (F.triu(g, diagonal=node.params.get("diagonal", 0)),)


class Diag(Op):
    """``torch.diag``: 1-D -> matrix with it on diagonal ``diagonal``; 2-D -> that diagonal.
    ``shape`` (internal, for the backward of the 2-D case): the matrix shape to embed into."""

    def forward(a, diagonal=0, shape=None):
        if a.ndim == 2:
            return np.diagonal(a, diagonal).copy()
        if shape is None:
            return np.diag(a, diagonal)
        out = np.zeros(shape, dtype=a.dtype)
        n = a.shape[0]
        r0, c0 = max(-diagonal, 0), max(diagonal, 0)
        idx = np.arange(n)
        out[idx + r0, idx + c0] = a
        return out

    def backward(F, g, saved, node):
        k = node.params.get("diagonal", 0)
        if len(node.shapes[0]) == 2:
            return (F.diag(g, diagonal=k, shape=tuple(node.shapes[0])),)
        return (F.diag(g, diagonal=k, shape=None),)


def diagonal_view(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """The diagonal ``offset`` of the matrices in dims ``dim1``/``dim2`` of ``a`` as a strided
    view (writable when ``a`` is, unlike ``np.diagonal``'s), moved to the last dimension."""
    n1, n2 = a.shape[dim1], a.shape[dim2]
    r0, c0 = max(-offset, 0), max(offset, 0)
    n = max(min(n1 - r0, n2 - c0), 0)
    key = [slice(None)] * a.ndim
    key[dim1] = slice(min(r0, n1), None)
    key[dim2] = slice(min(c0, n2), None)
    b = a[tuple(key)]
    rest = [i for i in range(a.ndim) if i not in (dim1, dim2)]
    shape = tuple(b.shape[i] for i in rest) + (n,)
    strides = tuple(b.strides[i] for i in rest) + (b.strides[dim1] + b.strides[dim2],)
    return np.lib.stride_tricks.as_strided(b, shape, strides, writeable=b.flags.writeable)


class Diagonal(Op):
    """``torch.diagonal``: diagonal ``offset`` of the matrices spanned by ``dim1`` and
    ``dim2`` (non-negative ints), in a new last dimension; a view."""
    view = True

    def forward(a, offset, dim1, dim2):
        return diagonal_view(a, offset, dim1, dim2)

    def backward(F, g, saved, node):
        p = node.params
        return (F.diagonal_scatter(g, shape=tuple(node.shapes[0]), offset=p["offset"],
                                   dim1=p["dim1"], dim2=p["dim2"]),)


class DiagonalScatter(Op):
    """Adjoint of :class:`Diagonal`: zeros of ``shape`` with ``g``'s last dimension written
    on that diagonal (``diag_embed`` when the matrices fit the diagonal exactly)."""

    def forward(g, shape, offset, dim1, dim2):
        out = np.zeros(shape, dtype=g.dtype)
        diagonal_view(out, offset, dim1, dim2)[...] = g
        return out

    def backward(F, g, saved, node):
        p = node.params
        return (F.diagonal(g, offset=p["offset"], dim1=p["dim1"], dim2=p["dim2"]),)
