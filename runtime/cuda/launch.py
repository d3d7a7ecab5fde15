"""CUDA launchers: each builds (or finds) the kernel module for its arguments' layout and
dtypes and launches it on :class:`~runtime.cuda.array.CudaArray` storage.

Eager's CUDA op table (:mod:`eager.cuda.ops`) and the compiler's fused kernels
(:mod:`compiler.codegen.numba_cuda`) both launch through here: :func:`run_core` evaluates a
scalar core (an op's scalar expression, or a fused group's) in the grid-stride template,
:func:`run_reduce_core` folds one into the block-reduction template
(:mod:`.templates`); the others launch the hand-written kernels of :mod:`.kernels` (GEMM,
random numbers, NLL, gathers and scatters, scans, half conversions).  No launcher knows an
op: arguments are storage, shapes and plain values, and what they mean for an op (its
errors, its composition) is the op table's.  Each compiled module is cached per source
key here (and by source text in :mod:`runtime.cache`).
"""

from __future__ import annotations

import math

import numpy as np

from ..source import I64, cast, literal
from . import DEVICE as DEV
from . import array as _array
from . import kernels as K
from . import templates
from .array import CudaArray

#: key -> compiled kernel module (one per core and operand layout, or per kernel source)
KERNELS: dict = {}


def module(key, make):
    """The kernel module for ``key``, loaded from the source ``make()`` on first use."""
    mod = KERNELS.get(key)
    if mod is None:
        mod = KERNELS[key] = DEV.load(make())
    return mod


def over(mod, name: str, n: int, args: list) -> None:
    """Launch the grid-stride kernel ``name`` of ``mod`` over ``n`` elements (nothing
    when ``n`` is 0)."""
    if n:
        blocks, threads = DEV.grid(n)
        DEV.launch(mod, name, blocks, threads, args)


# -- generated kernels: a scalar core in the grid-stride or block-reduction template ------

def run_core(core, out_vars, operands, out_dtypes, shape, doc="", outs=None) -> list:
    """Evaluate a scalar core (lines reading ``a0, a1, ..``) at every element of ``shape``
    on the GPU: ``operands`` are CUDA arrays (broadcast to ``shape``) or Python scalars
    (weak scalar arguments); returns one new contiguous array per ``out_vars`` entry (or
    writes into ``outs``).  A 0-d CUDA array whose value is still on the host
    (:meth:`CudaArray.scalar`) is a scalar argument of its dtype: no copy to the device.
    One kernel per (core, operand layout), cached."""
    shape = tuple(shape)
    flat_in, scalars, kargs = [], [], []
    for a in operands:
        if isinstance(a, CudaArray) and a.host is not None:   # a 0-d value on the host
            a = a.host
        if isinstance(a, CudaArray):
            flat = a.shape == shape and a.is_contiguous
            kargs += [a.base, a.offset] + ([] if flat else [a.broadcast_to(shape).estrides])
            flat_in.append(flat)
            scalars.append(False)
        else:
            kargs.append(a)
            flat_in.append(True)
            scalars.append(True)
    if outs is None:
        outs = [CudaArray.empty(shape, dt) for dt in out_dtypes]
    flat_out = [o.is_contiguous for o in outs]
    for o, flat in zip(outs, flat_out):
        kargs += [o.base, o.offset] + ([] if flat else [o.estrides])
    key = (core, tuple(out_vars), tuple(flat_in), tuple(scalars), tuple(flat_out), len(shape))
    mod = KERNELS.get(key)
    if mod is None:
        source = templates.elementwise_source(list(core), list(out_vars), flat_in, flat_out,
                                              len(shape), doc, scalars=scalars)
        mod = KERNELS[key] = DEV.load(source)
    n = int(np.prod(shape)) if shape else 1
    if n:
        blocks, threads = DEV.grid(n)
        DEV.launch(mod, "kernel", blocks, threads, kargs + [shape, n])
    return outs


def fill(out: CudaArray, value) -> CudaArray:
    """Write ``value`` (cast to ``out``'s dtype as ``astype``) into every element of the
    view ``out``: a kernel taking the value as an argument, no host array copied over.
    float16/bfloat16 are filled with the value's bits."""
    v = np.asarray(value, out.dtype)
    if out.dtype.char in "eE":
        v = v.view(np.int16)
    target = bits(out)
    run_core(("t0 = a0",), ["t0"], [v.reshape(())[()]], [target.dtype], out.shape,
             "fill", outs=[target])
    return out


