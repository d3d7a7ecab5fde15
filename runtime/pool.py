"""A small, bounded pool of reusable NumPy output buffers.

Fresh large allocations are expensive for memory-bound kernels: ``np.empty``
of a large array maps new pages and the first write to each page faults.
Compiled graphs therefore take their output/intermediate arrays from a
:class:`BufferPool` and give intermediates they own back when done.

Contract: an array passed to :meth:`BufferPool.give` must no longer be
referenced by anyone (no live views, not returned to the user). The pool
hands it out again from :meth:`BufferPool.take` with arbitrary (stale)
contents, exactly like ``np.empty``. The compiler only gives back
intermediates it allocated and owns.

The pool is bounded: at most ``max_per_key`` arrays per ``(shape, dtype)`` and
at most ``max_bytes`` bytes held in total; arrays beyond that are simply
dropped (freed by NumPy). Only C-contiguous, writeable, exact ``np.ndarray``
instances that are not views of another array are accepted (views are
dropped, since they could pin a larger buffer). All methods are thread-safe.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_PER_KEY", "BufferPool"]

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_PER_KEY = 4

_dtype = np.dtype


def _key(shape: tuple[int, ...], dt: np.dtype) -> tuple[Any, ...]:
    # dtype.str is a cheap, hashable identity for builtin dtypes; structured or
    # otherwise non-builtin dtypes with the same .str (e.g. '|V16') are keyed by
    # the dtype object itself.
    return (shape, dt.str if dt.isbuiltin else dt)


class BufferPool:
    """Reuse released arrays of identical shape and dtype.

    ``take(shape, dtype)`` returns an uninitialized C-contiguous array (a
    released one if available, else ``np.empty``); ``give(arr)`` returns an
    array the caller no longer references.
    """

    __slots__ = ("_free", "_lock", "_nbytes", "hits", "max_bytes", "max_per_key", "misses")

    def __init__(
        self, max_bytes: int = DEFAULT_MAX_BYTES, max_per_key: int = DEFAULT_MAX_PER_KEY
    ) -> None:
        if max_bytes < 0 or max_per_key < 0:
            raise ValueError("max_bytes and max_per_key must be >= 0")
        self.max_bytes = int(max_bytes)
        self.max_per_key = int(max_per_key)
        self._free: dict[tuple[Any, ...], list[np.ndarray]] = {}
        self._nbytes = 0
        self._lock = threading.Lock()
        self.hits = 0  # takes served from the pool
        self.misses = 0  # takes that allocated

    def take(self, shape: int | tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
        """An array of ``shape``/``dtype`` with undefined contents."""
        if type(shape) is not tuple:
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dt = dtype if isinstance(dtype, np.dtype) else _dtype(dtype)
        key = _key(shape, dt)
        with self._lock:
            lst = self._free.get(key)
            if lst:
                arr = lst.pop()
                self._nbytes -= arr.nbytes
                self.hits += 1
                return arr
            self.misses += 1
        return np.empty(shape, dt)

    def give(self, arr: np.ndarray) -> bool:
        """Return ``arr`` to the pool. Returns False if it was dropped instead
        (view / non-contiguous / read-only, per-key or byte cap reached, or
        already in the pool). ``arr`` must not be used by the caller afterwards.
        """
        # A view has an ndarray base; arrays allocated by Numba have a non-ndarray
        # base (their MemInfo) and are accepted.
        if (
            type(arr) is not np.ndarray
            or isinstance(arr.base, np.ndarray)
            or not arr.flags.c_contiguous
            or not arr.flags.writeable
        ):
            return False
        nbytes = arr.nbytes
        key = _key(arr.shape, arr.dtype)
        with self._lock:
            if self._nbytes + nbytes > self.max_bytes:
                return False
            lst = self._free.get(key)
            if lst is None:
                if self.max_per_key == 0:
                    return False
                self._free[key] = [arr]
            else:
                if len(lst) >= self.max_per_key:
                    return False
                for a in lst:
                    if a is arr:  # double give would hand one buffer out twice
                        return False
                lst.append(arr)
            self._nbytes += nbytes
            return True

    @property
    def nbytes(self) -> int:
        """Bytes currently held by the pool."""
        return self._nbytes

    def __len__(self) -> int:
        """Number of arrays currently held."""
        with self._lock:
            return sum(len(v) for v in self._free.values())

    def clear(self) -> None:
        """Drop every held array."""
        with self._lock:
            self._free.clear()
            self._nbytes = 0

    def __repr__(self) -> str:
        return (
            f"BufferPool(arrays={len(self)}, nbytes={self._nbytes}, max_bytes={self.max_bytes}, "
            f"max_per_key={self.max_per_key}, hits={self.hits}, misses={self.misses})"
        )
