"""The CUDA backend: fused groups become numba-cuda kernels, the rest runs through each
op's CUDA implementation.

``cuda_program(graph)`` runs fusion for the CUDA device (every elementwise op fuses;
sum/mean/amax/amin over trailing dimensions fold into the group that computes their
input), writes each group's scalar core (:mod:`.core`, the ops' scalar expressions with
the CUDA math table) and lowers the group to a call that launches it in the grid-stride
or block-reduction template (:mod:`runtime.cuda.templates`, through
:func:`runtime.cuda.launch.run_core`, the launcher eager's one-op kernels use too).  Kernel
variants for contiguous or strided operands are picked per call, so the program is
right for any layout of its inputs.  Values stay on the GPU: only a branch guard copies
its one scalar to the host.  A write-back (``p.add_(u)``, an optimizer's update) computed
by a fused kernel is written straight into the input's array where
:class:`.inplace.Overwrites` allows it and that array is contiguous, instead of into a new
array copied over afterwards by a second kernel.
"""

from __future__ import annotations

from runtime import device as runtime_device
from runtime.cuda import launch

from ..ir import Graph, Node
from ..passes.fusion import FusedElementwise, FusedReduction, fuse
from .core import core_source
from .inplace import Overwrites
from .pysource import CompiledGraph, python_program

CUDA = runtime_device.get("cuda")


class _FusedCall:
    """The launcher of one fused group: ``(*operands) -> output(s)``."""

    def __init__(self, body, reduce: bool):
        self.reduce = reduce
        inputs = body.inputs
        if reduce:
            red = body.nodes[-1]
            v = red.inputs[0]
            self.core, outs = core_source(body, CUDA.math, body.nodes[:-1], [v])
            self.value = outs[0]
            self.loop = v.shape
            self.kind = red.op.name
            self.n_reduced = len(red.params["dim"])
            self.src_dtype = v.dtype
            self.out_dtype = red.out.dtype
            self.out_shape = red.out.shape
        else:
            self.core, self.out_vars = core_source(body, CUDA.math)
            self.loop = body.outputs[0].shape
            self.out_dtypes = [o.dtype for o in body.outputs]
        self.core = tuple(self.core)
        self.doc = ", ".join(f"a{k}: {v.dtype}" for k, v in enumerate(inputs))
        self.source = "\n".join(self.core)

    def __call__(self, *operands, into=None):
        if self.reduce:
            return launch.run_reduce_core(self.core, self.value, list(operands), self.loop,
                                          self.n_reduced, self.kind, self.src_dtype,
                                          self.out_dtype, self.out_shape, self.doc)
        # ``into``: the input array a write-back may be computed into (its old contents
        # are read by no later node): used when its elements are one dense block
        target = [into] if into is not None and into.host is None and into.is_contiguous \
            else None
        outs = launch.run_core(self.core, self.out_vars, list(operands), self.out_dtypes,
                               self.loop, self.doc, outs=target)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _emit(node, names, glb):
    k = len([g for g in glb if g.startswith("CK")])
    glb[f"CK{k}"] = node.params["launch"]
    out = f"v{node.out.id}"
    args = ", ".join(names[v.id] for v in node.inputs)
    into = node.params.get("into")
    if into is not None:
        args += f", into={names[into.id]}"
    names[node.out.id] = out
    return [f"{out} = CK{k}({args})"]


def _write_plan(nodes: list, outputs: list, inplace: dict | None) -> dict:
    """Node index -> the input Value a fused kernel may compute its one output into: a
    write-back of the same shape and dtype whose old contents nothing later reads
    (:class:`.inplace.Overwrites`), among the kernels that end the program (a node that
    may raise, or a guard, after a write would fall back to eager from changed inputs)."""
    if not inplace:
        return {}
    plan = {}
    writes = None
    for i in range(len(nodes) - 1, -1, -1):
        n = nodes[i]
        if n.op is not FusedElementwise and n.op is not FusedReduction:
            break
        src = inplace.get(n.out.id) if n.op is FusedElementwise and \
            len(n.params["graph"].outputs) == 1 else None
        if src is not None and src.shape == n.out.shape and src.dtype == n.out.dtype:
            writes = writes or Overwrites(nodes, outputs)
            if writes.allowed(i, src):
                plan[i] = src
    return plan


class FusedCudaKernel(FusedElementwise):
    abstract = True
    name = "fused_cuda_kernel"
    emit = _emit


class FusedCudaReduceKernel(FusedReduction):
    abstract = True
    name = "fused_cuda_reduce_kernel"
    emit = _emit


def cuda_program(graph: Graph, name: str = "graph", *, inplace=None,
                 singleton_min: int | None = None) -> CompiledGraph:
    """Compile a graph whose values live on the GPU (see the module doc)."""
    fused = fuse(graph, CUDA, singleton_min)
    writes = _write_plan(fused.nodes, fused.outputs, inplace)
    nodes, kernels = [], []
    for i, n in enumerate(fused.nodes):
        if n.op is FusedElementwise or n.op is FusedReduction:
            reduce = n.op is FusedReduction
            call = _FusedCall(n.params["graph"], reduce)
            params = dict(n.params)
            params["launch"] = call
            if i in writes:
                params["into"] = writes[i]
            op = FusedCudaReduceKernel if reduce else FusedCudaKernel
            n = Node(op, n.inputs, params, n.out, n.where)
            kernels.append((f"cuda kernel {len(kernels)}", call.source))
        nodes.append(n)
    prog = python_program(Graph(fused.inputs, nodes, fused.outputs), name)
    return CompiledGraph(prog.fn, prog._source, kernels)


def program(graph: Graph, *, inplace=None, singleton_min: int | None = None,
            native=True) -> CompiledGraph:
    """The numba backend's program for a CUDA graph (:func:`compiler.codegen.compile_graph`
    finds it by the device's name); ``singleton_min`` as :func:`fuse`'s (``native``: the
    CPU's whole-trace functions, none here)."""
    return cuda_program(graph, inplace=inplace, singleton_min=singleton_min)
