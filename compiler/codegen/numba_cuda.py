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
its one scalar to the host.
"""

from __future__ import annotations

from runtime import device as runtime_device
from runtime.cuda import launch

from ..ir import Graph, Node
from ..passes.fusion import FusedElementwise, FusedReduction, fuse
from .core import core_source
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

    def __call__(self, *operands):
        if self.reduce:
            return launch.run_reduce_core(self.core, self.value, list(operands), self.loop,
                                          self.n_reduced, self.kind, self.src_dtype,
                                          self.out_dtype, self.out_shape, self.doc)
        outs = launch.run_core(self.core, self.out_vars, list(operands), self.out_dtypes,
                              self.loop, self.doc)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _emit(node, names, glb):
    k = len([g for g in glb if g.startswith("CK")])
    glb[f"CK{k}"] = node.params["launch"]
    out = f"v{node.out.id}"
    names[node.out.id] = out
    args = ", ".join(names[v.id] for v in node.inputs)
    return [f"{out} = CK{k}({args})"]


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
    nodes, kernels = [], []
    for n in fused.nodes:
        if n.op is FusedElementwise or n.op is FusedReduction:
            reduce = n.op is FusedReduction
            call = _FusedCall(n.params["graph"], reduce)
            params = dict(n.params)
            params["launch"] = call
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
