"""Straight-line Python source for a graph: one line per IR node, the node as a comment.

Each op's forward (and parameters that are not literals) are bound as globals of the
generated function, so a call costs one Python function call per node.  Dtypes are
static: PyTorch's promotion becomes casts written into the source (eager decides them at
run time), and 0-d float arithmetic is written as Python operators on NumPy scalars
(NumPy's scalar maths: the ufuncs' IEEE results, ~10x cheaper than a ufunc on a 0-d
array), converted back to 0-d arrays where an op or the caller takes them.  Fused kernels
from other codegen modules plug in through ``extra_lines``-style hooks: a node whose op
provides ``emit(node, names, globals_)`` writes its own line.
"""

from __future__ import annotations

import numpy as np

from eager import dtypes as _dt
from eager.dispatch import runner
from eager.ops import elementwise as _E
from eager.ops import linalg as _L
from eager.ops import reduce as _R
from eager.ops import shape as _S

from ..ir import Graph, Guard, GuardFailed, Value, format_node, outcome
from .inplace import Overwrites


class CompiledGraph:
    """A callable program with its generated source and the kernels it uses."""

    __slots__ = ("fn", "_source", "kernels", "writes_inputs", "native_misses",
                 "first_write", "native_later", "__weakref__")

    def __init__(self, fn, source, kernels: list):
        self.fn = fn
        self._source = source   # the text, or a function making it when first asked for
        self.kernels = kernels
        self.writes_inputs = False  # computes write-backs straight into input arrays
        self.native_misses = None   # whole-trace native code: [calls rerun as Python]
        self.first_write = None     # generated Python: (code, line of the first such write)
        self.native_later = False   # fused kernels now, a whole-trace function to build next

    def wrote_before(self, exc: BaseException) -> bool:
        """Whether the call that raised ``exc`` may have written into its inputs (then it
        cannot be rerun eagerly from them)."""
        if not self.writes_inputs:
            return False
        if self.first_write is None:
            return True
        code, line = self.first_write
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code is code:
                return tb.tb_lineno >= line
            tb = tb.tb_next
        return True

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


def _cast_args(n, k: int, ins: list, glb: dict) -> list:
    """The argument texts of node ``k`` cast to PyTorch's result dtype, decided here from
    the static dtypes (what eager's ``promote`` decides at run time): an array input
    becomes ``x.astype(rt)``, a Python scalar a constant of ``rt``."""
    rt = _dt.result_type(*n.inputs)
    out = []
    for i, (a, text) in enumerate(zip(n.inputs, ins)):
        if type(a) is Value:
            if _dt.cast_needed(a, rt):
                glb[f"t{k}"] = rt
                text = f"{text}.astype(t{k})"
        elif _dt.cast_needed(a, rt):
            glb[f"c{k}_{i}"] = np.asarray(a, dtype=rt)
            text = f"c{k}_{i}"
        out.append(text)
    return out


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

# 0-d float arithmetic as Python operators on NumPy scalars: IEEE-identical to the ufuncs
# (NumPy's scalar maths), ~50 ns instead of ~600 ns for a ufunc call on a 0-d array plus
# its conversion back (an optimizer's bias corrections are a dozen such nodes per tensor)
_SCALAR = {_E.Add: "{0} + {1}", _E.Sub: "{0} - {1}", _E.Mul: "{0} * {1}", _E.Div: "{0} / {1}",
           _E.Neg: "-{0}", _E.Pow: "{0} ** {1}", _E.Sqrt: "__sqrt({0})", _E.Cast: "{t}({0})"}


def _scalar_node(n) -> bool:
    """Whether node ``n`` is 0-d float arithmetic on 0-d floats and Python numbers."""
    out = n.out
    if out is None or n.op not in _SCALAR or out.shape or out.device != "cpu" \
            or out.dtype.char not in "fd":
        return False
    if n.op is _E.Cast:
        if set(n.params) != {"dtype"}:
            return False
    elif n.params:
        return False
    for a in n.inputs:
        if type(a) is Value:
            if a.shape or a.dtype.char not in "fd" or a.device != "cpu":
                return False
        elif type(a) not in (int, float) or not _literal(a):
            return False
    return True


# ufuncs that compute a node's forward exactly when every operand has the output's float
# dtype (Python numbers are weak scalars): such a node can write through ``out=``
_UFUNCS = {_E.Add: np.add, _E.Sub: np.subtract, _E.Mul: np.multiply, _E.Div: np.true_divide,
           _E.Neg: np.negative, _E.Sqrt: np.sqrt, _E.Exp: np.exp, _E.Maximum: np.maximum,
           _E.Minimum: np.minimum}


