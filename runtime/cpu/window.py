"""Native helpers for the whole-trace functions of :mod:`compiler.codegen.native_cpu`:
sliding windows (``im2col``, ``col2im``), the arg-reduction and pick/place pair that
pooling and ``max(dim)`` are made of, and the product step of a convolution.

Each is compiled once per dtype into Numba's disk cache and called from the traces that
use it, so a CNN's trace stays a short function of calls (its build links these instead
of compiling their loops again).  Each computes eager's op (:mod:`eager.ops.window`,
:mod:`eager.ops.reduce`, :mod:`eager.ops.conv`) bit for bit: the gathers copy, ``col2im``
adds a position's entries in eager's order (kernel offsets in order, from zero; a copy
where windows tile), the product is NumPy's BLAS call (:mod:`.blas`).

Layouts: spatial ops take 2-D windows over ``(N, C, H, W)`` (1-D ones come as ``H = 1``);
the reductions take ``(p, k, q)`` views, the reduced dimension in the middle.
"""

from __future__ import annotations

import numba

from .blas import matmul

_JIT = dict(cache=True, nogil=True, error_model="numpy")


@numba.njit(**_JIT)
def im2col_2d(x, out, lh, lw, kh, kw, dh, dw, ph, pw, sh, sw, fill):
    """``out[n, (c * kh + i) * kw + j, a * lw + b] = x[n, c, a*sh - ph + i*dh, b*sw - pw +
    j*dw]``, ``fill`` where that is outside ``x``; ``(lh, lw)`` the window counts."""
    nb, ch, hh, ww = x.shape
    for n in range(nb):
        for c in range(ch):
            for i in range(kh):
                for j in range(kw):
                    row = (c * kh + i) * kw + j
                    for a in range(lh):
                        y = a * sh - ph + i * dh
                        inside = 0 <= y < hh
                        for b in range(lw):
                            z = b * sw - pw + j * dw
                            if inside and 0 <= z < ww:
                                out[n, row, a * lw + b] = x[n, c, y, z]
                            else:
                                out[n, row, a * lw + b] = fill


@numba.njit(**_JIT)
def col2im_2d(cols, out, lh, lw, kh, kw, dh, dw, ph, pw, sh, sw, tiles):
    """The adjoint of :func:`im2col_2d` into ``out`` (zeros): each column entry added at
    its window's place, kernel offsets in order (eager's order of additions); where the
    windows ``tiles`` (no overlap) the entry is copied, as eager's transposing copy."""
    nb, ch, hh, ww = out.shape
    for n in range(nb):
        for c in range(ch):
            for i in range(kh):
                for j in range(kw):
                    row = (c * kh + i) * kw + j
                    for a in range(lh):
                        y = a * sh - ph + i * dh
                        if y < 0 or y >= hh:
                            continue
                        for b in range(lw):
                            z = b * sw - pw + j * dw
                            if 0 <= z < ww:
                                if tiles:
                                    out[n, c, y, z] = cols[n, row, a * lw + b]
                                else:
                                    out[n, c, y, z] += cols[n, row, a * lw + b]


@numba.njit(**_JIT)
def arg_mid(a, out, largest):
    """``out[i, j]``: the first index of the maximum (``largest``) or minimum of
    ``a[i, :, j]``, the first NaN where there is one (NumPy's ``argmax``/``argmin``)."""
    p, k, q = a.shape
    for i in range(p):
        for j in range(q):
            best = a[i, 0, j]
            at = 0
            if best == best:
                for t in range(1, k):
                    v = a[i, t, j]
                    if v != v:
                        at = t
                        break
                    if v > best if largest else v < best:
                        best = v
                        at = t
            out[i, j] = at


@numba.njit(**_JIT)
def _along(t, k):
    """Index ``t`` of a dimension of ``k`` (a negative one counts from the end); raises
    IndexError out of range, as ``take_along_axis``/``put_along_axis``."""
    if t < 0:
        t += k
    if t < 0 or t >= k:
        raise IndexError("index out of bounds")
    return t


@numba.njit(**_JIT)
def pick_mid(a, idx, out):
    """``out[i, j] = a[i, idx[i, j], j]``."""
    p, k, q = a.shape
    for i in range(p):
        for j in range(q):
            out[i, j] = a[i, _along(idx[i, j], k), j]


@numba.njit(**_JIT)
def place_mid(g, idx, out):
    """``out[i, idx[i, j], j] = g[i, j]`` into ``out`` (zeros), as ``put_along_axis``."""
    p, k, q = out.shape
    for i in range(p):
        for j in range(q):
            out[i, _along(idx[i, j], k), j] = g[i, j]


@numba.njit(**_JIT)
def conv_product(cols, w2, out):
    """``out[n] = w2 @ cols[n]`` for each ``n``: ``np.matmul`` of a matrix and a stack,
    one BLAS product per item as NumPy's loop makes them."""
    for n in range(cols.shape[0]):
        out[n] = matmul(w2, cols[n])


@numba.njit(**_JIT)
def add_channel_bias(out, bias):
    """``out[n, o, l] += bias[o]`` (eager adds the reshaped bias: one rounding each)."""
    nb, oc, length = out.shape
    for n in range(nb):
        for o in range(oc):
            b = bias[o]
            for k in range(length):
                out[n, o, k] += b
