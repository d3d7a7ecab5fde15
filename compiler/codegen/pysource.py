"""Straight-line Python source for a graph: one line per IR node, the node as a comment.

Each op's forward (and parameters that are not literals) are bound as globals of the
generated function, so a call costs one Python function call per node.  Fused kernels
from other codegen modules plug in through ``extra_lines``-style hooks: a node whose op
provides ``emit(node, names, globals_)`` writes its own line.
"""

from __future__ import annotations

import numpy as np

from eager import dtypes as _dt
from eager.dispatch import promote, runner

from ..ir import Graph, Guard, GuardFailed, Value, format_node, outcome


class CompiledGraph:
    """A callable program with its generated source and the kernels it uses."""

    __slots__ = ("fn", "_source", "kernels", "writes_inputs", "__weakref__")

    def __init__(self, fn, source, kernels: list):
        self.fn = fn
        self._source = source   # the text, or a function making it when first asked for
        self.kernels = kernels
        self.writes_inputs = False  # computes write-backs straight into input arrays

    @property
    def source(self) -> str:
        s = self._source
        if not isinstance(s, str):
            s = self._source = s()
        return s

    @source.setter
    def source(self, text: str) -> None:
        self._source = text

    def __call__(self, *arrays):
        return self.fn(*arrays)


def _literal(x) -> bool:
    """Values whose repr is Python source for themselves (not nan/inf floats)."""
    t = type(x)
    if t is float:
        return x == x and x not in (float("inf"), float("-inf"))
    return x is None or t in (int, bool, str) or (t is tuple and all(_literal(e) for e in x))


def _casts(n) -> bool:
    """Whether ``n`` needs PyTorch's promotion applied before its forward (dtypes are
    static).  A ufunc op whose NumPy result type already equals PyTorch's (float32 * bool)
    computes the mixed types itself, without a cast copy."""
    rt = _dt.result_type(*n.inputs)
    if not any(_dt.cast_needed(a, rt) for a in n.inputs):
        return False
    if n.op.ufunc is not None:
        try:
            return np.result_type(*[a.dtype if type(a) is Value else a
                                    for a in n.inputs]) != n.out.dtype
        except TypeError:
            return True
    return True


def python_program(graph: Graph, name: str = "graph") -> CompiledGraph:
    glb = {"__GuardFailed": GuardFailed, "__outcome": outcome, "__promote": promote,
           "__asarray": np.asarray, "__ndarray": np.ndarray}
    names = {}
    args = []
    for v in graph.inputs:
        names[v.id] = f"v{v.id}"
        args.append(f"v{v.id}")
    lines = [f"def {name}({', '.join(args)}):"]
    starts = []  # where each node's lines begin: its comment goes there, when asked for
    for k, n in enumerate(graph.nodes):
        starts.append(len(lines))
        emit = getattr(n.op, "emit", None)
        if emit is not None:
            lines.extend("    " + ln for ln in emit(n, names, glb))
            continue
        ins = []
        for i, a in enumerate(n.inputs):
            if type(a) is Value:
                ins.append(names[a.id])
            elif _literal(a):
                ins.append(repr(a))
            else:
                glb[f"c{k}_{i}"] = a
                ins.append(f"c{k}_{i}")
        if n.op is Guard:
            p = n.params
            glb[f"e{k}"] = p["expected"]
            lines.append(f"    if __outcome({ins[0]}, {p['kind']!r}) != e{k}:")
            lines.append(f"        raise __GuardFailed({p['index']}, "
                         f"__outcome({ins[0]}, {p['kind']!r}))")
            continue
        params = []
        for key, val in n.params.items():
            if _literal(val):
                params.append(f"{key}={val!r}")
            else:
                glb[f"p{k}_{key}"] = val
                params.append(f"{key}=p{k}_{key}")
        fname = f"op{k}_{n.op.name}"
        on_cpu = n.out.device == "cpu"
        glb[fname] = n.op.forward if on_cpu else runner(n.op, n.out.device)
        out = f"v{n.out.id}"
        names[n.out.id] = out
        call_args = ", ".join(ins)
        if on_cpu and n.op.promotes and _casts(n):
            call_args = f"*__promote([{call_args}])"
        call = f"{fname}({', '.join([call_args] + params) if call_args else ', '.join(params)})"
        lines.append(f"    {out} = {call}")
        if on_cpu and not n.out.shape:  # NumPy returns 0-d results as scalars
            lines.append(f"    if type({out}) is not __ndarray: {out} = __asarray({out})")
    lines.append(f"    return [{', '.join(names[v.id] for v in graph.outputs)}]")
    exec(compile("\n".join(lines) + "\n", f"<dyngraph {name}>", "exec"), glb)
    nodes = graph.nodes

    def commented() -> str:  # the source with each node's IR as a comment (explain())
        out = list(lines)
        for k in range(len(nodes) - 1, -1, -1):
            out.insert(starts[k], "    # " + format_node(nodes[k]).replace("\n", " "))
        return "\n".join(out) + "\n"
    return CompiledGraph(glb[name], commented, [])
