"""Sliding windows, padding and one_hot on CUDA: ``im2col``/``col2im`` (convolutions,
pooling, unfold/fold and their gradients), ``pad``/``pad_adjoint`` (``F.pad``, every
mode) and ``one_hot``, all on the device.

Each of the four window and padding ops is one of two generic kernels driven by an index
map over the trailing (spatial) positions, the same for every one of the leading
``N * C`` rows:

* ``gather`` (im2col, pad): ``y[r, j] = x[r, index[j]]``, or ``fill`` where
  ``index[j] < 0``.  im2col's map is the CPU's own (:func:`eager.ops.window._gather_index`),
  pad's is the CPU's ``Pad`` forward applied to an int64 ``arange`` of the trailing
  positions (``-1`` as the constant), so every mode, crops included, is exactly the
  CPU's;
* ``gather_sum`` (col2im, pad_adjoint), the adjoint: ``y[r, i, t] = sum of x[r, src[k],
  t]`` for ``k`` in ``ptr[i]..ptr[i+1]`` (the inverse map as CSR, computed on the host
  from the forward map).  Each output element sums its sources in a fixed order, one
  thread per element and no atomics: the same bits run to run, and the CPU's order:
  col2im adds kernel offsets in ascending order onto zero (a copy where windows tile),
  pad_adjoint folds one padded dimension at a time as the CPU's ``PadAdjoint`` does
  (``t`` the positions after that dimension), border copies first for replicate.

Maps are computed once per (shape, params) and kept on the device (``_MAPS``, least
recently used dropped past ``_MAX_MAPS``).  The checks run before any launch and are the
CPU's (:func:`~eager.ops.window._check_windows`, the ``Pad`` forward building the map),
so bad arguments raise the CPU's errors.  im2col, pad and one_hot move elements without
arithmetic, so float16/bfloat16 run on their bits; col2im and pad_adjoint add, and run
as the CPU does (in float32, rounded: ``_half_wrap``).  ``one_hot`` compares each class
with the index (its range checked first from the index's min and max read back, as the
CPU raises).
"""

from __future__ import annotations

import collections

import numpy as np

from runtime.cuda import kernels as K
from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from ..ops import pad as P
from ..ops import window as W
from .elementwise import _HALF, _I64, bits, cast, contiguous

WINDOW_SOURCE = K.HEADER + '''

@kernel_jit
def gather(x, ox, m_in, idx, y, m_out, fill, n):
    """``y[r, j] = x[ox + r * m_in + idx[j]]`` (``fill`` where ``idx[j] < 0``) for the
    ``n`` elements of the contiguous ``(rows, m_out)`` ``y``."""
    i = cuda.grid(1)
    while i < n:
        r = i // m_out
        q = idx[i - r * m_out]
        if q < 0:
            y[i] = fill
        else:
            y[i] = x[ox + r * m_in + q]
        i += cuda.gridsize(1)


@kernel_jit
def gather_sum(x, ox, m_in, ptr, src, y, m_out, inner, zero, from_zero, n):
    """``y[r, j, t] = sum of x[r, src[k], t]`` over ``k`` in ``ptr[j]..ptr[j + 1]`` in
    that order (``zero`` where there is none; added onto ``zero`` when ``from_zero``) for
    the ``n`` elements of the contiguous ``(rows, m_out, inner)`` ``y``; ``x`` is
    ``(rows, m_in, inner)`` from ``ox``."""
    i = cuda.grid(1)
    while i < n:
        rest = i // inner
        t = i - rest * inner
        r = rest // m_out
        j = rest - r * m_out
        base = ox + r * m_in * inner + t
        lo = ptr[j]
        hi = ptr[j + 1]
        if lo == hi:
            y[i] = zero
        else:
            acc = x[base + src[lo] * inner]
            if from_zero:
                acc = zero + acc
            for k in range(lo + 1, hi):
                acc = acc + x[base + src[k] * inner]
            y[i] = acc
        i += cuda.gridsize(1)


@kernel_jit
def one_hot(x, ox, y, classes, n):
    """``y[i, c] = 1 if x[i] == c else 0`` for the ``n`` elements of the contiguous
    ``(len(x), classes)`` int64 ``y``."""
    i = cuda.grid(1)
    while i < n:
        r = i // classes
        if x[ox + r] == i - r * classes:
            y[i] = 1
        else:
            y[i] = 0
        i += cuda.gridsize(1)
'''


def _module():
    return launch.module("window", lambda: WINDOW_SOURCE)


# -- index maps, cached on the device ------------------------------------------------------------

