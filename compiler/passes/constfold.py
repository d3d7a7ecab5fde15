"""Constant folding: nodes computed only from constants become ``Const`` nodes.

A node folds when every Value it reads is defined by a ``Const`` (Python scalars are
literals anyway), its op is deterministic (not random, not a guard) and it is not an
IR-only op.  Folding runs the node's forward now, with the interpreter eager uses
(:func:`compiler.ir.run_node`), so the constant is exactly what eager computed.

Size limits: a result of more than :data:`MAX_ELEMENTS` elements is not stored as a
constant (it would bloat the graph, and reading it costs memory bandwidth every call);
it stays a node, but small results computed from it still fold.
Uniform values are the exception: a ``Full`` factory stays a ``Full``, and an elementwise
op whose inputs are all ``Full`` (or scalars, or small constants of one value) folds
into a new ``Full`` of its output shape — its value computed on one element of the same
dtypes and ranks, so promotion is eager's.

A value that the graph returns is not turned into a ``Const``: a constant is the same
array on every call, and the caller must get a fresh array each time.
"""

from __future__ import annotations

import numpy as np

from eager.ops.base import OPS
from eager.ops.factory import Full

from ..ir import Const, Graph, Node, run_node

MAX_ELEMENTS = 4096


def _foldable_op(op) -> bool:
    """A registered eager op (not IR-only) that is deterministic."""
    return OPS.get(getattr(op, "name", None)) is op and not getattr(op, "random", False) \
        and not getattr(op, "effect", False)


def _uniform(n: Node):
    """(dtype, scalar value) when node ``n`` defines an array of one repeated value."""
    if n.op is Full:
        p = n.params
        return np.dtype(p["dtype"]), p["value"]
    if n.op is Const:
        a = np.asarray(n.params["value"])
        if a.size and a.size <= MAX_ELEMENTS and a.dtype.kind in "biuf":
            first = a.reshape(-1)[0]
            if np.all(a == first) and not (a.dtype.kind == "f" and np.isnan(first)) and \
                    not (a.dtype.kind == "f" and first == 0 and np.signbit(a).any()
                         != np.signbit(a).all()):
                return a.dtype, first.item()
    return None


def constfold(graph: Graph) -> Graph:
    known: dict = {}      # value id -> node computing it from constants only
    cache: dict = {}      # value id -> its array, computed when first needed
    out_ids = {v.id for v in graph.outputs}
    nodes = []
    changed = False
    for n in graph.nodes:
        if n.op is Const or n.op is Full:
            known[n.out.id] = n
            nodes.append(n)
            continue
        vals = n.values()
        if n.out is None or not _foldable_op(n.op) or not vals \
                or any(v.id not in known for v in vals):
            nodes.append(n)
            continue
        known[n.out.id] = n   # constant, whether or not it becomes a Const node
        new = None if n.out.id in out_ids else _fold(n, known, cache)
        if new is None:
            nodes.append(n)
            continue
        known[n.out.id] = new
        nodes.append(new)
        changed = True
    if not changed:
        return graph
    return Graph(graph.inputs, nodes, graph.outputs)


def _value(vid: int, known: dict, cache: dict) -> np.ndarray:
    """The array of a constant value (computing the nodes it depends on once)."""
    a = cache.get(vid)
    if a is None:
        n = known[vid]
        env = {v.id: _value(v.id, known, cache) for v in n.values()}
        with np.errstate(all="ignore"):
            a = cache[vid] = run_node(n, env)
    return a


def _fold(n: Node, known: dict, cache: dict):
    size = int(np.prod(n.out.shape))
    if size <= MAX_ELEMENTS:
        try:
            out = _value(n.out.id, known, cache)
        except Exception:  # noqa: BLE001 - leave it to run (and raise) as eager would
            return None
        if isinstance(out, np.generic):  # (a NumPy scalar: a 0-d array)
            out = np.asarray(out)
        if type(out) is not np.ndarray or out.shape != n.out.shape \
                or out.dtype != n.out.dtype:
            return None  # (a device's array stays a node: a Const holds host arrays)
        if out.base is not None or not out.flags.c_contiguous:
            out = np.ascontiguousarray(out).copy()
        return Node(Const, [], {"value": out}, n.out, n.where)
    if not getattr(n.op, "elementwise", False):
        return None
    # a large elementwise result of uniform inputs: compute one element, make a Full
    env = {}
    for v in n.values():
        u = _uniform(known[v.id])
        if u is None:
            return None
        dt, val = u
        env[v.id] = np.full((1,) * len(v.shape), val, dtype=dt)
    try:
        with np.errstate(all="ignore"):
            one = run_node(n, env)
    except Exception:  # noqa: BLE001
        return None
    if one.dtype != n.out.dtype or one.size != 1:
        return None
    value = one.reshape(-1)[0].item()
    return Node(Full, [], {"shape": tuple(n.out.shape), "value": value,
                           "dtype": n.out.dtype}, n.out, n.where)
