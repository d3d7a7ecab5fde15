"""Expand composite ops into the ops their forward runs, so that CSE shares them with the
backward's recomputation.

Why
    Eager's ``scaled_dot_product_attention`` backward recomputes ``q * scale``, the scores
    ``q*scale @ k^T``, the mask and the softmax (unless the forward kept them:
    ``Op.forward_aux``, eager only).  Traced, that recomputation is a second copy of the
    forward's work in the same graph, which the attention node hid from CSE: in a ViT
    step it was ~10% of the replay.  Written as its parts, the forward defines the same
    nodes (same ops, inputs and params) that the backward records, and :mod:`.cse` keeps
    one of each.

Exactness
    The parts are exactly what ``ScaledDotProductAttention.forward`` runs, in the same
    order (``Mul``, ``Permute``, ``Matmul``, ``Where``, ``Softmax``, ``Matmul`` on the
    same arrays), so every tier computes the forward's values; fused kernels compute the
    elementwise parts with the same float operations.

Only CPU values are expanded (a device runs the composite as its one op).
"""

from __future__ import annotations

import numpy as np

from eager.ops.attention import ScaledDotProductAttention, _swap
from eager.ops.elementwise import Mul, Where
from eager.ops.linalg import Matmul
from eager.ops.reduce import Softmax
from eager.ops.shape import Permute

from ..ir import Graph, Node, Value

_NEG_INF = float("-inf")


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


def _expandable(n: Node) -> bool:
    if n.op is not ScaledDotProductAttention or n.out is None:
        return False
    q, k, v, mask = n.inputs
    vals = [q, k, v] + ([mask] if mask is not None else [])
    return all(type(x) is Value and x.device == "cpu" for x in vals) and \
        q.ndim == k.ndim == v.ndim >= 2 and q.dtype == k.dtype == v.dtype == n.out.dtype


def expand(graph: Graph) -> Graph:
    if not any(_expandable(n) for n in graph.nodes):
        return graph
    next_id = [1 + max([v.id for v in graph.inputs] +
                       [n.out.id for n in graph.nodes if n.out is not None] + [-1])]

    def fresh(shape, dtype, device):
        v = Value(next_id[0], shape, dtype, device)
        next_id[0] += 1
        return v

    nodes = []
    for n in graph.nodes:
        nodes += _attention(n, fresh) if _expandable(n) else [n]
    return Graph(graph.inputs, nodes, graph.outputs)