#: key -> tuple of device arrays (a gather map, or a CSR's ptr and src)
_MAPS: collections.OrderedDict = collections.OrderedDict()
_MAX_MAPS = 64


def _cached(key, build):
    """The device arrays of ``build()`` (host int64 arrays) for ``key``, built once."""
    hit = _MAPS.get(key)
    if hit is not None:
        _MAPS.move_to_end(key)
        return hit
    hit = _MAPS[key] = tuple(CudaArray._from_host_copy(np.ascontiguousarray(a, np.int64))
                             for a in build())
    if len(_MAPS) > _MAX_MAPS:
        _MAPS.popitem(last=False)
    return hit


def _csr(index: np.ndarray, m: int, order=None) -> tuple:
    """The inverse of the gather map ``index`` (entries outside ``[0, m)`` read nothing):
    ``(ptr, src)``, the positions ``src[ptr[i]:ptr[i + 1]]`` of ``index`` that read ``i``,
    ascending (or by ``order``, a key per position)."""
    index = np.asarray(index).reshape(-1)
    pos = np.flatnonzero((index >= 0) & (index < m))
    target = index[pos]
    keys = (pos if order is None else order[pos], target)
    src = pos[np.lexsort(keys)]
    ptr = np.zeros(m + 1, np.int64)
    np.cumsum(np.bincount(target, minlength=m), out=ptr[1:])
    return ptr, src


def _im2col_map(size, kernel, dilation, padding, stride):
    index, _ = W._gather_index(size, kernel, dilation, padding, stride)
    return (np.where(index >= W.prod(size), -1, index),)


def _col2im_map(size, kernel, dilation, padding, stride):
    index, _ = W._gather_index(size, kernel, dilation, padding, stride)
    return _csr(index, W.prod(size))


def _pad_index(shape: tuple, lead: int, pads: tuple, mode: str) -> np.ndarray:
    """Pad's map over the trailing positions: the CPU's forward on an ``arange`` shaped
    ``(1,) * lead + shape`` (its errors too), ``-1`` where constant mode fills."""
    ar = np.arange(W.prod(shape), dtype=np.int64).reshape((1,) * lead + shape)
    return np.ascontiguousarray(P.Pad.forward(ar, pads, mode, -1)).reshape(-1)


def _fold_map(n: int, lo: int, hi: int, mode: str):
    """The CSR folding one dimension padded by ``(lo, hi)`` back onto its ``n``
    positions, in the CPU's order (``PadAdjoint``): ascending, but for replicate the
    copies at the border before the element they copy (the CPU adds their sum to it)."""
    index = _pad_index((n,), 0, ((lo, hi),), mode)
    order = None
    if mode == "replicate":
        j = np.arange(index.size)
        order = np.where((j >= lo) & (j < lo + n), j + index.size, j)
    return _csr(index, n, order)


# -- launching ---------------------------------------------------------------------------------

def _gather(x, index, rows, m_in, m_out, fill, out):
    n = rows * m_out
    launch.over(_module(), "gather", n,
                [x.base, x.offset, m_in, index.base, out.base, m_out, fill, n])
    return out


def _gather_sum(x, csr, rows, m_in, m_out, inner, from_zero, out):
    """``out`` (contiguous, of ``x``'s dtype) = the CSR sum of the contiguous ``x``."""
    n = rows * m_out * inner
    if n:
        ptr, src = csr
        launch.over(_module(), "gather_sum", n,
                    [x.base, x.offset, m_in, ptr.base, src.base, out.base, m_out, inner,
                     np.zeros((), x.dtype)[()], bool(from_zero), n])
    return out


def _fill_value(value, dtype):
    """``value`` as the CPU writes it into an array of ``dtype`` (float16/bfloat16: as a
    float32 rounded, the CPU computing in float32), as a kernel argument (half: bits)."""
    if dtype.char in _HALF:
        return np.float32(value).astype(dtype).view(np.int16)
    return np.full((), value, dtype)[()]


def _summable(fn):
    """``fn(x, ...)`` for any dtype: bool summed as int64 (any true is true, as the CPU's
    ``+=`` on bool), the result cast back."""
    def impl(x, *args, **params):
        if x.dtype.kind != "b":
            return fn(x, *args, **params)
        return cast(fn(cast(x, _I64), *args, **params), x.dtype)
    impl.__name__ = fn.__name__
    return impl


# -- the ops -----------------------------------------------------------------------------------

