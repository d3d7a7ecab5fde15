"""Shape ops on CUDA: strided views (reshape, permute, expand, slicing, diagonals, flips)
and the copies that write through views (cat/stack, roll, repeat, tril/triu, diag)."""

from __future__ import annotations

import numpy as np

from runtime.cuda.array import CudaArray

from .. import dtypes as _dt
from ..ops import OPS
from ..ops import elementwise as E
from ..ops import shape as S
from .elementwise import clone, contiguous, copy_into, full, reshape, run_elementwise


def view(a, shape):
    try:
        return a.reshape(shape)
    except ValueError:
        raise RuntimeError(f"{S._VIEW_ERROR} (shape {list(a.shape)} -> {list(shape)})") from None


def view_dtype(a, dtype):
    """``view(dtype)``: the same device bytes read as ``dtype`` (:meth:`CudaArray.view`),
    after the CPU's checks (PyTorch's errors)."""
    return a.view(S.check_view_dtype(a, dtype))


def basic_scatter(g, shape, key):
    out = full(shape, 0, g.dtype)
    copy_into(out.basic_index(key), g)
    return out


# -- joins ---------------------------------------------------------------------------------------

def cat(*arrays, dim):
    dt = np.dtype(_dt.result_type(*arrays))
    shape = list(arrays[0].shape)
    shape[dim] = sum(a.shape[dim] for a in arrays)
    out = CudaArray.empty(tuple(shape), dt)
    off = 0
    for a in arrays:
        n = a.shape[dim]
        key = tuple((off, off + n, 1) if d == dim else (0, s, 1) for d, s in enumerate(shape))
        if a.size:
            copy_into(out.basic_index(key), a)
        off += n
    return out


def stack(*arrays, dim):
    return cat(*[a.unsqueeze((dim,)) for a in arrays], dim=dim)


# -- flip, roll, repeat, triangles, diagonals: views and copies ---------------------------------

def flipped(a, dims):
    """A view of ``a`` reversed along ``dims`` (negative strides)."""
    off, st = a.offset, list(a.estrides)
    for d in dims:
        if a.shape[d] > 1:
            off += (a.shape[d] - 1) * st[d]
            st[d] = -st[d]
    return a._view(a.shape, tuple(st), off)


def roll(a, shifts, dims):
    if dims is None:
        flat = contiguous(a).reshape((a.size,))
        return roll(flat, shifts[:1], (0,)).reshape(a.shape)
    out = a
    for shift, d in zip(shifts, dims):
        n = out.shape[d]
        res = CudaArray.empty(out.shape, out.dtype)
        k = shift % n if n else 0
        whole = [(0, s, 1) for s in out.shape]

        def part(lo, hi):
            key = list(whole)
            key[d] = (lo, hi, 1)
            return tuple(key)
        if res.size:
            if k:
                copy_into(res.basic_index(part(0, k)), out.basic_index(part(n - k, n)))
            copy_into(res.basic_index(part(k, n)), out.basic_index(part(0, n - k)))
        out = res
    return out if out is not a else clone(a)


def repeat(a, repeats):
    reps = tuple(int(r) for r in repeats)
    if len(reps) < a.ndim:   # the CPU forward's (NumPy's) behaviour: leading ones pad reps
        reps = (1,) * (a.ndim - len(reps)) + reps
    shape = (1,) * (len(reps) - a.ndim) + a.shape
    out = CudaArray.empty(tuple(r * s for r, s in zip(reps, shape)), a.dtype)
    if out.size:
        split, src = [], []
        for r, s in zip(reps, shape):
            split += [r, s]
        src = a.reshape(shape) if a.is_contiguous else reshape(a, shape)
        src = src.unsqueeze(tuple(range(0, 2 * len(reps), 2))).broadcast_to(tuple(split))
        copy_into(out.reshape(tuple(split)), src)
    return out


def triangle(lower):
    def impl(a, diagonal=0):
        if a.ndim < 2:   # the CPU forward's error
            return CudaArray.from_host(OPS["tril" if lower else "triu"].forward(
                np.zeros(a.shape, a.dtype), diagonal))
        r, c = a.shape[-2:]
        rows = CudaArray.from_host(np.arange(r, dtype=np.int64).reshape(r, 1))
        cols = CudaArray.from_host(np.arange(c, dtype=np.int64).reshape(1, c))
        off = run_elementwise(E.Sub, [cols, rows], {})
        keep = run_elementwise(E.Le if lower else E.Ge, [off, int(diagonal)], {})
        zero = False if a.dtype.kind == "b" else 0
        out = CudaArray.empty(a.shape, a.dtype)
        run_elementwise(E.Where, [keep, a, zero], {}, out=out)
        return out
    impl.__name__ = "tril_cuda" if lower else "triu_cuda"
    return impl


def diagonal_view(a, offset, dim1, dim2):
    """The diagonal as a strided view, in a new last dimension (as ``diagonal_view``)."""
    n1, n2 = a.shape[dim1], a.shape[dim2]
    r0, c0 = max(-offset, 0), max(offset, 0)
    n = max(min(n1 - r0, n2 - c0), 0)
    off = a.offset + (min(r0, n1) * a.estrides[dim1] + min(c0, n2) * a.estrides[dim2]
                      if n else 0)
    rest = [i for i in range(a.ndim) if i not in (dim1, dim2)]
    return a._view(tuple(a.shape[i] for i in rest) + (n,),
                   tuple(a.estrides[i] for i in rest) + (a.estrides[dim1] + a.estrides[dim2],),
                   off)


def diagonal_scatter(g, shape, offset, dim1, dim2):
    out = full(shape, 0, g.dtype)
    view = diagonal_view(out, offset, dim1, dim2)
    if view.size:
        copy_into(view, g)
    return out


def diag(a, diagonal=0, shape=None):
    if a.ndim == 2:
        return clone(diagonal_view(a, diagonal, 0, 1))
    if a.ndim != 1:   # the CPU forward's error
        return CudaArray.from_host(OPS["diag"].forward(np.zeros(a.shape, a.dtype), diagonal))
    if shape is None:
        n = a.shape[0] + abs(diagonal)
        shape = (n, n)
    out = full(shape, 0, a.dtype)
    view = diagonal_view(out, diagonal, 0, 1)
    if view.size:
        copy_into(view.basic_index(((0, a.shape[0], 1),)), a)
    return out
