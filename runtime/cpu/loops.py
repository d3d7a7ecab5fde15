"""CPU loop templates for fused kernels (elementwise, and reductions with a prologue).

A kernel evaluates a scalar core (written from each op's scalar expression) at every
element of its output; the loop nest comes from :func:`runtime.plan.plan`.  Inside the
kernel every operand is reshaped (a view: operands are C-contiguous) to its pattern's
dimensions; loop bounds are read from the output array's shape.

Reductions (:func:`reduce_kernel_source`) plan the same way with the kept dimensions
and the reduced (trailing) ones never merged together: loops over the kept dimensions
outside, an accumulator, loops over the reduced ones inside.  Sums accumulate with
:func:`radd` (an add LLVM may reassociate, so the reduction vectorizes although the rest
of the kernel keeps IEEE order), amax/amin with ``llvm.maximum``/``llvm.minimum``
(NaN-propagating like NumPy, and vectorizable).

Two variants are written for each kernel: ``kernel`` (serial loops) and ``kernel_par``
(outermost loop a ``numba.prange``); the program uses the serial one below
:data:`PARALLEL_MIN` elements (a prange launch costs ~1.3 us and wins from ~32k
elements) and otherwise lets :class:`runtime.cpu.launch.Adaptive` pick.
"""

from __future__ import annotations

from ..plan import LoopPlan, Reduction

#: output size from which the parallel variant is used
PARALLEL_MIN = 32768

#: Numba options of every generated kernel.  ``error_model='numpy'``: a division has no
#: ZeroDivisionError branch (it would block vectorization).  No fastmath flags at all,
#: not even FMA contraction: ``x + a * b`` must round like NumPy's two ufunc calls, so
#: that arithmetic in a kernel is bit-identical to eager (only the runtime.cpu.mathlib
#: functions, compiled with their own flags, differ from NumPy, by <= 2 ulp).
NJIT_OPTIONS = "cache=True, error_model='numpy', nogil=True"


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
                  parallel: bool, into: dict | None = None) -> str:
    """Source of one elementwise ``@numba.njit`` function ``name(x0, .., y0, ..)``.

    ``core`` are the scalar core's lines (reading inputs ``a0, a1, ..``); ``out_vars``
    the core variables stored into outputs ``y0, y1, ..``.

    ``into`` maps outputs to inputs of their shape (C-contiguous) that they are stored
    into: those outputs are no arguments, ``name(x0, .., y1)`` stores output 0 into its
    input itself.  Loads and stores then go through one array, which LLVM vectorizes; an
    output argument that is the input's array at run time makes it guard the loop with
    an overlap test, which fails, and run the scalar loop (an in-place optimizer update:
    3.7x slower at 200k elements).  Each element is loaded before it is stored, so an
    input an output overwrites stays right for its element.
    """
    into = into or {}
    n_out = len(out_vars)
    xs = [f"x{k}" for k in range(n_in)]
    ys = [f"y{m}" for m in range(n_out) if m not in into]
    y0 = f"x{into[0]}" if 0 in into else "y0"
    deco = f"@numba.njit({NJIT_OPTIONS}{', parallel=True' if parallel else ''})"
    lines = [deco, f"def {name}({', '.join(xs + ys)}):"]
    groups = p.groups
    if not groups:       # a single element (0-d or all-ones output)
        sizes = ["1"]
    elif len(groups) == 1:
        sizes = [f"{y0}.size"]
    else:
        sizes = [" * ".join(f"{y0}.shape[{d}]" for d in g) for g in groups]
    body, loads_at = _prologue(p, n_in, sizes)
    nloops = len(sizes)
    allidx = [f"n{j}" for j in range(nloops)]
    for m in range(n_out):
        j = into.get(m)
        if j is None:
            body.append(f"Y{m} = y{m}.reshape({_tuple(allidx)})")
            continue
        pat = p.patterns[j] if groups else []
        full = groups and len(pat) >= nloops and all(pat[:nloops])
        body.append(f"Y{m} = X{j}" if full else f"Y{m} = x{j}.reshape({_tuple(allidx)})")
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

from runtime.cpu import mathlib
from runtime.cpu.loops import radd, rmax, rmin
'''


def module_source(p: LoopPlan, core: list, out_vars: list, n_in: int, doc: str = "",
                  reduction: Reduction | None = None, into: dict | None = None) -> str:
    """A module defining ``kernel`` (serial) and ``kernel_par`` (prange) for one core;
    with ``reduction``, the kernels reduce ``out_vars[0]`` (see
    :func:`reduce_kernel_source`); ``into``: outputs stored into inputs
    (:func:`kernel_source`)."""
    parts = [HEADER]
    if into:
        doc = (doc + "\n" if doc else "") + "computed into inputs: " + ", ".join(
            f"y{m} -> x{j}" for m, j in sorted(into.items()))
    if doc:
        parts.append("".join(f"# {ln}\n" for ln in doc.splitlines()))
    for name, par in (("kernel", False), ("kernel_par", True)):
        parts.append("\n\n")
        if reduction is None:
            parts.append(kernel_source(p, core, out_vars, n_in, name=name, parallel=par,
                                       into=into))
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
