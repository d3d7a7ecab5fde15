"""Fold a sum of gradient pieces placed side by side into one concatenation.

Why
    ``split``/``chunk`` (a transformer's ``q, k, v = qkv.split(C, dim=2)``) are slices, so
    their backward is one ``basic_scatter`` per piece (zeros of the whole shape, the piece
    placed at its slice) and the engine adds them up: three zero-filled arrays and two
    additions of the whole shape, where PyTorch's ``SplitBackward`` makes one ``cat``.
    In a ViT step that was ~130 us per attention layer.  When the pieces' slices differ
    in one dimension only and tile it (disjoint, no gap), their sum is the pieces
    concatenated along that dimension: ``add(cat(pieces), 0.0)``.

Exactness
    Each element of the sum is its piece's value plus zeros, in some order; ``x + 0.0``
    is ``x`` for every float but ``-0.0`` (which becomes ``+0.0``), and adding ``0.0``
    again changes nothing, so ``cat(pieces) + 0.0`` has the sum's bits, NaN included.
    The ``+ 0.0`` is elementwise: fusion makes it a kernel with whatever follows.
"""

from __future__ import annotations

from eager.ops.elementwise import Add
from eager.ops.index import BasicScatter
from eager.ops.shape import Cat

from ..ir import Graph, Node, Value, rewrite


def _leaves(v: Value, producer: dict, uses: dict, out: list) -> bool:
    """Collect the ``basic_scatter`` nodes whose sum ``v`` is (through adds used once)."""
    n = producer.get(v.id)
    if n is None or uses.get(v.id, 0) != 1:
        return False
    if n.op is BasicScatter:
        out.append(n)
        return True
    return n.op is Add and not n.params and _summands(n, producer, uses, out)


def _summands(n: Node, producer: dict, uses: dict, out: list) -> bool:
    return all(type(a) is Value and a.shape == n.out.shape and a.dtype == n.out.dtype
               and _leaves(a, producer, uses, out) for a in n.inputs)


def _interval(key: tuple, shape: tuple):
    """``(dim, start, stop)`` of a key that slices one dimension of ``shape`` (every
    other dimension whole, steps of 1); None otherwise."""
    if len(key) > len(shape):
        return None
    cut = None
    for d, size in enumerate(shape):
        e = key[d] if d < len(key) else (0, size, 1)
        if type(e) is not tuple or len(e) != 3 or e[2] != 1:
            return None
        if (e[0], e[1]) != (0, size):
            if cut is not None:
                return None
            cut = (d, e[0], e[1])
    return cut


def _tiling(scatters: list, shape: tuple):
    """``(dim, pieces in order)`` when the scatters' slices tile one dimension."""
    cuts = [_interval(s.params["key"], shape) for s in scatters]
    if None in cuts or len({c[0] for c in cuts}) != 1:
        return None
    d = cuts[0][0]
    order = sorted(range(len(cuts)), key=lambda i: cuts[i][1])
    end = 0
    for i in order:
        if cuts[i][1] != end or cuts[i][2] <= end:
            return None
        end = cuts[i][2]
    return (d, [scatters[i].inputs[0] for i in order]) if end == shape[d] else None


def fold_scatters(graph: Graph) -> Graph:
    producer = {n.out.id: n for n in graph.nodes if n.out is not None}
    uses: dict = {}
    for n in graph.nodes:
        for a in n.inputs:
            if type(a) is Value:
                uses[a.id] = uses.get(a.id, 0) + 1
    for v in graph.outputs:
        uses[v.id] = uses.get(v.id, 0) + 1

    def folding(n: Node):
        """How to write ``n`` as a ``cat`` plus ``0.0``, or None where it stays."""
        scatters: list = []
        if n.op is not Add or n.params or len(n.inputs) != 2 \
                or not _summands(n, producer, uses, scatters) \
                or any(tuple(s.params["shape"]) != n.out.shape for s in scatters):
            return None
        tiling = _tiling(scatters, n.out.shape)
        if tiling is None:
            return None
        d, pieces = tiling

        def write(n: Node, fresh) -> list:
            joined = fresh(n.out.shape, n.out.dtype, n.out.device)
            return [Node(Cat, pieces, {"dim": d}, joined, n.where),
                    Node(Add, [joined, 0.0], {}, n.out, n.where)]
        return write

    return rewrite(graph, folding)
