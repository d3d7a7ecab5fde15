"""``unique`` on CUDA (``torch.unique``/``Tensor.unique`` with ``dim=None``): the sorted
distinct elements, each element's index among them (``inverse``) and their counts.

The flattened input is argsorted by the stable rank kernel (:func:`.kernels_sort.select`,
NaN last, equal elements in their original order, as the CPU's stable sort; O(n) work
per element, and an input longer than ``kernels_sort.MAX_ROW`` is argsorted on the host,
counted in ``HOST_SORTS["unique"]``); a kernel
flags each sorted position whose value differs from its predecessor's (the first always;
NaN differs from everything, so every NaN is distinct, as the CPU's ``equal_nan=False``),
and the flags are prefix-counted as nonzero's mask is (:func:`.kernels_select.prefix_count`:
chunked in-place scans, the number of distinct values read back once: the output shape
depends on it).  The inclusive count at sorted position ``i`` minus one is the index of
its value among the distinct ones, so one kernel per part writes it: the values (each
run's first element: of ``0.0`` and ``-0.0`` the one first in the input, as the CPU's),
the inverse (that index scattered back through the sort permutation) or the run starts,
whose differences are the counts.  No atomics: the CPU's results exactly.  float16 and
bfloat16 run as float32 (``_half_wrap``: exact both ways, the same order).
"""

from __future__ import annotations

import numpy as np

from runtime.cuda import kernels as K
from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from .elementwise import _I64, contiguous
from .kernels_select import _chunk, prefix_count
from .kernels_sort import select

UNIQUE_SOURCE = K.HEADER + '''

@kernel_jit
def flags(x, ox, perm, n, y, total):
    """``y[i] = 1`` where sorted position ``i`` starts a run of equal values
    (``x[ox + perm[i]] != x[ox + perm[i - 1]]``: NaN always), else 0; 0 for
    ``n <= i < total`` (the padding of the last chunk)."""
    i = cuda.grid(1)
    while i < total:
        if i < n and (i == 0 or x[ox + perm[i]] != x[ox + perm[i - 1]]):
            y[i] = 1
        else:
            y[i] = 0
        i += cuda.gridsize(1)


@register_jitable
def group(y, ends, chunk, i):
    """The index among the distinct values of sorted position ``i``'s value: ``y`` holds
    the running counts of the flags within each chunk, ``ends`` those of the chunks."""
    c = i // chunk
    g = y[i] - 1
    if c > 0:
        g += ends[c - 1]
    return g


@register_jitable
def starts_run(y, chunk, i):
    """Whether sorted position ``i`` was flagged (its running count rose there)."""
    prev = y[i - 1] if i % chunk > 0 else 0
    return y[i] != prev


@kernel_jit
def values(x, ox, perm, y, ends, chunk, n, out):
    """``out[group(i)] = x[ox + perm[i]]`` for each run start ``i``."""
    i = cuda.grid(1)
    while i < n:
        if starts_run(y, chunk, i):
            out[group(y, ends, chunk, i)] = x[ox + perm[i]]
        i += cuda.gridsize(1)


@kernel_jit
def inverse(perm, y, ends, chunk, n, out):
    """``out[perm[i]] = group(i)`` for every sorted position ``i``."""
    i = cuda.grid(1)
    while i < n:
        out[perm[i]] = group(y, ends, chunk, i)
        i += cuda.gridsize(1)


@kernel_jit
def starts(y, ends, chunk, n, out):
    """``out[group(i)] = i`` for each run start ``i``."""
    i = cuda.grid(1)
    while i < n:
        if starts_run(y, chunk, i):
            out[group(y, ends, chunk, i)] = i
        i += cuda.gridsize(1)


@kernel_jit
def counts(start, m, n, out):
    """``out[g]`` = the next run's start (``n`` after the last) minus run ``g``'s."""
    g = cuda.grid(1)
    while g < m:
        nxt = start[g + 1] if g + 1 < m else n
        out[g] = nxt - start[g]
        g += cuda.gridsize(1)
'''


def _module():
    return launch.module("unique", lambda: UNIQUE_SOURCE)


def _launch(name, n, args):
    launch.over(_module(), name, n, args)


def _bytes(a: CudaArray):
    """``a``'s device base, bool as its uint8 bytes."""
    return a.base.view(np.uint8) if a.dtype.kind == "b" else a.base


def unique(a, dim=None, part="values"):
    """One ``part`` of ``unique(a)`` with ``dim=None`` (``"values"``, ``"inverse"``,
    ``"counts"``), as :class:`eager.ops.sort.Unique`'s forward."""
    n = a.size
    x = contiguous(a).reshape((n,))
    if not n:
        shape = {"values": (0,), "inverse": a.shape, "counts": (0,)}[part]
        return CudaArray.empty(shape, a.dtype if part == "values" else _I64)
    perm = select(x, 0, 0, n, False, "unique")
    chunk = _chunk(n)
    total = -(-n // chunk) * chunk
    y = CudaArray.empty((total,), _I64)
    _launch("flags", total, [_bytes(x), x.offset, perm.base, n, y.base, total])
    ends, m = prefix_count(y, chunk)
    if part == "values":
        out = CudaArray.empty((m,), a.dtype)
        _launch("values", n, [_bytes(x), x.offset, perm.base, y.base, ends.base, chunk, n,
                              _bytes(out)])
        return out
    if part == "inverse":
        out = CudaArray.empty((n,), _I64)
        _launch("inverse", n, [perm.base, y.base, ends.base, chunk, n, out.base])
        return out.reshape(a.shape)
    start = CudaArray.empty((m,), _I64)
    _launch("starts", n, [y.base, ends.base, chunk, n, start.base])
    out = CudaArray.empty((m,), _I64)
    _launch("counts", m, [start.base, m, n, out.base])
    return out
