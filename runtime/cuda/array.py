"""CUDA storage: :class:`CudaArray`, a strided view over a device buffer, and the caching
allocator the buffers come from.

A tensor on CUDA holds a :class:`CudaArray`: ``base`` (a 1-D numba-cuda device array
covering a whole allocated block), an element ``offset`` and element strides.  Shape ops
(reshape of contiguous data, permute, expand, squeeze, slicing) are new views over the
same base, as in PyTorch; kernels read any view through (base, offset, strides), so a
transposed or broadcast operand is never copied first.

Allocation (:class:`CachingAllocator`, after PyTorch's caching allocator): a request is
rounded up to a size class (:func:`size_class`: 512-byte multiples up to 1 MiB, then
steps of max(1 MiB, a quarter of the power of two below)), so nearby sizes share
blocks.  Small requests (up to 1 MiB) are cut from 2 MiB segments, large ones get a
segment of their class; a freed block goes back to its pool (small or large) and the
best-fitting cached block (the smallest at least as large) serves the next request,
split when the rest is worth keeping (512 bytes in the small pool, 1 MiB in the
large).  When the driver reports out of memory, the cached blocks are given back, the
garbage collector runs once (dead tensors return their blocks) and the allocation is
tried once more before :class:`OutOfMemoryError` (PyTorch's ``torch.cuda.OutOfMemoryError``
text: the size asked for, what is allocated and what is cached).  Every kernel runs on
the default stream, in order, so a block freed after the kernels that use it were
queued is reused only by later work.
"""

from __future__ import annotations

import bisect
import gc
import threading

import numpy as np

_ROUND = 512
_SMALL = 1 << 20            # requests up to this are small
_SMALL_SEGMENT = 2 << 20    # small blocks are cut from segments of this size
_MIB = 1 << 20


