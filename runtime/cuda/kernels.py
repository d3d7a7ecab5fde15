"""Hand-written CUDA kernels, as source text loaded like generated ones (so each is
compiled, cached and checked for real GPUs the same way): a tiled shared-memory GEMM
with an optional bias epilogue, counter-based random numbers (randperm by ranking random
keys, multinomial by bisecting running sums or an exponential race), the NLL loss, and
the stable rank kernel behind sorting and selection (argsort, topk, kthvalue).
"""

from __future__ import annotations

#: every kernel here is ``cuda.jit(cache=True, lto=False)`` (``kernel_jit``), as the
#: templates' (see :data:`runtime.cuda.templates.JIT`)
HEADER = '''\
"""dyngraph: CUDA kernel (runtime.cuda.kernels)."""
import math

import numpy as np
from numba import cuda
from numba.extending import register_jitable

NVVM_FMA = False   # compiled with NVVM's -fma=0 (see runtime.cuda), all but the GEMM


def kernel_jit(fn):
    # cuda.jit(cache=True, lto=False) as a decorator would lose lto (numba-cuda 0.30's
    # decorator form does not pass it on): the function is handed over directly
    return cuda.jit(fn, cache=True, lto=False)
'''


def gemm_source(tile: int, dtype: str, bias: bool) -> str:
    """``kernel(a, oa, sa, b, ob, sb, c, [bias, obias, sbias,] M, N, K)``: ``c[z] = a[z] @
    b[z] (+ bias)`` for every batch ``z`` (``blockIdx.z``), ``a`` and ``b`` read through
    (batch, row, col) element strides (0 on a broadcast batch), ``c`` contiguous (B, M, N).
    Each block computes a ``tile x tile`` tile of ``c`` from tiles of ``a`` and ``b``
    staged in shared memory; accumulation in ``dtype`` in k order, one fused multiply-add
    per k (the one kernel compiled with FMA contraction: eager and compiled graphs both
    call it, so they agree bit for bit; the CPU's BLAS rounds differently anyway)."""
    extra = "bias, obias, sbias, " if bias else ""
    epilogue = "        acc += bias[obias + col * sbias]\n" if bias else ""
    return HEADER + f'''
NVVM_FMA = True    # the GEMM keeps FMA contraction (acc += a*b as one fma per k)


@kernel_jit
def kernel(a, oa, sa, b, ob, sb, c, {extra}M, N, K):
    ta = cuda.shared.array(({tile}, {tile}), dtype=np.{dtype})
    tb = cuda.shared.array(({tile}, {tile}), dtype=np.{dtype})
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * {tile} + tx
    row = cuda.blockIdx.y * {tile} + ty
    z = cuda.blockIdx.z
    acc = np.{dtype}(0)
    for k0 in range(0, K, {tile}):
        ka = k0 + tx
        if row < M and ka < K:
            ta[ty, tx] = a[oa + z * sa[0] + row * sa[1] + ka * sa[2]]
        else:
            ta[ty, tx] = np.{dtype}(0)
        kb = k0 + ty
        if kb < K and col < N:
            tb[ty, tx] = b[ob + z * sb[0] + kb * sb[1] + col * sb[2]]
        else:
            tb[ty, tx] = np.{dtype}(0)
        cuda.syncthreads()
        for kk in range({tile}):
            acc += ta[ty, kk] * tb[kk, tx]
        cuda.syncthreads()
    if row < M and col < N:
{epilogue}        c[(z * M + row) * N + col] = acc
'''


