"""Sorting and selection on CUDA: the index ops behind ``sort``/``argsort``/``msort``
(``argsort``), ``topk`` (``topk_indices``) and ``kthvalue``/``median``
(``kthvalue_index``), and the selection of multinomial's exponential race.

One kernel (:func:`runtime.cuda.launch.rank_select`) ranks every element of a row by
counting the elements that sort before it (by value, ties by index: a stable sort, as
the CPU's; NaN after every number, or before when descending) and writes its index at
its rank when the rank is wanted: argsort wants every rank, topk the first k, kthvalue
the k-th.  O(m) work per element, O(m^2) per row of m, fully parallel and deterministic;
a row longer than :data:`MAX_ROW` is sorted on the host instead (its values copied over,
eager's CPU argsort, the indices copied back; counted in :data:`HOST_SORTS`).  The
values of sort/topk/kthvalue are a gather of the input by these indices (eager's
composition), so their gradients run on the device too.
"""

from __future__ import annotations

import collections

import numpy as np

from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from ..ops import sort as _so
from .elementwise import contiguous

#: the longest row ranked on the device: O(m^2) comparisons per row (2.7e8 at 16384,
#: about a millisecond of a current GPU per row), beyond which a host sort (O(m log m) and
#: two copies) is the better deal
MAX_ROW = 16384

#: op name -> calls whose rows were longer than :data:`MAX_ROW` (sorted on the host)
HOST_SORTS: collections.Counter = collections.Counter()


def _split(a: CudaArray, dim: int) -> tuple:
    """(outer, m, inner) of ``a`` around ``dim``."""
    shape = a.shape
    return int(np.prod(shape[:dim])), shape[dim], int(np.prod(shape[dim + 1:]))


def select(a: CudaArray, dim: int, lo: int, hi: int, descending: bool, name: str):
    """The indices of the elements of ``a`` ranked ``lo..hi-1`` along ``dim`` in a stable
    sort (``descending``: largest first, NaN first), in rank order: int64, ``a``'s shape
    with ``hi - lo`` along ``dim``."""
    outer, m, inner = _split(a, dim)
    shape = a.shape[:dim] + (hi - lo,) + a.shape[dim + 1:]
    if m > MAX_ROW:
        HOST_SORTS[name] += 1
        order = _so.stable_argsort(a.to_host(), dim, descending)
        return CudaArray.from_host(np.ascontiguousarray(
            np.take(order, np.arange(lo, hi), axis=dim)).astype(np.int64))
    x = contiguous(a)
    return launch.rank_select(x, outer, m, inner, lo, hi, descending).reshape(shape)


def argsort(a, dim, descending=False):
    return select(a, dim, 0, a.shape[dim], descending, "argsort")


def topk_indices(a, k, dim, largest=True):
    return select(a, dim, 0, k, largest, "topk_indices")


def kthvalue_index(a, k, dim):
    return select(a, dim, k - 1, k, False, "kthvalue_index")
