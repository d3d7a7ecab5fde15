"""Codegen: turn an optimized :class:`~compiler.ir.Graph` into a callable program.

``compile_graph(graph, backend)`` returns a :class:`CompiledGraph`: call it with the
input arrays to get the output arrays (raises :class:`~compiler.ir.GuardFailed` when a
branch guard sees another outcome).  ``backend="eager"`` interprets the graph with
``run_graph``; ``backend="python"`` generates straight-line Python calling each op's
forward (at the program's first call); ``backend="numba"`` adds fused Numba kernels for
the graph's device: ``compiler/codegen/numba_<device type>.py`` builds them (its
``program(graph, inplace=...)``; :mod:`.numba_cpu`, :mod:`.numba_cuda`), found by that name
and imported at the first build for the device (numba, and a device's own library such as
numba-cuda, load only then).
"""

from __future__ import annotations

import importlib

from ..ir import Graph, graph_device, run_graph
from ..tiers import mark_warm
from .pysource import CompiledGraph, lazy_python_program

#: device type -> ``program(graph, inplace=...)`` of its numba backend, loaded on first use
_PROGRAMS: dict = {}


def numba_backend(device_type: str):
    """The ``program`` builder of ``compiler.codegen.numba_<device_type>`` (imported on the
    first build for that device); NotImplementedError for a device without one."""
    build = _PROGRAMS.get(device_type)
    if build is None:
        name = f"{__name__}.numba_{device_type}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            raise NotImplementedError(f"the {device_type} device has no compiled backend "
                                      f"(compiler/codegen/numba_{device_type}.py)") from None
        build = _PROGRAMS[device_type] = module.program
    return build


def compile_graph(graph: Graph, backend: str = "numba", inplace=None,
                  native=True) -> CompiledGraph:
    """``inplace``: output value id -> the input Value it replaces (write-backs), which the
    program may compute straight into the input's array (:mod:`.inplace`).  ``native``
    (numba on the CPU): try a whole-trace native function first; ``"first"``: only a
    short one, a longer one is left for a second build (the program's ``native_later``)."""
    if backend == "eager":
        return CompiledGraph(lambda *arrays: run_graph(graph, *arrays),
                             "# interpreted by compiler.ir.run_graph\n" + str(graph), [])
    if backend == "python":
        return lazy_python_program(graph, inplace)
    if backend == "numba":
        return numba_backend(graph_device(graph))(graph, inplace=inplace, native=native)
    raise ValueError(f"unknown backend {backend!r}; expected 'numba', 'python' or 'eager'")


def build_in_worker(graphs: list, warm=None, native=True) -> None:
    """(Run in :mod:`runtime.cpu.compile_worker`.) Build the numba programs of
    ``(graph, inplace)`` pairs: their kernels land in the disk cache, from which the
    program's own :func:`compile_graph` of the same graphs then loads them.  ``warm``:
    the trace's ``(graph, inplace, backward graphs)``, noted as built
    (:func:`compiler.tiers.mark_warm`, with ``native``) here, so that the next process
    loads them at its first replay even when this program ends before loading them."""
    programs = [compile_graph(graph, "numba", inplace, native) for graph, inplace in graphs]
    if warm is not None:
        mark_warm(*warm, programs, native)