def _draws(suffix: str, uniform: str, ftype: str, two_pi: str) -> str:
    """The kernels drawing in one precision: ``rand{suffix}``, ``randn{suffix}`` (Box-Muller
    with libdevice's log, cos, sqrt of that type) and ``bernoulli_tensor{suffix}`` (1 where
    a draw falls below ``p[i]``, contiguous, compared in ``p``'s type; ``bad[0] = 1`` when
    some ``p[i]`` lies outside [0, 1]: the caller raises PyTorch's error), from
    ``uniform`` (float64, 53 random bits) or ``uniform32`` (float32, 24 bits)."""
    return f'''
@kernel_jit
def rand{suffix}(y, n, seed, offset):
    i = cuda.grid(1)
    while i < n:
        y[i] = {uniform}(seed, offset + i, 0)
        i += cuda.gridsize(1)


@kernel_jit
def randn{suffix}(y, n, seed, offset):
    i = cuda.grid(1)
    while i < n:
        u1 = {ftype}(1.0) - {uniform}(seed, offset + i, 0)   # in (0, 1]: log is finite
        u2 = {uniform}(seed, offset + i, 2)
        y[i] = math.sqrt({ftype}(-2.0) * math.log(u1)) * math.cos({ftype}({two_pi}) * u2)
        i += cuda.gridsize(1)


@kernel_jit
def bernoulli_tensor{suffix}(y, p, n, seed, offset, bad):
    i = cuda.grid(1)
    while i < n:
        q = p[i]
        if not (q >= {ftype}(0) and q <= {ftype}(1)):
            bad[0] = 1
        y[i] = 1 if {uniform}(seed, offset + i, 0) < q else 0
        i += cuda.gridsize(1)

'''


def _multinomial(suffix: str, uniform: str, open_uniform: str, ftype: str) -> str:
    """The kernels of ``multinomial`` in one precision (``p``'s: float32 or float64):
    ``multinomial_sums{suffix}`` (one thread per row: the running sums of the weights into
    ``cdf`` and the row's total; ``bad[0] = 1`` for an inf, NaN or negative weight,
    ``bad[1] = 1`` for a row summing to 0 or less: the caller raises the CPU's errors),
    ``multinomial_draw{suffix}`` (with replacement: one thread per draw, the first
    category whose running sum exceeds a uniform times the total, found by bisection;
    never one without mass) and ``multinomial_keys{suffix}`` (without replacement: the
    exponential race's keys ``log p - log E``, ``E = -log U`` for ``U`` uniform in
    (0, 1), -inf where ``p`` is 0; the caller takes the largest)."""
    return f'''
@kernel_jit
def multinomial_sums{suffix}(p, cdf, total, rows, m, bad):
    r = cuda.grid(1)
    while r < rows:
        s = {ftype}(0)
        for j in range(m):
            q = p[r * m + j]
            if not (q >= {ftype}(0) and q < {ftype}(math.inf)):
                bad[0] = 1
            s += q
            cdf[r * m + j] = s
        total[r] = s
        if not (s > {ftype}(0)):
            bad[1] = 1
        r += cuda.gridsize(1)


@kernel_jit
def multinomial_draw{suffix}(cdf, total, y, rows, m, k, seed, offset):
    i = cuda.grid(1)
    while i < rows * k:
        base = (i // k) * m
        u = {uniform}(seed, offset + i, 0) * total[i // k]
        lo = 0
        hi = m - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cdf[base + mid] > u:
                hi = mid
            else:
                lo = mid + 1
        # u rounded up to the total: the last category with mass
        while lo > 0 and cdf[base + lo] == cdf[base + lo - 1]:
            lo -= 1
        y[i] = lo
        i += cuda.gridsize(1)


@kernel_jit
def multinomial_keys{suffix}(p, keys, n, seed, offset):
    i = cuda.grid(1)
    while i < n:
        q = p[i]
        if q > {ftype}(0):
            e = -math.log({open_uniform}(seed, offset + i, 0))
            keys[i] = math.log(q) - math.log(e)
        else:
            keys[i] = -{ftype}(math.inf)
        i += cuda.gridsize(1)

'''