def _float_elementwise(n, same: bool = True) -> bool:
    """Float elementwise maths on floats (``same``: of the output's dtype) and Python
    numbers: NumPy ufuncs that cannot raise (a write into an input may come before it)."""
    out = n.out
    if out is None or not n.op.elementwise or out.dtype.kind != "f" or n.params \
            or out.device != "cpu":
        return False
    return all((a.dtype == out.dtype if same else a.dtype.kind == "f") if type(a) is Value
               else type(a) in (int, float) for a in n.inputs)


def _inline(n, ins: list) -> list | None:
    """The lines of node ``n`` as the NumPy calls its forward makes for these static
    shapes and dtypes, without the forward's own call and checks (None: call the
    forward).  Each form is exactly what the op's ``forward`` computes in that case."""
    op, out, a = n.op, n.out, n.inputs
    if out.device != "cpu" or any(type(v) is Value and v.device != "cpu" for v in a):
        return None
    o = f"v{out.id}"
    if op is _L.Linear or op is _L.Matmul:
        x, w = a[0], a[1]
        b = a[2] if len(a) > 2 else None
        if type(x) is not Value or type(w) is not Value or len(x.shape) < 2 \
                or len(w.shape) < 2 or x.dtype != w.dtype or x.dtype.kind != "f":
            return None
        nx, nw = len(x.shape), len(w.shape)
        if op is _L.Matmul:
            if nx > 2 and nw == 2:   # the forward folds the batch into the rows
                rows = int(np.prod(x.shape[:-1]))
                return [f"{o} = __matmul({ins[0]}.reshape(({rows}, {x.shape[-1]})), "
                        f"{ins[1]}).reshape({tuple(out.shape)!r})"]
            # (stacks: the forward checks that the batch shapes broadcast; the trace ran it)
            return [f"{o} = __matmul({ins[0]}, {ins[1]})"]
        if nw != 2:
            return None
        if nx == 2:
            lines = [f"{o} = __matmul({ins[0]}, {ins[1]}.T)"]
        else:
            rows = int(np.prod(x.shape[:-1]))
            lines = [f"{o} = __matmul({ins[0]}.reshape(({rows}, {x.shape[-1]})), {ins[1]}.T)"
                     f".reshape({tuple(out.shape)!r})"]
        if b is None:
            return lines
        if type(b) is not Value or b.dtype != x.dtype or len(b.shape) != 1 \
                or b.shape[0] != w.shape[0]:
            return None
        return lines + [f"__add({o}, {ins[2]}, out={o})"]
    if op is _E.Relu and type(a[0]) is Value and a[0].dtype.kind == "f":
        return [f"{o} = __maximum({ins[0]}, 0)"]
    if op is _S.Permute and type(a[0]) is Value:
        return [f"{o} = {ins[0]}.transpose({tuple(n.params['dims'])!r})"]
    if op is _R.Norm and type(a[0]) is Value and n.params["p"] == 2.0 \
            and a[0].dtype in (_F32, _F64) and out.dtype == a[0].dtype \
            and sorted(n.params["dim"]) == list(range(len(a[0].shape))):
        # norm_quiet's 2-norm of a whole float32/64 array (a clipped gradient's): |x|*|x|
        # is x*x, a sum over every axis is add.reduce over axis None (the same reduction)
        keep = f".reshape({tuple(out.shape)!r})" if n.params.get("keepdim") else ""
        return ["with __errstate(divide='ignore', invalid='ignore', over='ignore'):",
                f"    {o} = __asarray(__sqrt(__add_reduce({ins[0]} * {ins[0]}, axis=None))){keep}"]
    if op is _S.SumTo and type(a[0]) is Value:
        src, shape = tuple(a[0].shape), tuple(n.params["shape"])
        if src == shape:
            return [f"{o} = {ins[0]}"]
        lead = len(src) - len(shape)
        axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape)
                                          if d == 1 and src[i + lead] != 1)
        return [f"{o} = {ins[0]}.sum(axis={axes!r}, keepdims=True).reshape({shape!r})"]
    return None


def _write_plan(graph: Graph, inplace: dict | None, scalar: set) -> dict:
    """Node index -> the input Value whose array that node's output is computed into: a
    write-back whose old contents nothing later reads (:class:`.inplace.Overwrites`),
    made by a float ufunc node (through ``out=``) or by 0-d scalar arithmetic (stored with
    ``x[()] = ``), with nothing that can raise after the first such write (a call that
    raises before it falls back to eager from unchanged inputs)."""
    if not inplace:
        return {}
    nodes = graph.nodes
    plan = {}
    writes = None
    for i in range(len(nodes) - 1, -1, -1):
        n = nodes[i]
        if n.out is None:
            break
        src = inplace.get(n.out.id)
        if src is not None and src.shape == n.out.shape and src.dtype == n.out.dtype \
                and (n.out.id in scalar or n.op in _UFUNCS and _float_elementwise(n)):
            writes = writes or Overwrites(nodes, graph.outputs)
            if writes.allowed(i, src):
                plan[i] = src
        if not (n.out.id in scalar or _float_elementwise(n, same=False) or n.op is _E.Cast
                and set(n.params) == {"dtype"} and n.out.dtype.kind == "f"):
            break  # this node may raise: no write before it
    return plan