def bits(a: CudaArray) -> CudaArray:
    """The same view of a float16/bfloat16 array as int16 (its bits), else ``a``: for copies
    (and gathers, scatters) that move elements without reading them as numbers."""
    if a.dtype.char not in "eE":
        return a
    return CudaArray(a.base.view(np.int16), a.block, a.shape, a.estrides, a.offset, np.int16)


def copy(src: CudaArray) -> CudaArray:
    """A new contiguous array of the view ``src``'s values, copied on the device (one
    grid-stride kernel reading ``src`` through its strides; the bits of float16/bfloat16):
    :meth:`CudaArray.copy` of a non-contiguous view."""
    out = CudaArray.empty(src.shape, src.dtype)
    if out.size:
        target = bits(out)
        run_core(("t0 = a0",), ["t0"], [bits(src)], [target.dtype], src.shape, "copy",
                 outs=[target])
    return out


_array.STRIDED_COPY = copy


def extreme(a: CudaArray, kind: str):
    """``kind`` ("amin" or "amax") of every element of the integer array ``a``, read back:
    one block reduction and one element copied to the host, not the array
    (:meth:`CudaArray.min`, :meth:`CudaArray.max`: the bounds checks of index arrays)."""
    out = run_reduce_core((), "a0", [a], a.shape, a.ndim, kind, a.dtype, a.dtype, (),
                          f"{kind} of {a.dtype}")
    return out.to_host()[()]


_array.EXTREME = extreme


_ACC = {"f": ("float64", "0.0"), "i": ("int64", "0"), "u": ("int64", "0"), "b": ("int64", "0")}


def reduction_spec(kind: str, src: np.dtype, out: np.dtype):
    """(accumulator type, init, combine, final) as :func:`.templates.reduce_source` takes
    them for ``kind`` (sum, mean, prod, any, all, amax, amin): sums and products in
    float64/int64, max/min NaN-propagating like NumPy."""
    if kind in ("sum", "mean"):
        acc, init = _ACC[src.kind]
        x = "np.float64({x})" if src.kind == "f" else "np.int64({x})"
        final = "{acc} / {count}" if kind == "mean" else "{acc}"
        final = cast(f"({final})", np.dtype(acc), out)
        return acc, init, "{acc} + " + x, final
    if kind == "prod":   # float64 / int64 (wrapping, as NumPy's int64 product)
        acc = _ACC[src.kind][0]
        x = "np.float64({x})" if src.kind == "f" else "np.int64({x})"
        one = "1.0" if src.kind == "f" else "1"
        return acc, one, "{acc} * " + x, cast("({acc})", np.dtype(acc), out)
    if kind in ("any", "all"):   # 0/1 in int64 (NaN counts as true, as NumPy)
        if kind == "any":
            combine = "({acc} if {x} == 0 else np.int64(1))"
        else:
            combine = "(np.int64(0) if {x} == 0 else {acc})"
        final = "({acc} != 0)" if out.kind == "b" else "np.uint8({acc})"
        return "int64", "np.int64(0)" if kind == "any" else "np.int64(1)", combine, final
    big = kind == "amax"
    if src.kind == "f":
        init = literal(-math.inf if big else math.inf, src)
        cmp = ">" if big else "<"
        return src.name, init, f"({{acc}} if ({{acc}} {cmp} {{x}} or {{acc}} != {{acc}}) " \
                               f"else {{x}})", "{acc}"
    info = np.iinfo(src) if src.kind != "b" else None
    init = literal((info.min if big else info.max) if info else (not big), src)
    cmp = ">" if big else "<"
    return ("int64" if src.kind != "b" else "bool_"), init, \
        f"({{x}} if {{x}} {cmp} {{acc}} else {{acc}})", cast("{acc}", I64, out) \
        if src.kind != "b" else "{acc}"


#: a block of a reduction walks at least this many elements per thread before the
#: reduction is split over several blocks per output element (two passes)
_PER_THREAD = 16


