"""Codegen: turn an optimized :class:`~compiler.ir.Graph` into a callable program.

``compile_graph(graph, backend)`` returns a :class:`CompiledGraph`: call it with the
input arrays to get the output arrays (raises :class:`~compiler.ir.GuardFailed` when a
branch guard sees another outcome).  ``backend="eager"`` interprets the graph with
``run_graph``; ``backend="python"`` generates straight-line Python calling each op's
forward; ``backend="numba"`` adds fused Numba kernels (see :mod:`.numba_cpu`).
"""

from __future__ import annotations

from ..ir import Graph, run_graph
from .pysource import CompiledGraph, python_program


def compile_graph(graph: Graph, backend: str = "numba", inplace=None) -> CompiledGraph:
    """``inplace``: output value id -> the input Value it replaces (write-backs), which the
    numba backend may compute straight into the input's array."""
    if backend == "eager":
        return CompiledGraph(lambda *arrays: run_graph(graph, *arrays),
                             "# interpreted by compiler.ir.run_graph\n" + str(graph), [])
    if backend == "python":
        return python_program(graph)
    if backend == "numba":
        try:
            from .numba_cpu import numba_program
        except ImportError:  # fusion backend not available yet
            return python_program(graph)
        return numba_program(graph, inplace=inplace)
    raise ValueError(f"unknown backend {backend!r}; expected 'numba', 'python' or 'eager'")
