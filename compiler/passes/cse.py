"""Common-subexpression elimination: a node equal to an earlier one reuses its value.

Two nodes are equal when they have the same op, the same inputs (the same Values after
earlier replacements; Python scalars of the same type and value — ``1``, ``1.0`` and
``True`` differ, and so do ``0.0`` and ``-0.0``) and equal params.  Never merged: random
ops (each draws fresh numbers), guards (checks, no value), ops with an effect (two equal
all-reduces are two collectives the other ranks take part in), nodes whose params cannot
be compared (anything but literals, dtypes, tuples of them and small arrays), and two nodes
that are both graph outputs — the caller would get one array twice where eager gave two
independent tensors (an in-place write to one would show in the other).  ``Const`` nodes
merge when their arrays have the same dtype, shape and bytes.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, Node, Value
from .dce import has_effect

_MAX_CONST_BYTES = 1 << 16   # larger constants are compared by identity only


class _NoKey(Exception):
    pass


def _key(x):
    t = type(x)
    if t is Value:
        raise AssertionError("values are keyed by the caller")
    if x is None or t is bool or t is int or t is str:
        return (t.__name__, x)
    if t is float:
        return ("float", "nan", id(x)) if math.isnan(x) else ("float", x.hex())
    if isinstance(x, np.dtype):
        return ("dtype", x.str)
    if isinstance(x, (np.integer, np.bool_)):
        return (x.dtype.str, x.item())
    if isinstance(x, np.floating):
        return _key(float(x)) + (x.dtype.str,)
    if t is tuple or t is list:
        return (t.__name__,) + tuple(_key(e) for e in x)
    if isinstance(x, type):
        return ("type", x)
    if t is np.ndarray:
        if x.nbytes > _MAX_CONST_BYTES:
            return ("array-id", id(x))
        return ("array", x.dtype.str, x.shape, x.tobytes())
    raise _NoKey


def node_key(n: Node):
    """A hashable key equal for equal nodes, or None when ``n`` must not be merged."""
    if n.out is None or has_effect(n):
        return None
    try:
        ins = tuple(("v", a.id) if type(a) is Value else _key(a)
                    for a in n.inputs)
        params = tuple(sorted((k, _key(v)) for k, v in n.params.items()))
    except _NoKey:
        return None
    return (n.op, ins, params)


def cse(graph: Graph) -> Graph:
    out = _cse(graph, protect_outputs=False)
    # outputs must stay distinct arrays: if merges made two outputs one value, redo the
    # pass without replacing any output (rare)
    if len({v.id for v in out.outputs}) < len({v.id for v in graph.outputs}):
        out = _cse(graph, protect_outputs=True)
    return out


def _cse(graph: Graph, protect_outputs: bool) -> Graph:
    rename: dict = {}      # replaced value id -> the Value that stands for it
    seen: dict = {}        # node key -> the first node's output Value
    out_ids = {v.id for v in graph.outputs}
    nodes = []
    for n in graph.nodes:
        if any(type(a) is Value and a.id in rename for a in n.inputs):
            n = Node(n.op, [rename[a.id] if type(a) is Value and a.id in rename else a
                            for a in n.inputs], n.params, n.out, n.where)
        key = node_key(n)
        if key is not None:
            prev = seen.get(key)
            if prev is None:
                seen[key] = n.out
            elif prev.shape == n.out.shape and prev.dtype == n.out.dtype and not (
                    n.out.id in out_ids and (protect_outputs or prev.id in out_ids)):
                rename[n.out.id] = prev
                continue
        nodes.append(n)
    if not rename:
        return graph
    return Graph(graph.inputs, nodes, [rename.get(v.id, v) for v in graph.outputs])
