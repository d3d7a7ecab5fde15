"""``eager.save`` / ``eager.load`` in PyTorch's checkpoint format, both ways.

**Format.**  :func:`save` writes what ``torch.save`` writes (PyTorch >= 1.6's zip layout):
a zip archive (stored, not compressed) whose entries sit under one folder ``archive/``:

* ``data.pkl``: the object, pickled with protocol 2.  A tensor is pickled as
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
  OrderedDict())`` and a ``Parameter`` as ``torch._utils._rebuild_parameter(tensor,
  requires_grad, OrderedDict())``; a storage is a *persistent id*
  ``("storage", torch.FloatStorage, "<key>", "cpu", numel)``; dtypes are the globals
  ``torch.float32`` ..., ``Size``/``device`` are ``torch.Size``/``torch.device``.
* ``data/<key>``: each storage's raw little-endian bytes (aligned to 64 bytes, as PyTorch
  does, so ``torch.load(mmap=True)`` works);
* ``byteorder`` (``little``), ``version`` (``3``), ``.format_version``,
  ``.storage_alignment``, ``.data/serialization_id``.

So ``torch.load(path, weights_only=True)`` reads state dicts, optimizer states, tensors and
nested containers written here, and :func:`load` reads files written by ``torch.save``.
Tensors that are views of one array share one storage in the file (as in PyTorch); when
loaded, each tensor gets its own contiguous copy (a tensor whose strides overlap, such as
an ``expand``, becomes a read-only view of its storage instead, as ``expand`` is here).

**Safety.**  :func:`load` defaults to ``weights_only=True``, PyTorch's semantics since 2.6:
the unpickler resolves globals from an allow-list only (the tensor rebuild functions,
storage types, dtypes, ``torch.Size``/``torch.device``, ``collections.OrderedDict``,
``set``/``frozenset``/``bytearray``/``complex``, ``_codecs.encode`` for bytes, and what
:func:`add_safe_globals` / :func:`safe_globals` add); any other global -- a class to
instantiate, ``os.system``, ``builtins.eval`` -- raises ``pickle.UnpicklingError`` before
anything runs.  A pickled whole module (``eager.save(model, f)``) therefore loads only with
``weights_only=False``, which runs the pickle's code: use it only for files you trust.
Malformed or crafted files raise ``pickle.UnpicklingError`` naming the problem (a missing
storage entry, a tensor reaching past its storage, truncated data), not a bare
``KeyError``/``RecursionError``/``MemoryError``.

``map_location``: ``None`` (the saved device), a string or ``device`` (everything there),
a dict ``{saved: target}``, or a callable ``f(storage, location)`` returning the storage
(``storage.cpu()``/``storage.cuda(i)`` move it) or ``None`` (keep the saved location).

Files of the earlier ``eager.save`` format (NumPy ``.npz`` with a JSON structure entry)
are still read.  A text file, a raw ``.npy``, a safetensors file, a TorchScript archive or
PyTorch's legacy (pre-1.6) format raise an error saying what the file is.
"""

from __future__ import annotations

import _compat_pickle
import contextlib
import importlib
import io
import json
import os
import pickle
import struct
import sys
import uuid
import zipfile
from collections import Counter, OrderedDict

import numpy as np

from . import cuda
from . import dtypes as _dt
from .nn.parameter import Parameter
from .tensor import Size, Tensor, device, host

__all__ = ["DEFAULT_PROTOCOL", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "load", "safe_globals", "save"]

DEFAULT_PROTOCOL = 2
_ALIGN = 64

# numpy dtype <-> the name of PyTorch's typed storage class and dtype global
_TORCH_NAMES = [  # (numpy dtype, storage class name, torch dtype name)
    (np.dtype(np.float32), "FloatStorage", "float32"),
    (np.dtype(np.float64), "DoubleStorage", "float64"),
    (np.dtype(np.float16), "HalfStorage", "float16"),
    (np.dtype(_dt.BF16_NP), "BFloat16Storage", "bfloat16"),
    (np.dtype(np.int64), "LongStorage", "int64"),
    (np.dtype(np.int32), "IntStorage", "int32"),
    (np.dtype(np.int16), "ShortStorage", "int16"),
    (np.dtype(np.int8), "CharStorage", "int8"),
    (np.dtype(np.uint8), "ByteStorage", "uint8"),
    (np.dtype(np.bool_), "BoolStorage", "bool"),
]
_STORAGE_OF = {npd: s for npd, s, _ in _TORCH_NAMES}
_TORCH_DTYPE_OF = {npd: n for npd, _, n in _TORCH_NAMES}
_UNSUPPORTED_STORAGES = {"ComplexFloatStorage": "complex64", "ComplexDoubleStorage":
                         "complex128", "QInt8Storage": "qint8", "QUInt8Storage": "quint8",
                         "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2",
                         "QUInt2x4Storage": "quint2x4"}