RANDOM_SOURCE = HEADER + '''
M32 = np.uint64(0xFFFFFFFF)


@register_jitable
def mix32(x):
    # a 32-bit integer hash (lowbias32), in uint64 arithmetic without overflow
    x = x & M32
    x = x ^ (x >> np.uint64(16))
    x = (x * np.uint64(0x7FEB352D)) & M32
    x = x ^ (x >> np.uint64(15))
    x = (x * np.uint64(0x846CA68B)) & M32
    x = x ^ (x >> np.uint64(16))
    return x


@register_jitable
def bits(seed, counter, stream):
    """32 random bits: a function of (seed, counter, stream) only, so a run reproduces."""
    h = mix32(np.uint64(seed) & M32 ^ mix32(np.uint64(stream) + np.uint64(0x9E3779B9)))
    h = mix32(h ^ (np.uint64(counter) & M32))
    h = mix32(h ^ (np.uint64(seed) >> np.uint64(32)) ^ (np.uint64(counter) >> np.uint64(32)))
    return h


@register_jitable
def uniform(seed, counter, stream):
    """A float64 in [0, 1) with 53 random bits."""
    hi = bits(seed, counter, stream) >> np.uint64(5)
    lo = bits(seed, counter, stream + 1) >> np.uint64(6)
    return (np.float64(hi) * 67108864.0 + np.float64(lo)) / 9007199254740992.0


@register_jitable
def uniform32(seed, counter, stream):
    """A float32 in [0, 1) with 24 random bits: exact, so never 1 (a float64 draw rounded
    to float32 is 1.0 for the top 2**-25 of its range)."""
    return np.float32(bits(seed, counter, stream) >> np.uint64(8)) * \
        np.float32(5.9604644775390625e-08)


@register_jitable
def open_uniform32(seed, counter, stream):
    """A float32 in (0, 1): 23 random bits and a half, exact (never 0 nor 1)."""
    return (np.float32(bits(seed, counter, stream) >> np.uint64(9)) + np.float32(0.5)) * \
        np.float32(1.1920928955078125e-07)


@register_jitable
def open_uniform(seed, counter, stream):
    """A float64 in (0, 1): 52 random bits and a half, exact (never 0 nor 1)."""
    hi = bits(seed, counter, stream) >> np.uint64(6)
    lo = bits(seed, counter, stream + 1) >> np.uint64(6)
    return (np.float64(hi) * 67108864.0 + np.float64(lo) + 0.5) / 4503599627370496.0


''' + _draws("32", "uniform32", "np.float32", "6.2831855") + \
    _draws("", "uniform", "np.float64", "6.283185307179586") + \
    _multinomial("32", "uniform32", "open_uniform32", "np.float32") + \
    _multinomial("", "uniform", "open_uniform", "np.float64") + '''
@kernel_jit
def bernoulli(y, n, seed, offset, p):
    # a float64 output: 1 where a 53-bit uniform falls below p
    i = cuda.grid(1)
    while i < n:
        y[i] = 1 if uniform(seed, offset + i, 0) < p else 0
        i += cuda.gridsize(1)


@kernel_jit
def bernoulli32(y, n, seed, offset, threshold):
    # 1 where 24 random bits fall below threshold = ceil(p * 2**24): exactly the draws
    # uniform32 < p, in integer arithmetic
    i = cuda.grid(1)
    while i < n:
        y[i] = 1 if (bits(seed, offset + i, 0) >> np.uint64(8)) < np.uint64(threshold) else 0
        i += cuda.gridsize(1)


@kernel_jit
def randint(y, n, seed, offset, low, span):
    # low + floor(r * span / 2**64) for 64 random bits r (span < 2**32: the products fit in
    # uint64), in integer arithmetic; the bias is at most span / 2**64
    i = cuda.grid(1)
    while i < n:
        hi = bits(seed, offset + i, 0)
        lo = bits(seed, offset + i, 1)
        s = np.uint64(span)
        y[i] = low + np.int64((hi * s + ((lo * s) >> np.uint64(32))) >> np.uint64(32))
        i += cuda.gridsize(1)


@kernel_jit
def randint_wide(y, n, seed, offset, low, span):
    # a span of 2**32 or more: a 53-bit float64 uniform times the span
    i = cuda.grid(1)
    while i < n:
        y[i] = low + np.int64(uniform(seed, offset + i, 0) * span)
        i += cuda.gridsize(1)


@kernel_jit
def random_keys(keys, n, seed, offset):
    # 64 random bits per element: the sort keys of randperm
    i = cuda.grid(1)
    while i < n:
        keys[i] = (bits(seed, offset + i, 0) << np.uint64(32)) | bits(seed, offset + i, 1)
        i += cuda.gridsize(1)


@kernel_jit
def rank_by_keys(y, keys, n):
    # y[rank of keys[i]] = i, ties broken by index: a permutation whatever the keys (each
    # thread counts the keys before its own, O(n) per element)
    i = cuda.grid(1)
    while i < n:
        k = keys[i]
        r = 0
        for j in range(n):
            kj = keys[j]
            if kj < k or (kj == k and j < i):
                r += 1
        y[r] = i
        i += cuda.gridsize(1)
'''


