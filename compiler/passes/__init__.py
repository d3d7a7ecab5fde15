"""Graph passes, ``Graph -> Graph``, applied in the order of :data:`PASSES`.

``simplify`` drops no-op reshapes and casts, ``constfold`` (folded constants can make
nodes equal), then ``cse``, then ``dce`` last (drops what folding and merging left
unused).  Fusion is not here: it only pays off
for the numba backend, whose codegen calls :func:`.fusion.fuse` itself
(:func:`compiler.codegen.numba_cpu.numba_program`), so ``optimize`` stays
backend-independent and the optimized graph (``Path.graph``) stays op-per-node.
"""

from __future__ import annotations

from ..ir import Graph
from .constfold import constfold
from .cse import cse
from .dce import dce
from .simplify import simplify

PASSES = [simplify, constfold, cse, dce]


def optimize(graph: Graph) -> Graph:
    for p in PASSES:
        graph = p(graph)
    return graph
