"""Whole-trace native code for the CPU: a graph whose every node has native code becomes
one ``@numba.njit`` function, so a replay is one native call.

Why
    In a small training step (the main example's MLP, batch 100) the generated Python
    program spends about as long in ~40 Python-level calls (op forwards with their
    checks, kernel dispatches, allocations) as NumPy spends computing.  Here the whole
    trace — fused elementwise kernels, BLAS matrix products (NumPy's own BLAS, called as
    ``np.matmul`` calls it: :mod:`runtime.cpu.blas`), reductions, log-softmax and the NLL
    loss with their gradients — is one compiled function: Numba's dispatcher unboxes the
    inputs once and every step in between is native.

What is native (:data:`EMITTERS`)
    Fused kernels (called from the trace: the kernel modules of :mod:`.numba_cpu`, so the
    scalar maths is the one written on the ops), ``matmul`` (matrices, a stack of rows
    times a matrix, a matrix times a stack, stacks of equal batch shape) and ``linear`` in
    float32/float64, convolutions and pooling (``im2col``, ``col2im``, ``conv_product``,
    ``argmax``/``argmin`` over one dimension, ``pick_along_dim``/``place_along_dim``:
    calls into :mod:`runtime.cpu.window`, compiled once into the disk cache),
    ``sum``/``mean``/``sum_to`` of floats, ``softmax``/``log_softmax`` over the last
    dimension, the 2-norm of a whole tensor, ``nll_loss`` and its gradient, row lookups
    (``index`` on dimension 0, an embedding) and their gradient (``index_put_add``),
    ``stack`` along 0, integer ``arange``, ``full``, ``contiguous``, ``expand``,
    ``permute``/``reshape``/``view``/``(un)squeeze`` inside the trace.  Shapes are static (a
    trace is per shape).  A graph with any other node — a branch guard, a random op, an
    effect, a view returned to the user, a kernel big enough for the parallel variant — or
    whose function would exceed :data:`MAX_LINES` keeps the program of :mod:`.numba_cpu`.
    A function longer than :data:`FIRST_LINES` is left to a trace's second build
    (:class:`Deferred`; docs/ARCHITECTURE-compiler.md, item 9).

Contract
    Inputs are C-contiguous (the function is compiled for exactly that and no other
    signature).  A call with another layout (a broadcast gradient, a transposed view) is
    tried once more on C-contiguous copies of its inputs (``native_misses`` counts these
    calls: Numba's refusal alone costs tens of µs); an error inside (a target index out
    of bounds in ``nll_loss``) reruns that call as the generated Python of the plain
    graph, which computes eager's values and raises eager's errors.  Optimizer updates
    write into their parameters in place only when no node that can raise comes after
    the first such write (:func:`inplace_safe`); on the copies of a retried call the
    caller copies the results into the targets.
    Arithmetic: kernels as in :mod:`.numba_cpu`; sums accumulate in float64 like the
    fused reductions; matrix products are BLAS calls like NumPy's (another BLAS build:
    results may differ from eager in the last bits, as between two BLAS libraries).
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import os

import numba
import numpy as np
from numba import types as nbt

from eager.ops import conv as _conv
from eager.ops import factory as _fac
from eager.ops import index as _I
from eager.ops import linalg as _la
from eager.ops import loss as _loss
from eager.ops import reduce as _R
from eager.ops import shape as _S
from eager.ops import window as _W
from runtime.cpu import DEVICE as CPU
from runtime.cpu import compile_worker
from runtime.cpu.launch import Adaptive

from ..ir import Const, Graph, Value
from ..passes.fusion import FusedElementwise, TupleGet
from .pysource import CompiledGraph, python_program


class Unsupported(Exception):
    """A node without native code: the graph keeps the Python program."""


HEADER = '''"""dyngraph: whole-trace native program (generated; the text is its own cache key)."""
import numba
import numpy as np
'''

_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
#: the largest whole-trace function compiled (source lines); a bigger trace keeps the
#: program of fused kernels, so that a large model's first steps are not spent compiling
MAX_LINES = 320
#: the largest one built at once when a trace is first built (``native="first"``): a longer
#: one (the digits CNN's step: 257 lines, ~20 s from a cold cache) is built after the
#: trace's fused kernels run, as its second build (:class:`Deferred`); the VAE's step
#: (202 lines) and shorter ones stay one build, as before
FIRST_LINES = 240


class Deferred(Unsupported):
    """The whole-trace function is longer than :data:`FIRST_LINES`: the trace runs its
    fused kernels first, and this function is built next."""


@functools.cache
def _blas_ready() -> bool:
    """Whether SciPy's BLAS is installed (found, not imported): Numba's ``np.dot``,
    compiled into :func:`runtime.cpu.blas.matmul` for strides BLAS cannot take, needs it
    to build (typing imports it, in the compile worker).  At run time only such a product
    would import it (Numba's helper library does, at its first call): the others call
    NumPy's BLAS, so a process loading a native trace does not import SciPy (~0.4 s)."""
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        return False
    return spec is not None and any(
        os.path.exists(os.path.join(p, "linalg", "cython_blas" + suffix))
        for p in spec.submodule_search_locations or ()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _dt(dtype: np.dtype) -> str:
    return "np.bool_" if dtype == np.bool_ else f"np.{np.dtype(dtype).name}"


def _lit(x, dtype: np.dtype) -> str:
    x = float(x) if dtype.kind == "f" else int(x) if dtype.kind in "iu" else bool(x)
    if isinstance(x, float) and not np.isfinite(x):
        x = "np.nan" if x != x else ("np.inf" if x > 0 else "-np.inf")
    return f"{_dt(dtype)}({x})"


class Writer:
    """State while writing one trace: names, layouts of values, lines, imports."""

    def __init__(self):
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self.layout: dict[int, str] = {}    # value id -> "C", "F" or "A"
        self.imports: dict[str, str] = {}   # module name -> alias
        self.tuples: dict[int, list] = {}   # multi-output kernel value id -> its arrays
        self.consts: list = []               # arrays passed after the inputs
        self.tmp = 0

    def name(self, v) -> str:
        if type(v) is not Value:
            raise Unsupported(f"a constant operand {type(v).__name__}")
        return self.names[v.id]

    def contig(self, v) -> str:
        """``v`` as a C-contiguous array expression."""
        n = self.name(v)
        return n if self.layout.get(v.id) == "C" else f"np.ascontiguousarray({n})"

    def mm(self) -> str:
        """The matrix product NumPy's ``matmul`` computes (:func:`runtime.cpu.blas.matmul`:
        NumPy's own BLAS call, so eager's bits)."""
        return self.imports.setdefault("runtime.cpu.blas", "B") + ".matmul"

    def blas(self, v) -> str:
        """``v`` as an operand of a matrix product (C or F contiguous)."""
        n = self.name(v)
        return n if self.layout.get(v.id) in ("C", "F") else f"np.ascontiguousarray({n})"

    def fresh(self) -> str:
        self.tmp += 1
        return f"_t{self.tmp}"

    def define(self, v, expr: str | None = None, layout: str = "C") -> str:
        name = f"v{v.id}"
        if expr is not None:
            self.lines.append(f"{name} = {expr}")
        self.names[v.id] = name
        self.layout[v.id] = layout
        return name


# -- emitters: (node, writer) -> None; raise Unsupported ------------------------------------

def _kernel(n, w: Writer):
    L = n.params["launch"]
    if isinstance(L.fn, Adaptive):
        raise Unsupported("a kernel large enough for its parallel variant")
    mod = L.fn.py_func.__module__
    alias = w.imports.setdefault(mod, f"K{len(w.imports)}")
    args = [w.contig(v) for v in n.inputs]
    extra = [repr(L.shape_arg)] if L.shape_arg is not None else []
    into = L.inplace or {}  # write-backs computed straight into their target inputs
    outs = []
    for m, (shape, dt, _reuse) in enumerate(L.outs):
        if m in into:
            outs.append(into[m])
            continue
        o = w.fresh()
        w.lines.append(f"{o} = np.empty({tuple(shape)!r}, {_dt(dt)})")
        outs.append(o)
    if into:
        alias = w.imports.setdefault(L.inplace_fn.py_func.__module__, f"K{len(w.imports)}")
        rest = [o for m, o in enumerate(outs) if m not in into]
        w.lines.append(f"{alias}.kernel({', '.join(args + rest + extra)})")
    else:
        w.lines.append(f"{alias}.kernel({', '.join(args + outs + extra)})")
    if len(outs) == 1 and into:  # the input itself: returned as the input (no copy)
        w.names[n.out.id], w.layout[n.out.id] = outs[0], "C"
    elif len(outs) == 1:
        w.define(n.out, outs[0])
    else:
        w.tuples[n.out.id] = outs


def _tuple_get(n, w: Writer):
    items = w.tuples.get(n.inputs[0].id)
    if items is None:
        raise Unsupported("tuple_get of a non-kernel value")
    w.names[n.out.id] = items[n.params["index"]]
    w.layout[n.out.id] = "C"


def _batch(shape: tuple) -> int:
    return int(np.prod(shape)) if shape else 1


def _matmul(n, w: Writer):
    a, b = n.inputs[0], n.inputs[1]
    if type(a) is not Value or type(b) is not Value or a.dtype != b.dtype \
            or a.dtype not in _BLAS_DTYPES or len(a.shape) < 2 or len(b.shape) < 2:
        raise Unsupported("matmul of other than float matrices (or stacks of them)")
    if len(a.shape) == 2 and len(b.shape) == 2:
        w.define(n.out, f"{w.mm()}({w.blas(a)}, {w.blas(b)})")
        return
    (m, k), kn = a.shape[-2:], b.shape[-1]
    if len(b.shape) == 2:  # a stack of rows times one matrix: one product
        rows = _batch(a.shape[:-1])
        w.define(n.out, f"{w.mm()}({w.contig(a)}.reshape(({rows}, {k})), {w.blas(b)})"
                        f".reshape({tuple(n.out.shape)!r})")
        return
    # stacks: NumPy's loop, one product per item (helpers: runtime.cpu.blas)
    if len(a.shape) == 2:  # one matrix times a stack
        B = _batch(b.shape[:-2])
        left = w.blas(a)
        fn = "matmul_left"
    elif tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        raise Unsupported("matmul with broadcast batch dimensions")
    else:
        B = _batch(a.shape[:-2])
        left = f"{w.contig(a)}.reshape(({B}, {m}, {k}))"
        fn = "matmul_stack"
    o = w.fresh()
    blas = w.imports.setdefault("runtime.cpu.blas", "B")
    w.lines += [f"{o} = np.empty(({B}, {m}, {kn}), {_dt(a.dtype)})",
                f"{blas}.{fn}({left}, {w.contig(b)}.reshape(({B}, {k}, {kn})), {o})"]
    w.define(n.out, f"{o}.reshape({tuple(n.out.shape)!r})")


def _linear(n, w: Writer):
    x, wt = n.inputs[0], n.inputs[1]
    bias = n.inputs[2] if len(n.inputs) > 2 else None
    if type(x) is not Value or len(x.shape) < 2 or x.dtype not in _BLAS_DTYPES \
            or type(wt) is not Value or wt.dtype != x.dtype or len(wt.shape) != 2:
        raise Unsupported("linear of other than float matrices")
    if len(x.shape) == 2:
        out = w.define(n.out, f"{w.mm()}({w.blas(x)}, {w.blas(wt)}.T)")
        r, c = n.out.shape
    else:  # (..., in) rows: one product over all of them
        r, c = _batch(x.shape[:-1]), n.out.shape[-1]
        o = w.fresh()
        w.lines.append(f"{o} = {w.mm()}({w.contig(x)}.reshape(({r}, {x.shape[-1]})), "
                       f"{w.blas(wt)}.T)")
        out = o
        w.define(n.out, f"{o}.reshape({tuple(n.out.shape)!r})")
    if bias is not None:
        if type(bias) is not Value or tuple(bias.shape) != (c,) or bias.dtype != x.dtype:
            raise Unsupported("linear with a broadcast bias")
        b = w.name(bias)
        w.lines += [f"for _i in range({r}):",
                    f"    for _j in range({c}):",
                    f"        {out}[_i, _j] += {b}[_j]"]


def _reduce_loops(w: Writer, src: str, in_shape: tuple, summed: set, acc_shape: tuple,
                  acc: str, zero: str):
    """Loops adding every element of ``src`` into ``acc`` (shape ``acc_shape``: the input's
    with summed dimensions 1)."""
    w.lines.append(f"{acc} = np.zeros({acc_shape!r}, {zero})")
    ind = ""
    for k, s in enumerate(in_shape):
        w.lines.append(f"{ind}for _i{k} in range({s}):")
        ind += "    "
    idx_in = ", ".join(f"_i{k}" for k in range(len(in_shape)))
    idx_out = ", ".join("0" if k in summed else f"_i{k}" for k in range(len(in_shape)))
    if not in_shape:
        w.lines.append(f"{acc}[()] += {src}[()]")
    else:
        w.lines.append(f"{ind}{acc}[{idx_out}] += {src}[{idx_in}]")


def _sum_like(n, w: Writer, dims: tuple, out_shape: tuple, divide: bool):
    a = n.inputs[0]
    if type(a) is not Value or a.dtype.kind != "f" or n.out.dtype != a.dtype:
        raise Unsupported("a reduction of other than floats")
    shape = tuple(a.shape)
    summed = set(dims)
    acc_shape = tuple(1 if k in summed else s for k, s in enumerate(shape))
    acc = w.fresh()
    _reduce_loops(w, w.name(a), shape, summed, acc_shape, acc, "np.float64")
    if divide:
        count = int(np.prod([shape[k] for k in summed])) if summed else 1
        if not count:
            raise Unsupported("the mean of nothing")
        # (in place: a 0-d array divided by a number is a number in Numba, not an array)
        w.lines.append(f"{acc}[()] = {acc}[()] / np.float64({count})" if not acc_shape
                       else f"{acc} = {acc} / np.float64({count})")
    w.define(n.out, f"{acc}.astype({_dt(n.out.dtype)}).reshape({tuple(out_shape)!r})")


def _sum(n, w: Writer):
    if n.params.get("dtype") is not None:
        raise Unsupported("sum with a dtype")
    _sum_like(n, w, tuple(n.params["dim"]), n.out.shape, False)


def _mean(n, w: Writer):
    if n.params.get("dtype") is not None:
        raise Unsupported("mean with a dtype")
    _sum_like(n, w, tuple(n.params["dim"]), n.out.shape, True)


def _sum_to(n, w: Writer):
    a = n.inputs[0]
    shape, target = tuple(a.shape), tuple(n.params["shape"])
    if shape == target:
        w.names[n.out.id] = w.name(a)
        w.layout[n.out.id] = w.layout.get(a.id, "A")
        return
    lead = len(shape) - len(target)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(target)
                                      if s == 1 and shape[i + lead] != 1)
    _sum_like(n, w, dims, target, False)


def _rows_of_last_dim(n, w: Writer, what: str) -> tuple:
    """Start a loop over the rows of ``n``'s input along its last dimension, with ``_m``
    each row's maximum (NaN wins; a -inf maximum shifts by 0, as eager's
    ``_softmax_shifted``)
    and ``_s`` zeroed: (input rows name, output rows name, row length, dtype source)."""
    a = n.inputs[0]
    nd = len(a.shape)
    if type(a) is not Value or a.dtype.kind != "f" or nd == 0 \
            or n.params["dim"] not in (nd - 1, -1):
        raise Unsupported(f"{what} over other than the last dimension")
    c = a.shape[-1]
    rows = _batch(a.shape[:-1])
    dt = _dt(a.dtype)
    x, y = w.fresh(), w.fresh()
    w.lines += [
        f"{x} = {w.contig(a)}.reshape(({rows}, {c}))",
        f"{y} = np.empty(({rows}, {c}), {dt})",
        f"for _i in range({rows}):",
        f"    _m = {x}[_i, 0]",
        f"    for _j in range(1, {c}):",
        f"        if {x}[_i, _j] > _m or {x}[_i, _j] != {x}[_i, _j]:",
        f"            _m = {x}[_i, _j]",
        "    if _m == -np.inf:",  # +inf and NaN stay: that row is all NaN, as in eager
        f"        _m = {dt}(0.0)",
        "    _s = 0.0",
    ]
    return x, y, c, dt


def _log_softmax(n, w: Writer):
    x, y, c, dt = _rows_of_last_dim(n, w, "log_softmax")
    w.lines += [
        f"    for _j in range({c}):",
        f"        _s += np.float64(np.exp({x}[_i, _j] - _m))",
        f"    _l = {dt}(np.log(_s))",
        f"    for _j in range({c}):",
        f"        {y}[_i, _j] = ({x}[_i, _j] - _m) - _l",
    ]
    w.define(n.out, f"{y}.reshape({tuple(n.out.shape)!r})")


def _nll_common(n, w: Writer, logp_shape):
    target = n.inputs[1]
    if type(target) is not Value or len(logp_shape) != 2 or target.dtype.kind not in "iu" \
            or tuple(target.shape) != tuple(logp_shape[:1]):
        raise Unsupported("nll_loss of other than (N, C) inputs")
    if n.params.get("reduction", "mean") not in ("mean", "sum"):
        raise Unsupported("nll_loss without reduction")
    rows, c = logp_shape
    t = w.name(target)
    ig = int(n.params.get("ignore_index", -100))
    w.lines += [
        "_count = 0",
        f"for _i in range({rows}):",
        f"    if {t}[_i] != {ig}:",
        f"        if {t}[_i] < 0 or {t}[_i] >= {c}:",
        "            raise IndexError('Target is out of bounds.')",
        "        _count += 1",
    ]
    return rows, t, ig


def _nll_loss(n, w: Writer):
    logp = n.inputs[0]
    if type(logp) is not Value or logp.dtype.kind != "f":
        raise Unsupported("nll_loss of non-float log-probabilities")
    rows, t, ig = _nll_common(n, w, logp.shape)
    dt = _dt(logp.dtype)
    lp = w.name(logp)
    out = w.fresh()
    mean = n.params.get("reduction", "mean") == "mean"
    w.lines += [
        "_tot = 0.0",
        f"for _i in range({rows}):",
        f"    if {t}[_i] != {ig}:",
        f"        _tot += np.float64({lp}[_i, {t}[_i]])",
        f"{out} = np.empty((), {dt})",
    ]
    if mean:
        w.lines.append(f"_scale = {dt}(np.nan) if _count == 0 else {dt}(1.0 / _count)")
    else:
        w.lines.append(f"_scale = {dt}(1.0)")
    w.lines.append(f"{out}[()] = -{dt}(_tot) * _scale")
    w.define(n.out, out)


def _nll_loss_grad(n, w: Writer):
    g = n.inputs[0]
    if type(g) is not Value or g.shape != () or g.dtype.kind != "f":
        raise Unsupported("nll_loss_grad of a non-scalar gradient")
    shape = tuple(n.params["shape"])
    rows, t, ig = _nll_common(n, w, shape)
    dt = _dt(g.dtype)
    out = w.fresh()
    mean = n.params.get("reduction", "mean") == "mean"
    w.lines.append(f"{out} = np.zeros({shape!r}, {dt})")
    scale = f"{dt}(1.0 / _count)" if mean else f"{dt}(1.0)"
    w.lines += [
        "if _count > 0:" if mean else "if True:",
        f"    _v = -({w.name(g)}[()] * {scale})",
        f"    for _i in range({rows}):",
        f"        if {t}[_i] != {ig}:",
        f"            {out}[_i, {t}[_i]] = _v",
    ]
    w.define(n.out, out)


def _full(n, w: Writer):
    dt = np.dtype(n.params["dtype"])
    if dt not in CPU.dtypes:
        raise Unsupported(f"full in {dt}")
    w.define(n.out, f"np.full({tuple(n.params['shape'])!r}, {_lit(n.params['value'], dt)})")


def _permute(n, w: Writer):
    a = n.inputs[0]
    dims = tuple(n.params["dims"])
    lay = w.layout.get(a.id, "A")
    if dims == tuple(range(len(dims))):
        w.names[n.out.id], w.layout[n.out.id] = w.name(a), lay
    elif len(dims) == 2:
        w.define(n.out, f"{w.name(a)}.T", {"C": "F", "F": "C"}.get(lay, "A"))
    else:
        # (the method: np.transpose's overload takes seconds to compile in each process)
        w.define(n.out, f"{w.name(a)}.transpose({dims!r})", "A")


def _const(n, w: Writer):
    value = np.ascontiguousarray(n.params["value"])
    if value.dtype not in CPU.dtypes:
        raise Unsupported(f"a constant in {value.dtype}")
    w.consts.append(value)
    w.define(n.out, f"c{len(w.consts) - 1}.copy()")  # an output never aliases it


def _key(key) -> str:
    """A canonical basic key (see :mod:`eager.ops.index`) as Numba index source."""
    parts = []
    for e in key:
        if e is None:
            parts.append("None")
        elif type(e) is tuple:
            start, stop, step = e
            parts.append(f"{start}:{stop}" + (f":{step}" if step != 1 else ""))
        else:
            parts.append(str(int(e)))
    return ", ".join(parts + ["..."])


def _basic_index(n, w: Writer):
    a = n.inputs[0]
    idx = f"{w.name(a)}[{_key(n.params['key'])}]"
    if n.out.shape == ():  # Numba gives a scalar: a 0-d copy (values are what count here)
        t = w.fresh()
        w.lines += [f"{t} = np.empty((), {_dt(n.out.dtype)})", f"{t}[()] = {idx}"]
        w.define(n.out, t)
    else:
        w.define(n.out, idx, "A")


def _basic_scatter(n, w: Writer):
    g = n.inputs[0]
    out = w.fresh()
    w.lines += [f"{out} = np.zeros({tuple(n.params['shape'])!r}, {_dt(n.out.dtype)})",
                f"{out}[{_key(n.params['key'])}] = {w.name(g)}"]
    w.define(n.out, out)


def _reshape(n, w: Writer):
    w.define(n.out, f"{w.contig(n.inputs[0])}.reshape({tuple(n.out.shape)!r})")


def _softmax(n, w: Writer):
    x, y, c, dt = _rows_of_last_dim(n, w, "softmax")
    w.lines += [
        f"    for _j in range({c}):",
        f"        _e = np.exp({x}[_i, _j] - _m)",
        f"        {y}[_i, _j] = _e",
        "        _s += np.float64(_e)",
        f"    _d = {dt}(_s)",
        f"    for _j in range({c}):",
        f"        {y}[_i, _j] = {y}[_i, _j] / _d",
    ]
    w.define(n.out, f"{y}.reshape({tuple(n.out.shape)!r})")


def _norm(n, w: Writer):
    a = n.inputs[0]
    p = n.params
    if type(a) is not Value or a.dtype not in _BLAS_DTYPES or p["p"] != 2.0 \
            or sorted(p["dim"]) != list(range(len(a.shape))):
        raise Unsupported("a norm other than the 2-norm of a whole float tensor")
    x, out = w.fresh(), w.fresh()
    size = _batch(tuple(a.shape))
    w.lines += [f"{x} = {w.contig(a)}.reshape(({size},))",
                "_s = 0.0",
                f"for _i in range({size}):",
                f"    _s += np.float64({x}[_i]) * np.float64({x}[_i])",
                f"{out} = np.empty((), {_dt(a.dtype)})",
                f"{out}[()] = np.sqrt(_s)"]
    if n.out.shape == ():
        w.define(n.out, out)
    else:  # keepdim: ones
        w.define(n.out, f"{out}.reshape({tuple(n.out.shape)!r})")


def _stack(n, w: Writer):
    vals = n.inputs
    if n.params["dim"] != 0 or not vals or any(
            type(v) is not Value or v.dtype != n.out.dtype or v.shape != vals[0].shape
            for v in vals):
        raise Unsupported("stack of other than equal arrays along dimension 0")
    out = w.fresh()
    w.lines.append(f"{out} = np.empty({tuple(n.out.shape)!r}, {_dt(n.out.dtype)})")
    for i, v in enumerate(vals):
        if v.shape == ():
            w.lines.append(f"{out}[{i}] = {w.name(v)}[()]")
        else:
            w.lines.append(f"{out}[{i}] = {w.name(v)}")
    w.define(n.out, out)


def _cat(n, w: Writer):
    vals, nd = n.inputs, len(n.out.shape)
    if not nd or not vals or any(type(v) is not Value or v.dtype != n.out.dtype
                                 or len(v.shape) != nd for v in vals):
        raise Unsupported("cat of other than arrays of its dtype and rank")
    d = n.params["dim"] % nd
    out = w.fresh()
    w.lines.append(f"{out} = np.empty({tuple(n.out.shape)!r}, {_dt(n.out.dtype)})")
    start = 0
    for v in vals:
        stop = start + v.shape[d]
        key = ", ".join(f"{start}:{stop}" if i == d else ":" for i in range(nd))
        w.lines.append(f"{out}[{key}] = {w.name(v)}")
        start = stop
    w.define(n.out, out)


def _unsqueeze(n, w: Writer):   # and squeeze: a reshape of a contiguous array
    w.define(n.out, f"{w.contig(n.inputs[0])}.reshape({tuple(n.out.shape)!r})")


def _expand(n, w: Writer):
    a = n.inputs[0]
    w.define(n.out, f"np.ascontiguousarray(np.broadcast_to({w.name(a)}, "
                    f"{tuple(n.out.shape)!r}))")


def _contiguous(n, w: Writer):
    a = n.inputs[0]
    w.define(n.out, f"{w.name(a)}.copy()" if w.layout.get(a.id) == "C"
             else f"np.ascontiguousarray({w.name(a)})")


def _arange(n, w: Writer):
    p = n.params
    dt = np.dtype(p["dtype"])
    vals = (p["start"], p["end"], p["step"])
    if dt.kind not in "iu" or any(type(v) is not int for v in vals):
        raise Unsupported("arange of other than integers")
    w.define(n.out, f"np.arange({vals[0]}, {vals[1]}, {vals[2]}).astype({_dt(dt)})")


def _rows_index(n, w: Writer, table_shape: tuple):
    """(index array name, number of picked rows, row length) for an advanced index on
    dimension 0 only (an embedding's lookup and its gradient)."""
    idx = n.inputs[1]
    if n.params["dims"] != (0,) or type(idx) is not Value or idx.dtype.kind not in "iu" \
            or len(idx.shape) < 1 or idx.shape[0] != 1 or not table_shape:
        raise Unsupported("advanced indexing other than rows of dimension 0")
    return w.contig(idx), _batch(tuple(idx.shape[1:])), _batch(tuple(table_shape[1:]))


def _index(n, w: Writer):
    a = n.inputs[0]
    if type(a) is not Value:
        raise Unsupported("indexing a constant")
    ix, picked, row = _rows_index(n, w, tuple(a.shape))
    size = a.shape[0]
    src, out = w.fresh(), w.fresh()
    w.lines += [
        f"{src} = {w.contig(a)}.reshape(({size}, {row}))",
        f"{out} = np.empty(({picked}, {row}), {_dt(a.dtype)})",
        f"_ix = {ix}.reshape(({picked},))",
        f"for _i in range({picked}):",
        "    _j = _ix[_i]",
        "    if _j < 0:",
        f"        _j += {size}",
        f"    if _j < 0 or _j >= {size}:",
        "        raise IndexError('index out of bounds')",
        f"    {out}[_i] = {src}[_j]",
    ]
    w.define(n.out, f"{out}.reshape({tuple(n.out.shape)!r})")


def _index_put_add(n, w: Writer):
    g = n.inputs[0]
    shape = tuple(n.params["shape"])
    if type(g) is not Value:
        raise Unsupported("index_put_add of a constant")
    ix, picked, row = _rows_index(n, w, shape)
    size = shape[0]
    src, out = w.fresh(), w.fresh()
    w.lines += [
        f"{src} = {w.contig(g)}.reshape(({picked}, {row}))",
        f"{out} = np.zeros(({size}, {row}), {_dt(n.out.dtype)})",
        f"_ix = {ix}.reshape(({picked},))",
        f"for _i in range({picked}):",   # in order, as np.add.at: repeats accumulate
        "    _j = _ix[_i]",
        "    if _j < 0:",
        f"        _j += {size}",
        f"    if _j < 0 or _j >= {size}:",
        "        raise IndexError('index out of bounds')",
        f"    for _k in range({row}):",
        f"        {out}[_j, _k] += {src}[_i, _k]",
    ]
    w.define(n.out, f"{out}.reshape({shape!r})")


# -- windows, pooling, convolution: calls into runtime.cpu.window (compiled once, cached) --

def _win(w: Writer) -> str:
    return w.imports.setdefault("runtime.cpu.window", "WIN")


def _window_args(size: tuple, p: dict) -> str:
    """``lh, lw, kh, kw, dh, dw, ph, pw, sh, sw`` of 1-D or 2-D windows over ``size`` (a
    1-D window is a 2-D one of height 1)."""
    kernel, dilation, stride = tuple(p["kernel"]), tuple(p["dilation"]), tuple(p["stride"])
    padding = tuple(tuple(q) for q in p["padding"])
    counts = _W.window_counts(tuple(size), kernel, dilation, padding, stride)
    if len(kernel) == 1:
        counts, kernel, dilation, stride = (1,) + counts, (1,) + kernel, (1,) + dilation, \
            (1,) + stride
        padding = ((0, 0),) + padding
    vals = counts + kernel + dilation + (padding[0][0], padding[1][0]) + stride
    return ", ".join(str(int(v)) for v in vals)


def _spatial(shape: tuple, what: str) -> tuple:
    """``(N, C, H, W)`` of a 1-D or 2-D spatial shape."""
    if len(shape) not in (3, 4):
        raise Unsupported(f"{what} over other than 1 or 2 spatial dimensions")
    return tuple(shape[:2]) + ((1,) if len(shape) == 3 else ()) + tuple(shape[2:])


def _float_value(v, what: str):
    if type(v) is not Value or v.dtype not in _BLAS_DTYPES:
        raise Unsupported(f"{what} of other than float32/float64")


def _im2col(n, w: Writer):
    x = n.inputs[0]
    _float_value(x, "im2col")
    n4 = _spatial(tuple(x.shape), "im2col")
    out = w.fresh()
    fill = _lit(n.params.get("fill", 0), x.dtype)
    w.lines += [f"{out} = np.empty({tuple(n.out.shape)!r}, {_dt(x.dtype)})",
                f"{_win(w)}.im2col_2d({w.contig(x)}.reshape({n4!r}), {out}, "
                f"{_window_args(x.shape[2:], n.params)}, {fill})"]
    w.define(n.out, out)


def _col2im(n, w: Writer):
    cols = n.inputs[0]
    _float_value(cols, "col2im")
    p = n.params
    n4 = _spatial(tuple(n.out.shape), "col2im")
    tiles = tuple(p["stride"]) == tuple(p["kernel"]) and all(d == 1 for d in p["dilation"])
    out = w.fresh()
    w.lines += [f"{out} = np.zeros({n4!r}, {_dt(cols.dtype)})",
                f"{_win(w)}.col2im_2d({w.contig(cols)}, {out}, "
                f"{_window_args(p['size'], p)}, {tiles})"]
    w.define(n.out, f"{out}.reshape({tuple(n.out.shape)!r})")


def _split_mid(shape: tuple, d: int) -> tuple:
    return _batch(shape[:d]), shape[d], _batch(shape[d + 1:])


def _arg_reduce(n, w: Writer, largest: bool):
    a = n.inputs[0]
    dims = tuple(n.params["dim"])
    fn = "argmax" if largest else "argmin"
    if type(a) is not Value or a.dtype.kind not in "fiu" or a.dtype.itemsize < 4 \
            or len(dims) != 1 or not a.shape or n.out.dtype != np.int64:
        raise Unsupported(f"{fn} of other than one dimension of a real array")
    d = dims[0] % len(a.shape)
    p, k, q = _split_mid(tuple(a.shape), d)
    if not k:
        raise Unsupported(f"{fn} of an empty dimension")
    out = w.fresh()
    w.lines += [f"{out} = np.empty(({p}, {q}), np.int64)",
                f"{_win(w)}.arg_mid({w.contig(a)}.reshape(({p}, {k}, {q})), {out}, "
                f"{largest})"]
    w.define(n.out, f"{out}.reshape({tuple(n.out.shape)!r})")


def _argmax(n, w: Writer):
    _arg_reduce(n, w, True)


def _argmin(n, w: Writer):
    _arg_reduce(n, w, False)


def _along_dim(n, values, shape: tuple, what: str) -> tuple:
    """``(d, p, k, q)`` of ``pick_along_dim``/``place_along_dim`` over ``shape`` along
    ``d``, with int64 indices of ``shape``'s keepdim form (argmax's)."""
    idx = n.inputs[1]
    if type(values) is not Value or type(idx) is not Value or not shape \
            or idx.dtype != np.int64:
        raise Unsupported(f"{what} of other than an array and int64 indices")
    d = n.params["dim"] % len(shape)
    if tuple(idx.shape) != shape[:d] + (1,) + shape[d + 1:]:
        raise Unsupported(f"{what} with indices of another shape")
    return (d,) + _split_mid(shape, d)


def _pick_along_dim(n, w: Writer):
    a, idx = n.inputs[0], n.inputs[1]
    _, p, k, q = _along_dim(n, a, tuple(a.shape), "pick_along_dim")
    out = w.fresh()
    w.lines += [f"{out} = np.empty(({p}, {q}), {_dt(a.dtype)})",
                f"{_win(w)}.pick_mid({w.contig(a)}.reshape(({p}, {k}, {q})), "
                f"{w.contig(idx)}.reshape(({p}, {q})), {out})"]
    w.define(n.out, f"{out}.reshape({tuple(n.out.shape)!r})")


def _place_along_dim(n, w: Writer):
    g, idx = n.inputs[0], n.inputs[1]
    shape = tuple(n.params["shape"])
    d, p, k, q = _along_dim(n, g, shape, "place_along_dim")
    if tuple(g.shape) not in (tuple(idx.shape), shape[:d] + shape[d + 1:]):
        raise Unsupported("place_along_dim with a gradient of another shape")
    out = w.fresh()
    w.lines += [f"{out} = np.zeros(({p}, {k}, {q}), {_dt(n.out.dtype)})",
                f"{_win(w)}.place_mid({w.contig(g)}.reshape(({p}, {q})), "
                f"{w.contig(idx)}.reshape(({p}, {q})), {out})"]
    w.define(n.out, f"{out}.reshape({shape!r})")


def _conv_product(n, w: Writer):
    cols, wt = n.inputs[0], n.inputs[1]
    bias = n.inputs[2] if len(n.inputs) > 2 else None
    _float_value(cols, "conv_product")
    if type(wt) is not Value or wt.dtype != cols.dtype or len(cols.shape) != 3 \
            or _batch(tuple(wt.shape[1:])) != cols.shape[1]:
        raise Unsupported("conv_product of other operands")
    nb, ck, length = cols.shape
    oc = wt.shape[0]
    out = w.fresh()
    w.lines += [f"{out} = np.empty(({nb}, {oc}, {length}), {_dt(cols.dtype)})",
                f"{_win(w)}.conv_product({w.contig(cols)}, "
                f"{w.contig(wt)}.reshape(({oc}, {ck})), {out})"]
    if bias is not None:
        if type(bias) is not Value or tuple(bias.shape) != (oc,) or bias.dtype != cols.dtype:
            raise Unsupported("conv_product with another bias")
        w.lines.append(f"{_win(w)}.add_channel_bias({out}, {w.contig(bias)})")
    w.define(n.out, f"{out}.reshape({tuple(n.out.shape)!r})")


#: emitters whose code may raise (then the call reruns as Python: nothing may have been
#: written into an input before them)
RAISES = frozenset({_nll_loss, _nll_loss_grad, _index, _index_put_add, _pick_along_dim,
                    _place_along_dim})

EMITTERS = {
    _la.Matmul: _matmul, _la.Linear: _linear,
    _R.Sum: _sum, _R.Mean: _mean, _S.SumTo: _sum_to, _R.LogSoftmax: _log_softmax,
    _loss.NllLoss: _nll_loss, _loss.NllLossGrad: _nll_loss_grad, _fac.Full: _full,
    _S.Permute: _permute, _S.Reshape: _reshape, _S.View: _reshape,
    _S.ReshapeCopy: _reshape, TupleGet: _tuple_get, Const: _const,
    _I.BasicIndex: _basic_index, _I.BasicScatter: _basic_scatter,
    _R.Softmax: _softmax, _R.Norm: _norm, _S.Stack: _stack, _S.Cat: _cat,
    _S.Unsqueeze: _unsqueeze, _S.Squeeze: _unsqueeze,
    _S.Expand: _expand, _S.Contiguous: _contiguous, _fac.Arange: _arange,
    _I.Index: _index, _I.IndexPutAdd: _index_put_add,
    _W.Im2col: _im2col, _W.Col2im: _col2im, _R.Argmax: _argmax, _R.Argmin: _argmin,
    _R.PickAlongDim: _pick_along_dim, _R.PlaceAlongDim: _place_along_dim,
    _conv.ConvProduct: _conv_product,
}


def _emitter(n):
    if getattr(n.op, "kernel_call", False):   # a fused kernel lowered by numba_cpu
        return _kernel
    fn = EMITTERS.get(n.op)
    if fn is None:
        raise Unsupported(f"{n.op.name} has no native code")
    if fn in (_matmul, _linear, _conv_product) and not _blas_ready():
        raise Unsupported("SciPy (Numba's BLAS) is not installed")
    return fn


def _aliases(node) -> bool:
    """Whether the node's output shares its first input's memory."""
    return getattr(node.op, "view", False) or node.op is _S.SumTo and \
        tuple(node.inputs[0].shape) == tuple(node.params["shape"])


def _view_root(v, made):
    """The value made in the trace whose memory the view chain from ``v`` reads, or None
    when that is a graph input (or not a value)."""
    node = made.get(v.id)
    while node is not None and _aliases(node):
        v = node.inputs[0]
        if type(v) is not Value:
            return None
        node = made.get(v.id)
    return v if node is not None else None


def trace_source(lowered: Graph) -> tuple[str, list, list, list]:
    """(module source, output plan, signature, constants) of the native function of a
    lowered graph; raises :class:`Unsupported`.  The function takes the graph's inputs,
    then the constants.  Output plan per graph output: ``("ret", k)`` the k-th returned
    array, ``("in", j)`` graph input ``j`` passed through."""
    w = Writer()
    for v in lowered.inputs:
        w.define(v)
    for n in lowered.nodes:
        if n.out is None or n.out.device != "cpu":
            raise Unsupported(f"{n.op.name} has no output on the CPU")
        _emitter(n)(n, w)
    # outputs: every returned array new and distinct (no views: eager's would alias)
    made = {n.out.id: n for n in lowered.nodes}
    out_ids = {v.id for v in lowered.outputs}
    roots = [r.id for r in (_view_root(v, made) for v in lowered.outputs) if r is not None]
    plan, ret, seen = [], [], {}
    input_pos = {w.names[v.id]: j for j, v in enumerate(lowered.inputs)}
    for v in lowered.outputs:
        if w.names[v.id] in input_pos:  # passed through, or written in place
            plan.append(("in", input_pos[w.names[v.id]]))
            continue
        node = made.get(v.id)
        if node is None or _aliases(node):
            # a view of a value made here that nothing else returned: a copy of it is
            # indistinguishable (a saved index, an unsqueezed arange); a view of an input
            # or of another output keeps eager's aliasing: the Python program returns it
            root = _view_root(v, made)
            if root is None or root.id in out_ids or roots.count(root.id) > 1:
                raise Unsupported("an output that is a view")
            copy = w.fresh()
            w.lines.append(f"{copy} = np.ascontiguousarray({w.names[v.id]}).copy()")
            w.names[v.id] = copy
        if w.names[v.id] in seen:
            plan.append(("ret", seen[w.names[v.id]]))
            continue
        seen[w.names[v.id]] = len(ret)
        plan.append(("ret", len(ret)))
        ret.append(w.names[v.id])
    args = [w.names[v.id] for v in lowered.inputs] + [f"c{k}" for k in range(len(w.consts))]
    body = ["@numba.njit(cache=True, error_model='numpy', nogil=True)",
            f"def trace({', '.join(args)}):"]
    body += ["    " + ln for ln in w.lines]
    body.append(f"    return ({', '.join(ret)}{',' if len(ret) == 1 else ''})")
    imports = [f"import {mod} as {alias}" for mod, alias in w.imports.items()]
    sig = tuple(nbt.Array(numba.from_dtype(v.dtype), len(v.shape), "C")
                for v in lowered.inputs) + tuple(nbt.Array(numba.from_dtype(c.dtype), c.ndim,
                                                          "C") for c in w.consts)
    # the one signature it is compiled for is part of the text (the cache key)
    types = "".join(f"# {a}: {t}\n" for a, t in zip(args, sig))
    source = HEADER + "\n".join(imports) + "\n" + types + "\n\n" + "\n".join(body) + "\n"
    return source, plan, sig, w.consts


def native_program(lowered: Graph, plain: Graph, name: str = "graph",
                   max_lines: int | None = None) -> CompiledGraph:
    """The whole-trace program of ``lowered`` (a graph whose fused nodes are lowered
    kernels), with the generated Python of ``plain`` (the unfused graph) as the path for
    calls the native function refuses.  Raises :class:`Unsupported`, or :class:`Deferred`
    when the function is longer than ``max_lines`` but not :data:`MAX_LINES`."""
    if any(type(v) is Value and v.device != "cpu" for v in lowered.inputs):
        raise Unsupported("inputs on another device")
    source, plan, sig, consts = trace_source(lowered)
    lines = source.count("\n")
    if max_lines is not None and max_lines < lines <= MAX_LINES:
        raise Deferred(f"{lines} lines of native code: built after the fused kernels")
    if lines > MAX_LINES:
        raise Unsupported(f"{lines} lines of native code, more than {MAX_LINES} (Numba's "
                          "compile time grows faster than the function: 186 lines take "
                          "~3 s, 928 lines ~27 s)")
    mod = CPU.load(source)
    fn = mod.trace
    if fn._can_compile:  # else built already (the same text in this process)
        compile_worker.compile(fn, sig)
        fn.disable_compile()  # another layout raises TypeError: the Python path runs
    slow = python_program(plain, name + "_python").fn
    writes = any(getattr(n.params.get("launch"), "inplace", None) is not None
                 for n in lowered.nodes)
    args = ", ".join(f"v{v.id}" for v in lowered.inputs)
    call = ", ".join([f"v{v.id}" for v in lowered.inputs] +
                     [f"__c{k}" for k in range(len(consts))])
    outs = ", ".join(f"r[{k}]" if kind == "ret" else f"v{lowered.inputs[k].id}"
                     for kind, k in plan)
    # another layout (a broadcast gradient from ``sum``'s backward, a transposed view) is
    # made C-contiguous and the native function tried once more; write-backs then land
    # in the copies, which the caller copies into the targets (it compares identities)
    again = "".join(f"        v{v.id} = __contig(v{v.id})\n" for v in lowered.inputs)
    py = [f"def {name}({args}):",
          "    try:",
          f"        r = __native({call})",
          "    except Exception:",
          f"        return {name}_again({args})",
          f"    return [{outs}]",
          f"def {name}_again({args}):",
          "    _args = " + (f"({args},)" if args else "()"),
          "    __misses[0] += 1",
          "    try:",
          again.rstrip("\n") if again else "        pass",
          f"        r = __native({call})",
          "    except Exception:  # not an array layout: eager's code says which error",
          "        return __slow(*_args)",
          f"    return [{outs}]"]
    misses = [0]   # calls the native function refused at first (tests check it stays 0)
    glb = {"__native": fn, "__slow": slow, "__misses": misses,
           "__contig": _contig}
    glb.update((f"__c{k}", c) for k, c in enumerate(consts))
    src = "\n".join(py) + "\n"
    exec(compile(src, f"<dyngraph {name}>", "exec"), glb)
    out = CompiledGraph(glb[name], src + "\n# native:\n" + source,
                        [(f"{mod.__name__}.trace", source)])
    out.writes_inputs = writes
    out.native_misses = misses
    return out


def _contig(a):
    """``a`` C-contiguous (0-d arrays stay 0-d)."""
    return a if a.flags.c_contiguous else a.copy()


def inplace_safe(lowered: Graph) -> bool:
    """Whether kernels may write into inputs: no node that can raise comes after the
    first such write (a raising call is rerun as Python from the unchanged inputs)."""
    seen_write = False
    for n in lowered.nodes:
        if getattr(n.op, "kernel_call", False) and issubclass(n.op, FusedElementwise) \
                and n.params["launch"].inplace is not None:
            seen_write = True
        elif seen_write and EMITTERS.get(n.op) in RAISES:
            return False
    return True
