"""Dead-code elimination: drop nodes whose value no output or guard needs.

Guards, random ops and ops with an effect are kept: a guard is a check, a random op
advances the generator, which eager did too (so ``manual_seed`` reproduces compiled runs),
and an op with an effect (``Op.effect``: a collective) acts outside the process — the
other ranks wait for it.
"""

from __future__ import annotations

from ..ir import Graph, Guard, Value


def has_effect(node) -> bool:
    op = node.op
    return op is Guard or getattr(op, "random", False) or getattr(op, "effect", False)


def dce(graph: Graph) -> Graph:
    live = {v.id for v in graph.outputs}
    kept = []
    for n in reversed(graph.nodes):
        if has_effect(n) or (n.out is not None and n.out.id in live):
            kept.append(n)
            for a in n.inputs:
                if type(a) is Value:
                    live.add(a.id)
    kept.reverse()
    return Graph(graph.inputs, kept, graph.outputs)
