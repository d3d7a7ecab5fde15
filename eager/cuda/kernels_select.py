"""Selection by masks, searching and counting on CUDA: ``nonzero`` (boolean indexing
``x[mask]`` and ``x[mask] = v``, ``masked_select``, ``nonzero``, ``argwhere``),
``masked_scatter`` and its adjoint ``masked_gather``, ``searchsorted`` (``bucketize``),
``bincount`` and ``histc``, all on the device.

Compaction (nonzero, masked_scatter, masked_gather) is a prefix count of the mask: the
flattened mask, as int64 0/1 flags padded to ``rows * chunk``, is scanned in place one
chunk per thread and the chunks' totals once more (the scan kernel of
:func:`runtime.cuda.launch.scan`, twice), so a True element's output position is its
count within its chunk, minus one, plus the total of the chunks before.  The count of
True elements is read back (one element: the output shape depends on it, as PyTorch's
nonzero synchronizes too), then one kernel, one thread per element, writes the outputs:
nonzero the unraveled coordinates of element ``i`` into row ``pos(i)``, masked_scatter
``out[i] = source[pos(i)]`` where the mask holds (a copy of ``x`` elsewhere),
masked_gather ``out[pos(i)] = g[i]`` (zeros elsewhere).  Positions, hence outputs, are
the CPU's exactly (no atomics); errors (mask dtype, too few source elements) are
checked with the count before the launch.  masked_scatter/masked_gather move elements
without arithmetic: float16/bfloat16 run on their bits.

``searchsorted`` is one thread per value, a binary search in its row of the sorted
sequence (the 1-D boundaries for every value, else the row with the value's leading
indices), in the dtype NumPy compares in and with NumPy's order: NaN after every number,
so a NaN value goes before the sequence's NaNs (left) or at its end (right).  On an
unsorted sequence the result is undefined, as PyTorch's (it may differ from the CPU's).

``bincount`` reads the input's maximum back (the output length, at least ``minlength``)
and adds into its bins atomically: counts in int64 (exact whatever the order), weights
in float64 as NumPy (which sums them in float64 too), rounded once at the end to the
weights' dtype when it is float32 (or half: ``_half_wrap``).  Atomic float additions
come in no fixed order, so a float64 weighted bincount may differ from the CPU's in the
last bits, and from run to run (float32 weights almost never: the float64 sum is
rounded to float32; integer-valued weights never): accepted, as PyTorch's CUDA
bincount does.
``histc`` takes its range as the CPU does (:func:`eager.ops.sort.histc_range`, the
data's min/max read back when ``min == max``), computes each element's bin in the
input's dtype as the CPU's (``int((x - lo) * bins / (hi - lo))``, at most ``bins - 1``
for ``x == hi``; NaN and values outside ``[lo, hi]`` ignored), counts in int64 atomics
(exact) and casts to the input's dtype.  (Where ``hi - lo`` overflows to inf the CPU's
float bin turns NaN/inf and its int64 conversion makes NumPy's bincount raise; here such
an element lands in the last bin.)
"""

from __future__ import annotations

import numpy as np

from runtime.cuda import kernels as K
from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from ..dtypes import scalar_name
from ..ops import sort as So
from .elementwise import _F64, _I64, bits, cast, clone, contiguous, full
from .kernels_reduce import reduce

