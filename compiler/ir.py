"""The IR: a flat, single-assignment list of nodes in topological order.

``Graph(inputs, nodes, outputs)``; each :class:`Node` applies an op to inputs (IR
:class:`Value` s or Python scalars) with keyword ``params`` and defines one Value.  Ops are
the eager op classes themselves (so ``run_graph`` runs ``op.forward`` exactly as eager
does) plus a few IR-only ops defined here (``Const``, ``Guard``).  A printer that reads
like code, a verifier, and the interpreter ``run_graph`` used as the reference in tests.
"""

from __future__ import annotations

import struct

import numpy as np

from eager.dispatch import promote, runner
from eager.ops.base import Op
from runtime import device as runtime_device


class Value:
    """One SSA value: an array of known shape and dtype on a device (``"cpu"``,
    ``"cuda"``: the type name of a :class:`runtime.device.Device`)."""

    __slots__ = ("id", "shape", "dtype", "device")

    def __init__(self, id: int, shape: tuple, dtype: np.dtype, device: str = "cpu"):
        self.id = id
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.device = device

    def __reduce__(self):
        # compact and canonical (its fields in order, the dtype by its string): graphs
        # are pickled for notes' keys (runtime.cache.note_key, memo-less) and for the
        # compile worker; the default form wrote each Value's field names and a dtype's
        # whole state, 2x the bytes and 4x the time of this
        dt = self.dtype
        return (Value, (self.id, self.shape, dt.str if dt.fields is None else dt, self.device))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"%{self.id}"


class Node:
    """``out = op(*inputs, **params)``; ``where`` is the user's source line, for reports."""

    __slots__ = ("op", "inputs", "params", "out", "where")

    def __init__(self, op, inputs, params, out, where=None):
        self.op = op
        self.inputs = list(inputs)
        self.params = dict(params)
        self.out = out
        self.where = where

    def __reduce__(self):   # (as Value's)
        return (Node, (self.op, self.inputs, self.params, self.out, self.where))

    def values(self):
        """The Value inputs (Python scalars skipped)."""
        return [v for v in self.inputs if type(v) is Value]

    def __repr__(self) -> str:
        return format_node(self)


class Const(Op):
    """A constant array baked into the graph (a tensor made from Python data)."""
    abstract = True
    name = "const"
    differentiable = False
    any_device = True

    def forward(value):
        return value.copy()  # a graph output must not alias the constant across calls


class Guard(Op):
    """Check that a value, read by Python while tracing, still gives the same outcome.

    ``kind`` is how Python read it (``bool``, ``item``, ``float``, ``int``) and
    ``expected`` the outcome seen.  The node defines no value that others use.
    """
    abstract = True
    name = "guard"
    differentiable = False

    def forward(a, kind, expected, index, where=None):
        return np.asarray(outcome(a, kind) == expected)


class FloatBits:
    """A float compared by its bits, where ``==`` is not enough: ``-0.0`` is not ``0.0``
    (``x * s``'s sign, ``math.copysign``) and a NaN equals a NaN of the same bits
    (``nan != nan`` would make every call a miss).  In call keys and branch outcomes only
    zeros and NaNs are wrapped; other floats stay plain."""

    __slots__ = ("value", "bits")

    def __init__(self, value):
        self.value = value
        self.bits = struct.pack("<d", value)

    def __eq__(self, other):
        return type(other) is FloatBits and other.bits == self.bits

    def __hash__(self):
        return hash(self.bits)

    def __repr__(self):
        return repr(self.value)


def outcome_key(v):
    """A branch outcome as the trace compares it: a float zero or NaN by its bits."""
    return FloatBits(v) if type(v) is float and (v != v or v == 0.0) else v


def outcome(a, kind: str):
    """What Python saw when it read array ``a`` as ``kind`` (a value on another device:
    only this scalar is copied to the host)."""
    if type(a) is not np.ndarray:
        a = runtime_device.of(a).to_host(a)
    x = a.reshape(())
    if kind == "bool":
        return bool(x)
    if kind == "float":
        return outcome_key(float(x))
    if kind == "int":
        return int(x)
    return outcome_key(x.item())


class Graph:
    """``inputs`` (Values), ``nodes`` (topological order), ``outputs`` (Values)."""

    def __init__(self, inputs=None, nodes=None, outputs=None):
        self.inputs = list(inputs or [])
        self.nodes = list(nodes or [])
        self.outputs = list(outputs or [])

    def __str__(self) -> str:
        lines = [f"graph({', '.join(_decl(v) for v in self.inputs)}):"]
        lines += ["    " + format_node(n) for n in self.nodes]
        lines.append(f"    return {', '.join(map(repr, self.outputs))}")
        return "\n".join(lines)

    __repr__ = __str__

    def copy(self) -> "Graph":
        return Graph(self.inputs, [Node(n.op, n.inputs, n.params, n.out, n.where)
                                   for n in self.nodes], self.outputs)


