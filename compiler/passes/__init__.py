"""Graph passes, ``Graph -> Graph``, applied in the order of :data:`PASSES`.

``simplify`` drops no-op reshapes and casts, ``fold_scatters`` makes a sum of gradient
pieces that tile a dimension one ``cat`` (:mod:`.scatters`: ``split``'s backward),
``expand`` writes composite ops as the ops their backward recomputes (:mod:`.expand`),
``constfold`` (folded constants can make
nodes equal), then ``cse``, then ``dce`` last (drops what folding and merging left
unused).  Fusion (:func:`.fusion.fuse`, or :func:`.fusion.fusion_for` a device) is a
pass of the same form, parameterised by what the device can fuse; it is not in this
list because the generated-Python tier runs the optimized graph (``Path.graph``) one op
per node, and each device's code generator fuses for itself.
"""

from __future__ import annotations

from ..ir import Graph
from .constfold import constfold
from .cse import cse
from .dce import dce
from .expand import expand
from .scatters import fold_scatters
from .simplify import simplify

PASSES = [simplify, fold_scatters, expand, constfold, cse, dce]


def optimize(graph: Graph) -> Graph:
    for p in PASSES:
        graph = p(graph)
    return graph