SELECT_SOURCE = K.HEADER + '''

@kernel_jit
def flags(x, ox, n, y, total):
    """``y[i] = 1`` where ``x[ox + i]`` is nonzero (NaN too), else 0, for ``i < n``; 0 for
    ``n <= i < total`` (the padding of the last chunk)."""
    i = cuda.grid(1)
    while i < total:
        if i < n and x[ox + i] != 0:
            y[i] = 1
        else:
            y[i] = 0
        i += cuda.gridsize(1)


@register_jitable
def position(y, ends, chunk, i):
    """The output position of element ``i`` when it is selected, else -1: ``y`` holds the
    running counts within each chunk, ``ends`` the running totals of the chunks."""
    r = i % chunk
    prev = y[i - 1] if r > 0 else 0
    if y[i] == prev:
        return -1
    c = i // chunk
    p = y[i] - 1
    if c > 0:
        p += ends[c - 1]
    return p


@kernel_jit
def nonzero(y, ends, chunk, n, shape, out):
    """Row ``position(i)`` of the contiguous ``(count, len(shape))`` ``out`` = the
    coordinates of the selected element ``i`` in ``shape`` (C order)."""
    i = cuda.grid(1)
    nd = len(shape)
    while i < n:
        p = position(y, ends, chunk, i)
        if p >= 0:
            q = i
            for k in range(nd):
                d = nd - 1 - k
                out[p * nd + d] = q % shape[d]
                q = q // shape[d]
        i += cuda.gridsize(1)


@kernel_jit
def scatter(y, ends, chunk, n, src, osrc, out):
    """``out[i] = src[osrc + position(i)]`` for each selected element ``i``."""
    i = cuda.grid(1)
    while i < n:
        p = position(y, ends, chunk, i)
        if p >= 0:
            out[i] = src[osrc + p]
        i += cuda.gridsize(1)


@kernel_jit
def gather(y, ends, chunk, n, g, og, out):
    """``out[position(i)] = g[og + i]`` for each selected element ``i``."""
    i = cuda.grid(1)
    while i < n:
        p = position(y, ends, chunk, i)
        if p >= 0:
            out[p] = g[og + i]
        i += cuda.gridsize(1)


@register_jitable
def less(a, b):
    """NumPy's sort order: NaN after every number."""
    return a < b or (b != b and a == a)


@kernel_jit
def searchsorted(seq, oseq, m, per_row, vals, ov, n, right, out):
    """``out[i]`` = where ``vals[ov + i]`` goes in row ``i // per_row`` of the
    contiguous ``(rows, m)`` ``seq`` from ``oseq`` (``right``: after equal elements)."""
    i = cuda.grid(1)
    while i < n:
        v = vals[ov + i]
        base = oseq + (i // per_row) * m
        lo = 0
        hi = m
        while lo < hi:
            mid = lo + (hi - lo) // 2
            s = seq[base + mid]
            if right:
                after = not less(v, s)
            else:
                after = less(s, v)
            if after:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
        i += cuda.gridsize(1)


@kernel_jit
def bincount(x, ox, n, counts):
    """``counts[x[ox + i]] += 1`` (atomic, int64) for ``i < n``."""
    i = cuda.grid(1)
    while i < n:
        cuda.atomic.add(counts, np.int64(x[ox + i]), 1)
        i += cuda.gridsize(1)


@kernel_jit
def bincount_weights(x, ox, w, ow, n, sums):
    """``sums[x[ox + i]] += w[ow + i]`` (atomic, float64) for ``i < n``."""
    i = cuda.grid(1)
    while i < n:
        cuda.atomic.add(sums, np.int64(x[ox + i]), w[ow + i])
        i += cuda.gridsize(1)


@kernel_jit
def histc(x, ox, n, lo, hi, bins, nbins, counts):
    """``counts[int((v - lo) * bins / (hi - lo))] += 1`` (at most ``nbins - 1``; atomic,
    int64) for each ``v = x[ox + i]`` in ``[lo, hi]``, in the dtype of ``x``, ``lo``,
    ``hi`` and ``bins`` (one dtype)."""
    i = cuda.grid(1)
    while i < n:
        v = x[ox + i]
        if v >= lo and v <= hi:
            t = (v - lo) * bins / (hi - lo)
            b = nbins - 1
            if t < nbins - 1:
                b = np.int64(t)
            cuda.atomic.add(counts, b, 1)
        i += cuda.gridsize(1)
'''


def _module():
    return launch.module("select", lambda: SELECT_SOURCE)


def _launch(name, n, args):
    launch.over(_module(), name, n, args)


# -- compaction: the prefix count of a mask -----------------------------------------------------

