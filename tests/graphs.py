"""Graphs for compiler tests: ``trace`` records a small function through the Tracer;
``Builder`` builds a graph node by node, running each node to learn shapes and dtypes."""

from __future__ import annotations

import numpy as np

import eager
from compiler.capture import Tracer
from compiler.ir import Const, Graph, Guard, Node, Value, run_node
from eager._state import STATE


def trace(fn, *arrays, device=None):
    """(graph, eager outputs) of ``fn`` on tensors made from ``arrays`` (on ``device``)."""
    ts = [eager.tensor(a, device=device) for a in arrays]
    tr = Tracer()
    for t in ts:
        tr.add_input(t)
    STATE.tracer = tr
    try:
        outs = fn(*ts)
    finally:
        STATE.tracer = None
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return tr.graph([tr.value_of(o) for o in outs]), [o._data for o in outs]


class Builder:
    """Build a graph node by node; shapes and dtypes come from running each node."""

    def __init__(self):
        self.inputs, self.nodes, self.env, self.n = [], [], {}, 0

    def _value(self, arr):
        v = Value(self.n, arr.shape, arr.dtype)
        self.n += 1
        return v

    def input(self, arr):
        arr = np.asarray(arr)
        v = self._value(arr)
        self.inputs.append(v)
        self.env[v.id] = arr
        return v

    def __call__(self, op, *inputs, **params):
        n = Node(op, inputs, params, None)
        out = run_node(n, self.env)
        if op is Guard:
            self.nodes.append(n)
            return None
        n.out = self._value(out)
        self.env[n.out.id] = out
        self.nodes.append(n)
        return n.out

    def const(self, arr):
        return self(Const, value=np.asarray(arr))

    def arrays(self):
        return [self.env[v.id] for v in self.inputs]

    def graph(self, *outputs):
        return Graph(self.inputs, self.nodes, list(outputs))