def nll_source(threads: int) -> str:
    """``loss(logp, ol, sl, target, ot, st, n, ignore, mean, out)`` and
    ``grad(g, og, target, ot, st, n, c, ignore, mean, out)``: one block of ``threads``
    sums the picked log-probabilities (float64) and counts the rows kept."""
    return HEADER + f'''

@kernel_jit
def loss(logp, ol, sl, target, ot, st, n, ignore, mean, out):
    acc = cuda.shared.array({threads}, dtype=np.float64)
    cnt = cuda.shared.array({threads}, dtype=np.int64)
    tid = cuda.threadIdx.x
    s = 0.0
    i = tid
    while i < n:
        t = target[ot + i * st]
        if t != ignore:
            s += logp[ol + i * sl[0] + t * sl[1]]
        i += {threads}
    acc[tid] = s
    k = 0
    i = tid
    while i < n:
        if target[ot + i * st] != ignore:
            k += 1
        i += {threads}
    cnt[tid] = k
    cuda.syncthreads()
    h = {threads // 2}
    while h > 0:
        if tid < h:
            cnt[tid] += cnt[tid + h]
        cuda.syncthreads()
        h //= 2
    count = cnt[0]
    h = {threads // 2}
    while h > 0:
        if tid < h:
            acc[tid] += acc[tid + h]
        cuda.syncthreads()
        h //= 2
    if tid == 0:
        if not mean:
            out[0] = -acc[0]
        elif count == 0:
            out[0] = math.nan
        else:
            out[0] = -acc[0] / count


@kernel_jit
def grad(g, og, target, ot, st, n, c, ignore, mean, out):
    cnt = cuda.shared.array({threads}, dtype=np.int64)
    tid = cuda.threadIdx.x
    k = 0
    i = tid
    while i < n:
        if target[ot + i * st] != ignore:
            k += 1
        i += {threads}
    cnt[tid] = k
    cuda.syncthreads()
    h = {threads // 2}
    while h > 0:
        if tid < h:
            cnt[tid] += cnt[tid + h]
        cuda.syncthreads()
        h //= 2
    count = cnt[0]
    if mean and count == 0:
        return
    scale = 1.0 / count if mean else 1.0
    v = -(g[og] * scale)
    i = tid
    while i < n:
        t = target[ot + i * st]
        if t != ignore:
            out[i * c + t] = v
        i += {threads}
'''


GATHER_SOURCE = HEADER + '''

@kernel_jit
def gather(a, oa, sa, size, idx, oi, si, y, shp, n, dim):
    """``y[i] = a[.., idx[i], ..]`` along ``dim`` for every element ``i`` of ``idx``'s
    shape ``shp`` (``a`` and ``idx`` strided views; negative indices wrap by ``size``)."""
    i = cuda.grid(1)
    while i < n:
        r = i
        pa = oa
        pi = oi
        for k in range(len(shp)):
            d = len(shp) - 1 - k
            j = r % shp[d]
            r = r // shp[d]
            pi += j * si[d]
            if d != dim:
                pa += j * sa[d]
        q = idx[pi]
        if q < 0:
            q += size
        y[i] = a[pa + q * sa[dim]]
        i += cuda.gridsize(1)
'''


