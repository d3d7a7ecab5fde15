"""Remove no-op nodes: a reshape/view/expand/sum_to to the shape the value already has, a
cast to its own dtype, an identity permute.  Backward formulas emit these generically
(the engine reshapes and casts gradients to each input's metadata); each costs a call."""

from __future__ import annotations

from eager.ops.elementwise import Cast
from eager.ops.shape import Expand, Permute, Reshape, SumTo, View

from ..ir import Graph, Node, Value

_SAME_SHAPE = frozenset({Reshape, View, Expand, SumTo})


def _is_noop(n: Node) -> bool:
    if not n.inputs or type(n.inputs[0]) is not Value or n.out is None:
        return False
    src = n.inputs[0]
    op = n.op
    if op in _SAME_SHAPE:
        return src.shape == n.out.shape and src.dtype == n.out.dtype
    if op is Cast:
        return src.dtype == n.out.dtype
    if op is Permute:
        return tuple(n.params.get("dims", ())) == tuple(range(len(src.shape)))
    return False


def simplify(graph: Graph) -> Graph:
    alias: dict[int, Value] = {}
    nodes = []
    for n in graph.nodes:
        inputs = [alias.get(a.id, a) if type(a) is Value else a for a in n.inputs]
        if inputs != n.inputs:
            n = Node(n.op, inputs, n.params, n.out, n.where)
        if _is_noop(n):
            alias[n.out.id] = inputs[0]
            continue
        nodes.append(n)
    outputs = [alias.get(v.id, v) for v in graph.outputs]
    return Graph(graph.inputs, nodes, outputs)