def python_program(graph: Graph, name: str = "graph", inplace=None) -> CompiledGraph:
    """``inplace``: output value id -> the input Value it replaces (write-backs), computed
    into that input's array where :func:`_write_plan` allows."""
    glb = {"__GuardFailed": GuardFailed, "__outcome": outcome,
           "__asarray": np.asarray, "__ndarray": np.ndarray, "__sqrt": np.sqrt,
           "__matmul": np.matmul, "__add": np.add, "__maximum": np.maximum,
           "__add_reduce": np.add.reduce, "__errstate": np.errstate}
    scalar = {n.out.id for n in graph.nodes if _scalar_node(n)}
    # values that may stay NumPy scalars: every use is 0-d arithmetic, none is returned
    users: dict = {}
    for n in graph.nodes:
        scalar_use = n.out is not None and n.out.id in scalar
        for a in n.inputs:
            if type(a) is Value:
                users.setdefault(a.id, []).append(scalar_use)
    for v in graph.outputs:
        users.setdefault(v.id, []).append(False)
    writes = _write_plan(graph, inplace, scalar)
    first_write = None
    returned = {}  # value id -> the name returned for it, where not its own (a write)
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
        if on_cpu and n.op.promotes and _casts(n):
            ins = _cast_args(n, k, ins, glb)
        dst = writes.get(k)
        if dst is not None and first_write is None:
            first_write = len(lines) + 1  # 1-based line number of the write's line
        if n.out.id in scalar:
            if n.op is _E.Cast:
                glb[f"t{k}"] = np.dtype(n.params["dtype"]).type
            lines.append(f"    {out} = " + _SCALAR[n.op].format(*ins, t=f"t{k}"))
            if dst is not None:  # stored into the input it replaces, which is returned
                lines.append(f"    {names[dst.id]}[()] = {out}")
                returned[n.out.id] = names[dst.id]
            if not all(users.get(n.out.id, ())):  # an array for the ops and the caller
                lines.append(f"    {out} = __asarray({out})")
            continue
        if dst is not None:  # computed into the input it replaces
            glb[f"u{k}"] = _UFUNCS[n.op]
            lines.append(f"    {out} = u{k}({', '.join(ins)}, out={names[dst.id]})")
            continue
        inline = _inline(n, ins) if on_cpu else None
        if inline is not None:
            lines.extend("    " + ln for ln in inline)
            if not n.out.shape:  # NumPy returns 0-d results as scalars
                lines.append(f"    if type({out}) is not __ndarray: {out} = __asarray({out})")
            continue
        call_args = ", ".join(ins)
        call = f"{fname}({', '.join([call_args] + params) if call_args else ', '.join(params)})"
        lines.append(f"    {out} = {call}")
        if on_cpu and not n.out.shape:  # NumPy returns 0-d results as scalars
            lines.append(f"    if type({out}) is not __ndarray: {out} = __asarray({out})")
    lines.append("    return [" + ", ".join(returned.get(v.id, names[v.id])
                                      for v in graph.outputs) + "]")
    exec(compile("\n".join(lines) + "\n", f"<dyngraph {name}>", "exec"), glb)
    nodes = graph.nodes

    def commented() -> str:  # the source with each node's IR as a comment (explain())
        out = list(lines)
        for k in range(len(nodes) - 1, -1, -1):
            out.insert(starts[k], "    # " + format_node(nodes[k]).replace("\n", " "))
        return "\n".join(out) + "\n"
    prog = CompiledGraph(glb[name], commented, [])
    if first_write is not None:
        prog.writes_inputs = True
        prog.first_write = (glb[name].__code__, first_write)
    return prog


def lazy_python_program(graph: Graph, inplace=None) -> CompiledGraph:
    """:func:`python_program`, generated at its first call (or when its source is asked
    for): a trace that never replays (an optimizer's first step, whose state the second
    step changes) costs no code generation."""
    prog = CompiledGraph(None, None, [])

    def build() -> CompiledGraph:
        real = python_program(graph, inplace=inplace)
        prog.writes_inputs, prog.first_write = real.writes_inputs, real.first_write
        prog._source, prog.fn = real._source, real.fn
        return real

    prog.fn = lambda *arrays: build().fn(*arrays)
    prog._source = lambda: build().source
    return prog

