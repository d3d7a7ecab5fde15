"""CPU loop templates for fused kernels (elementwise, and reductions with a prologue).

A kernel evaluates a scalar core (see :mod:`.scalar`) at every element of its output.
The loop nest is planned from the shapes when the graph is traced:

* output dimensions of size 1 are dropped (every operand is indexed 0 there);
* each input is right-aligned with the output (NumPy broadcasting) and gets a pattern:
  for each remaining dimension, indexed (its size equals the output's) or broadcast
  (size 1: index 0, so the dimension is left out of its index altogether);
* neighbouring dimensions where every input has the same pattern are merged into one
  loop (all operands are C-contiguous, so merged dimensions are one flat range).

So a chain without broadcasting is one flat loop whatever the rank, ``(x + b[None, :]) *
c[:, None]`` is two nested loops, and an input broadcast everywhere is loaded once before
the loops.  The source depends only on that pattern (and the output's rank where some
dimensions are not merged): loop bounds are read from the output array's shape, so a new
shape with the same pattern reuses the compiled kernel.  Inside the kernel every operand
is reshaped (a view: operands are C-contiguous) to its pattern's dimensions.

Reductions (:func:`reduce_kernel_source`) plan the same way with the kept dimensions
and the reduced (trailing) ones never merged together: loops over the kept dimensions
outside, an accumulator, loops over the reduced ones inside.  Sums accumulate with
:func:`radd` (an add LLVM may reassociate, so the reduction vectorizes although the rest
of the kernel keeps IEEE order), amax/amin with ``llvm.maximum``/``llvm.minimum``
(NaN-propagating like NumPy, and vectorizable).

Two variants are written for each kernel: ``kernel`` (serial loops) and ``kernel_par``
(outermost loop a ``numba.prange``); the program uses the serial one below
:data:`PARALLEL_MIN` elements (a prange launch costs ~1.3 us and wins from ~32k
elements) and otherwise lets :class:`compiler.codegen.numba_cpu.Adaptive` pick.
"""

from __future__ import annotations

#: output size from which the parallel variant is used
PARALLEL_MIN = 32768

#: Numba options of every generated kernel.  ``error_model='numpy'``: a division has no
#: ZeroDivisionError branch (it would block vectorization).  No fastmath flags at all,
#: not even FMA contraction: ``x + a * b`` must round like NumPy's two ufunc calls, so
#: that arithmetic in a kernel is bit-identical to eager (only the runtime.mathlib
#: functions, compiled with their own flags, differ from NumPy, by <= 2 ulp).
NJIT_OPTIONS = "cache=True, error_model='numpy', nogil=True"


class LoopPlan:
    """``groups``: for each loop, the output dimensions merged into it (outermost first);
    ``patterns``: for each input, for each loop, whether the input is indexed by it;
    ``n_outer``: for a reduction, how many loops (the first ones) are kept dimensions."""

    __slots__ = ("groups", "n_outer", "patterns", "rank")

    def __init__(self, rank, groups, patterns, n_outer=None):
        self.rank = rank
        self.groups = groups
        self.patterns = patterns
        self.n_outer = len(groups) if n_outer is None else n_outer

    def key(self):
        return (self.rank, tuple(map(tuple, self.groups)), tuple(map(tuple, self.patterns)),
                self.n_outer)


def plan(out_shape: tuple, in_shapes: list, split: int | None = None) -> LoopPlan:
    """Plan the loops for an output of ``out_shape`` and inputs of ``in_shapes``.

    ``split`` (reductions): dimensions from ``split`` on are reduced; loops never merge
    a kept dimension with a reduced one, and the kept loops come first.
    """
    rank = len(out_shape)
    keep = [d for d in range(rank) if out_shape[d] != 1]
    full = []
    for s in in_shapes:
        s = tuple(s)
        if len(s) > rank:
            raise ValueError(f"input shape {s} has more dimensions than the output {out_shape}")
        pad = (1,) * (rank - len(s)) + s
        for d in range(rank):
            if pad[d] != out_shape[d] and pad[d] != 1:
                raise ValueError(f"input shape {s} does not broadcast to {out_shape}")
        full.append([pad[d] == out_shape[d] for d in keep])
    groups: list = []
    pats: list = [[] for _ in in_shapes]
    for j, d in enumerate(keep):
        same_side = split is None or (keep[j - 1] < split) == (d < split)
        if groups and same_side and all(p[j] == p[j - 1] for p in full):
            groups[-1].append(d)
            continue
        groups.append([d])
        for k, p in enumerate(full):
            pats[k].append(p[j])
    n_outer = None if split is None else sum(1 for g in groups if g[0] < split)
    return LoopPlan(rank, groups, pats, n_outer)


