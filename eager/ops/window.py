"""Sliding-window ops: ``im2col`` (every window of an ``(N, C, *S)`` array laid out as the
columns of a matrix) and its adjoint ``col2im`` (columns summed back into place).

Convolution is ``im2col`` + one matmul, transposed convolution one matmul + ``col2im``,
pooling a reduction over the window axis of ``im2col``, ``unfold``/``fold`` are the two
ops themselves (:mod:`eager.nn.fn.conv`, :mod:`eager.nn.fn.pooling`).  Each op is the
other's backward, so every derivative built from them is differentiable again.

Params are canonical, one entry per spatial dimension: ``kernel``, ``dilation`` and
``stride`` tuples of positive ints, ``padding`` a tuple of ``(lo, hi)`` pairs of ints.  A
negative amount crops instead of padding (a transposed convolution with
``output_padding`` and the adjoint of a convolution whose last window stops short of the
input need it).  Window ``j`` along a dimension starts at ``j * stride - lo`` in input
coordinates; the number of windows is ``(S + lo + hi - dilation * (kernel - 1) - 1) //
stride + 1``.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .base import Op


def prod(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


def span(kernel: int, dilation: int) -> int:
    """Extent of one (dilated) window."""
    return dilation * (kernel - 1) + 1


def num_windows(size: int, kernel: int, dilation: int, pad: tuple, stride: int) -> int:
    return (size + pad[0] + pad[1] - span(kernel, dilation)) // stride + 1


def window_counts(size: tuple, kernel: tuple, dilation: tuple, padding: tuple,
                  stride: tuple) -> tuple:
    return tuple(num_windows(*a) for a in zip(size, kernel, dilation, padding, stride))


def _extent(n: int, kernel: int, dilation: int, stride: int) -> int:
    """Padded length that ``n`` windows cover exactly."""
    return (n - 1) * stride + span(kernel, dilation)


def _shift(src: np.ndarray, lo: tuple, extent: tuple, fill) -> np.ndarray:
    """``out[..., j] = src[..., j - lo]`` over spatial ``j`` in ``[0, extent)`` (``fill``
    where that is outside ``src``): padding by ``lo`` and cropping or padding at the end."""
    spatial = src.shape[2:]
    if lo == (0,) * len(lo) and spatial == extent:
        return src
    dst_key, src_key = [slice(None)] * 2, [slice(None)] * 2
    for s, l, e in zip(spatial, lo, extent):
        d0, s0 = max(l, 0), max(-l, 0)
        n = max(min(s - s0, e - d0), 0)
        dst_key.append(slice(d0, d0 + n))
        src_key.append(slice(s0, s0 + n))
    out = np.full(src.shape[:2] + tuple(extent), fill, dtype=src.dtype)
    out[tuple(dst_key)] = src[tuple(src_key)]
    return out


#: below this many windows along the last dimension, im2col and the tiling col2im copy
#: through a cached index (one ``take``) instead of a strided copy whose inner loops are
#: that short (NumPy pays a call per inner loop)
_GATHER_BELOW = 16


@functools.lru_cache(maxsize=256)
def _gather_index(size: tuple, kernel: tuple, dilation: tuple, padding: tuple,
                  stride: tuple):
    """``(index, filled)``: for each entry ``(k, l)`` of im2col's columns (kernel offset
    ``k``, window ``l``, flattened) the position it reads in the flattened ``size`` image,
    or ``prod(size)`` where it falls outside (``filled``: whether any does)."""
    nd = len(size)
    counts = window_counts(size, kernel, dilation, padding, stride)
    pos = np.zeros(kernel + counts, np.intp)
    valid = np.ones(kernel + counts, np.bool_)
    mult = 1
    for ax in range(nd - 1, -1, -1):
        coord = (np.arange(kernel[ax]) * dilation[ax])[:, None] + \
            (np.arange(counts[ax]) * stride[ax] - padding[ax][0])[None, :]
        shape = [1] * (2 * nd)
        shape[ax], shape[nd + ax] = kernel[ax], counts[ax]
        coord = coord.reshape(shape)
        valid &= (coord >= 0) & (coord < size[ax])
        pos = pos + coord * mult
        mult *= size[ax]
    index = np.where(valid, pos, mult).reshape(-1)
    index.flags.writeable = False
    return index, not valid.all()


@functools.lru_cache(maxsize=256)
def _scatter_index(size: tuple, kernel: tuple, dilation: tuple, padding: tuple,
                   stride: tuple):
    """For windows that tile without overlap: ``(index, missed)``, for each position of
    the flattened ``size`` image the column entry covering it, or one past the last entry
    where none does (``missed``: whether any position is missed)."""
    gather, _ = _gather_index(size, kernel, dilation, padding, stride)
    n = prod(size)
    inside = gather < n
    index = np.full(n + 1, gather.size, np.intp)
    index[gather[inside]] = np.arange(gather.size)[inside]
    index = index[:n]
    index.flags.writeable = False
    return index, bool((index == gather.size).any())


def _by_index(x: np.ndarray, nc: int, index: np.ndarray, extra: bool, fill) -> np.ndarray:
    """``x`` as ``nc`` rows, entries taken at ``index`` along each row; index ``m`` (the
    row length) reads ``fill`` (a column appended when ``extra``)."""
    rows = x.reshape(nc, -1)
    if extra:
        padded = np.empty((rows.shape[0], rows.shape[1] + 1), dtype=x.dtype)
        padded[:, :-1] = rows
        padded[:, -1] = fill
        rows = padded
    return rows.take(index, axis=1)


def _check_windows(op: str, size, kernel, dilation, padding, stride) -> tuple:
    counts = window_counts(size, kernel, dilation, padding, stride)
    if any(c < 1 for c in counts):
        raise RuntimeError(f"{op}: no complete window fits: input size {tuple(size)}, kernel "
                           f"{kernel}, dilation {dilation}, padding {padding}, stride {stride}")
    return counts


def _check_cols(shape, size, kernel, dilation, padding, stride) -> tuple:
    """``(window counts, channels)`` of col2im's ``(N, C * prod(kernel), prod(L))`` input
    of ``shape``, or its error."""
    counts = _check_windows("col2im", size, kernel, dilation, padding, stride)
    n, ck, length = shape
    kn = prod(kernel)
    if ck % kn or length != prod(counts):
        raise RuntimeError(f"col2im: input of shape {shape} does not hold "
                           f"{prod(counts)} windows of kernel {kernel} over size {size}")
    return counts, ck // kn


class Im2col(Op):
    """``(N, C, *S) -> (N, C * prod(kernel), prod(L))``: row ``c * prod(kernel) + k`` holds
    kernel offset ``k`` of channel ``c`` for each of the ``L`` windows (PyTorch's
    ``unfold`` layout).  Positions outside the input read ``fill``."""

    def forward(x, kernel, dilation, padding, stride, fill=0):
        counts = _check_windows("im2col", x.shape[2:], kernel, dilation, padding, stride)
        n, c = x.shape[:2]
        if counts[-1] < _GATHER_BELOW and x.size:  # the same values, copied by one take
            index, filled = _gather_index(tuple(x.shape[2:]), tuple(kernel), tuple(dilation),
                                          tuple(padding), tuple(stride))
            return _by_index(x, n * c, index, filled, fill).reshape(n, c * prod(kernel),
                                                             prod(counts))
        extent = tuple(_extent(*a) for a in zip(counts, kernel, dilation, stride))
        xp = _shift(x, tuple(p[0] for p in padding), extent, fill)
        st = xp.strides
        sp = st[2:]
        view = as_strided(
            xp, xp.shape[:2] + tuple(kernel) + counts,
            st[:2] + tuple(s * d for s, d in zip(sp, dilation))
            + tuple(s * k for s, k in zip(sp, stride)), writeable=False)
        return np.reshape(view, (n, c * prod(kernel), prod(counts)))

    def backward(F, g, saved, node):
        p = node.params
        return (F.col2im(g, size=node.shapes[0][2:], kernel=p["kernel"], dilation=p["dilation"],
                         padding=p["padding"], stride=p["stride"]),)


class Col2im(Op):
    """``(N, C * prod(kernel), prod(L)) -> (N, C, *size)``: each column added back at its
    window's place (overlaps sum); the adjoint of :class:`Im2col`."""

    def forward(cols, size, kernel, dilation, padding, stride):
        counts, c = _check_cols(cols.shape, size, kernel, dilation, padding, stride)
        n, ck, length = cols.shape
        kn = prod(kernel)
        nd = len(kernel)
        extent = tuple(_extent(*a) for a in zip(counts, kernel, dilation, stride))
        lo = tuple(-p[0] for p in padding)
        if tuple(stride) == tuple(kernel) and all(d == 1 for d in dilation):
            # windows tile the input (pooling): one transposing copy, nothing overlaps
            if counts[-1] < _GATHER_BELOW and cols.size:   # (one take, by a cached index)
                index, missed = _scatter_index(tuple(size), tuple(kernel), tuple(dilation),
                                               tuple(padding), tuple(stride))
                return _by_index(cols, n * c, index, missed, 0).reshape((n, c) + tuple(size))
            blocks = cols.reshape((n, c) + tuple(kernel) + counts)
            order = (0, 1) + tuple(a for i in range(nd) for a in (2 + nd + i, 2 + i))
            return _shift(blocks.transpose(order).reshape((n, c) + extent), lo,
                          tuple(size), 0)
        # windows overlap: add each kernel offset's block in place, with the N * C rows
        # innermost (long contiguous loops; NumPy is slow over the few spatial positions)
        nc = n * c
        blocks = np.ascontiguousarray(cols.reshape(nc, kn * length).T).reshape(
            tuple(kernel) + counts + (nc,))
        full = np.zeros(extent + (nc,), dtype=cols.dtype)
        for off in itertools.product(*(range(k) for k in kernel)):
            dst = tuple(slice(o * d, o * d + (m - 1) * s + 1, s)
                        for o, d, m, s in zip(off, dilation, counts, stride))
            full[dst] += blocks[off]
        full = np.ascontiguousarray(np.moveaxis(full, -1, 0)).reshape((n, c) + extent)
        return _shift(full, lo, tuple(size), 0)

    def backward(F, g, saved, node):
        p = node.params
        return (F.im2col(g, kernel=p["kernel"], dilation=p["dilation"], padding=p["padding"],
                         stride=p["stride"], fill=0),)