# ======================================================================================
# save
# ======================================================================================

class _Global:
    """A global written by name (``GLOBAL module name``) without importing it: lets us
    write ``torch._utils._rebuild_tensor_v2`` with no torch installed."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    def __call__(self, *args):  # pickle requires reduce callables to be callable
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = _Global("collections", "OrderedDict")
_TORCH_SIZE = _Global("torch", "Size")
_TORCH_DEVICE = _Global("torch", "device")


class _StorageRef:
    __slots__ = ("key", "storage_type", "location", "numel")

    def __init__(self, key, storage_type, location, numel):
        self.key = key
        self.storage_type = storage_type
        self.location = location
        self.numel = numel


class _Pickler(pickle._Pickler):
    """The pure-Python pickler with PyTorch's reductions for tensors, parameters, dtypes,
    ``Size`` and ``device``, storages as persistent ids."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages: dict = {}   # key -> contiguous ndarray (its bytes go to data/<key>)
        self._by_root: dict = {}   # id(root array) -> (key, root)
        self._keep: list = []      # arrays whose id() must stay unique while pickling

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n"
                   + obj.name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def _save_dtype(self, obj):
        name = _TORCH_DTYPE_OF.get(np.dtype(obj.np))
        if name is None:
            raise pickle.PicklingError(f"eager.save: dtype {obj} has no PyTorch name")
        self.save(_Global("torch", name))

    dispatch[_dt.DType] = _save_dtype

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return ("storage", _Global("torch", obj.storage_type), obj.key, obj.location,
                    obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                return (_REBUILD_PARAMETER, (obj.detach(), bool(obj.requires_grad),
                                             OrderedDict()))
            return self._reduce_tensor(obj)
        if isinstance(obj, Size):
            return (_TORCH_SIZE, (tuple(int(s) for s in obj),))
        if isinstance(obj, device):
            return (_TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        if type(obj) is OrderedDict:  # PyTorch's form: GLOBAL, (), REDUCE, then SETITEMS
            return (_ORDERED_DICT, (), None, None, iter(obj.items()))
        return NotImplemented

    def _reduce_tensor(self, t: Tensor):
        data = t._data
        on_host = type(data) is np.ndarray
        arr = data if on_host else host(data)
        dev = t.device
        location = "cpu" if dev.type == "cpu" else str(dev if dev.index is not None
                                                       else device(dev.type, 0))
        stype = _STORAGE_OF.get(arr.dtype)
        if stype is None:
            raise pickle.PicklingError(f"eager.save: cannot store a tensor of dtype {arr.dtype}")
        key, offset, strides, numel = self._storage(arr)
        ref = _StorageRef(key, stype, location, numel)
        return (_REBUILD_TENSOR, (ref, offset, tuple(int(s) for s in arr.shape), strides,
                                  bool(t.requires_grad), OrderedDict()))

    def _storage(self, arr: np.ndarray):
        """(key, element offset, element strides, storage numel) for ``arr``: views of one
        array share its storage when their layout can be told in elements."""
        item = arr.dtype.itemsize
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        usable = (root is not arr and root.dtype == arr.dtype and root.flags.c_contiguous
                  and all(s >= 0 and s % item == 0 for s in arr.strides) and arr.size > 0)
        if usable:
            off = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            usable = off >= 0 and off % item == 0
        if not usable:
            root = arr if arr.flags.c_contiguous else np.array(arr, order="C")
            off = 0
            if root.size:
                strides = tuple(s // item for s in root.strides)
            else:
                strides = _contiguous_strides(root.shape)
        else:
            strides = tuple(s // item for s in arr.strides)
        entry = self._by_root.get(id(root))
        if entry is None:
            key = str(len(self.storages))
            self._by_root[id(root)] = (key, root)
            self._keep.append(root)
            self.storages[key] = root
        else:
            key = entry[0]
        return key, off // item, strides, int(root.size)


def _contiguous_strides(shape) -> tuple:
    out, acc = [], 1
    for s in reversed(tuple(shape)):
        out.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(out))


def _zip_write(zf: zipfile.ZipFile, name: str, data, align: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o600 << 16
    if align:
        try:
            start = zf.fp.tell()
        except (OSError, AttributeError):
            start = None
        if start is not None:
            pad = (-(start + 30 + len(name.encode("utf-8")) + 4)) % _ALIGN
            info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    with zf.open(info, "w") as out:
        out.write(memoryview(data).cast("B") if not isinstance(data, bytes) else data)


def save(obj, f, pickle_module=pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to ``f`` (a path or a binary file object) in PyTorch's checkpoint format.

    Args:
        obj: a tensor, a state dict, an optimizer state, nested dicts/lists/tuples of them
            and Python numbers/strings -- or any picklable object (a whole ``nn.Module``),
            which then loads only with ``weights_only=False``.
        f: a path (``str``/``os.PathLike``) or a writable binary file object.
        pickle_protocol: the pickle protocol of ``data.pkl`` (PyTorch's default, 2).

    Example::

        >>> eager.save(model.state_dict(), "model.pt")
        >>> torch.load("model.pt", weights_only=True)   # in PyTorch, too
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("eager.save writes PyTorch's zip format only "
                                  "(_use_new_zipfile_serialization=False is not supported)")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    try:
        pickler.dump(obj)
    except RecursionError:
        raise pickle.PicklingError("eager.save: the object is nested too deeply to "
                                   "pickle") from None
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write_archive(fh, buf.getvalue(), pickler.storages, _disable_byteorder_record)
    else:
        _write_archive(f, buf.getvalue(), pickler.storages, _disable_byteorder_record)


def _write_archive(fh, pkl: bytes, storages: dict, no_byteorder: bool) -> None:
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
        _zip_write(zf, "archive/data.pkl", pkl)
        _zip_write(zf, "archive/.format_version", b"1")
        _zip_write(zf, "archive/.storage_alignment", str(_ALIGN).encode())
        if not no_byteorder:
            _zip_write(zf, "archive/byteorder", sys.byteorder.encode())
        for key, arr in storages.items():
            a = np.ascontiguousarray(arr)
            if a.dtype.byteorder == ">":  # pragma: no cover (big-endian hosts)
                a = a.astype(a.dtype.newbyteorder("<"))
            _zip_write(zf, f"archive/data/{key}", a.reshape(-1).view(np.uint8), align=True)
        _zip_write(zf, "archive/version", b"3\n")
        _zip_write(zf, "archive/.data/serialization_id",
                   (uuid.uuid4().hex + uuid.uuid4().hex)[:40].encode())


# ======================================================================================
# safe globals (PyTorch's torch.serialization API)
# ======================================================================================

_USER_SAFE: dict = {}
_CONTEXT_SAFE: list = []


def _global_name(obj) -> tuple:
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], str):
        return obj[1], obj[0]
    mod = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if mod is None or name is None:
        raise TypeError(f"add_safe_globals: {obj!r} has no __module__/__qualname__; pass "
                        "(obj, 'module.name')")
    return f"{mod}.{name}", obj


def add_safe_globals(safe_globals) -> None:
    """Allow these classes/functions in ``weights_only=True`` loads (each an object, or an
    ``(object, "module.name")`` pair for the name the checkpoint uses)."""
    for g in safe_globals:
        name, obj = _global_name(g)
        _USER_SAFE[name] = obj


def get_safe_globals() -> list:
    """The user-added safe globals."""
    return list(_USER_SAFE.values())


def clear_safe_globals() -> None:
    """Forget the user-added safe globals."""
    _USER_SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """``with safe_globals([cls]):`` allows ``cls`` in ``weights_only`` loads inside."""
    entries = dict(_global_name(g) for g in safe_globals)
    _CONTEXT_SAFE.append(entries)
    try:
        yield
    finally:
        _CONTEXT_SAFE.remove(entries)


def _user_safe(full: str):
    for entries in reversed(_CONTEXT_SAFE):
        if full in entries:
            return entries[full]
    return _USER_SAFE.get(full)


# ======================================================================================
# load
# ======================================================================================

class _PassThrough(Exception):
    """Errors of the caller's making (device, map_location), raised as they are."""


class _DeviceError(_PassThrough, RuntimeError):
    pass


class _MapLocationError(_PassThrough, TypeError):
    pass


class UntypedStorage:
    """A storage read from a checkpoint (what a ``map_location`` callable receives):
    ``.device``, ``.cpu()``, ``.cuda(i)``, ``.to(device)``, ``nbytes()``, ``size()``."""

    __slots__ = ("array", "dtype", "device")

    def __init__(self, array: np.ndarray, dtype, dev: str):
        self.array = array
        self.dtype = dtype
        self.device = dev

    def _moved(self, dev: str):
        return UntypedStorage(self.array, self.dtype, dev)

    def cpu(self):
        return self._moved("cpu")

    def cuda(self, index=None):
        return self._moved("cuda" if index is None else f"cuda:{int(index)}")

    def to(self, dev):
        return self._moved(str(dev))

    def nbytes(self) -> int:
        return int(self.array.nbytes)

    def size(self) -> int:
        return int(self.array.size)

    def __len__(self):
        return int(self.array.size)

    def __repr__(self):
        return f"<storage of {self.array.size} {self.array.dtype} on {self.device}>"


class _StorageType:
    """What the global ``torch.FloatStorage`` (etc.) unpickles to."""

    __slots__ = ("name", "np")

    def __init__(self, name, npd):
        self.name = name
        self.np = npd

    def __call__(self, *args, **kwargs):
        raise pickle.UnpicklingError(f"eager.load: the checkpoint calls torch.{self.name} "
                                     "directly, which a checkpoint never needs")


def _err(msg: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError("eager.load: " + msg)


def _int_tuple(v, what: str) -> tuple:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list, Size)) or len(v) > 64 or \
            not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in v):
        raise _err(f"malformed tensor record: {what} must be a tuple of ints, got {v!r:.80}")
    return tuple(int(s) for s in v)


class _Loader:
    def __init__(self, zf, prefix, map_location, weights_only, name):
        self.zf = zf
        self.prefix = prefix
        self.map_location = map_location
        self.weights_only = weights_only
        self.name = name
        self.storages: dict = {}

    # -- storages ------------------------------------------------------------------
    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage":
            raise _err(f"unsupported persistent id {pid!r:.100} in data.pkl (expected "
                       "('storage', type, key, location, numel))")
        _, stype, key, location, numel = pid
        if not isinstance(stype, _StorageType):
            raise _err(f"malformed storage record: {stype!r:.80} is not a storage type")
        if not isinstance(key, str) or not isinstance(location, str) or \
                not isinstance(numel, int) or numel < 0:
            raise _err(f"malformed storage record {pid!r:.100}")
        cached = self.storages.get(key)
        if cached is not None:
            return cached
        if stype.np is None:
            raise _err(f"storage '{key}' holds {_UNSUPPORTED_STORAGES.get(stype.name, stype.name)}"
                       " data, which eager does not support")
        entry = f"{self.prefix}/data/{key}"
        try:
            info = self.zf.getinfo(entry)
        except KeyError:
            raise _err(f"data.pkl refers to storage '{key}', but the archive has no entry "
                       f"{entry} (a truncated or crafted checkpoint)") from None
        need = numel * stype.np.itemsize
        if info.file_size < need:
            raise _err(f"storage '{key}' should hold {numel} elements ({need} bytes) but "
                       f"{entry} has {info.file_size} bytes (a truncated or crafted "
                       "checkpoint)")
        raw = self.zf.read(entry)[:need]
        arr = np.frombuffer(raw, dtype=stype.np.newbyteorder("<") if stype.np.itemsize > 1
                            else stype.np, count=numel)
        if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "<" and sys.byteorder != "little"):
            arr = arr.astype(stype.np)  # pragma: no cover (big-endian hosts)
        st = UntypedStorage(arr, stype.np, self._target(location, arr, stype.np))
        self.storages[key] = st
        return st

    def _target(self, location: str, arr, npd) -> str:
        ml = self.map_location
        if ml is None:
            dev = location
        elif isinstance(ml, (str, device)) or hasattr(ml, "type") and not callable(ml):
            dev = str(ml)
        elif isinstance(ml, dict):
            dev = location
            for k, v in ml.items():
                if str(k) == location:
                    dev = str(v)
                    break
        elif callable(ml):
            res = ml(UntypedStorage(arr, npd, location), location)
            if res is None:
                dev = location
            elif isinstance(res, UntypedStorage):
                dev = res.device
            elif isinstance(res, (str, device)):
                dev = str(res)
            else:
                raise _MapLocationError(f"eager.load: map_location returned {type(res).__name__}; "
                                "expected the storage it was given (storage.cpu(), "
                                "storage.cuda(i)) or None")
        else:
            raise _MapLocationError(f"eager.load: map_location must be None, a str, a device, "
                                    f"a dict or a callable, not {type(ml).__name__}")
        return _check_device(dev)

    # -- tensor rebuilding -----------------------------------------------------------
    def rebuild_tensor(self, storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
        return self._tensor(storage, storage_offset, size, stride, requires_grad, None)

    def rebuild_tensor_v1(self, storage, storage_offset, size, stride):
        return self._tensor(storage, storage_offset, size, stride, False, None)

    def rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, dtype, metadata=None):
        return self._tensor(storage, storage_offset, size, stride, requires_grad, dtype)

    def _tensor(self, storage, offset, size, stride, requires_grad, dtype):
        if not isinstance(storage, UntypedStorage):
            raise _err(f"malformed tensor record: {type(storage).__name__} where a storage "
                       "was expected")
        size = _int_tuple(size, "size")
        stride = _int_tuple(stride, "stride")
        if not isinstance(offset, int) or offset < 0:
            raise _err(f"malformed tensor record: storage offset {offset!r:.40}")
        if len(size) != len(stride) or any(s < 0 for s in size) or any(s < 0 for s in stride):
            raise _err(f"malformed tensor record: size {list(size)} with stride {list(stride)}")
        arr = storage.array
        if dtype is not None:
            npd = np.dtype(_dt.to_numpy(dtype))
            if arr.dtype != npd:
                if arr.nbytes % npd.itemsize:
                    raise _err(f"a storage of {arr.nbytes} bytes cannot hold {npd} elements")
                arr = arr.view(npd)
        numel = 1
        for s in size:
            numel *= s
        if numel == 0:
            out = np.empty(size, dtype=arr.dtype)
        else:
            last = offset + sum((n - 1) * st for n, st in zip(size, stride))
            if last >= arr.size:
                raise _err(f"a tensor of size {list(size)} with stride {list(stride)} at "
                           f"offset {offset} reaches element {last}, but its storage holds "
                           f"{arr.size} (a truncated or crafted checkpoint)")
            item = arr.dtype.itemsize
            view = np.lib.stride_tricks.as_strided(arr[offset:], shape=size,
                                                   strides=tuple(s * item for s in stride))
            if numel <= arr.size - offset and _no_overlap(size, stride):
                out = np.array(view, order="C")
            else:  # an expanded tensor: a read-only view of a private copy of its storage
                region = arr[offset:last + 1].copy()
                out = np.lib.stride_tricks.as_strided(region, shape=size, strides=view.strides,
                                                      writeable=False)
        t = Tensor._make(out)
        if storage.device != "cpu":
            t = t.to(storage.device)
        if requires_grad:
            if not (_dt.is_float(out.dtype)):
                raise _err(f"a tensor of dtype {out.dtype} is marked requires_grad")
            t.requires_grad_(True)
        return t

    def rebuild_parameter(self, data, requires_grad=True, backward_hooks=None, state=None):
        if not isinstance(data, Tensor):
            raise _err(f"malformed parameter record: {type(data).__name__} where a tensor was "
                       "expected")
        p = Parameter(data.detach(), bool(requires_grad))
        if state and not self.weights_only:
            _set_state(p, state)
        return p

    def rebuild_from_type_v2(self, func, new_type, args, state):
        if not callable(func) or not isinstance(args, tuple):
            raise _err("malformed _rebuild_from_type_v2 record")
        ret = func(*args)
        if new_type is _PARAMETER_TYPE or new_type is Parameter:
            if not isinstance(ret, Parameter):
                ret = Parameter(ret.detach(), bool(ret.requires_grad))
        elif new_type is not _TENSOR_TYPE and new_type is not Tensor:
            if self.weights_only:
                raise _err(f"tensor subclass {new_type!r:.80} is not allowed with "
                           "weights_only=True")
            if isinstance(new_type, type) and issubclass(new_type, Tensor):
                ret = new_type(ret) if new_type is not type(ret) else ret
        if state and not self.weights_only:
            _set_state(ret, state)
        return ret

    def rebuild_meta(self, dtype, size, stride, requires_grad):
        raise _err("the checkpoint holds tensors on the 'meta' device, which eager does not "
                   "support")

    def rebuild_unsupported(self, *args, **kwargs):
        raise _err("the checkpoint holds sparse, quantized, nested or wrapper-subclass "
                   "tensors, which eager.load does not read")


def _no_overlap(size, stride) -> bool:
    """True when distinct indices reach distinct elements (a permuted dense layout)."""
    dims = sorted((st, n) for n, st in zip(size, stride) if n > 1)
    span = 1
    for st, n in dims:
        if st < span:
            return False
        span = st * n
    return True


def _set_state(obj, state):
    if isinstance(state, tuple) and len(state) == 2:
        state = {**(state[0] or {}), **(state[1] or {})}
    if isinstance(state, dict):
        for k, v in state.items():
            if isinstance(k, str):
                setattr(obj, k, v)


def _check_device(dev: str) -> str:
    kind = dev.partition(":")[0]
    if kind == "cpu":
        return "cpu"
    if kind == "cuda":
        if not cuda.is_available():
            raise _DeviceError("Attempting to deserialize object on a CUDA device but "
                               "eager.cuda.is_available() is False. If you are running on a "
                               "CPU-only machine, please use eager.load with "
                               "map_location=eager.device('cpu') to map your storages to the "
                               "CPU.")
        return dev
    raise _DeviceError(f"eager.load: cannot place a storage on device '{dev}' (eager has "
                       "'cpu' and 'cuda'); pass map_location='cpu'")


_TENSOR_TYPE = object()
_PARAMETER_TYPE = object()


def _safe_encode(obj, encoding="latin1"):
    """``_codecs.encode`` as protocol 2 uses it for ``bytes``: latin-1 of a str only."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise _err("_codecs.encode is allowed only as pickle protocol 2 uses it for bytes")
    return obj.encode("latin1")


def _safe_bytearray(*args):
    if args and isinstance(args[0], (int, np.integer)):
        raise _err("bytearray(<int>) is not allowed in a checkpoint")
    return bytearray(*args)


def _torch_device(*args):
    try:
        return device(*args)
    except (RuntimeError, TypeError, ValueError):
        if args and isinstance(args[0], str):
            return args[0] if len(args) == 1 else f"{args[0]}:{args[1]}"
        raise _err(f"malformed torch.device record {args!r:.80}") from None


def _torch_size(*args):
    if len(args) != 1:
        raise _err("malformed torch.Size record")
    return Size(_int_tuple(args[0], "Size"))


def _np_reconstruct(subtype, shape, dtype):
    if subtype is not np.ndarray:
        raise _err("numpy _reconstruct of a subclass is not allowed in a checkpoint")
    try:
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # NumPy 1.x
        from numpy.core.multiarray import _reconstruct
    return _reconstruct(subtype, shape, dtype)


def _np_scalar(dtype, data=None):
    if not isinstance(dtype, np.dtype) or dtype.hasobject:
        raise _err("malformed numpy scalar record")
    return np.frombuffer(data, dtype=dtype, count=1)[0] if data is not None else dtype.type()


def _np_dtype(spec, align=False, copy=False):
    """``numpy.dtype`` for pickles: numeric and bool dtypes only (no object dtype)."""
    d = np.dtype(spec)
    if d.hasobject or d.kind not in "biufcV" or d.fields is not None:
        raise _err(f"numpy dtype {spec!r:.40} is not allowed in a checkpoint")
    return d


def _layout(name):
    return name


def _allowed(loader: _Loader) -> dict:
    out = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "builtins.set": set,
        "builtins.frozenset": frozenset,
        "builtins.bytearray": _safe_bytearray,
        "builtins.complex": complex,
        "_codecs.encode": _safe_encode,
        "torch.Size": _torch_size,
        "torch.device": _torch_device,
        "torch.Tensor": _TENSOR_TYPE,
        "torch._tensor.Tensor": _TENSOR_TYPE,
        "torch.nn.parameter.Parameter": _PARAMETER_TYPE,
        "torch.serialization._get_layout": _layout,
        "torch._utils._rebuild_tensor": loader.rebuild_tensor_v1,
        "torch._utils._rebuild_tensor_v2": loader.rebuild_tensor,
        "torch._utils._rebuild_tensor_v3": loader.rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": loader.rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": loader.rebuild_parameter,
        "torch._tensor._rebuild_from_type_v2": loader.rebuild_from_type_v2,
        "torch._utils._rebuild_meta_tensor_no_storage": loader.rebuild_meta,
        "torch.storage.UntypedStorage": _StorageType("UntypedStorage", np.dtype(np.uint8)),
        "torch.UntypedStorage": _StorageType("UntypedStorage", np.dtype(np.uint8)),
    }
    for f in ("_rebuild_sparse_tensor", "_rebuild_nested_tensor", "_rebuild_qtensor",
              "_rebuild_wrapper_subclass", "_rebuild_device_tensor_from_numpy",
              "_rebuild_device_tensor_from_cpu_tensor"):
        out[f"torch._utils.{f}"] = loader.rebuild_unsupported
    for npd, sname, dname in _TORCH_NAMES:
        out[f"torch.{sname}"] = _StorageType(sname, npd)
        out[f"torch.{dname}"] = _dt.from_numpy(npd)
    for alias, dname in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                         ("long", "int64"), ("int", "int32"), ("short", "int16")):
        out[f"torch.{alias}"] = out[f"torch.{dname}"]
    # NumPy arrays, dtypes and scalars (PyTorch asks for add_safe_globals for these; they
    # run no code of the file's choosing, so they are allowed here)
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        out[f"{mod}._reconstruct"] = _np_reconstruct
        out[f"{mod}.scalar"] = _np_scalar
    out["numpy.ndarray"] = np.ndarray
    out["numpy.dtype"] = _np_dtype
    bf16 = _dt.BF16_NP.type  # ml_dtypes' bfloat16: the scalar type of a bfloat16 dtype
    for mod in {"ml_dtypes", bf16.__module__}:
        out[f"{mod}.bfloat16"] = bf16
    for sname in _UNSUPPORTED_STORAGES:
        out[f"torch.{sname}"] = _StorageType(sname, None)
    return out


def _weights_only_message(full: str) -> str:
    short = full.rsplit(".", 1)[-1]
    return (f"Weights only load failed. eager.load uses weights_only=True by default (as "
            f"PyTorch since 2.6): the checkpoint's pickle names the global {full}, which is "
            f"not an allowed global by default. If you trust this class/function, allow it "
            f"with eager.serialization.add_safe_globals([{short}]) or the "
            f"eager.serialization.safe_globals([{short}]) context manager; or, if you trust "
            f"the source of the file, load it with weights_only=False (which can run "
            f"arbitrary code).")


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, loader: _Loader, **kwargs):
        super().__init__(file, **kwargs)
        self.loader = loader
        self.allowed = _allowed(loader)

    def find_class(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # protocol 2's Python 2 names
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        else:
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        obj = self.allowed.get(full)
        if obj is not None:
            return obj
        user = _user_safe(full)
        if user is not None:
            return user
        if self.loader.weights_only:
            raise pickle.UnpicklingError(_weights_only_message(full))
        if module == "torch" or module.startswith("torch."):
            mapped = _eager_equivalent(module, name)
            if mapped is not None:
                return mapped
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self.loader.persistent_load(pid)


def _eager_equivalent(module: str, name: str):
    """``torch.nn.modules.linear.Linear`` -> ``eager.nn.modules.linear.Linear`` (or
    ``eager.nn.Linear``) for full-object checkpoints loaded with weights_only=False."""
    candidates = ["eager" + module[len("torch"):]]
    if module.startswith("torch.nn"):
        candidates.append("eager.nn")
    candidates.append("eager")
    for cand in candidates:
        try:
            mod = importlib.import_module(cand)
        except ImportError:
            continue
        obj = getattr(mod, name, None)
        if obj is not None:
            return obj
    return None


def _read_all(f) -> tuple:
    """(bytes-like file object positioned at 0, display name)."""
    if isinstance(f, (str, os.PathLike)):
        name = os.fspath(f)
        return open(name, "rb"), name  # noqa: SIM115 (closed by the caller)
    name = getattr(f, "name", None) or type(f).__name__
    if not hasattr(f, "read"):
        raise TypeError(f"eager.load: expected a path or a binary file object, got "
                        f"{type(f).__name__}")
    try:
        f.seek(f.tell())
        seekable = True
    except (AttributeError, OSError, io.UnsupportedOperation):
        seekable = False
    if not seekable:
        f = io.BytesIO(f.read())
    return f, str(name)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved by :func:`save` or by ``torch.save``.

    Args:
        f: a path or a readable binary file object.
        map_location: where tensors go: ``None`` (their saved device), ``"cpu"``, a
            ``device``, a dict mapping saved locations to targets, or a callable
            ``f(storage, location)`` (see the module docstring).
        weights_only (bool): ``True`` by default: only tensors, containers, numbers,
            strings and the allow-listed globals load; a pickle naming anything else
            raises ``pickle.UnpicklingError`` without running it.  ``False`` unpickles
            anything (whole modules): only for files you trust.
        mmap: accepted for PyTorch compatibility (files are read into memory).

    Returns:
        the saved object, tensors as eager Tensors (``Parameter`` and ``requires_grad``
        kept).

    Example::

        >>> state = eager.load("resnet18.pth")          # written by torch.save
        >>> model.load_state_dict(state)
    """
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") in ("0", "")
    if pickle_module is not None and weights_only and pickle_module is not pickle:
        raise RuntimeError("eager.load: pickle_module cannot be given with weights_only=True")
    fh, name = _read_all(f)
    close = isinstance(f, (str, os.PathLike))
    try:
        start = fh.tell()
        head = fh.read(16)
        fh.seek(start)
        kind = _sniff(head)
        if kind == "zip":
            return _load_zip(fh, name, map_location, weights_only, pickle_load_args)
        raise _not_a_checkpoint(kind, head, name)
    finally:
        if close:
            fh.close()


def _sniff(head: bytes) -> str:
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if not head:
        return "empty"
    if head[:6] == b"\x93NUMPY":
        return "npy"
    if head[:2] == b"\x80\x02" and b"\x8a\x0a" in head[:4]:
        return "legacy"
    if head[:1] == b"\x80":
        return "pickle"
    if len(head) >= 9 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] < 100_000_000:
        return "safetensors"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return "unknown"
    return "text" if all(c.isprintable() or c in "\r\n\t" for c in text) else "unknown"


