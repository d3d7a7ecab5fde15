"""Expand composite ops into the ops their forward runs: CSE shares them with the
backward's recomputation, and fusion makes kernels of their elementwise parts.

Why
    Eager's ``scaled_dot_product_attention`` backward recomputes ``q * scale``, the scores
    ``q*scale @ k^T``, the mask and the softmax (unless the forward kept them:
    ``Op.forward_aux``, eager only).  Traced, that recomputation is a second copy of the
    forward's work in the same graph, which the attention node hid from CSE: in a ViT
    step it was ~10% of the replay.  Written as its parts, the forward defines the same
    nodes (same ops, inputs and params) that the backward records, and :mod:`.cse` keeps
    one of each.

    ``layer_norm``'s forward (one NumPy call after another, ~100 us for a (32, 17, 32)
    float32 input) becomes three kernels once fused: the mean, the variance with its
    prologue, and the normalization with the affine part.  (Its backward recomputes the
    statistics in float64: nothing to share there.)

Exactness
    The parts are exactly what the ops' forwards run, in the same order
    (``ScaledDotProductAttention``: ``Mul``, ``Permute``, ``Matmul``, ``Where``,
    ``Softmax``, ``Matmul``; ``LayerNorm``: ``Mean``, ``Sub``, ``Mul``, ``Mean``, ``Add``,
    ``Rsqrt``, ``Mul``, ``Mul``, ``Add``, on the same arrays), so the generated-Python tier
    computes the forward's bits; fused kernels compute the elementwise parts with the
    same float operations, and their means accumulate in float64 (as every fused
    reduction).

Only CPU values are expanded (a device runs the composite as its one op).

For kernels only (:func:`for_kernels`, called by the CPU's kernel program before fusion)
    ``softmax`` over the last dimension becomes ``amax``, ``sub``, ``exp``, ``sum``,
    ``div``: four kernels, ~5x faster than NumPy's reductions over a short last dimension
    (attention's (32, 4, 17, 17) weights: 330 us).  The values are eager's (a row whose
    maximum is -inf, +inf or NaN gives NaN, as eager's shifted form does) up to the
    kernels' exp and float64 sum; generated Python keeps the one op, whose forward
    silences the warnings ``inf - inf`` would give.
"""

from __future__ import annotations

import numpy as np

from eager.ops.attention import ScaledDotProductAttention, _swap
from eager.ops.elementwise import Add, Div, Exp, Mul, Rsqrt, Sub, Where
from eager.ops.linalg import Matmul
from eager.ops.norm import LayerNorm
from eager.ops.reduce import Amax, Mean, Softmax, Sum
from eager.ops.shape import Permute

from ..ir import Graph, Node, Value, rewrite

_NEG_INF = float("-inf")
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _attention(n: Node, fresh) -> list:
    q, k, v, mask = n.inputs
    scale = n.params["scale"]
    swap = _swap(k.ndim)
    dt = n.out.dtype
    qs = fresh(q.shape, Mul.out_dtype(q, scale), q.device)
    kt = fresh(tuple(k.shape[i] for i in swap), k.dtype, k.device)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    scores = fresh(batch + (q.shape[-2], k.shape[-2]), dt, q.device)
    nodes = [Node(Mul, [q, scale], {}, qs, n.where),
             Node(Permute, [k], {"dims": swap}, kt, n.where),
             Node(Matmul, [qs, kt], {}, scores, n.where)]
    if mask is not None:
        masked = fresh(scores.shape, dt, q.device)
        nodes.append(Node(Where, [mask, scores, _NEG_INF], {}, masked, n.where))
        scores = masked
    attn = fresh(scores.shape, dt, q.device)
    nodes += [Node(Softmax, [scores], {"dim": scores.ndim - 1}, attn, n.where),
              Node(Matmul, [attn, v], {}, n.out, n.where)]
    return nodes


def _layer_norm(n: Node, fresh) -> list:
    x, w, b = n.inputs
    dims, eps = tuple(n.params["dim"]), n.params["eps"]
    dt, dev = x.dtype, x.device
    stat = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
    mean, xc, sq, var, ve, rstd = (fresh(s, dt, dev) for s in (stat, x.shape, x.shape,
                                                                stat, stat, stat))
    red = {"dim": dims, "keepdim": True, "dtype": None}
    nodes = [Node(Mean, [x], red, mean, n.where), Node(Sub, [x, mean], {}, xc, n.where),
             Node(Mul, [xc, xc], {}, sq, n.where), Node(Mean, [sq], red, var, n.where),
             Node(Add, [var, eps], {}, ve, n.where), Node(Rsqrt, [ve], {}, rstd, n.where)]
    last = [(Mul, rstd)] + [(op, p) for op, p in ((Mul, w), (Add, b)) if p is not None]
    cur = xc
    for i, (op, other) in enumerate(last):
        out = n.out if i == len(last) - 1 else fresh(x.shape, dt, dev)
        nodes.append(Node(op, [cur, other], {}, out, n.where))
        cur = out
    return nodes


def _cpu_values(vals) -> bool:
    return all(type(x) is Value and x.device == "cpu" for x in vals if x is not None)


def _expansion(n: Node):
    """The function writing ``n`` as its parts, or None where ``n`` stays."""
    if n.out is None:
        return None
    if n.op is ScaledDotProductAttention:
        q, k, v, mask = n.inputs
        ok = _cpu_values(n.inputs) and q.ndim == k.ndim == v.ndim >= 2 and \
            q.dtype == k.dtype == v.dtype == n.out.dtype
        return _attention if ok else None
    if n.op is LayerNorm:
        x, w, b = n.inputs
        ok = _cpu_values(n.inputs) and type(x) is Value and \
            all(p is None or p.dtype == x.dtype for p in (w, b)) and x.dtype == n.out.dtype
        return _layer_norm if ok else None
    return None


def expand(graph: Graph) -> Graph:
    return rewrite(graph, _expansion)


def _softmax(n: Node, fresh) -> list:
    a = n.inputs[0]
    d = n.params["dim"] % a.ndim
    stat = a.shape[:d] + (1,) + a.shape[d + 1:]
    m, shifted, e, total = (fresh(sh, a.dtype, a.device)
                            for sh in (stat, a.shape, a.shape, stat))
    red = {"dim": (d,), "keepdim": True}
    return [Node(Amax, [a], red, m, n.where), Node(Sub, [a, m], {}, shifted, n.where),
            Node(Exp, [shifted], {}, e, n.where),
            Node(Sum, [e], dict(red, dtype=None), total, n.where),
            Node(Div, [e, total], {}, n.out, n.where)]


def _kernel_softmax(n: Node, min_size: int) -> bool:
    if n.op is not Softmax or n.out is None:
        return False
    a = n.inputs[0]
    return type(a) is Value and a.device == "cpu" and a.ndim >= 1 and \
        n.params["dim"] % a.ndim == a.ndim - 1 and a.dtype in (_F32, _F64) and \
        n.out.dtype == a.dtype and int(np.prod(a.shape)) >= max(min_size, 1)


def for_kernels(graph: Graph, min_size: int) -> Graph:
    """``graph`` with each softmax over the last dimension of at least ``min_size``
    elements written as its parts (module doc), for a device's fused kernels."""
    return rewrite(graph, lambda n: _softmax if _kernel_softmax(n, min_size) else None)