def reduce_parts(rows: int, m: int) -> tuple:
    """(parts, chunk): how the ``m`` elements of each of ``rows`` rows are split over
    blocks.  One block per row while there are rows enough to fill the GPU or a row is
    short; else each row in ``parts`` chunks of ``chunk`` elements (a multiple of the
    block's threads), reduced by a second pass over the (rows, parts) partials, so a
    full reduction of a large tensor runs on the whole GPU instead of one block."""
    t = DEV.reduce_threads
    per_block = t * _PER_THREAD
    if m <= per_block or rows >= DEV.reduce_rows_full:
        return 1, m
    parts = min(-(-m // per_block), max(1, DEV.reduce_rows_full // rows))
    chunk = -(-m // parts)
    chunk = -(-chunk // t) * t
    return -(-m // chunk), chunk


def _reduce_module(core, value, kind, src_dtype, out_dtype, flat_in, rank, partial, doc):
    key = ("reduce", tuple(core), value, kind, src_dtype.char, out_dtype.char, rank,
           tuple(flat_in), partial)
    mod = KERNELS.get(key)
    if mod is None:
        acc, init, combine, final = reduction_spec(kind, src_dtype, out_dtype)
        source = templates.reduce_source(list(core), value, flat_in, rank, init, combine,
                                         final, acc, DEV.reduce_threads, doc=doc,
                                         partial=partial)
        mod = KERNELS[key] = DEV.load(source)
    return mod


def run_reduce_core(core, value, operands, loop_shape, n_reduced, kind, src_dtype, out_dtype,
                    out_shape, doc="") -> CudaArray:
    """Reduce the core's ``value`` (of ``src_dtype``) over the last ``n_reduced``
    dimensions of ``loop_shape`` with ``kind``: one block per kept element, or, for few
    long rows, several (:func:`reduce_parts`) and a second pass over their partial
    accumulators (float64/int64 sums as in one pass; only the order of the additions
    differs, the same for eager and compiled graphs, which both launch here)."""
    loop_shape = tuple(loop_shape)
    out_dtype, src_dtype = np.dtype(out_dtype), np.dtype(src_dtype)
    split = len(loop_shape) - n_reduced
    rows = int(np.prod(loop_shape[:split])) if split else 1
    m = int(np.prod(loop_shape[split:])) if n_reduced else 1
    flat_in, kargs = [], []
    for x in operands:
        flat = x.shape == loop_shape and x.is_contiguous
        kargs += [x.base, x.offset] + ([] if flat else [x.broadcast_to(loop_shape).estrides])
        flat_in.append(flat)
    out = CudaArray.empty((rows,), out_dtype)
    if not rows:
        return out.reshape(out_shape)
    parts, chunk = reduce_parts(rows, m)
    shp = loop_shape or (1,)
    if parts == 1:
        mod = _reduce_module(core, value, kind, src_dtype, out_dtype, flat_in,
                             len(loop_shape), False, doc)
        DEV.launch(mod, "kernel", min(rows, DEV.max_blocks), DEV.reduce_threads,
                   kargs + [out.base, shp, rows, m, 1, m, m])
        return out.reshape(out_shape)
    acc = np.dtype(reduction_spec(kind, src_dtype, out_dtype)[0])
    partials = CudaArray.empty((rows, parts), acc)
    first = _reduce_module(core, value, kind, src_dtype, out_dtype, flat_in,
                           len(loop_shape), True, doc)
    DEV.launch(first, "kernel", min(rows * parts, DEV.max_blocks), DEV.reduce_threads,
               kargs + [partials.base, shp, rows, m, parts, chunk, m])
    second = _reduce_module((), "a0", kind, acc, out_dtype, [True], 2, False,
                            f"{doc} (second pass)")
    DEV.launch(second, "kernel", min(rows, DEV.max_blocks), DEV.reduce_threads,
               [partials.base, 0, out.base, (rows, parts), rows, parts, 1, parts, m])
    return out.reshape(out_shape)


def argreduce(src: CudaArray, rows: int, m: int, largest: bool) -> CudaArray:
    """The index of the largest (smallest) of each of the ``rows`` rows of ``m`` elements
    of the contiguous ``src`` (any real dtype, compared in it): a (rows,) int64 array."""
    dtype = src.dtype.name
    mod = module(("arg", largest, dtype),
                 lambda: K.argreduce_source(DEV.reduce_threads, dtype, largest))
    out = CudaArray.empty((rows,), I64)
    base = src.base if not src.offset else src.base[src.offset:src.offset + src.size]
    DEV.launch(mod, "kernel", min(rows, DEV.max_blocks), DEV.reduce_threads,
               [base, out.base, rows, m])
    return out


def scan(kind: str, y: CudaArray, rows: int, m: int, reverse: bool) -> None:
    """Scan (``kind``: "sum", "prod", "lse") each of the ``rows`` rows of ``m`` elements of
    the contiguous ``y`` in place, one row per thread."""
    if not rows:
        return
    mod = module(("scan", kind, y.dtype.char), lambda: K.scan_source(kind, y.dtype.name))
    blocks, threads = DEV.grid(rows)
    DEV.launch(mod, "kernel", blocks, threads, [y.base, rows, m, bool(reverse)])


# -- matmul: the tiled GEMM (runtime.cuda.blas.gemm's fallback without cuBLAS) --------------

def gemm_tile(a3: CudaArray, b3: CudaArray, bias: CudaArray | None = None) -> CudaArray:
    """``a3 @ b3`` for (B|1, M, K) and (B|1, K, N) float views of one dtype (+ ``bias``
    over N) by the tiled kernel: a new contiguous (B, M, N) array.  Matrix products call
    :func:`runtime.cuda.blas.gemm`, which runs this where cuBLAS is not used."""
    dt = a3.dtype
    B = b3.shape[0] if a3.shape[0] == 1 else a3.shape[0]   # (a batch of 1 broadcasts, to 0 too)
    M, Kd, N = a3.shape[1], a3.shape[2], b3.shape[2]
    sa = (0 if a3.shape[0] == 1 else a3.estrides[0],) + a3.estrides[1:]
    sb = (0 if b3.shape[0] == 1 else b3.estrides[0],) + b3.estrides[1:]
    mod = module(("gemm", dt.char, bias is not None),
                 lambda: K.gemm_source(DEV.tile, dt.name, bias is not None))
    out = CudaArray.empty((B, M, N), dt)
    t = DEV.tile
    args = [a3.base, a3.offset, sa, b3.base, b3.offset, sb, out.base]
    if bias is not None:
        args += [bias.base, bias.offset, bias.estrides[0] if bias.ndim else 0]
    if B and M and N:
        DEV.launch(mod, "kernel", (-(-N // t), -(-M // t), B), (t, t), args + [M, N, Kd])
    return out


# -- the NLL loss --------------------------------------------------------------------------

def _nll_module():
    return module("nll", lambda: K.nll_source(DEV.reduce_threads))


def nll_loss(logp: CudaArray, target: CudaArray, ignore_index: int, mean: bool) -> CudaArray:
    """The NLL loss of (N, C) log-probabilities at (N,) targets: a 0-d array."""
    out = CudaArray.empty((), logp.dtype)
    DEV.launch(_nll_module(), "loss", 1, DEV.reduce_threads,
               [logp.base, logp.offset, logp.estrides, target.base, target.offset,
                target.estrides[0], logp.shape[0], int(ignore_index), mean, out.base])
    return out


def nll_loss_grad(g: CudaArray, target: CudaArray, out: CudaArray, ignore_index: int,
                  mean: bool) -> CudaArray:
    """Write the NLL loss's gradient (``g`` at each target) into the zeroed (N, C) ``out``."""
    DEV.launch(_nll_module(), "grad", 1, DEV.reduce_threads,
               [g.base, g.offset, target.base, target.offset, target.estrides[0],
                out.shape[0], out.shape[1], int(ignore_index), mean, out.base])
    return out


# -- counter-based random numbers -------------------------------------------------------

def _random_module():
    return module("random", lambda: K.RANDOM_SOURCE)


def random(name: str, out: CudaArray, seed: int, offset: int, *extra) -> CudaArray:
    """Fill the contiguous ``out`` with the draws of kernel ``name`` (rand, randn: no
    extra; bernoulli: ``p``; randint: ``low, span``) at counters ``offset..`` of ``seed``.
    No float64 arithmetic unless ``out`` is float64: a float32 ``out`` of rand/randn is
    drawn in float32 (``rand32``, ``randn32``: 24-bit uniforms, so rand never gives 1.0),
    bernoulli into any other dtype compares 24 random bits with ``ceil(p * 2**24)``
    (``bernoulli32``: the draws ``uniform32 < p``), randint maps 64 random bits onto the
    span in integer arithmetic (a float64 draw only for spans of 2**32 or more)."""
    n = out.size
    if out.dtype == np.float32 and name in ("rand", "randn"):
        name += "32"
    elif name == "bernoulli" and out.dtype != np.float64:
        name, extra = "bernoulli32", (min(1 << 24, max(0, math.ceil(extra[0] * (1 << 24)))),)
    elif name == "randint":
        low, span = extra
        name, extra = ("randint", (int(low), int(span))) if span < 1 << 32 else \
            ("randint_wide", (int(low), float(span)))
    if n:
        blocks, threads = DEV.grid(n)
        DEV.launch(_random_module(), name, blocks, threads,
                   [out.base, n, seed, offset] + list(extra))
    return out


def bernoulli_tensor(out: CudaArray, p: CudaArray, seed: int, offset: int) -> bool:
    """Fill ``out`` with 1 where a uniform draw falls below the contiguous ``p`` (same
    size; drawn and compared in float32 unless ``p`` is float64); whether some
    probability was outside [0, 1] (a device flag read back)."""
    n = out.size
    bad = fill(CudaArray.empty((1,), np.int32), 0)
    blocks, threads = DEV.grid(n)
    name = "bernoulli_tensor" if p.dtype == np.float64 else "bernoulli_tensor32"
    DEV.launch(_random_module(), name, blocks, threads,
               [out.base[out.offset:out.offset + n], p.base[p.offset:p.offset + n], n, seed,
                offset, bad.base])
    return bool(bad.to_host()[0])


def randperm(out: CudaArray, seed: int, offset: int) -> CudaArray:
    """A random permutation of ``0..n-1`` into the (n,) ``out``: each index ranked by a
    64-bit random key (ties by index)."""
    n = out.size
    keys = CudaArray.empty((n,), np.uint64)
    blocks, threads = DEV.grid(n)
    mod = _random_module()
    DEV.launch(mod, "random_keys", blocks, threads, [keys.base, n, seed, offset])
    DEV.launch(mod, "rank_by_keys", blocks, threads, [out.base, keys.base, n])
    return out



def _f32(x: CudaArray) -> str:
    """The suffix of the float32 kernel of a random module ("32"), else ""."""
    return "32" if x.dtype == np.float32 else ""


def multinomial_sums(p: CudaArray, rows: int, m: int) -> tuple:
    """The running sums (``cdf``, ``p``'s dtype: float32 or float64) and totals of the
    ``rows`` rows of ``m`` weights of the contiguous ``p``, one thread per row, and two
    device flags read back: (cdf, total, some weight inf/NaN/negative, some total <= 0)."""
    cdf = CudaArray.empty((rows, m), p.dtype)
    total = CudaArray.empty((rows,), p.dtype)
    bad = fill(CudaArray.empty((2,), np.int32), 0)
    if rows:
        blocks, threads = DEV.grid(rows)
        DEV.launch(_random_module(), "multinomial_sums" + _f32(p), blocks, threads,
                   [p.base[p.offset:p.offset + max(p.size, 1)], cdf.base, total.base, rows, m,
                    bad.base])
    flags = bad.to_host()
    return cdf, total, bool(flags[0]), bool(flags[1])


def multinomial_draw(cdf: CudaArray, total: CudaArray, out: CudaArray, k: int, seed: int,
                     offset: int) -> CudaArray:
    """``k`` categories per row drawn with replacement into the contiguous (rows, k) int64
    ``out`` from :func:`multinomial_sums`' ``cdf`` and ``total`` (counters ``offset..``)."""
    rows, m = cdf.shape
    if rows * k:
        blocks, threads = DEV.grid(rows * k)
        DEV.launch(_random_module(), "multinomial_draw" + _f32(cdf), blocks, threads,
                   [cdf.base, total.base, out.base, rows, m, k, seed, offset])
    return out


def multinomial_keys(p: CudaArray, seed: int, offset: int) -> CudaArray:
    """The exponential race's keys (``log p - log E``, -inf where ``p`` is 0) of the
    contiguous ``p``: a new array of its shape and dtype; the largest win."""
    keys = CudaArray.empty(p.shape, p.dtype)
    n = p.size
    if n:
        blocks, threads = DEV.grid(n)
        DEV.launch(_random_module(), "multinomial_keys" + _f32(p), blocks, threads,
                   [p.base[p.offset:p.offset + n], keys.base, n, seed, offset])
    return keys


# -- sorting and selection: the stable rank kernel -----------------------------------------

def rank_select(x: CudaArray, outer: int, m: int, inner: int, lo: int, hi: int,
                descending: bool) -> CudaArray:
    """The indices along m of the elements of the contiguous ``x`` (seen as (outer, m,
    inner)) ranked ``lo..hi-1`` in a stable sort along m (NaN last, or first when
    ``descending``): a new (outer, hi - lo, inner) int64 array (:func:`.kernels.rank_source`;
    O(m) per element).  bool is ranked as its bytes."""
    out = CudaArray.empty((outer, hi - lo, inner), I64)
    n = x.size
    if n and hi > lo:
        base = x.base[x.offset:x.offset + n]
        if x.dtype == np.bool_:
            base = base.view(np.uint8)
        mod = module(("rank", bool(descending)), lambda: K.rank_source(bool(descending)))
        blocks, threads = DEV.grid(n)
        DEV.launch(mod, "kernel", blocks, threads, [base, out.base, outer, m, inner, lo, hi])
    return out

# -- gathers and scatters -----------------------------------------------------------------

def gather(a: CudaArray, index: CudaArray, dim: int, out: CudaArray) -> CudaArray:
    """``out[i] = a[i with index[i] at dim]`` (``out`` contiguous, ``index``'s shape)."""
    n = out.size
    if n:
        mod = module("gather", lambda: K.GATHER_SOURCE)
        blocks, threads = DEV.grid(n)
        DEV.launch(mod, "gather", blocks, threads,
                   [a.base, a.offset, a.estrides or (0,), a.shape[dim] if a.ndim else 1,
                    index.base, index.offset, index.estrides or (0,), out.base,
                    index.shape or (1,), n, dim])
    return out


def scatter(out: CudaArray, index: CudaArray, src: CudaArray, dim: int, add: bool) -> None:
    """Write (or add) ``src`` (``index``'s shape, ``out``'s dtype) at ``index`` along
    ``dim`` into the contiguous ``out``."""
    n = index.size
    mod = module("scatter", lambda: K.SCATTER_SOURCE)
    blocks, threads = DEV.grid(n)
    DEV.launch(mod, "scatter_add" if add else "scatter", blocks, threads,
               [out.base, out.estrides or (0,), out.shape[dim] if out.ndim else 1,
                index.base, index.offset, index.estrides or (0,), src.base, src.offset,
                src.estrides or (0,), index.shape or (1,), n, dim])


def _index_module():
    return module("index", lambda: K.INDEX_SOURCE)


def index(src: CudaArray, idx: CudaArray, dst: CudaArray, shape, sa, si, sizes, astrides,
          n: int) -> None:
    """Advanced indexing: ``dst`` (contiguous, ``n`` elements over the region ``shape``)
    gets ``src`` at the positions the (k, ...) index array ``idx`` addresses; ``sa``,
    ``si``: strides of each region dimension into ``src`` and into ``idx``'s batch;
    ``sizes``, ``astrides``: the indexed dimensions' sizes and strides in ``src``."""
    blocks, threads = DEV.grid(n)
    DEV.launch(_index_module(), "index", blocks, threads,
               [src.base, src.offset, idx.base, idx.offset, idx.estrides[0], dst.base,
                shape, sa, si, sizes, astrides, n])


def put(y: CudaArray, idx: CudaArray, v: CudaArray, shape, sy, si, sizes, ystrides, n: int,
        add: bool) -> None:
    """The adjoint of :func:`index`: write (``add``: add atomically) ``v`` (broadcast to
    the region ``shape``) into the view ``y`` at the positions ``idx`` addresses."""
    blocks, threads = DEV.grid(n)
    DEV.launch(_index_module(), "put_add" if add else "put", blocks, threads,
               [y.base, y.offset, idx.base, idx.offset, idx.estrides[0], v.base, v.offset,
                v.estrides or (0,), shape, sy, si, sizes, ystrides, n])


# -- float16 / bfloat16 conversions (integer arithmetic on the bits) ----------------------

def half_decode(x_bits, y_bits, n: int, half: str) -> None:
    """``y_bits`` (n uint32: float32 bits) = the ``half`` ("float16", "bfloat16") values
    whose uint16 bits are ``x_bits``."""
    mod = module(("half-decode", half), lambda: K.half_decode_source(half))
    blocks, threads = DEV.grid(n)
    DEV.launch(mod, "kernel", blocks, threads, [x_bits, y_bits, n])


def half_encode(src_bits, y_bits, n: int, src: str, half: str) -> None:
    """``y_bits`` (n uint16) = the ``src`` ("float32", "float64") values whose bits are
    ``src_bits`` rounded to ``half`` (to nearest even, as NumPy and ml_dtypes)."""
    mod = module(("half-encode", src, half), lambda: K.half_encode_source(src, half))
    blocks, threads = DEV.grid(n)
    DEV.launch(mod, "kernel", blocks, threads, [src_bits, y_bits, n])