def size_class(nbytes: int) -> int:
    """The bytes a request of ``nbytes`` takes: a multiple of 512 up to 1 MiB, above it a
    multiple of max(1 MiB, 2**floor(log2(nbytes)) / 4) (at most 25% more than asked
    from 4 MiB on)."""
    n = max(int(nbytes), 1)
    if n <= _SMALL:
        return -(-n // _ROUND) * _ROUND
    step = max(_MIB, (1 << (n.bit_length() - 1)) // 4)
    return -(-n // step) * step


class OutOfMemoryError(RuntimeError):
    """PyTorch's ``torch.cuda.OutOfMemoryError`` (a RuntimeError): the device had no
    memory for a block even after the cache was emptied."""


def _is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is the driver's out-of-memory error (numba-cuda's CudaAPIError
    with CUDA_ERROR_OUT_OF_MEMORY) or a host MemoryError (the simulator's arrays)."""
    if isinstance(exc, MemoryError):
        return True
    code = getattr(exc, "code", None)
    if code is None and type(exc).__name__ == "CudaAPIError" and exc.args:
        code = exc.args[0]                # the simulator's class keeps (code, msg) in args
    if code is None:
        return False
    if getattr(code, "name", None) == "CUDA_ERROR_OUT_OF_MEMORY":
        return True
    try:
        return int(code) == 2         # CUDA_ERROR_OUT_OF_MEMORY
    except (TypeError, ValueError):
        return False


def _device_malloc(nbytes: int):
    from numba import cuda
    return cuda.device_array(nbytes, np.uint8)


def _flush_driver_frees() -> None:
    """Let numba-cuda free the device memory of dead arrays now (it defers frees)."""
    try:
        from numba import cuda
        cuda.current_context().deallocations.clear()
    except Exception:   # the simulator has no deferred frees
        pass


class _Segment:
    """One allocation from the driver; ``pieces``: its blocks alive or cached."""

    __slots__ = ("nbytes", "pieces", "small")

    def __init__(self, nbytes: int, small: bool):
        self.nbytes, self.small, self.pieces = nbytes, small, 1


class Block:
    """A piece of a segment; its memory returns to the pool when the block dies."""

    __slots__ = ("__weakref__", "allocator", "nbytes", "raw", "segment")

    def __init__(self, raw, nbytes: int, segment: _Segment | None = None, allocator=None):
        self.raw = raw
        self.nbytes = nbytes
        self.segment = segment
        self.allocator = allocator

    def __del__(self):
        try:
            (self.allocator or ALLOCATOR).release(self.raw, self.nbytes, self.segment)
        except Exception:  # interpreter shutdown
            pass


class _Pool:
    """Cached free blocks of one kind: size -> [(raw, segment)], the sizes kept sorted
    for best-fit lookups."""

    def __init__(self):
        self.free: dict = {}
        self.sizes: list = []

    def put(self, size: int, raw, segment) -> None:
        lst = self.free.get(size)
        if lst is None:
            lst = self.free[size] = []
            bisect.insort(self.sizes, size)
        lst.append((raw, segment))

    def take(self, size: int):
        """The smallest cached block of at least ``size`` bytes: (its size, raw,
        segment), or None."""
        i = bisect.bisect_left(self.sizes, size)
        if i == len(self.sizes):
            return None
        have = self.sizes[i]
        lst = self.free[have]
        raw, segment = lst.pop()
        if not lst:
            del self.free[have]
            self.sizes.pop(i)
        return have, raw, segment

    def drain(self):
        """Every cached block, removed: [(size, raw, segment)]."""
        out = [(size, raw, seg) for size, lst in self.free.items() for raw, seg in lst]
        self.free.clear()
        self.sizes.clear()
        return out


class CachingAllocator:
    """Device memory in size classes, cached and split (see the module doc).  Counters:
    ``allocated`` (bytes in live blocks: ``torch.cuda.memory_allocated``), ``peak``,
    ``reserved`` (bytes of the segments held from the driver, live or cached:
    ``memory_reserved``) and its peak, ``stats()``."""

    def __init__(self, malloc=None):
        self.malloc = malloc or _device_malloc   # nbytes -> a 1-D uint8 device array
        self.small, self.large = _Pool(), _Pool()
        self.lock = threading.RLock()
        self.counts = {"reused": 0, "fresh": 0, "splits": 0, "cached_bytes": 0,
                       "oom_retries": 0, "segments": 0}
        self._allocated = 0       # bytes in live blocks (torch.cuda.memory_allocated)
        self.peak = 0
        # blocks freed by Block.__del__, pooled at the next allocator call: a finalizer
        # can run in the middle of any allocation (the garbage collector), so it only
        # appends here and never touches the pools
        self._pending: list = []
        self.reserved = 0         # bytes in segments (torch.cuda.memory_reserved)
        self.peak_reserved = 0

    @property
    def allocated(self) -> int:
        self._drain()
        return self._allocated

    def _drain(self) -> None:
        with self.lock:
            pending = self._pending
            while pending:
                raw, nbytes, segment = pending.pop()
                self._allocated -= nbytes
                if segment is not None:       # a block made outside allocate(): no pool
                    (self.small if segment.small else self.large).put(nbytes, raw,
                                                                      segment)
                    self.counts["cached_bytes"] += nbytes

    @property
    def free(self) -> dict:
        """size -> number of cached blocks of that size (both pools)."""
        self._drain()
        out: dict = {}
        for pool in (self.small, self.large):
            for size, lst in pool.free.items():
                out[size] = out.get(size, 0) + len(lst)
        return out

    def allocate(self, nbytes: int) -> Block:
        size = size_class(nbytes)
        small = size <= _SMALL
        pool = self.small if small else self.large
        with self.lock:
            self._drain()
            hit = pool.take(size)
            if hit is None:
                seg_size = _SMALL_SEGMENT if small else size
                raw = self._malloc(seg_size, nbytes)
                segment = _Segment(seg_size, small)
                self.counts["fresh"] += 1
                self.counts["segments"] += 1
                self.reserved += seg_size
                self.peak_reserved = max(self.peak_reserved, self.reserved)
                have = seg_size
            else:
                have, raw, segment = hit
                self.counts["reused"] += 1
                self.counts["cached_bytes"] -= have
            rest = have - size
            if rest and rest >= (_ROUND if small else _MIB):
                pool.put(rest, raw[size:have], segment)    # the rest stays cached
                segment.pieces += 1
                self.counts["splits"] += 1
                self.counts["cached_bytes"] += rest
                raw = raw[:size]
            else:
                size = have
            self._allocated += size
            self.peak = max(self.peak, self._allocated)
            return Block(raw, size, segment, self)

    def _malloc(self, seg_size: int, asked: int):
        """A new segment from the driver; on out of memory: free the cache, collect
        garbage once, try once more, then :class:`OutOfMemoryError`."""
        try:
            return self.malloc(seg_size)
        except Exception as exc:
            if not _is_oom(exc):
                raise
            first = exc
        self.counts["oom_retries"] += 1
        self._drain()
        cached = self.counts["cached_bytes"]
        self.empty_cache()
        gc.collect()              # dead tensors' blocks come back to the pool...
        self.empty_cache()        # ...and go back to the driver
        _flush_driver_frees()
        try:
            return self.malloc(seg_size)
        except Exception as exc:
            if not _is_oom(exc):
                raise
            last = exc
        raise OutOfMemoryError(
            f"CUDA out of memory. Tried to allocate {_fmt(asked)} (a segment of "
            f"{_fmt(seg_size)}). Of the memory this process holds, {_fmt(self._allocated)} "
            f"is allocated by tensors, and {_fmt(self.reserved - self._allocated)} is "
            f"reserved but unallocated; {_fmt(cached)} of cached blocks were freed and the "
            f"allocation retried once ({type(first).__name__}: {first}; then "
            f"{type(last).__name__}: {last})") from None

    def release(self, raw, nbytes: int, segment: _Segment | None = None) -> None:
        """A dead block's memory: pooled at the next allocator call (see ``_pending``)."""
        self._pending.append((raw, nbytes, segment))

    def empty_cache(self) -> None:
        """Drop the cached blocks; a segment whose pieces are all dropped goes back to
        the driver (a segment with a live block stays reserved until that block dies
        and the cache is emptied again)."""
        with self.lock:
            self._drain()
            for pool in (self.small, self.large):
                for size, _raw, seg in pool.drain():
                    self.counts["cached_bytes"] -= size
                    seg.pieces -= 1
                    if seg.pieces == 0:
                        self.reserved -= seg.nbytes
                        self.counts["segments"] -= 1
        _flush_driver_frees()

    def stats(self) -> dict:
        self._drain()
        return {**self.counts, "allocated_bytes": self._allocated,
                "reserved_bytes": self.reserved}


def _fmt(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} bytes"


ALLOCATOR = CachingAllocator()


def contiguous_strides(shape: tuple) -> tuple:
    out = []
    s = 1
    for n in reversed(shape):
        out.append(s)
        s *= max(n, 1)
    return tuple(reversed(out))


def _infer_shape(shape: tuple, size: int) -> tuple:
    """``shape`` with its one ``-1`` resolved from ``size`` (NumPy's errors otherwise)."""
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(n < -1 for n in shape):
        raise ValueError(f"negative dimensions not allowed in shape {shape}")
    known = 1
    for n in shape:
        if n != -1:
            known *= n
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    elif known != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def _view_strides(old: tuple, ostrides: tuple, new: tuple):
    """Element strides viewing data of shape ``old``/``ostrides`` as ``new``, or None when
    no view exists (PyTorch's ``computeStride``: runs of dimensions that are contiguous
    among themselves may be regrouped)."""
    numel = 1
    for n in old:
        numel *= n
    if numel == 0 or not old:
        return contiguous_strides(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    chunk = ostrides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and ostrides[d - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * chunk
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk = ostrides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(out)


class _Flags:
    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c, w):
        self.c_contiguous = c
        self.writeable = w


def storage_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype the device array holds for ``dtype``: itself, or uint16 for bfloat16
    (ml_dtypes' dtype, which Numba cannot type: its bits are stored and only the
    conversion kernels read them)."""
    return _U16 if dtype.char == "E" else dtype


_U16 = np.dtype(np.uint16)


#: ``CudaArray -> CudaArray``: the device kernel copying a strided view into a new
#: contiguous array, :func:`runtime.cuda.launch.copy`, set when launch is imported (launch
#: imports this module, so this one cannot import it; every op and compiled graph runs
#: through launch, so it is set once anything ran on CUDA)
STRIDED_COPY = None

#: ``(CudaArray, "amin" | "amax") -> NumPy scalar``: a device reduction read back,
#: :func:`runtime.cuda.launch.extreme`, set when launch is imported (as STRIDED_COPY)
EXTREME = None

#: host-to-device copies made by :class:`CudaArray` (``h2d``: from_host and 0-d values
#: moved to device memory) and device-to-host ones (``d2h``: to_host)
TRANSFERS = {"h2d": 0, "d2h": 0}


class CudaArray:
    """A strided view (``shape``, element ``estrides``, element ``offset``) of ``base``,
    a 1-D device array of ``dtype`` (its bits as uint16 for bfloat16: see
    :func:`storage_dtype`) over one :class:`Block` (kept alive by ``block``).

    A 0-d array made from a host value (:meth:`scalar`, and :meth:`from_host` of a 0-d
    array) keeps that value in ``host`` and has no device memory until something reads
    ``base`` or ``block``: kernels take it as a scalar argument (``launch.run_core``),
    as PyTorch passes a CPU scalar tensor to a CUDA kernel, so a constant costs no
    host-to-device copy.  The first read of ``base`` copies the value over (once) and
    ``host`` becomes None: from then on it is an ordinary device array (writes go to the
    device)."""

    __slots__ = ("__weakref__", "_base", "_block", "dtype", "estrides", "host", "offset",
                 "shape")

    def __init__(self, base, block, shape, estrides, offset=0, dtype=None):
        self._base = base
        self._block = block
        self.host = None
        self.dtype = base.dtype if dtype is None else np.dtype(dtype)
        self.shape = tuple(int(s) for s in shape)
        self.estrides = tuple(int(s) for s in estrides)
        self.offset = int(offset)

    @property
    def base(self):
        """The 1-D device array (a 0-d host value is copied over on first read)."""
        b = self._base
        return b if b is not None else self._materialize()

    @property
    def block(self):
        if self._base is None:
            self._materialize()
        return self._block

    def _materialize(self):
        dev = CudaArray._from_host_copy(np.asarray(self.host))
        self._base, self._block, self.host = dev._base, dev._block, None
        return self._base

    @staticmethod
    def scalar(value, dtype=None) -> CudaArray:
        """A 0-d array of ``value`` (cast to ``dtype``) held on the host until device
        memory is needed (see the class doc); float16/bfloat16 values are copied at once
        (kernels take no half scalar arguments)."""
        v = np.asarray(value, dtype)
        if v.dtype.char in "eE":
            return CudaArray._from_host_copy(v.reshape(()))
        out = CudaArray.__new__(CudaArray)
        out._base = out._block = None
        out.host = v.reshape(())[()]
        out.dtype, out.shape, out.estrides, out.offset = v.dtype, (), (), 0
        return out

    # -- allocation ------------------------------------------------------------------
    @staticmethod
    def empty(shape, dtype) -> CudaArray:
        dtype = np.dtype(dtype)
        shape = tuple(int(s) for s in shape)
        n = int(np.prod(shape)) if shape else 1
        block = ALLOCATOR.allocate(max(n, 1) * dtype.itemsize)
        base = block.raw.view(storage_dtype(dtype))
        return CudaArray(base, block, shape, contiguous_strides(shape), 0, dtype)

    @staticmethod
    def from_host(a: np.ndarray) -> CudaArray:
        """A device copy of ``a`` (a 0-d value stays on the host until needed: see the
        class doc)."""
        if np.ndim(a) == 0:
            return CudaArray.scalar(a)
        return CudaArray._from_host_copy(a)

    @staticmethod
    def _from_host_copy(a: np.ndarray) -> CudaArray:
        shape = np.shape(a)
        a = np.ascontiguousarray(a).reshape(shape)   # (ascontiguousarray makes 0-d 1-d)
        out = CudaArray.empty(a.shape, a.dtype)
        if a.size:
            TRANSFERS["h2d"] += 1
            out.base[:a.size].copy_to_device(a.reshape(-1).view(storage_dtype(a.dtype)))
        return out

    @staticmethod
    def from_interface(obj) -> CudaArray:
        """A view of another library's CUDA memory (``__cuda_array_interface__``: CuPy,
        PyTorch, Numba), zero-copy when contiguous; the object is kept alive."""
        from numba import cuda
        arr = cuda.as_cuda_array(obj)
        if not arr.is_c_contiguous():
            return CudaArray.from_host(arr.copy_to_host())
        base = arr.reshape(arr.size) if arr.ndim != 1 else arr
        return CudaArray(base, obj, arr.shape, contiguous_strides(arr.shape))

    def to_host(self) -> np.ndarray:
        """A NumPy copy of the values (the base copied over, then the view taken)."""
        if self._base is None:
            return np.array(self.host)
        if not self.size:
            return np.empty(self.shape, self.dtype)
        TRANSFERS["d2h"] += 1
        lo, hi = self._extent()
        flat = self.base[lo:hi].copy_to_host().view(self.dtype)
        view = np.lib.stride_tricks.as_strided(
            flat[self.offset - lo:], self.shape,
            tuple(s * self.dtype.itemsize for s in self.estrides))
        return np.array(view, order="C")

    def min(self):
        """NumPy's ``min`` of the values, read back to the host (synchronizing, as
        ``Tensor.item()``: for the argument checks that need a value, e.g. index bounds);
        an integer array's is reduced on the device and only the result copied
        (:data:`EXTREME`)."""
        return self._extreme("amin")

    def max(self):
        """NumPy's ``max`` of the values, read back to the host (see :meth:`min`)."""
        return self._extreme("amax")

    def _extreme(self, kind: str):
        if EXTREME is not None and self.ndim and self.size and self.dtype.kind in "iu":
            return EXTREME(self, kind)
        host = self.to_host()
        return host.min() if kind == "amin" else host.max()

    def copy(self) -> CudaArray:
        """A contiguous copy on the device: device-to-device when contiguous, else a copy
        kernel reading the view through its strides (:data:`STRIDED_COPY`; through the
        host only while :mod:`runtime.cuda.launch` was never imported)."""
        if self._base is None:
            return CudaArray.scalar(self.host)
        if not self.is_contiguous:
            if STRIDED_COPY is not None:
                return STRIDED_COPY(self)
            return CudaArray.from_host(self.to_host())
        out = CudaArray.empty(self.shape, self.dtype)
        n = self.size
        if n:
            out.base[:n].copy_to_device(self.base[self.offset:self.offset + n])
        return out

    def _extent(self) -> tuple:
        lo = hi = self.offset
        for n, s in zip(self.shape, self.estrides):
            if n > 1:
                if s > 0:
                    hi += (n - 1) * s
                else:
                    lo += (n - 1) * s
        return lo, hi + 1

    # -- NumPy-like metadata -----------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        return tuple(s * self.dtype.itemsize for s in self.estrides)

    @property
    def is_contiguous(self) -> bool:
        want = contiguous_strides(self.shape)
        return all(n <= 1 or s == w for n, s, w in zip(self.shape, self.estrides, want))

    @property
    def flags(self) -> _Flags:
        overlap = any(n > 1 and s == 0 for n, s in zip(self.shape, self.estrides))
        return _Flags(self.is_contiguous, not overlap)

    @property
    def __cuda_array_interface__(self) -> dict:
        ptr = self.base.__cuda_array_interface__["data"][0] + self.offset * self.itemsize
        return {"shape": self.shape, "strides": None if self.is_contiguous else self.strides,
                "typestr": self.dtype.str, "data": (ptr, False), "version": 3}

    def __repr__(self) -> str:
        return f"CudaArray(shape={self.shape}, dtype={self.dtype})"

    # -- views ---------------------------------------------------------------------------
    def _view(self, shape, estrides, offset=None) -> CudaArray:
        return CudaArray(self.base, self.block, shape, estrides,
                         self.offset if offset is None else offset, self.dtype)

    def reshape(self, shape, copy=None) -> CudaArray:
        """A view with another shape (one ``-1`` is inferred), as NumPy's
        ``reshape(shape, copy=False)``: ValueError when the strides allow no view, whatever
        ``copy`` says except True (then a contiguous copy, reshaped).  A non-contiguous
        array is viewed whenever its strides allow it (PyTorch's ``computeStride``)."""
        if isinstance(shape, (int, np.integer)):
            shape = (shape,)
        shape = _infer_shape(tuple(int(s) for s in shape), self.size)
        if copy:
            return self.copy().reshape(shape)
        if self.is_contiguous:
            return self._view(shape, contiguous_strides(shape))
        st = _view_strides(self.shape, self.estrides, shape)
        if st is None:
            raise ValueError("cannot reshape these CUDA strides without a copy: "
                             f"shape {self.shape} strides {self.estrides} -> {shape}")
        return self._view(shape, st)

    def view(self, dtype) -> CudaArray:
        """The same bytes read as ``dtype`` (NumPy's ``ndarray.view(dtype)``): a view of
        the same block; when the item sizes differ the last dimension (contiguous, or of
        size 1) is scaled by their ratio, and the offset and the other strides must be
        whole elements of ``dtype`` (ValueError otherwise: NumPy's byte strides have no
        such bound, element strides do)."""
        dtype = np.dtype(dtype)
        old, new = self.itemsize, dtype.itemsize
        shape, st, off = list(self.shape), list(self.estrides), self.offset
        if old != new:
            if not shape or (shape[-1] != 1 and st[-1] != 1) or shape[-1] * old % new:
                raise ValueError(f"cannot view {self.dtype} as {dtype}: the last dimension "
                                 "must be contiguous and hold whole elements")
            if off * old % new or any(n > 1 and s * old % new
                                      for n, s in zip(shape[:-1], st[:-1])):
                raise ValueError(f"cannot view {self.dtype} as {dtype}: the offset and "
                                 "strides are no whole elements of it")
            st = [s * old // new for s in st[:-1]] + [1]
            shape[-1] = shape[-1] * old // new
            off = off * old // new
        base = self.base.view(storage_dtype(dtype))
        return CudaArray(base, self.block, shape, st, off, dtype)

    def transpose(self, dims) -> CudaArray:
        return self._view(tuple(self.shape[d] for d in dims),
                          tuple(self.estrides[d] for d in dims))

    def broadcast_to(self, shape) -> CudaArray:
        shape = tuple(shape)
        lead = len(shape) - self.ndim
        st = []
        for d, n in enumerate(shape):
            if d < lead:
                st.append(0)
            else:
                own = self.shape[d - lead]
                if own == n:
                    st.append(self.estrides[d - lead])
                elif own == 1:
                    st.append(0)
                else:
                    raise ValueError(f"operands could not be broadcast together with shapes "
                                     f"{self.shape} {shape}")
        return self._view(shape, st)

    def squeeze(self, dims) -> CudaArray:
        keep = [d for d in range(self.ndim) if d not in dims]
        return self._view(tuple(self.shape[d] for d in keep),
                          tuple(self.estrides[d] for d in keep))

    def unsqueeze(self, dims) -> CudaArray:
        shape, st = list(self.shape), list(self.estrides)
        for d in sorted(dims):
            shape.insert(d, 1)
            st.insert(d, 0)
        return self._view(shape, st)

    def basic_index(self, key) -> CudaArray:
        """``a[key]`` for a canonical basic key (see :mod:`eager.ops.index`): ints select,
        ``(start, stop, step)`` slice, None inserts a dimension."""
        shape, st = [], []
        off = self.offset
        d = 0
        for e in key:
            if e is None:
                shape.append(1)
                st.append(0)
                continue
            if type(e) is tuple:
                start, stop, step = e
                shape.append(max(0, -(-(stop - start) // step)))
                st.append(self.estrides[d] * step)
                off += start * self.estrides[d]
            else:
                off += int(e) * self.estrides[d]
            d += 1
        shape += self.shape[d:]
        st += self.estrides[d:]
        return self._view(shape, st, off)