_EXPECTED = ("eager.load reads checkpoints written by eager.save or torch.save (a zip archive "
             "with a data.pkl entry)")


def _not_a_checkpoint(kind: str, head: bytes, name: str) -> Exception:
    what = {
        "empty": "is empty",
        "npy": "is a raw NumPy .npy array file (read it with numpy.load and wrap the array with "
               "eager.from_numpy)",
        "legacy": "is in PyTorch's legacy pre-1.6 format (_use_new_zipfile_serialization="
                  "False), which eager.load does not read; re-save it with torch.save's default",
        "pickle": "is a plain pickle, not a checkpoint archive (read it with pickle.load if "
                  "you trust it)",
        "safetensors": "is a safetensors file (read it with "
                       "eager.utils.safetensors.load_file)",
        "text": f"is a text file (it starts with {head.decode('utf-8', 'replace')!r})",
        "unknown": f"is not a checkpoint (it starts with the bytes {head[:8]!r})",
    }[kind]
    return pickle.UnpicklingError(f"eager.load: {name} {what}; {_EXPECTED}.")


def _load_zip(fh, name, map_location, weights_only, pickle_load_args):
    try:
        zf = zipfile.ZipFile(fh)
    except zipfile.BadZipFile as e:
        raise pickle.UnpicklingError(f"eager.load: {name} starts like a zip archive but is "
                                     f"not a readable one ({e}); {_EXPECTED}.") from None
    with zf:
        names = zf.namelist()
        pkls = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
        if not pkls and "data.pkl" in names:
            pkls = ["data.pkl"]
        if not pkls:
            if "__structure__.npy" in names:
                fh.seek(0)
                return _load_npz(fh)
            if any(n.endswith("constants.pkl") or "/code/" in n for n in names):
                raise pickle.UnpicklingError(f"eager.load: {name} is a TorchScript archive "
                                             "(torch.jit.save), which eager cannot run; save "
                                             "the model's state_dict() with torch.save "
                                             "instead.")
            if names and all(n.endswith(".npy") for n in names):
                raise pickle.UnpicklingError(f"eager.load: {name} is a NumPy .npz archive "
                                             "(read it with numpy.load); " + _EXPECTED + ".")
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise pickle.UnpicklingError(f"eager.load: {name} is a zip archive without a "
                                         f"data.pkl entry (entries: {shown}); {_EXPECTED}.")
        pkl_name = pkls[0]
        prefix = pkl_name.rpartition("/")[0]
        if prefix:
            bo = f"{prefix}/byteorder"
            if bo in names:
                order = zf.read(bo).decode("ascii", "replace").strip()
                if order not in ("little", "big"):
                    raise _err(f"unknown byteorder record {order!r:.20}")
                if order != "little":
                    raise _err("big-endian checkpoints are not supported")
        loader = _Loader(zf, prefix, map_location, weights_only, name)
        data = zf.read(pkl_name)
        unpickler = _Unpickler(io.BytesIO(data), loader, **pickle_load_args)
        try:
            return unpickler.load()
        except (pickle.UnpicklingError, _PassThrough):
            raise
        except RecursionError:
            raise _err(f"{name}: the checkpoint's data.pkl nests too deeply (crafted or "
                       "corrupt)") from None
        except MemoryError:
            raise _err(f"{name}: the checkpoint's data.pkl asks for more memory than is "
                       "available (crafted or corrupt)") from None
        except Exception as e:
            raise _err(f"{name}: malformed data.pkl ({type(e).__name__}: {e})") from e