def _tuple(items) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _prologue(p: LoopPlan, n_in: int, sizes: list) -> tuple:
    """(lines binding n0.. and the reshaped inputs, load lines per loop depth)."""
    body = [f"n{j} = {s}" for j, s in enumerate(sizes)]
    nloops = len(sizes)
    loads_at: list = [[] for _ in range(nloops + 1)]   # depth -> load lines
    for k in range(n_in):
        pat = p.patterns[k] if p.groups else [True]
        idx = [j for j in range(nloops) if j < len(pat) and pat[j]]
        if not idx:
            body.append(f"a{k} = x{k}.reshape((1,))[0]")
            continue
        body.append(f"X{k} = x{k}.reshape({_tuple([f'n{j}' for j in idx])})")
        loads_at[max(idx) + 1].append(f"a{k} = X{k}[{', '.join(f'i{j}' for j in idx)}]")
    return body, loads_at


def kernel_source(p: LoopPlan, core: list, out_vars: list, n_in: int, *, name: str,
                  parallel: bool) -> str:
    """Source of one elementwise ``@numba.njit`` function ``name(x0, .., y0, ..)``.

    ``core`` are the scalar core's lines (reading inputs ``a0, a1, ..``); ``out_vars``
    the core variables stored into outputs ``y0, y1, ..``.
    """
    n_out = len(out_vars)
    xs = [f"x{k}" for k in range(n_in)]
    ys = [f"y{m}" for m in range(n_out)]
    deco = f"@numba.njit({NJIT_OPTIONS}{', parallel=True' if parallel else ''})"
    lines = [deco, f"def {name}({', '.join(xs + ys)}):"]
    groups = p.groups
    if not groups:       # a single element (0-d or all-ones output)
        sizes = ["1"]
    elif len(groups) == 1:
        sizes = ["y0.size"]
    else:
        sizes = [" * ".join(f"y0.shape[{d}]" for d in g) for g in groups]
    body, loads_at = _prologue(p, n_in, sizes)
    nloops = len(sizes)
    allidx = [f"n{j}" for j in range(nloops)]
    for m in range(n_out):
        body.append(f"Y{m} = y{m}.reshape({_tuple(allidx)})")
    ind = ""
    for j in range(nloops):
        rng = "numba.prange" if (parallel and j == 0) else "range"
        body.append(f"{ind}for i{j} in {rng}(n{j}):")
        ind += "    "
        body.extend(ind + ln for ln in loads_at[j + 1])
    body.extend(ind + ln for ln in core)
    store_idx = ", ".join(f"i{j}" for j in range(nloops))
    for m, v in enumerate(out_vars):
        body.append(f"{ind}Y{m}[{store_idx}] = {v}")
    lines.extend("    " + ln for ln in body)
    return "\n".join(lines) + "\n"


class Reduction:
    """How a reduction kernel accumulates: ``init``, ``combine`` (a format string with
    ``{acc}`` and ``{x}``) and ``final`` (with ``{acc}`` and ``{count}``)."""

    __slots__ = ("combine", "final", "init")

    def __init__(self, init: str, combine: str, final: str):
        self.init = init
        self.combine = combine
        self.final = final