def argreduce_source(threads: int, dtype: str, largest: bool) -> str:
    """``kernel(x, y, rows, m)``: for each of ``rows`` contiguous rows of ``m`` elements,
    the index of its first maximum (``largest``) or minimum; NaN counts as the extreme,
    as NumPy's argmax/argmin.  One block per row, a shared-memory tree of (value, index)."""
    cmp = ">" if largest else "<"
    return HEADER + f'''

@kernel_jit
def kernel(x, y, rows, m):
    sv = cuda.shared.array({threads}, dtype=np.{dtype})
    si = cuda.shared.array({threads}, dtype=np.int64)
    tid = cuda.threadIdx.x
    row = cuda.blockIdx.x
    while row < rows:
        bv = x[row * m] if m > 0 else np.{dtype}(0)
        bi = np.int64(0)
        j = tid
        while j < m:
            v = x[row * m + j]
            tie = v == bv or (v != v and bv != bv)
            if (v != v and bv == bv) or (v {cmp} bv) or (j < bi and tie):
                bv = v
                bi = j
            j += {threads}
        if tid >= m:
            bi = m
        sv[tid] = bv
        si[tid] = bi
        cuda.syncthreads()
        h = {threads // 2}
        while h > 0:
            if tid < h:
                v = sv[tid + h]
                k = si[tid + h]
                w = sv[tid]
                b = si[tid]
                if k < m and (b >= m or (v != v and w == w) or (w == w and v {cmp} w)
                              or (k < b and (v == w or (v != v and w != w)))):
                    sv[tid] = v
                    si[tid] = k
            cuda.syncthreads()
            h //= 2
        if tid == 0:
            y[row] = si[0]
        cuda.syncthreads()
        row += cuda.gridDim.x
'''


def rank_source(descending: bool) -> str:
    """``kernel(x, y, outer, m, inner, lo, hi)``: for the contiguous ``x`` seen as (outer,
    m, inner), each element's rank along m in a stable sort (elements ordered by value,
    ties by index; NaN after every number, or before when ``descending``, as eager's CPU
    sort) by counting the elements that sort before it (O(m) per element); an element
    ranked in [lo, hi) writes its index along m at that rank into the contiguous (outer,
    hi - lo, inner) int64 ``y``.  argsort is [0, m), topk [0, k), kthvalue [k-1, k)."""
    if descending:
        before = "(wn and j < i) if vn else (wn or w > v or (w == v and j < i))"
    else:
        before = "(j < i or not wn) if vn else (not wn and (w < v or (w == v and j < i)))"
    return HEADER + f'''

@kernel_jit
def kernel(x, y, outer, m, inner, lo, hi):
    n = outer * m * inner
    k = hi - lo
    t = cuda.grid(1)
    while t < n:
        c = t % inner
        i = (t // inner) % m
        o = t // (inner * m)
        base = o * m * inner + c
        v = x[t]
        vn = v != v
        rank = 0
        for j in range(m):
            w = x[base + j * inner]
            wn = w != w
            if {before}:
                rank += 1
                if rank >= hi:
                    break
        if rank >= lo and rank < hi:
            y[(o * k + rank - lo) * inner + c] = i
        t += cuda.gridsize(1)
'''


_SCATTER = '''

@kernel_jit
def NAME(y, sy, size, idx, oi, si, src, os_, ss, shp, n, dim):
    """``y[.., idx[i], ..] WHAT src[i]`` along ``dim`` for every element ``i`` of ``idx``'s
    shape ``shp``; ``y`` contiguous with strides ``sy``."""
    i = cuda.grid(1)
    while i < n:
        r = i
        py = 0
        pi = oi
        ps = os_
        for k in range(len(shp)):
            d = len(shp) - 1 - k
            j = r % shp[d]
            r = r // shp[d]
            pi += j * si[d]
            ps += j * ss[d]
            if d != dim:
                py += j * sy[d]
        q = idx[pi]
        if q < 0:
            q += size
        WRITE
        i += cuda.gridsize(1)
'''

# the write and the atomic add are two kernels: one holding both would not compile for a
# dtype without atomics (bool, int8/int16, the bits of float16/bfloat16), even to write
SCATTER_SOURCE = HEADER + _SCATTER.replace("NAME", "scatter").replace("WHAT", "=").replace(
    "WRITE", "y[py + q * sy[dim]] = src[ps]")
SCATTER_SOURCE += _SCATTER.replace("NAME", "scatter_add").replace(
    "WHAT", "+=").replace("shp``;", "shp`` (atomically: repeated indices accumulate);").replace(
    "WRITE", "cuda.atomic.add(y, py + q * sy[dim], src[ps])")