def next_value_id(g: Graph) -> int:
    """An id above every Value id that ``g`` declares or defines (for a pass's new Values)."""
    return 1 + max([v.id for v in g.inputs] + [n.out.id for n in g.nodes if n.out is not None]
                   + [-1])


def rewrite(graph: Graph, expansion) -> Graph:
    """``graph`` with each node ``n`` for which ``expansion(n)`` gives a function ``write``
    replaced by ``write(n, fresh)``'s nodes, where ``fresh(shape, dtype, device)`` makes a
    new Value numbered above the graph's; ``graph`` itself when no node is rewritten."""
    todo = [expansion(n) for n in graph.nodes]
    if not any(todo):
        return graph
    next_id = [next_value_id(graph)]

    def fresh(shape, dtype, device):
        v = Value(next_id[0], shape, dtype, device)
        next_id[0] += 1
        return v

    nodes = []
    for n, write in zip(graph.nodes, todo):
        nodes += write(n, fresh) if write is not None else [n]
    return Graph(graph.inputs, nodes, graph.outputs)


def _decl(v: Value) -> str:
    dev = "" if v.device == "cpu" else f"@{v.device}"
    return f"%{v.id}: {v.dtype}{list(v.shape)}{dev}"


def graph_device(g: Graph) -> str:
    """The device a graph's kernels are for: a device other than the CPU if any value
    lives there (a GPU graph may hold CPU scalars, such as an optimizer's step count)."""
    for v in g.inputs:
        if v.device != "cpu":
            return v.device
    for n in g.nodes:
        if n.out is not None and n.out.device != "cpu":
            return n.out.device
    return "cpu"


def _fmt_param(v) -> str:
    if isinstance(v, np.ndarray):
        if v.size > 4:
            return f"array({v.dtype}{list(v.shape)})"
        return np.array2string(v, separator=",").replace("\n", "")
    if isinstance(v, np.dtype):
        return str(v)
    return repr(v)


def format_node(n: Node) -> str:
    args = [repr(a) for a in n.inputs]
    args += [f"{k}={_fmt_param(v)}" for k, v in n.params.items()]
    name = getattr(n.op, "name", None) or getattr(n.op, "__name__", str(n.op))
    out = f"{_decl(n.out)} = " if n.out is not None else ""
    where = f"  # {n.where}" if n.where else ""
    return f"{out}{name}({', '.join(args)}){where}"


def check_graph(g: Graph) -> None:
    """Verify single assignment, definition before use, and outputs defined."""
    defined = set()
    for v in g.inputs:
        if v.id in defined:
            raise AssertionError(f"input %{v.id} declared twice")
        defined.add(v.id)
    for n in g.nodes:
        for v in n.values():
            if v.id not in defined:
                raise AssertionError(f"{format_node(n)}: uses %{v.id} before it is defined")
        if n.out is not None:
            if n.out.id in defined:
                raise AssertionError(f"{format_node(n)}: %{n.out.id} assigned twice")
            defined.add(n.out.id)
    for v in g.outputs:
        if v.id not in defined:
            raise AssertionError(f"output %{v.id} is not defined")


class GuardFailed(Exception):
    """A guard saw a different outcome: this path does not apply to these inputs."""

    def __init__(self, index: int, seen):
        super().__init__(f"guard {index} saw {seen!r}")
        self.index = index
        self.seen = seen


def run_node(n: Node, env: dict):
    """Evaluate one node on arrays from ``env`` (Value id -> array)."""
    args = [env[a.id] if type(a) is Value else a for a in n.inputs]
    op = n.op
    if op is Guard:
        p = n.params
        seen = outcome(args[0], p["kind"])
        if seen != p["expected"]:
            raise GuardFailed(p["index"], seen)
        return None
    if n.out is not None and n.out.device != "cpu":
        return runner(op, n.out.device)(*args, **n.params)
    if op.promotes:
        args = promote(args)
    out = op.forward(*args, **n.params)
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    return out


def run_graph(g: Graph, *arrays) -> list:
    """The reference interpreter: run ``g`` on input arrays, return output arrays.

    Raises :class:`GuardFailed` when a guard's outcome differs from the recorded one.
    """
    if len(arrays) != len(g.inputs):
        raise TypeError(f"graph takes {len(g.inputs)} inputs, got {len(arrays)}")
    env = {v.id: a for v, a in zip(g.inputs, arrays)}
    for n in g.nodes:
        out = run_node(n, env)
        if n.out is not None:
            env[n.out.id] = out
    return [env[v.id] for v in g.outputs]