def im2col(x, kernel, dilation, padding, stride, fill=0):
    size = tuple(x.shape[2:])
    geo = (size, tuple(kernel), tuple(dilation), tuple(padding), tuple(stride))
    counts = W._check_windows("im2col", *geo)
    n, c = x.shape[:2]
    kn, length = W.prod(kernel), W.prod(counts)
    out = CudaArray.empty((n, c * kn, length), x.dtype)
    if out.size:
        (index,) = _cached(("im2col",) + geo, lambda: _im2col_map(*geo))
        _, filled = W._gather_index(*geo)   # (the CPU converts fill only then)
        value = _fill_value(fill if filled else 0, x.dtype)
        _gather(bits(contiguous(x)), index, n * c, W.prod(size), kn * length, value,
                bits(out))
    return out


@_summable
def col2im(cols, size, kernel, dilation, padding, stride):
    geo = (tuple(size), tuple(kernel), tuple(dilation), tuple(padding), tuple(stride))
    _, c = W._check_cols(cols.shape, *geo)
    n = cols.shape[0]
    out = CudaArray.empty((n, c) + geo[0], cols.dtype)
    if out.size:
        csr = _cached(("col2im",) + geo, lambda: _col2im_map(*geo))
        tiles = geo[3] == geo[1] and all(d == 1 for d in geo[2])   # the CPU copies then
        _gather_sum(contiguous(cols), csr, n * c, cols.shape[1] // c * cols.shape[2],
                    W.prod(geo[0]), 1, not tiles, out)
    return out


def pad(x, pads, mode="constant", value=0):
    pads = tuple((int(lo), int(hi)) for lo, hi in pads)
    lead = x.ndim - len(pads)
    trail = tuple(x.shape[lead:])
    (index,) = _cached(("pad", trail, lead, pads, mode),      # (the CPU's errors)
                       lambda: (_pad_index(trail, lead, pads, mode),))
    out_trail = tuple(s + lo + hi for s, (lo, hi) in zip(trail, pads))
    out = CudaArray.empty(tuple(x.shape[:lead]) + out_trail, x.dtype)
    if out.size:
        fill = _fill_value(value if mode == "constant" else 0, x.dtype)
        _gather(bits(contiguous(x)), index, W.prod(x.shape[:lead]), W.prod(trail),
                W.prod(out_trail), fill, bits(out))
    return out


def _pad_adjoint_error(g, pads, mode, shape):
    """The CPU's error for a gradient whose shape does not pad ``shape`` by ``pads``."""
    dummy = np.broadcast_to(np.zeros((), g.dtype), g.shape)
    return CudaArray.from_host(P.PadAdjoint.forward(dummy, pads, mode, shape))


@_summable
def pad_adjoint(g, pads, mode, shape):
    pads = tuple((int(lo), int(hi)) for lo, hi in pads)
    shape = tuple(shape)
    lead = g.ndim - len(pads)
    want = shape[:lead] + tuple(s + lo + hi for s, (lo, hi) in zip(shape[lead:], pads))
    if lead < 0 or len(shape) != g.ndim or want != tuple(g.shape):
        return _pad_adjoint_error(g, pads, mode, shape)
    cur = contiguous(g)
    if mode == "constant":   # one source at most per element: one gather over all dims
        trail = shape[lead:]
        csr = _cached(("pad-adjoint", trail, pads),
                      lambda: _csr(_pad_index(trail, lead, pads, mode), W.prod(trail)))
        out = CudaArray.empty(shape, g.dtype)
        return _gather_sum(cur, csr, W.prod(shape[:lead]), W.prod(g.shape[lead:]),
                           W.prod(trail), 1, False, out)
    for i, (lo, hi) in enumerate(pads):   # one dimension at a time, as the CPU folds
        ax = lead + i
        if lo == hi == 0:
            continue
        n = shape[ax]
        csr = _cached(("fold", n, lo, hi, mode), lambda: _fold_map(n, lo, hi, mode))
        out = CudaArray.empty(cur.shape[:ax] + (n,) + cur.shape[ax + 1:], g.dtype)
        cur = _gather_sum(cur, csr, W.prod(cur.shape[:ax]), cur.shape[ax], n,
                          W.prod(cur.shape[ax + 1:]), False, out)
    return cur if cur is not g else g.copy()


def one_hot(x, num_classes):
    if x.size:
        if x.min() < 0:       # (device reductions, one value read back each)
            raise RuntimeError("Class values must be non-negative.")
        if x.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = CudaArray.empty(tuple(x.shape) + (num_classes,), _I64)
    if out.size:
        x = contiguous(x)
        launch.over(_module(), "one_hot", out.size,
                    [x.base, x.offset, out.base, int(num_classes), out.size])
    return out