def scan_source(kind: str, dtype: str) -> str:
    """``kernel(y, rows, m, reverse)``: an in-place scan of each of ``rows`` contiguous rows
    of ``m`` elements of ``y`` (``dtype``), one thread per row, in element order (from the
    end when ``reverse``), accumulating in ``dtype`` as NumPy's ``cumsum``/``cumprod``/
    ``logaddexp.accumulate`` do (so the results are NumPy's to rounding of the math
    library): ``kind`` is "sum", "prod" or "lse"."""
    if kind == "sum":
        step = ["acc = acc + v"]
    elif kind == "prod":
        step = ["acc = acc * v"]
    else:   # NumPy's npy_logaddexp, in dtype
        step = ["if acc == v:",
                f"    acc = acc + np.{dtype}(0.6931471805599453)",
                "else:",
                "    t = acc - v",
                "    if t > 0:",
                "        acc = acc + math.log1p(math.exp(-t))",
                "    elif t <= 0:",
                "        acc = v + math.log1p(math.exp(t))",
                "    else:",
                "        acc = t"]
    body = "".join(f"                {ln}\n" for ln in step)
    return HEADER + f'''

@kernel_jit
def kernel(y, rows, m, reverse):
    r = cuda.grid(1)
    while r < rows:
        if m > 0:
            base = r * m
            first = base + m - 1 if reverse else base
            acc = y[first]
            for k in range(1, m):
                p = base + m - 1 - k if reverse else base + k
                v = y[p]
{body}                y[p] = acc
        r += cuda.gridsize(1)
'''


INDEX_SOURCE = HEADER + '''

@kernel_jit
def index(a, oa, idx, oi, si0, y, shp, sa, si, sizes, astr, n):
    """Advanced indexing: ``y[i] = a[..]`` for every element ``i`` of the (contiguous)
    output of shape ``shp``: output dimension ``d`` steps ``a`` by ``sa[d]`` (0 for a
    batch dimension of the index) and the index by ``si[d]`` (0 for a dimension of
    ``a``); then each of the ``len(sizes)`` index arrays (``idx[pi + t * si0]``, negative
    values wrapped by ``sizes[t]``) steps ``a`` by ``astr[t]``."""
    i = cuda.grid(1)
    while i < n:
        r = i
        pa = oa
        pi = oi
        for k in range(len(shp)):
            d = len(shp) - 1 - k
            j = r % shp[d]
            r = r // shp[d]
            pa += j * sa[d]
            pi += j * si[d]
        for t in range(len(sizes)):
            q = idx[pi + t * si0]
            if q < 0:
                q += sizes[t]
            pa += q * astr[t]
        y[i] = a[pa]
        i += cuda.gridsize(1)
'''

_PUT = '''

@kernel_jit
def NAME(y, oy, idx, oi, si0, v, ov, sv, shp, sy, si, sizes, ystr, n):
    """The adjoint walk of ``index``: element ``i`` of the region of shape ``shp`` reads
    ``v`` (strides ``sv``) and WHAT the element of ``y`` it addresses."""
    i = cuda.grid(1)
    while i < n:
        r = i
        py = oy
        pi = oi
        pv = ov
        for k in range(len(shp)):
            d = len(shp) - 1 - k
            j = r % shp[d]
            r = r // shp[d]
            py += j * sy[d]
            pi += j * si[d]
            pv += j * sv[d]
        for t in range(len(sizes)):
            q = idx[pi + t * si0]
            if q < 0:
                q += sizes[t]
            py += q * ystr[t]
        WRITE
        i += cuda.gridsize(1)
'''

# (the write and the atomic add are two kernels, as scatter's)
INDEX_SOURCE += _PUT.replace("NAME", "put").replace("WHAT", "writes").replace(
    "WRITE", "y[py] = v[pv]")
INDEX_SOURCE += _PUT.replace("NAME", "put_add").replace(
    "WHAT", "adds to (atomically: repeated indices accumulate)").replace(
    "WRITE", "cuda.atomic.add(y, py, v[pv])")


