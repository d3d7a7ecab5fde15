"""Devices: where tensors live and how kernels run there.

A :class:`Device` owns everything device-specific: storage (allocation, host<->device
copies, the array type), the kernel templates and the table of scalar math names its
kernels call, how a generated kernel module is compiled and launched, and what its
kernels can fuse.  Ops own everything op-specific (their maths, dtype rule and scalar
expression), so a device differs from another only by this object.

Devices are found by type name (``"cpu"``, ``"cuda"``) with :func:`get`, or from a
tensor's storage with :func:`of`.  The name is the convention: every package
``runtime/<type>/`` is a device, and its ``DEVICE`` attribute is that device, imported on
first use (importing this module imports no device library, so the CPU never needs
``numba-cuda``).  Eager's table of what each op does there is ``eager/<type>/ops.py``
(:func:`eager.dispatch.implementation`), its compiled backend
``compiler/codegen/numba_<type>.py``: docs/ARCHITECTURE-devices.md lists a device's files.
"""

from __future__ import annotations

import importlib
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_TYPES: tuple = ()
_LOADED: dict = {}
_BY_STORAGE: dict = {}


class Device:
    """The device protocol.  Subclasses set the attributes and implement the methods.

    Attributes
    ----------
    type : str
        ``"cpu"`` or ``"cuda"``, PyTorch's device type names.
    storage_types : tuple
        The array types holding this device's tensors (``np.ndarray`` on the CPU).
    dtypes : frozenset
        NumPy dtypes its fused kernels compute in.
    math : dict
        Scalar math name (``"exp"``, ``"tanh"``, ``"floor"``...) -> a format string of
        one argument (``"mathlib.tanh({0})"``), or a dict from NumPy dtype char to one.
        Ops write ``S.fn("tanh", x, dtype)``; a name the table lacks cannot fuse.
    reductions : frozenset
        Reduction op names a kernel can fold after an elementwise prologue.
    singleton_min : int
        A lone elementwise node smaller than this is not worth its own kernel (the
        device's own array library does it as well); 0 when every op is a kernel.
    lone_reduce_min : int
        A reduction that no group computes the input of becomes a kernel of its own from
        this many input elements (a reduction's kernel is faster than the array library's
        call from there); by default never.
    """

    type = "?"
    storage_types: tuple = ()
    dtypes: frozenset = frozenset()
    math: dict = {}
    reductions: frozenset = frozenset()
    singleton_min = 0
    lone_reduce_min = 1 << 62

    # -- availability and storage ---------------------------------------------------
    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    def empty(self, shape: tuple, dtype: np.dtype):
        """Uninitialized storage of ``shape`` and ``dtype`` on this device."""
        raise NotImplementedError

    def from_host(self, array: np.ndarray):
        """A copy of a NumPy array on this device."""
        raise NotImplementedError

    def to_host(self, storage) -> np.ndarray:
        """A NumPy array with the values of ``storage`` (the array itself on the CPU)."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait for the work queued on this device."""

    def allocator_stats(self) -> dict:
        """The caching allocator's counters (empty for a device without one)."""
        return {}

    def from_interface(self, obj):
        """Storage sharing memory with ``obj``, another library's array on this device
        (``__cuda_array_interface__`` for CUDA)."""
        raise NotImplementedError(f"the {self.type} device cannot wrap another library's "
                                  "array")

    # -- kernels (what codegen asks of a device) ---------------------------------------
    def load(self, source: str):
        """The module defined by generated kernel ``source`` (compiled, cached)."""
        raise NotImplementedError

    @property
    def templates(self):
        """The module of loop templates and reduction helpers that generated kernels call
        (:mod:`runtime.cpu.loops`); None for a device whose kernels are self-contained."""
        return None

    def grid(self, n: int, threads: int | None = None) -> tuple:
        """``(blocks, threads)`` covering ``n`` elements, for :meth:`launch`."""
        raise NotImplementedError(f"the {self.type} device launches no kernel grids")

    def launch(self, module, name: str, blocks: int, threads: int, args: list) -> None:
        """Run kernel ``name`` of a module from :meth:`load` on ``blocks`` x ``threads``
        (devices whose kernels are called like functions, the CPU, do not need it)."""
        raise NotImplementedError(f"the {self.type} device launches no kernel grids")

    def __repr__(self) -> str:
        return f"<device {self.type}>"


def types() -> tuple:
    """The device type names: the packages in ``runtime/`` (the CPU first, as PyTorch lists
    them), found without importing any."""
    global _TYPES
    if not _TYPES:
        found = sorted(n for n in os.listdir(_HERE)
                       if os.path.isfile(os.path.join(_HERE, n, "__init__.py")))
        _TYPES = tuple(sorted(found, key=lambda n: n != "cpu"))
    return _TYPES


def get(type_name: str) -> Device:
    """The device of a type name (``"cpu"``, ``"cuda"``; an index suffix is ignored):
    ``runtime.<type>.DEVICE``.

    Raises RuntimeError for a name that is no device (PyTorch's text for a bad device
    string), or one whose support library is not installed (CUDA needs
    ``pip install -e ".[cuda]"``)."""
    name = str(type_name).partition(":")[0]
    dev = _LOADED.get(name)
    if dev is not None:
        return dev
    if name not in types():
        raise RuntimeError(f"Expected one of {', '.join(types())} device type at start of "
                           f"device string: {type_name}")
    try:
        module = importlib.import_module(f"{__package__}.{name}")
    except ImportError as e:
        raise RuntimeError(f"the {name} device needs a package that is not installed "
                           f"({e}); for CUDA: pip install -e \".[cuda]\"") from e
    dev = getattr(module, "DEVICE", None)
    if not isinstance(dev, Device) or dev.type != name:
        raise RuntimeError(f"runtime/{name}/ defines no device: its DEVICE must be the "
                           f"runtime.device.Device of type {name!r}")
    register(dev)
    return dev


def register(dev: Device) -> None:
    _LOADED[dev.type] = dev
    for t in dev.storage_types:
        _BY_STORAGE[t] = dev


def register_storage(storage_type: type, dev) -> None:
    """Say that storage of ``storage_type`` belongs to ``dev`` without ``dev`` being a
    device of its own (vmap's batched wrapper answers for the storage it wraps)."""
    _BY_STORAGE[storage_type] = dev


def of(storage) -> Device:
    """The device that holds ``storage`` (a NumPy array: the CPU)."""
    dev = _BY_STORAGE.get(type(storage))
    if dev is None:
        if isinstance(storage, np.ndarray):
            return get("cpu")
        raise TypeError(f"{type(storage).__name__} is no tensor storage of a known device")
    return dev


def of_type(storage_type: type) -> Device:
    """The device whose storage is of ``storage_type``."""
    dev = _BY_STORAGE.get(storage_type)
    if dev is None:
        if issubclass(storage_type, np.ndarray):
            return get("cpu")
        raise TypeError(f"{storage_type.__name__} is no tensor storage of a known device")
    return dev


def loaded(type_name: str) -> bool:
    """Whether a device's package is imported already (no import is attempted)."""
    return type_name in _LOADED


def available(type_name: str) -> bool:
    """Whether tensors can be put on this device type here (library and hardware)."""
    try:
        return get(type_name).is_available()
    except RuntimeError:
        return False
