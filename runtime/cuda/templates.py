"""CUDA kernel templates: a scalar core wrapped in a grid-stride loop, or in a block
reduction in shared memory.

Every operand is a strided view: ``x{k}`` (the 1-D base array), ``o{k}`` (element
offset) and, for a *strided* operand, ``s{k}`` (a tuple of element strides, 0 on
broadcast dimensions).  A *flat* operand is contiguous with the loop's shape: thread
``i`` reads ``x{k}[o{k} + i]``, so neighbouring threads read neighbouring elements
(coalesced).  A strided one is read at ``o{k} + sum(i_d * s{k}[d])`` with ``i``
unravelled over the loop shape ``shp`` (only when some operand needs it).  Which
operands are flat, the rank and the core are all the source depends on: sizes,
strides and offsets are arguments, so a new shape reuses the compiled kernel.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: the digest of runtime/cuda/mathlib.py, whose functions kernels compile in: part of the
#: source text, so a kernel cached on disk (``cuda.jit(cache=True)``) is rebuilt when they
#: change (numba's cache checks only the kernel's own file)
MATHLIB_DIGEST = hashlib.sha256(
    (Path(__file__).parent / "mathlib.py").read_bytes()).hexdigest()[:16]

#: every kernel's decorator (``kernel_jit`` in the header): ``cuda.jit(cache=True,
#: lto=False)``, cached on disk beside its module, and compiled to PTX by NVVM with the
#: module's ``-fma`` then linked from PTX (with LTO, nvJitLink would generate the code,
#: and contract ``a*b+c``, at link time; PTX's ``mul.rn``/``add.rn`` are never
#: contracted by ptxas)
JIT = "@kernel_jit"

HEADER = f'''\
"""dyngraph: CUDA kernel (generated; the text is its own cache key)."""
# runtime.cuda.mathlib {MATHLIB_DIGEST}
import math

import numpy as np
from numba import cuda

from runtime.cuda.mathlib import (rint32, rint64, sigmoid32, sigmoid64, trunc32,
                                  trunc64)

NVVM_FMA = False   # compiled with NVVM's -fma=0: a*b+c rounds twice, as in separate kernels


def kernel_jit(fn):
    # cuda.jit(cache=True, lto=False) as a decorator would lose lto (numba-cuda 0.30's
    # decorator form does not pass it on): the function is handed over directly
    return cuda.jit(fn, cache=True, lto=False)
'''


def _unravel(rank: int, var: str, ind: str) -> list:
    """Lines binding ``j0..j{rank-1}`` to the multi-index of flat ``var`` over ``shp``."""
    if rank == 0:
        return []
    lines = [f"{ind}r_ = {var}"]
    for d in range(rank - 1, 0, -1):
        lines.append(f"{ind}j{d} = r_ % shp[{d}]")
        lines.append(f"{ind}r_ = r_ // shp[{d}]")
    lines.append(f"{ind}j0 = r_")
    return lines


def _index(k: str, rank: int, flat: bool, var: str) -> str:
    if flat or rank == 0:
        return f"o{k} + {var}" if flat else f"o{k}"
    return f"o{k} + " + " + ".join(f"j{d} * s{k}[{d}]" for d in range(rank))


def _params(prefix: str, n: int, flat: list, first: int = 0) -> list:
    """``x0, o0, s0, ..`` for inputs (``prefix`` "x"), ``y0, oy0, sy0, ..`` for outputs."""
    tag = "" if prefix == "x" else prefix
    out = []
    for j in range(n):
        k = first + j
        out += [f"{prefix}{k}", f"o{tag}{k}"]
        if not flat[j]:
            out.append(f"s{tag}{k}")
    return out


def elementwise_source(core: list, out_vars: list, flat_in: list, flat_out: list,
                       rank: int, doc: str = "", scalars=None) -> str:
    """A module with ``kernel(x0, o0, [s0,] .., y0, oy0, [sy0,] .., shp, n)``: output ``m``
    gets the core's ``out_vars[m]`` at every element of the loop shape ``shp``.  Input
    ``k`` with ``scalars[k]`` is a scalar argument ``a{k}`` (a weak Python scalar)."""
    n_in = len(flat_in)
    scalars = scalars or [False] * n_in
    params = []
    for k in range(n_in):
        params += [f"a{k}"] if scalars[k] else _params("x", 1, [flat_in[k]], k)
    outs = _params("y", len(out_vars), flat_out)
    lines = [HEADER]
    if doc:
        lines.append("".join(f"# {ln}\n" for ln in doc.splitlines()))
    lines.append(f"\n{JIT}\n")
    lines.append(f"def kernel({', '.join(params + outs + ['shp', 'n'])}):\n")
    body = ["i = cuda.grid(1)", "step = cuda.gridsize(1)", "while i < n:"]
    ind = "    "
    if not all(flat_in) or not all(flat_out):
        body += _unravel(rank, "i", ind)
    for k in range(n_in):
        if not scalars[k]:
            body.append(f"{ind}a{k} = x{k}[{_index(str(k), rank, flat_in[k], 'i')}]")
    body += [ind + ln for ln in core]
    for m, v in enumerate(out_vars):
        body.append(f"{ind}y{m}[{_index(f'y{m}', rank, flat_out[m], 'i')}] = {v}")
    body.append(f"{ind}i += step")
    lines.append("".join(f"    {ln}\n" for ln in body))
    return "".join(lines)


def reduce_source(core: list, value: str, flat_in: list, rank: int, init: str,
                  combine: str, final: str, acc_type: str, threads: int,
                  doc: str = "", partial: bool = False) -> str:
    """A module with ``kernel(x0, o0, [s0,] .., y0, shp, rows, m, parts, chunk, count)``:
    ``rows * parts`` blocks (grid-stride), block ``b`` reducing part ``b % parts`` (the
    ``chunk`` elements from ``(b % parts) * chunk``) of row ``b // parts``, a row being
    the ``m`` reduced elements (the trailing dimensions of the loop shape ``shp``); its
    threads accumulate ``combine(acc, value)`` and reduce the per-thread results in
    shared memory (a tree of ``threads``, a power of two); thread 0 stores
    ``final(acc)`` (``count``: the number of elements ``final`` divides by) into
    ``y0[row]`` when ``parts`` is 1, or, with ``partial``, the accumulator itself into
    ``y0[b]`` (of ``acc_type``: the first pass of a two-pass reduction, whose second
    pass reduces the (rows, parts) partial results)."""
    n_in = len(flat_in)
    params = _params("x", n_in, flat_in)
    lines = [HEADER]
    if doc:
        lines.append("".join(f"# {ln}\n" for ln in doc.splitlines()))
    lines.append(f"\n{JIT}\n")
    args = params + ["y0", "shp", "rows", "m", "parts", "chunk", "count"]
    lines.append(f"def kernel({', '.join(args)}):\n")
    c = lambda a, b: combine.format(acc=a, x=b)
    store = "sm[0]" if partial else final.format(acc="sm[0]", count="count")
    body = [f"sm = cuda.shared.array({threads}, dtype=np.{acc_type})",
            "tid = cuda.threadIdx.x",
            "b = cuda.blockIdx.x",
            "while b < rows * parts:",
            "    row = b // parts",
            "    lo = (b - row * parts) * chunk",
            "    hi = min(m, lo + chunk)",
            f"    acc = {init}",
            "    jj = lo + tid",
            "    while jj < hi:",
            "        e = row * m + jj"]
    ind = "        "
    if not all(flat_in):
        body += _unravel(rank, "e", ind)
    for k in range(n_in):
        body.append(f"{ind}a{k} = x{k}[{_index(str(k), rank, flat_in[k], 'e')}]")
    body += [ind + ln for ln in core]
    body += [f"{ind}acc = {c('acc', value)}",
             f"{ind}jj += {threads}",
             "    sm[tid] = acc",
             "    cuda.syncthreads()",
             f"    h = {threads // 2}",
             "    while h > 0:",
             "        if tid < h:",
             f"            sm[tid] = {c('sm[tid]', 'sm[tid + h]')}",
             "        cuda.syncthreads()",
             "        h //= 2",
             "    if tid == 0:",
             f"        y0[b] = {store}",
             "    cuda.syncthreads()",
             "    b += cuda.gridDim.x"]
    lines.append("".join(f"    {ln}\n" for ln in body))
    return "".join(lines)