# -- the earlier eager.save format (.npz + JSON structure) ----------------------------

_FORMAT = "eager.save/1"
_STRUCT = "__structure__"


def _loaded(arr, entry: dict):
    return arr.view(_dt.BF16_NP) if entry.get("dtype") == "bfloat16" else arr


def _load_npz(f):
    with np.load(f, allow_pickle=False) as npz:
        structure = json.loads(npz[_STRUCT].tobytes().decode("utf-8"))
        if structure.get("format") != _FORMAT:
            raise RuntimeError(f"eager.load: unknown format {structure.get('format')!r}")
        data = {k: npz[k] for k in npz.files if k != _STRUCT}
    tensors: dict = {}

    def dec(x):
        if isinstance(x, list):
            return [dec(v) for v in x]
        if not isinstance(x, dict):
            return x
        kind = x["$"]
        if kind == "tensor":
            key = x["key"]
            t = tensors.get(key)
            if t is None:
                arr = _loaded(data[key], x)
                if x.get("parameter"):
                    t = Parameter(Tensor._make(arr), bool(x.get("requires_grad")))
                else:
                    t = Tensor._make(arr)
                    if x.get("requires_grad"):
                        t.requires_grad_(True)
                tensors[key] = t
            return t
        if kind == "ndarray":
            return _loaded(data[x["key"]], x)
        if kind == "float":
            return float(x["v"])
        if kind in ("dict", "odict"):
            items = [(dec_key(k), dec(v)) for k, v in x["items"]]
            return OrderedDict(items) if kind == "odict" else dict(items)
        if kind == "tuple":
            return tuple(dec(v) for v in x["items"])
        if kind == "dtype":
            return _dt.from_name(x["name"])
        raise RuntimeError(f"eager.load: unknown entry kind {kind!r}")

    def dec_key(k):
        v = dec(k)
        return tuple(v) if isinstance(v, list) else v

    try:
        return dec(structure["root"])
    except (KeyError, TypeError, RecursionError) as e:
        raise pickle.UnpicklingError(f"eager.load: malformed eager.save/1 structure "
                                     f"({type(e).__name__}: {e})") from None
