"""Codegen: turn an optimized :class:`~compiler.ir.Graph` into a callable program.

``compile_graph(graph, backend)`` returns a :class:`CompiledGraph`: call it with the
input arrays to get the output arrays (raises :class:`~compiler.ir.GuardFailed` when a
branch guard sees another outcome).  ``backend="eager"`` interprets the graph with
``run_graph``; ``backend="python"`` generates straight-line Python calling each op's
forward (at the program's first call); ``backend="numba"`` adds fused Numba kernels for
the graph's device (see :mod:`.numba_cpu` and :mod:`.numba_cuda`).
"""

from __future__ import annotations

from ..ir import Graph, graph_device, run_graph
from .pysource import CompiledGraph, lazy_python_program


def compile_graph(graph: Graph, backend: str = "numba", inplace=None) -> CompiledGraph:
    """``inplace``: output value id -> the input Value it replaces (write-backs), which the
    program may compute straight into the input's array (:mod:`.inplace`)."""
    if backend == "eager":
        return CompiledGraph(lambda *arrays: run_graph(graph, *arrays),
                             "# interpreted by compiler.ir.run_graph\n" + str(graph), [])
    if backend == "python":
        return lazy_python_program(graph, inplace)
    if backend == "numba":
        if graph_device(graph) == "cuda":
            from .numba_cuda import cuda_program
            return cuda_program(graph, inplace=inplace)
        from .numba_cpu import numba_program
        return numba_program(graph, inplace=inplace, native=True)
    raise ValueError(f"unknown backend {backend!r}; expected 'numba', 'python' or 'eager'")


def build_in_worker(graphs: list) -> None:
    """(Run in :mod:`runtime.cpu.compile_worker`.) Build the numba programs of
    ``(graph, inplace)`` pairs: their kernels land in the disk cache, from which the
    program's own :func:`compile_graph` of the same graphs then loads them."""
    for graph, inplace in graphs:
        compile_graph(graph, "numba", inplace)