def reduce_kernel_source(p: LoopPlan, core: list, value: str, n_in: int, red: Reduction, *,
                         name: str, parallel: bool) -> str:
    """Source of ``name(x0, .., y0, shp)``: ``y0`` (the kept dimensions) receives the
    reduction of the core's ``value`` over the last loops; ``shp`` is the loop shape."""
    xs = [f"x{k}" for k in range(n_in)]
    deco = f"@numba.njit({NJIT_OPTIONS}{', parallel=True' if parallel else ''})"
    lines = [deco, f"def {name}({', '.join(xs + ['y0', 'shp'])}):"]
    sizes = [" * ".join(f"shp[{d}]" for d in g) for g in p.groups]
    body, loads_at = _prologue(p, n_in, sizes)
    m = p.n_outer
    outer = [f"n{j}" for j in range(m)]
    body.append(f"Y0 = y0.reshape({_tuple(outer or ['1'])})")
    count = " * ".join(f"n{j}" for j in range(m, len(sizes))) or "1"
    ind = ""
    for j in range(m):
        rng = "numba.prange" if (parallel and j == 0) else "range"
        body.append(f"{ind}for i{j} in {rng}(n{j}):")
        ind += "    "
        body.extend(ind + ln for ln in loads_at[j + 1])
    if m == 0:
        body.extend(loads_at[0])
    body.append(f"{ind}acc = {red.init}")
    inner_ind = ind
    for j in range(m, len(sizes)):
        body.append(f"{inner_ind}for i{j} in range(n{j}):")
        inner_ind += "    "
        body.extend(inner_ind + ln for ln in loads_at[j + 1])
    body.extend(inner_ind + ln for ln in core)
    body.append(inner_ind + "acc = " + red.combine.format(acc="acc", x=value))
    store = ", ".join(f"i{j}" for j in range(m)) or "0"
    body.append(f"{ind}Y0[{store}] = " + red.final.format(acc="acc", count=f"({count})"))
    lines.extend("    " + ln for ln in body)
    return "\n".join(lines) + "\n"


HEADER = '''\
"""dyngraph: fused kernel (generated; the text is its own cache key)."""
import math

import numba
import numpy as np

from compiler.codegen.loops import radd, rmax, rmin
from runtime import mathlib
'''


def module_source(p: LoopPlan, core: list, out_vars: list, n_in: int, doc: str = "",
                  reduction: Reduction | None = None) -> str:
    """A module defining ``kernel`` (serial) and ``kernel_par`` (prange) for one core;
    with ``reduction``, the kernels reduce ``out_vars[0]`` (see
    :func:`reduce_kernel_source`)."""
    parts = [HEADER]
    if doc:
        parts.append("".join(f"# {ln}\n" for ln in doc.splitlines()))
    for name, par in (("kernel", False), ("kernel_par", True)):
        parts.append("\n\n")
        if reduction is None:
            parts.append(kernel_source(p, core, out_vars, n_in, name=name, parallel=par))
        else:
            parts.append(reduce_kernel_source(p, core, out_vars[0], n_in, reduction,
                                              name=name, parallel=par))
    return "".join(parts)


# -- reduction helpers: let LLVM vectorize a reduction without fastmath on the kernel ----

def _intrinsics():
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def radd(typingctx, a, b):
        """``a + b`` with LLVM's ``reassoc`` flag (only this add: the loop vectorizer may
        then split the sum into vector lanes; the kernel's other arithmetic stays exact)."""
        if not isinstance(a, types.Float) or a != b:
            return None

        def codegen(context, builder, sig, args):
            return builder.fadd(args[0], args[1], flags=("reassoc",))

        return a(a, b), codegen

    def _minmax(llvm_name):
        @intrinsic
        def fn(typingctx, a, b):
            """IEEE 754-2019 maximum/minimum (``llvm.maximum``): NaN-propagating like
            NumPy's ``amax``/``amin``, and a reduction LLVM vectorizes."""
            if not isinstance(a, types.Float) or a != b:
                return None

            def codegen(context, builder, sig, args):
                llty = context.get_value_type(sig.return_type)
                f = builder.module.declare_intrinsic(
                    llvm_name, [llty], ir.FunctionType(llty, [llty, llty]))
                return builder.call(f, args)

            return a(a, b), codegen
        return fn

    return radd, _minmax("llvm.maximum"), _minmax("llvm.minimum")


radd, rmax, rmin = _intrinsics()
