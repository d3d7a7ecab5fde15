"""``einsum`` on CUDA: the contraction planned on the host from the canonical equation
(explicit ``->``, letters only, one or two operands: :func:`eager.fn.linalg.einsum` parsed
the user's equation, with the CPU's errors, and splits three or more operands into a chain
of pairwise contractions), run on the device as views, reductions and one GEMM.

* A label repeated in one operand (a diagonal, ``ii->i``) is a strided view: one
  dimension whose stride is the sum of the repeated dimensions' strides (as
  :func:`.kernels_shape.diagonal_view`).
* A label of one operand that is neither in the other nor in the output is summed there
  (a block reduction, :mod:`.kernels_reduce`).
* The rest of a pair is a batched matrix product: batch labels (in both operands and the
  output), free labels of each, contracted labels (in both, not the output); each operand
  permuted to (batch, free, contracted), reshaped to (B, M, K) / (B, K, N) (a view where the
  strides allow it), multiplied by :func:`runtime.cuda.blas.gemm` (the one entry point of
  CUDA matrix products), reshaped back and permuted to the output's order.  A label of
  size 1 in one operand and n in the other broadcasts (a 0 stride).
* Integer and bool operands (no GEMM for them): the broadcast product and a sum (``any``
  for bool, as NumPy's einsum) over the contracted labels, in the operands' dtype.

The result is a fresh contiguous array, as the CPU's (which copies a result that NumPy
returned as a view of an operand).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..ops import elementwise as E
from .elementwise import clone, reshape, run_elementwise
from .kernels_linalg import _gemm
from .kernels_reduce import reduce


def einsum(a, b=None, *, equation):
    lhs, out = equation.split("->")
    if b is None:
        view, labels = _diagonal(a, lhs)
        summed, labels = _sum_alone(view, labels, set(out))
        return _arranged(summed, labels, out, fresh=summed is not view)
    if a.dtype != b.dtype:   # the CPU forward's error
        raise RuntimeError(f"einsum(): expected scalar type {_dt.scalar_name(a.dtype)} but "
                           f"found {_dt.scalar_name(b.dtype)}")
    la, lb = lhs.split(",")
    va, ua = _diagonal(a, la)
    vb, ub = _diagonal(b, lb)
    va, ua = _sum_alone(va, ua, set(ub) | set(out))
    vb, ub = _sum_alone(vb, ub, set(ua) | set(out))
    return _contract(va, ua, vb, ub, out)


def _diagonal(a, labels: str):
    """``a`` viewed with each label once: a repeated label's dimensions are one dimension
    whose stride is the sum of theirs (sizes are equal: the parse checked them)."""
    uniq = "".join(dict.fromkeys(labels))
    if uniq == labels:
        return a, labels
    shape, strides = [], []
    for c in uniq:
        pos = [p for p, x in enumerate(labels) if x == c]
        shape.append(a.shape[pos[0]])
        strides.append(sum(a.estrides[p] for p in pos))
    return a._view(tuple(shape), tuple(strides)), uniq


def _sum_alone(a, labels: str, keep: set):
    """``a`` summed over its labels not in ``keep`` (bool: any, as NumPy's einsum)."""
    dims = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not dims:
        return a, labels
    kind = "any" if a.dtype.kind == "b" else "sum"
    return reduce(kind, a, dims, False, a.dtype), "".join(c for c in labels if c in keep)


def _arranged(a, labels: str, out: str, fresh: bool):
    """``a`` (labels ``labels``, each in ``out``) permuted to ``out``'s order, contiguous
    and not sharing memory with an operand (``fresh``: ``a`` is the op's own array)."""
    r = a.transpose([labels.index(c) for c in out])
    return r if fresh and r.is_contiguous else clone(r)


def _contract(a, ua: str, b, ub: str, out: str):
    """The pairwise contraction of ``a`` and ``b`` (each label once, each in the other
    operand or in ``out``) into ``out``'s labels."""
    sizes = {}
    for x, lab in ((a, ua), (b, ub)):
        for c, n in zip(lab, x.shape):
            if sizes.get(c, 1) == 1:   # size 1 broadcasts against the other's
                sizes[c] = n
    batch = [c for c in ua if c in ub and c in out]
    summed = [c for c in ua if c in ub and c not in out]
    free_a = [c for c in ua if c not in ub]
    free_b = [c for c in ub if c not in ua]

    def arrange(x, lab, order):
        x = x.transpose([lab.index(c) for c in order])
        return x.broadcast_to(tuple(sizes[c] for c in order))

    def count(labels):
        return int(np.prod([sizes[c] for c in labels], dtype=np.int64))

    nb, nm, nk, nn = count(batch), count(free_a), count(summed), count(free_b)
    if a.dtype.kind == "f":
        a3 = reshape(arrange(a, ua, batch + free_a + summed), (nb, nm, nk))
        b3 = reshape(arrange(b, ub, batch + summed + free_b), (nb, nk, nn))
        r = _gemm(a3, b3).reshape(tuple(sizes[c] for c in batch + free_a + free_b))
    else:   # integers and bool: the broadcast product, summed over the contracted labels
        xa = _insert_ones(arrange(a, ua, batch + free_a + summed), len(batch + free_a),
                          len(free_b))
        xb = _insert_ones(arrange(b, ub, batch + free_b + summed), len(batch), len(free_a))
        r = run_elementwise(E.Mul, [xa, xb], {})
        if summed:
            dims = tuple(range(r.ndim - len(summed), r.ndim))
            r = reduce("any" if a.dtype.kind == "b" else "sum", r, dims, False, a.dtype)
        elif r.dtype != a.dtype:
            r = run_elementwise(E.Cast, [r], {"dtype": a.dtype})
    return _arranged(r, "".join(batch + free_a + free_b), out, fresh=True)


def _insert_ones(x, at: int, n: int):
    """``x`` with ``n`` dimensions of size 1 inserted before dimension ``at``."""
    return x.unsqueeze(tuple(range(at, at + n))) if n else x