def _chunk(n: int) -> int:
    """Elements per scanned chunk: about sqrt(n), a power of two, at least 32 (so both
    scans are short: ``n / chunk`` threads of ``chunk`` steps, then one of ``n / chunk``)."""
    return 1 << max(5, (max(n - 1, 0).bit_length() + 1) // 2)


def _positions(x: CudaArray) -> tuple:
    """``(y, ends, chunk, count)`` of the nonzero elements of ``x`` (flattened, any
    dtype): the running counts within chunks and of the chunks (:func:`position` in the
    kernels turns them into output positions), and the count, read back."""
    x = contiguous(x)
    n = x.size
    chunk = _chunk(n)
    rows = -(-n // chunk)
    y = CudaArray.empty((rows * chunk,), _I64)
    if not n:
        return y, y, chunk, 0
    _launch("flags", rows * chunk, [x.base, x.offset, n, y.base, rows * chunk])
    ends, count = prefix_count(y, chunk)
    return y, ends, chunk, count


def prefix_count(y: CudaArray, chunk: int) -> tuple:
    """``(ends, count)``: the int64 0/1 flags ``y`` (a whole number of chunks, at least
    one) scanned in place one chunk per thread, the chunks' totals scanned once more
    (``ends``), and the count of flags, read back."""
    rows = y.size // chunk
    launch.scan("sum", y, rows, chunk, False)
    ends = contiguous(y.reshape((rows, chunk)).basic_index(((0, rows, 1), chunk - 1)))
    launch.scan("sum", ends, 1, rows, False)
    return ends, int(ends.basic_index((rows - 1,)).to_host())


def nonzero(a):
    y, ends, chunk, count = _positions(a)
    out = CudaArray.empty((count, a.ndim), _I64)
    if count and a.ndim:
        _launch("nonzero", a.size, [y.base, ends.base, chunk, a.size, tuple(a.shape), out.base])
    return out


def _check_mask(mask):
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {scalar_name(mask.dtype)}")


def masked_scatter(a, mask, source):
    _check_mask(mask)
    y, ends, chunk, count = _positions(mask)
    if count > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = clone(a)
    if count:
        src = bits(contiguous(source))
        _launch("scatter", out.size, [y.base, ends.base, chunk, out.size, src.base, src.offset,
                                      bits(out).base])
    return out


def masked_gather(g, mask, shape):
    y, ends, chunk, count = _positions(mask)
    out = full(tuple(shape), 0, g.dtype)
    if count > out.size:   # (no caller's: the forward checked the count) NumPy's error
        raise ValueError(f"could not broadcast input array from shape ({count},) into shape "
                         f"({out.size},)")
    if count:
        src = bits(contiguous(g))
        _launch("gather", mask.size, [y.base, ends.base, chunk, mask.size, src.base,
                                      src.offset, bits(out).base])
    return out


# -- searching --------------------------------------------------------------------------------

def _compared(a: CudaArray, dtype) -> CudaArray:
    """``a`` contiguous in ``dtype`` (bool as its uint8 bytes)."""
    a = contiguous(a if a.dtype == dtype else cast(a, dtype))
    if a.dtype.kind == "b":
        return CudaArray(a.base.view(np.uint8), a.block, a.shape, a.estrides, a.offset,
                         np.uint8)
    return a


def searchsorted(seq, values, right=False, out_int32=False):
    out = CudaArray.empty(values.shape, np.int32 if out_int32 else _I64)
    n = values.size
    if n:
        common = np.result_type(seq.dtype, values.dtype)   # NumPy compares in it
        s, v = _compared(seq, common), _compared(values, common)
        per_row = n if seq.ndim == 1 else values.shape[-1]
        _launch("searchsorted", n, [s.base, s.offset, seq.shape[-1], per_row, v.base,
                                    v.offset, n, bool(right), out.base])
    return out


# -- counting ---------------------------------------------------------------------------------

def bincount(a, weights=None, minlength=0):
    n = a.size
    length = minlength
    if n:
        length = max(int(a.max()) + 1, minlength)
    x = contiguous(a)
    if weights is None:
        out = full((length,), 0, _I64)
        _launch("bincount", n, [x.base, x.offset, n, out.base])
        return out
    sums = full((length,), 0, _F64)
    w = contiguous(cast(weights, _F64) if weights.dtype != _F64 else weights)
    _launch("bincount_weights", n, [x.base, x.offset, w.base, w.offset, n, sums.base])
    want = weights.dtype if weights.dtype.kind == "f" else _F64
    return sums if want == _F64 else cast(sums, want)


def _extremes(a):
    if not a.size:
        return None
    dims = tuple(range(a.ndim))
    return (reduce("amin", a, dims, False, a.dtype).to_host()[()],
            reduce("amax", a, dims, False, a.dtype).to_host()[()])


def histc(a, bins, min, max):
    lo, hi = So.histc_range(a.dtype, bins, min, max, lambda: _extremes(a))
    counts = full((bins,), 0, _I64)
    x = contiguous(a)
    t = a.dtype.type
    _launch("histc", x.size, [x.base, x.offset, x.size, t(lo), t(hi), t(bins), int(bins),
                              counts.base])
    return cast(counts, a.dtype)