def _to_half_bits(src_bits: int, src_man: int, half: str) -> str:
    """Source of a device function ``enc(f)`` rounding the bits ``f`` (uint64) of an IEEE
    float with ``src_bits`` bits and ``src_man`` mantissa bits to the bits of float16 or
    bfloat16 (``half``), to nearest, ties to even, as NumPy / ml_dtypes do; NaN keeps the
    top of its payload (quiet)."""
    ebits = src_bits - 1 - src_man
    sbias = (1 << (ebits - 1)) - 1
    hman, hexp = (10, 5) if half == "float16" else (7, 8)
    hbias = (1 << (hexp - 1)) - 1
    drop = src_man - hman                   # mantissa bits dropped for a normal result
    emax = (1 << ebits) - 1
    # source exponent range giving a normal half: [lo_norm, hi_norm]
    lo_norm = sbias - hbias + 1
    hi_norm = sbias + hbias
    # below lo_norm - hman - 1 the value rounds to zero
    lo_sub = lo_norm - hman - 1
    inf = ((1 << hexp) - 1) << hman
    U = "np.uint64"
    return f'''
@register_jitable
def enc(f):
    sign = (f >> {U}({src_bits - 1})) << {U}({hexp + hman})
    e = np.int64((f >> {U}({src_man})) & {U}({emax}))
    m = f & {U}({(1 << src_man) - 1})
    if e == {emax}:
        if m == {U}(0):
            return sign | {U}({inf})
        return sign | {U}({inf}) | (m >> {U}({drop})) | {U}({1 << (hman - 1)})
    if e > {hi_norm}:
        return sign | {U}({inf})
    if e < {lo_sub}:
        return sign
    if e < {lo_norm}:
        # a subnormal half: the significand (with its leading 1 unless the source is
        # subnormal too), shifted further
        if e == 0:
            e = 1
        else:
            m = m | {U}({1 << src_man})
        shift = {U}({drop + lo_norm}) - {U}(e)
        h = m >> shift
        rem = m & ((({U}(1)) << shift) - {U}(1))
        halfway = {U}(1) << (shift - {U}(1))
    else:
        h = ({U}(e - {lo_norm - 1}) << {U}({hman})) | (m >> {U}({drop}))
        rem = m & {U}({(1 << drop) - 1})
        halfway = {U}({1 << (drop - 1)})
    if rem > halfway or (rem == halfway and (h & {U}(1)) == {U}(1)):
        h += {U}(1)     # a carry into the exponent is right (up to inf)
    return sign | h
'''


def half_encode_source(src: str, half: str) -> str:
    """``kernel(x, y, n)``: ``y[i]`` (uint16, the bits of ``half``) = ``x[i]`` (the bits of
    a float32 or float64 ``src`` as uint32/uint64) rounded to nearest even."""
    bits, man = (32, 23) if src == "float32" else (64, 52)
    return HEADER + _to_half_bits(bits, man, half) + '''

@kernel_jit
def kernel(x, y, n):
    i = cuda.grid(1)
    while i < n:
        y[i] = np.uint16(enc(np.uint64(x[i])))
        i += cuda.gridsize(1)
'''


def half_decode_source(half: str) -> str:
    """``kernel(x, y, n)``: ``y[i]`` (uint32: the bits of a float32) = the float16 or
    bfloat16 whose bits are ``x[i]`` (uint16); exact (every half is a float32)."""
    if half == "bfloat16":
        body = "y[i] = np.uint32(x[i]) << np.uint32(16)"
    else:
        body = '''h = np.uint32(x[i])
        sign = (h >> np.uint32(15)) << np.uint32(31)
        e = (h >> np.uint32(10)) & np.uint32(31)
        m = h & np.uint32(1023)
        if e == np.uint32(31):
            y[i] = sign | np.uint32(0x7F800000) | (m << np.uint32(13))
        elif e != np.uint32(0):
            y[i] = sign | ((e + np.uint32(112)) << np.uint32(23)) | (m << np.uint32(13))
        elif m == np.uint32(0):
            y[i] = sign
        else:
            ee = np.uint32(113)
            while (m & np.uint32(1024)) == np.uint32(0):
                m = m << np.uint32(1)
                ee -= np.uint32(1)
            y[i] = sign | (ee << np.uint32(23)) | ((m & np.uint32(1023)) << np.uint32(13))'''
    return HEADER + f'''

@kernel_jit
def kernel(x, y, n):
    i = cuda.grid(1)
    while i < n:
        {body}
        i += cuda.gridsize(1)
'''
