"""Sorting, selection, searching and counting ops: the index ops behind ``sort``,
``argsort``, ``topk`` and ``kthvalue`` (their values are a ``gather``/``pick_along_dim`` of
the input, so the gradient flows through that op), ``searchsorted``, ``histc``,
``bincount`` and ``unique``.

Every op here returns integers or counts: none is differentiable.  Sorting is stable and
puts NaN after every number (first when descending), as PyTorch does.  ``bincount`` and
``unique`` have an output shape that depends on the values (``data_dependent_shape``): a
compiled function using them runs eagerly.
"""

from __future__ import annotations

import numpy as np

from .base import Op

_I64 = np.dtype(np.int64)


def stable_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable argsort along ``axis``; descending keeps equal elements in their original
    order (sort the reversed array ascending, reverse the order, map the indices back)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    order = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return np.ascontiguousarray(np.flip(n - 1 - order, axis))


class Argsort(Op):
    """Indices that sort ``a`` along ``dim`` (stable; NaN last, or first when
    ``descending``)."""
    differentiable = False

    def forward(a, dim, descending=False):
        return stable_argsort(a, dim, descending).astype(_I64, copy=False)


class TopkIndices(Op):
    """Indices of the ``k`` largest (``largest``) or smallest elements along ``dim``, in
    sorted order; equal elements by increasing index."""
    differentiable = False

    def forward(a, k, dim, largest=True):
        n = a.shape[dim]
        if k == 0 or 8 * k > n:
            order = stable_argsort(a, dim, largest)
            return np.ascontiguousarray(np.take(order, np.arange(k), axis=dim)).astype(_I64)
        # few of many: partition first, then sort the k candidates (by index, then value)
        part = np.argpartition(a, n - k if largest else k - 1, axis=dim)
        cand = np.sort(np.take(part, np.arange(n - k, n) if largest else np.arange(k),
                               axis=dim), axis=dim)
        order = stable_argsort(np.take_along_axis(a, cand, axis=dim), dim, largest)
        return np.take_along_axis(cand, order, axis=dim).astype(_I64, copy=False)


class KthvalueIndex(Op):
    """Index of the ``k``-th smallest element (1-based) along ``dim``, keepdim form."""
    differentiable = False

    def forward(a, k, dim):
        order = stable_argsort(a, dim, False)
        return np.take(order, [k - 1], axis=dim).astype(_I64, copy=False)


class Searchsorted(Op):
    """For each of ``values``, the index in the sorted last dimension of ``seq`` where it
    would be inserted (``right``: after equal elements).  ``seq`` is 1-D, or its leading
    dimensions equal those of ``values`` (one search per row)."""
    differentiable = False

    def forward(seq, values, right=False, out_int32=False):
        side = "right" if right else "left"
        dtype = np.int32 if out_int32 else _I64
        if seq.ndim == 1:
            return np.asarray(np.searchsorted(seq, values, side=side), dtype=dtype)
        rows = seq.reshape(-1, seq.shape[-1])
        vals = values.reshape(len(rows), -1)
        out = np.empty(vals.shape, dtype=dtype)
        for r in range(len(rows)):
            out[r] = np.searchsorted(rows[r], vals[r], side=side)
        return out.reshape(values.shape)


def histc_range(dtype, bins: int, min, max, extremes) -> tuple:
    """``(lo, hi)`` of histc's bins as scalars of ``dtype``, with PyTorch's errors:
    ``min == max`` takes the data's range, ``extremes()`` (its ``(min, max)``, None for no
    data: called only then), widened by one each way when still empty."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    lo, hi = dtype.type(min), dtype.type(max)
    if lo == hi:
        data = extremes()
        if data is not None:
            lo, hi = data
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return lo, hi


class Histc(Op):
    """Histogram of ``a`` with ``bins`` equal bins over ``[min, max]`` (PyTorch's
    ``histc``: ``min == max`` takes the data's range; elements outside are ignored; the
    bin index is computed in the input's dtype as PyTorch's kernel does)."""
    differentiable = False

    def forward(a, bins, min, max):
        lo, hi = histc_range(a.dtype, bins, min, max,
                             lambda: (a.min(), a.max()) if a.size else None)
        x = a.reshape(-1)
        x = x[(x >= lo) & (x <= hi)]
        with np.errstate(invalid="ignore"):
            pos = ((x - lo) * a.dtype.type(bins) / (hi - lo)).astype(_I64)
        np.minimum(pos, bins - 1, out=pos)
        return np.bincount(pos, minlength=bins).astype(a.dtype)


class Bincount(Op):
    """Occurrences of each non-negative integer of the 1-D ``a`` (summed ``weights`` when
    given), at least ``minlength`` of them."""
    differentiable = False
    data_dependent_shape = True

    def forward(a, weights=None, minlength=0):
        out = np.bincount(a, weights=weights, minlength=minlength)
        if weights is None:
            return out.astype(_I64, copy=False)
        return out.astype(weights.dtype if weights.dtype.kind == "f" else np.float64,
                          copy=False)


def unique_flat(a: np.ndarray) -> tuple:
    """``(values, inverse, counts)`` of the 1-D ``a``: NumPy's ``unique`` with
    ``equal_nan=False`` (every NaN distinct, last) through a stable argsort, so that the
    inverse of the NaNs (in input order) and which of ``0.0``/``-0.0`` is kept (the first
    in the input) do not depend on NumPy's quicksort (an unstable SIMD sort on some CPUs)."""
    perm = np.argsort(a, kind="stable")
    aux = a[perm]
    first = np.empty(aux.shape, bool)
    first[:1] = True
    np.not_equal(aux[1:], aux[:-1], out=first[1:])
    inverse = np.empty(a.shape, _I64)
    inverse[perm] = np.cumsum(first) - 1
    starts = np.append(np.flatnonzero(first), a.size)
    return aux[first], inverse, np.diff(starts).astype(_I64)


class Unique(Op):
    """One ``part`` of ``unique(a)``: the sorted distinct elements (``"values"``), for each
    element the index of its value there (``"inverse"``), or the count of each value
    (``"counts"``).  ``dim``: distinct slices along that dimension instead."""
    differentiable = False
    data_dependent_shape = True

    def forward(a, dim=None, part="values"):
        if dim is None:
            values, inverse, counts = unique_flat(a.reshape(-1))
            inverse = inverse.reshape(a.shape)
        else:
            values, inverse, counts = np.unique(a, axis=dim, return_inverse=True,
                                                return_counts=True)
            inverse = inverse.reshape(-1)
        if part == "values":
            return values
        return (inverse if part == "inverse" else counts).astype(_I64, copy=False)
