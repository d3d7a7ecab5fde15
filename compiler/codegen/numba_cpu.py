"""The numba backend: fused elementwise groups become ``@numba.njit`` kernels.

``numba_program(graph)`` runs :func:`compiler.passes.fusion.fuse`, writes one kernel
module per fused node (``FusedElementwise`` and ``FusedReduction``), and generates the
program with :func:`.pysource.python_program`: fused nodes write their own lines (the
``emit`` hook), every other node (matmul, unfused reductions, shape ops, guards) is one
call of its op's forward as before.

A kernel = scalar core + loop template
    The core (:mod:`.core`: each node's line written by its op's scalar expression with
    the CPU's math table) names inputs ``a0, a1, ..`` and values ``t0, t1, ..`` by
    position, so the text (the cache key) depends only on the computation.  The loop
    template (:mod:`runtime.cpu.loops`) is a nest over the output's merged dimensions with
    broadcast inputs indexed 0; sizes come from the output array's shape at run time.
    A module holds a serial ``kernel`` and a ``kernel_par`` (prange); the program calls
    the serial one below :data:`runtime.cpu.loops.PARALLEL_MIN` elements
    (:data:`BLAS_PARALLEL_MIN` in programs that call BLAS), and above it whichever has
    lately been faster (:class:`runtime.cpu.launch.Adaptive`: on a busy machine prange
    launches wait for time slices).  Modules are loaded through the CPU device
    (:func:`runtime.cache.load_module`: memory + disk cache; Numba's ``cache=True``
    applies), so another trace with the same pattern, even of another shape, reuses
    the compiled kernel.  The kernel is compiled for the exact argument types when the
    program is built, so a compile error raises here (the front end then falls back to
    eager with a warning), not during a later call.

Operands
    Inputs that are not C-contiguous (transposed views, expanded broadcasts that were not
    absorbed) are copied once with ``np.ascontiguousarray`` before the call; the values a
    fused kernel produced are known to be C-contiguous and are passed as they are.

Output buffers
    Small outputs are ``np.empty``; large ones reuse the previous call's array when no
    one else holds it (:mod:`runtime.cpu.buffers`).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types as nbt

from eager.ops import reduce as _R
from eager.ops.scalarexpr import F64, I64, cast, literal
from runtime import plan as _plan
from runtime.cache import note_key, read_note, write_note
from runtime.cpu import DEVICE as CPU
from runtime.cpu import compile_worker, loops
from runtime.cpu.buffers import REUSE_MIN_BYTES, reuse_lines
from runtime.cpu.launch import Adaptive

from .. import log
from ..ir import Graph, Node
from ..passes.expand import for_kernels
from ..passes.fusion import FusedElementwise, FusedReduction, TupleGet, fuse, fusible
from ..source_tag import SOURCE_TAG
from . import native_cpu, scan_cpu
from .core import core_source
from .inplace import Overwrites
from .pysource import CompiledGraph, python_program

#: in a program that also calls BLAS, kernels go parallel only from this size: BLAS and
#: Numba's OpenMP threads both spin-wait after their parallel regions, and on a 2-core
#: machine a prange kernel next to a matmul then waits for a time slice (measured: MLP
#: train step 0.9 ms with serial kernels, 8-40 ms with prange ones at 200k elements)
BLAS_PARALLEL_MIN = 1 << 22
_BLAS_MODULES = ("eager.ops.linalg", "eager.ops.recurrent")


class Launch:
    """How a lowered fused node calls its kernel."""

    __slots__ = ("contig", "fn", "index", "inplace", "inplace_fn", "inplace_sig", "name",
                 "outs", "shape_arg", "sig", "source")

    def __init__(self, index, fn, name, source, contig, outs, shape_arg=None):
        self.index = index
        self.fn = fn            # the Numba dispatcher, or an Adaptive (serial + prange)
        self.name = name
        self.source = source
        self.contig = contig    # per input: known C-contiguous (skip ascontiguousarray)
        self.outs = outs        # per output: (shape, dtype, reuse buffer)
        self.shape_arg = shape_arg  # reductions: the loop shape, passed last
        self.inplace = None         # {output index: name of the input it overwrites}
        self.inplace_fn = None      # the kernel storing into those inputs (loops' ``into``)
        self.sig = self.inplace_sig = None  # their Numba signatures (for :func:`_build`)

    def __repr__(self) -> str:
        return self.name


def _emit(node, names, glb):
    """Program lines of a lowered fused node (the pysource ``emit`` hook)."""
    L: Launch = node.params["launch"]
    k = L.index
    glb["__empty"] = np.empty
    glb["__contig"] = np.ascontiguousarray
    glb[f"K{k}"] = L.fn
    args = [names[v.id] if c else f"__contig({names[v.id]})"
            for v, c in zip(node.inputs, L.contig)]
    lines = []
    single = len(L.outs) == 1
    if L.inplace is not None:  # write-backs computed straight into their targets
        glb[f"KI{k}"] = L.inplace_fn
        outs, allocs = [], []
        for m, (shape, dt, _reuse) in enumerate(L.outs):
            glb[f"D{k}_{m}"] = dt
            outs.append(f"v{node.out.id}" if single else f"o{k}_{m}")
            allocs.append(f"__empty({shape!r}, D{k}_{m})")
        srcs = list(L.inplace.values())
        ok = " and ".join(f"{s}.flags.c_contiguous and {s}.flags.writeable" for s in srcs)
        rest = [o for m, o in enumerate(outs) if m not in L.inplace]
        lines.append(f"if {ok}:")
        lines += [f"    {o} = {L.inplace[m]}" if m in L.inplace else f"    {o} = {a}"
                  for m, (o, a) in enumerate(zip(outs, allocs))]
        lines += [f"    KI{k}({', '.join(args + rest)})", "else:"]
        lines += [f"    {o} = {a}" for o, a in zip(outs, allocs)]
        lines.append(f"    K{k}({', '.join(args + outs)})")
        if not single:
            lines.append(f"v{node.out.id} = ({', '.join(outs)},)")
        names[node.out.id] = f"v{node.out.id}"
        return lines
    outs = []
    for m, (shape, dt, reuse) in enumerate(L.outs):
        o = f"v{node.out.id}" if single else f"o{k}_{m}"
        glb[f"D{k}_{m}"] = dt
        alloc = f"__empty({shape!r}, D{k}_{m})"
        if reuse:
            lines.extend(reuse_lines(glb, f"S{k}_{m}", o, alloc))
        else:
            lines.append(f"{o} = {alloc}")
        outs.append(o)
    extra = []
    if L.shape_arg is not None:
        glb[f"SH{k}"] = L.shape_arg
        extra.append(f"SH{k}")
    lines.append(f"K{k}({', '.join(args + outs + extra)})")
    if not single:
        lines.append(f"v{node.out.id} = ({', '.join(outs)},)")
    names[node.out.id] = f"v{node.out.id}"
    return lines


class FusedKernel(FusedElementwise):
    """A fused node lowered to a Numba kernel call (``launch`` param)."""
    abstract = True
    name = "fused_kernel"
    emit = _emit
    kernel_call = True   # native code calls the kernel (native_cpu._kernel)


class FusedReduceKernel(FusedReduction):
    """A fused reduction lowered to a Numba kernel call (``launch`` param)."""
    abstract = True
    name = "fused_reduce_kernel"
    emit = _emit
    kernel_call = True


# -- kernel source ---------------------------------------------------------------------

def _reduction(red, count_dtype=None) -> _plan.Reduction:
    """Accumulator code for a reduction node (eager's dtypes; sums accumulate in float64
    or int64 — at least as accurate as NumPy's pairwise float32 sum)."""
    src, out = red.inputs[0].dtype, red.out.dtype
    if red.op in (_R.Sum, _R.Mean):
        if src.kind == "f":
            x = "{x}" if src == F64 else "np.float64({x})"
            final = "{acc} / {count}" if red.op is _R.Mean else "{acc}"
            return _plan.Reduction("0.0", "radd({acc}, " + x + ")",
                                   cast(f"({final})", F64, out))
        return _plan.Reduction("0", "{acc} + np.int64({x})",
                               cast("{acc}", I64, out))
    big = red.op is _R.Amax
    if src.kind == "f":   # llvm.maximum/minimum: NaN-propagating, vectorizable
        init = literal(-np.inf if big else np.inf, src)
        return _plan.Reduction(init, ("rmax" if big else "rmin") + "({acc}, {x})", "{acc}")
    info = np.iinfo(src)
    init = literal(info.min if big else info.max, src)
    cmp = ">" if big else "<"
    return _plan.Reduction(init, f"({{x}} if {{x}} {cmp} {{acc}} else {{acc}})", "{acc}")


def kernel_module_source(body: Graph, loop_shape: tuple, reduce: bool = False,
                         into: int | None = None) -> str:
    """``into``: the kernels store into that input (:func:`runtime.cpu.loops.kernel_source`)."""
    doc = ", ".join(f"a{k}: {v.dtype}" for k, v in enumerate(body.inputs))
    doc = f"inputs {doc}" if doc else ""
    if not reduce:
        core, out_vars = core_source(body, CPU.math)
        p = _plan.plan(loop_shape, [v.shape for v in body.inputs])
        return loops.module_source(p, core, out_vars, len(body.inputs), doc=doc, into=into)
    red = body.nodes[-1]
    v = red.inputs[0]
    core, out_vars = core_source(body, CPU.math, body.nodes[:-1], [v])
    split = red.params["dim"][0]
    p = _plan.plan(loop_shape, [w.shape for w in body.inputs], split=split)
    doc += f"\nthen {red.op.name} over dimensions {tuple(red.params['dim'])} of {v.dtype}"
    return loops.module_source(p, core, out_vars, len(body.inputs), doc=doc,
                               reduction=_reduction(red))


def _array_type(dt: np.dtype, ndim: int):
    return nbt.Array(numba.from_dtype(dt), ndim, "C")


def _lower(node: Node, index: int, contiguous: set, parallel_min: int) -> tuple:
    """(kernel node, its Launch): the kernel module is loaded, not compiled (:func:`_build`
    compiles it for a per-node program; a native function compiles it within)."""
    body = node.params["graph"]
    reduce = node.op is FusedReduction
    loop_shape = body.nodes[-1].inputs[0].shape if reduce else body.outputs[0].shape
    source = kernel_module_source(body, loop_shape, reduce)
    mod = CPU.load(source)
    size = int(np.prod(loop_shape))
    parallel = size >= parallel_min
    if reduce:   # parallel over the kept dimensions only
        kept = int(np.prod(loop_shape[:body.nodes[-1].params["dim"][0]]))
        parallel = parallel and kept >= 2
    contig = [v.id in contiguous for v in node.inputs]
    sig = [_array_type(v.dtype, len(v.shape) if c else max(1, len(v.shape)))
           for v, c in zip(node.inputs, contig)]
    outs = []
    for v in body.outputs:
        sig.append(_array_type(v.dtype, len(v.shape)))
        nbytes = int(np.prod(v.shape)) * v.dtype.itemsize
        outs.append((tuple(v.shape), v.dtype, nbytes >= REUSE_MIN_BYTES))
    shape_arg = None
    if reduce:
        shape_arg = tuple(int(d) for d in loop_shape)
        sig.append(nbt.UniTuple(nbt.int64, len(shape_arg)))
    fn = mod.kernel
    if parallel:
        fn = Adaptive(mod.kernel, mod.kernel_par)
    name = f"{mod.__name__}.{'kernel + kernel_par' if parallel else 'kernel'}"
    launch = Launch(index, fn, name, source, contig, outs, shape_arg)
    launch.sig = tuple(sig)
    params = dict(node.params)
    params["launch"] = launch
    op = FusedReduceKernel if reduce else FusedKernel
    return Node(op, node.inputs, params, node.out, node.where), launch


def _inplace_plan(nodes: list, i: int, inplace: dict, writes: Overwrites,
                  readers: dict) -> dict:
    """{output index: input index} of kernel node ``i``'s outputs that may be stored into
    the inputs they replace: a write-back of an input the kernel reads, with its shape
    and dtype, that nothing else needs (:class:`.inplace.Overwrites`).  ``readers``: the
    ``tuple_get`` nodes of each multi-output kernel value."""
    node = nodes[i]
    if node.op is not FusedKernel:
        return {}
    body = node.params["graph"]
    if len(body.outputs) == 1:
        values = {0: node.out.id}
    else:
        values = {t.params["index"]: t.out.id for t in readers.get(node.out.id, ())}
    plan = {}
    taken = set()
    for m, vid in values.items():
        src = inplace.get(vid)
        out = body.outputs[m]
        if src is None or src.id in taken:
            continue
        j = next((k for k, v in enumerate(node.inputs) if getattr(v, "id", None) == src.id
                  and v.shape == out.shape and v.dtype == out.dtype), None)
        if j is not None and writes.allowed(i, src, vid):
            plan[m] = j
            taken.add(src.id)
    return plan


def _lower_all(graph: Graph, parallel_min: int, singleton_min) -> tuple:
    """(fused and lowered graph, kernels) of ``graph``; the fused kernels' modules are
    loaded, not compiled (:func:`_build`); a recurrent scan's kernel is compiled here."""
    graph = for_kernels(graph, CPU.lone_reduce_min)   # (softmax as its parts)
    fused = fuse(graph, CPU, singleton_min)   # (``graph`` itself when nothing fuses)
    if any(getattr(n.op, "__module__", "") in _BLAS_MODULES for n in fused.nodes):
        parallel_min = max(parallel_min, BLAS_PARALLEL_MIN)
    contiguous: set = set()
    new_nodes = []
    kernels = []
    k = 0
    for n in fused.nodes:
        if scan_cpu.native(n):   # the recurrent scan: native code (scan_cpu)
            n, kernel = scan_cpu.lower(n)
            kernels.append(kernel)
        elif n.op is FusedElementwise or n.op is FusedReduction:
            n, launch = _lower(n, k, contiguous, parallel_min)
            k += 1
            kernels.append((launch.name, launch.source))
            if len(launch.outs) == 1 or n.op is FusedReduceKernel:
                contiguous.add(n.out.id)
            else:
                body = n.params["graph"]
                tuple_outs = {v.id for v in body.outputs}
                contiguous.update(tuple_outs)
        new_nodes.append(n)
    return Graph(fused.inputs, new_nodes, fused.outputs), kernels


def _mark_inplace(lowered: Graph, inplace) -> list:
    """Mark the kernels that compute write-backs into their targets
    (:func:`_inplace_plan`), each with a variant of its kernel storing into those inputs
    (compiled by :func:`_build`, or as part of a native function); returns their (name,
    source)."""
    nodes = lowered.nodes
    if not inplace:
        return []
    writes = Overwrites(nodes, lowered.outputs)
    readers: dict = {}
    for t in nodes:
        if t.op is TupleGet:
            readers.setdefault(t.inputs[0].id, []).append(t)
    made = []
    for i, n in enumerate(nodes):
        into = _inplace_plan(nodes, i, inplace, writes, readers)
        if not into:
            continue
        L = n.params["launch"]
        body = n.params["graph"]
        source = kernel_module_source(body, body.outputs[0].shape, into=into)
        mod = CPU.load(source)
        sig = [_array_type(v.dtype, len(v.shape) if c else max(1, len(v.shape)))
               for v, c in zip(n.inputs, L.contig)]
        sig += [_array_type(v.dtype, len(v.shape))
                for m, v in enumerate(body.outputs) if m not in into]
        fn = mod.kernel
        if isinstance(L.fn, Adaptive):
            fn = Adaptive(mod.kernel, mod.kernel_par)
        L.inplace = {m: f"v{n.inputs[j].id}" for m, j in into.items()}
        L.inplace_fn, L.inplace_sig = fn, tuple(sig)
        made.append((f"{mod.__name__}.kernel", source))
    return made


def _build(lowered: Graph) -> None:
    """Compile each kernel of a per-node program: the variant storing into its inputs for
    a write-back kernel (its plain form, for a target that is not a contiguous writeable
    array, compiles at such a call, if one ever comes), else the kernel."""
    jobs = []
    for n in lowered.nodes:
        L = n.params.get("launch") if n.op in (FusedKernel, FusedReduceKernel) else None
        if L is None:
            continue
        fn, sig = (L.inplace_fn, L.inplace_sig) if L.inplace else (L.fn, L.sig)
        jobs += [(d, sig) for d in (fn.fns if isinstance(fn, Adaptive) else (fn,))]
    compile_worker.compile_all(jobs)


#: notes (:func:`runtime.cache.read_note`) of graphs refused whole-trace native code: the
#: refusal (a trace too long, a node without native code) comes after lowering the graph
#: and writing its function (the transformer step: ~1 s), which a process loading the
#: same graph's kernels from the disk cache then skips; a note says only which of two
#: right programs to build
_REFUSED = "native-refused"
#: :func:`_native`'s answer for a whole-trace function to build after the fused kernels
DEFERRED = "deferred"


def _native(graph: Graph, name: str, parallel_min: int, inplace, max_lines=None):
    """The whole-trace native program of ``graph``, or None (see :mod:`.native_cpu`), or
    :data:`DEFERRED` (longer than ``max_lines``: built later)."""
    emitted = native_cpu.EMITTERS
    # (ops that are neither emitted nor elementwise first: fusible() writes the node's
    # scalar expression, ~20 us a node)
    other = [n.op.name for n in graph.nodes
             if n.op not in emitted and not getattr(n.op, "elementwise", False)] or \
        [n.op.name for n in graph.nodes if n.op not in emitted and not fusible(n, CPU)]
    if other:  # cheap refusal before any kernel is built
        log.kernels.info("%s: no whole-trace native code for %s", name,
                         ", ".join(sorted(set(other))))
        return None
    if not any(n.op in native_cpu.EMITTERS and not getattr(n.op, "view", False)
               for n in graph.nodes):
        return None  # elementwise only: the fused kernels are the whole program already
    key = note_key(("native", SOURCE_TAG, graph, inplace, parallel_min, native_cpu.MAX_LINES))
    refused = read_note(_REFUSED, key)
    if refused is not None:  # decided by an earlier build of this graph (the worker's)
        log.kernels.info("%s: no whole-trace native code: %s", name, refused)
        return None
    try:
        lowered, kernels = _lower_all(graph, parallel_min, 0)
        kernels += _mark_inplace(lowered, inplace)
        if not native_cpu.inplace_safe(lowered):
            for n in lowered.nodes:
                if n.op is FusedKernel:
                    n.params["launch"].inplace = None
        prog = native_cpu.native_program(lowered, graph, name, max_lines)
    except native_cpu.Deferred as e:
        log.kernels.info("%s: whole-trace native code later: %s", name, e)
        return DEFERRED
    except native_cpu.Unsupported as e:
        log.kernels.info("%s: no whole-trace native code: %s", name, e)
        write_note(_REFUSED, key, str(e))
        return None
    except Exception as e:  # a Numba error: the per-node program is still right
        log.kernels.warning("%s: whole-trace native code failed to build: %s: %s", name,
                            type(e).__name__, e)
        return None
    prog.kernels = kernels + prog.kernels
    return prog


def numba_program(graph: Graph, name: str = "graph", *,
                  parallel_min: int = loops.PARALLEL_MIN, inplace=None,
                  singleton_min: int | None = None, native: bool = False) -> CompiledGraph:
    """Compile ``graph`` with fused Numba kernels (see the module doc).  ``singleton_min``:
    fuse a lone node from this size (default: the CPU's; 0 makes every op a kernel).

    ``native``: first try one native function for the whole graph
    (:mod:`.native_cpu`); a graph with a node it cannot write gets the program below.
    ``native="first"``: only up to :data:`~.native_cpu.FIRST_LINES` lines; a longer one
    gets the program below, marked ``native_later`` (the caller builds it next).

    ``inplace`` maps an output value's id to the input Value it replaces (a write-back):
    where safe (:func:`_inplace_plan`) the kernel computes that output into the input's
    array, sparing a separate copy.
    """
    whole = None
    if native:  # (no worker started here: a build whose kernels are all in the disk
        # cache needs none, and one that is not starts it at its first compile)
        whole = _native(graph, name, parallel_min, inplace,
                        native_cpu.FIRST_LINES if native == "first" else None)
        if whole is not None and whole is not DEFERRED:
            return whole
    lowered, kernels = _lower_all(graph, parallel_min, singleton_min)
    new_nodes = lowered.nodes
    kernels += _mark_inplace(lowered, inplace)
    _build(lowered)
    prog = python_program(lowered, name)
    out = CompiledGraph(prog.fn, prog._source, kernels)
    out.writes_inputs = any(n.params["launch"].inplace is not None for n in new_nodes
                            if n.op is FusedKernel)
    out.native_later = whole is DEFERRED
    return out


def program(graph: Graph, *, inplace=None, singleton_min: int | None = None,
            native=True) -> CompiledGraph:
    """The numba backend's program for a CPU graph (:func:`compiler.codegen.compile_graph`
    finds it by the device's name): fused kernels, tried first as one native function
    (``native`` as :func:`numba_program`'s).  ``singleton_min``: as
    :func:`numba_program` (0: every op a kernel, as tests ask)."""
    return numba_program(graph, inplace=inplace,
                         native=native if singleton_min is None else False,
                         singleton_min=singleton_min)
