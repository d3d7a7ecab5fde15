"""The Tensor: a NumPy array plus autograd metadata.

A tensor holds its data in ``_data``: its storage, a NumPy array on the CPU device or
the device's array type elsewhere (:mod:`runtime.device` says which device holds it).  Views share
``_data``'s memory and the ``_version`` counter (a one-element list) with their base,
so an in-place op on either bumps the version that saved tensors check.

Op methods (``x.exp()``, ``x + y``, ...), ``backward`` and the printed form are bound by
:mod:`eager.methods`, the layer above; this module holds only what every tensor needs
regardless of the op set, so the engine, dispatch and ops can build on it.
"""

from __future__ import annotations

import numpy as np

from runtime import device as _runtime_device

from . import dtypes as _dt
from ._state import STATE
from .tracing import data_read as _leave


class Tensor:
    """A multi-dimensional array that records the operations applied to it.

    Create one with :func:`eager.tensor`; ops on tensors that require grad build a
    graph that :meth:`backward` walks.
    """

    __slots__ = ("_data", "requires_grad", "_grad", "grad_fn", "_version", "_base",
                 "_retains_grad", "_hooks", "_post_accumulate_hooks", "__weakref__")
    __array_priority__ = 1000  # ndarray (op) Tensor defers to Tensor's reflected op

    def __init__(self, *args, device=None):
        """PyTorch's legacy constructor: ``Tensor(data)`` copies a sequence into a tensor of
        the default dtype (float32); ``Tensor(2, 3)`` or ``Tensor(Size)`` allocates that
        shape; ``Tensor(other)`` aliases ``other``; ``Tensor()`` is empty.  Prefer
        :func:`eager.tensor`, which infers the dtype."""
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                               f"{device} was passed")
        version = [0, None]
        if not args:
            arr = np.empty((0,), np.float32)
        elif len(args) == 1 and isinstance(args[0], Tensor):
            arr, version = args[0]._data, args[0]._version
        elif all(type(a) is int for a in args) or (len(args) == 1 and isinstance(args[0], Size)):
            shape = tuple(args[0]) if isinstance(args[0], Size) else args
            if any(s < 0 for s in shape):
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"{min(shape)}: {list(shape)}")
            arr = np.zeros(shape, np.float32)
        elif len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray, str)):
            arr = _legacy_data(args[0])
        elif len(args) == 1:
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        else:
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({', '.join(type(a).__name__ for a in args)})")
        self._data = arr
        self.requires_grad = False
        self._grad = None
        self.grad_fn = None
        self._version = version
        self._base = None
        self._retains_grad = False
        self._hooks = None
        self._post_accumulate_hooks = None
        if STATE.tracer is not None and version[0] == 0 and not (
                len(args) == 1 and isinstance(args[0], Tensor)):
            STATE.tracer.on_new_tensor(self)

    # -- metadata -----------------------------------------------------------------
    @property
    def shape(self) -> "Size":
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    def nelement(self) -> int:
        return self._data.size

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def dtype(self) -> _dt.DType:
        return _dt.from_numpy(self._data.dtype)

    @property
    def device(self) -> "device":
        d = self._data
        return CPU if type(d) is np.ndarray else storage_device(d)

    @property
    def is_cuda(self) -> bool:
        return type(self._data) is not np.ndarray and storage_device(self._data).type == "cuda"

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        return _dt.is_float(self._data.dtype)

    def is_contiguous(self) -> bool:
        return self._data.flags.c_contiguous

    def stride(self, dim: int | None = None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim, "stride")]

    def data_ptr(self) -> int:
        d = self._data
        if type(d) is np.ndarray:
            return d.__array_interface__["data"][0]
        return d.__cuda_array_interface__["data"][0]

    @property
    def data(self) -> "Tensor":
        """A tensor sharing storage with this one, detached from the graph."""
        t = Tensor._make(self._data)
        t._version = self._version  # an alias, not a differentiable view: no _base
        return t

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    @property
    def _version_value(self) -> int:
        return self._version[0]

    # -- construction helpers (hot path: no __init__ checks) -----------------------
    @staticmethod
    def _make(arr: np.ndarray, requires_grad: bool = False, grad_fn=None) -> "Tensor":
        t = _new(Tensor)
        t._data = arr
        t.requires_grad = requires_grad
        t._grad = None
        t.grad_fn = grad_fn
        t._version = [0, None]
        t._base = None
        t._retains_grad = False
        t._hooks = None
        t._post_accumulate_hooks = None
        return t

    # -- autograd -------------------------------------------------------------------
    @property
    def grad(self):
        """The accumulated gradient (a Tensor) or None.  A compiler tracer sees reads and
        writes, so that ``zero_grad``/``backward``/``step`` inside a compiled function replay."""
        if STATE.tracer is not None:
            STATE.tracer.on_grad_get(self)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                            f"type {type(value).__name__}")
        if value is not None and tuple(value._data.shape) != tuple(self._data.shape):
            raise RuntimeError(f"assigned grad has data of a different size: "
                               f"{tuple(value._data.shape)} vs {tuple(self._data.shape)}")
        if STATE.tracer is not None:
            STATE.tracer.on_grad_set(self, value)
        self._grad = value

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and not _dt.is_float(self._data.dtype):
            raise RuntimeError("only Tensors of floating point dtype can require gradients, "
                               f"got {self.dtype}")
        if STATE.tracer is not None and self.requires_grad != requires_grad:
            STATE.tracer.on_requires_grad(self, requires_grad)
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if STATE.tracer is not None:
            STATE.tracer.on_unsupported("retain_grad inside a compiled function")
        if self.grad_fn is not None:
            self._retains_grad = True
            self.grad_fn.add_retain(self)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a non-None return
        replaces the gradient.  Returns a handle with ``remove()``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if STATE.tracer is not None:
            STATE.tracer.on_unsupported("register_hook inside a compiled function")
        if self.grad_fn is not None:
            return self.grad_fn.add_hook(hook)
        if self._hooks is None:
            self._hooks = []
        return _HookHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after a backward has accumulated this leaf's gradient into
        ``.grad`` (PyTorch's name).  The engine accumulates a leaf as soon as every gradient
        flowing into it has arrived, so the hook runs while the rest of the backward is
        still to come (``DistributedDataParallel`` starts its all-reduces from here).
        Returns a handle with ``remove()``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if STATE.tracer is not None:
            STATE.tracer.on_unsupported("register_post_accumulate_grad_hook inside a compiled "
                                        "function")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = []
        return _HookHandle(self._post_accumulate_hooks, hook)

    def detach(self) -> "Tensor":
        t = Tensor._make(self._data)
        t._version = self._version  # an alias, not a differentiable view: no _base
        if STATE.tracer is not None:
            STATE.tracer.on_alias(self, t)
        return t

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self.requires_grad = False
        return self

    # -- reads that leave the graph -------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        if type(self._data) is not np.ndarray and not force:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        _leave(self, "numpy()")
        return host(self._data)

    def tolist(self):
        _leave(self, "tolist()")
        return host(self._data).tolist()

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA array interface of a CUDA tensor's memory (zero-copy for CuPy, Numba
        and PyTorch); AttributeError on the CPU, as PyTorch."""
        d = self._data
        if type(d) is np.ndarray:
            raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor type: "
                                 f"{self.type()} If CUDA data is required use "
                                 "tensor.cuda() to copy tensor to device memory.")
        if self.requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires "
                               "grad. If gradients aren't required, use var.detach() to get "
                               "Variable that doesn't require grad.")
        return d.__cuda_array_interface__

    def __array__(self, dtype=None, copy=None):
        _leave(self, "__array__")
        a = host(self._data)
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        return a.copy() if copy else a

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        v = host(self._data).reshape(()).item()
        if STATE.tracer is not None:  # a traced value: a guard, or the trace's own number
            return STATE.tracer.on_item(self, v)
        return v

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self._data.size} elements is "
                               "ambiguous")
        v = bool(host(self._data).reshape(()))
        if STATE.tracer is not None:
            STATE.tracer.on_branch(self, v, "bool()")
        return v

    def __float__(self) -> float:
        v = float(self._scalar("float"))
        if STATE.tracer is not None:
            STATE.tracer.on_branch(self, v, "float()")
        return v

    def __int__(self) -> int:
        v = int(self._scalar("int"))
        if STATE.tracer is not None:
            STATE.tracer.on_branch(self, v, "int()")
        return v

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return self.__int__()

    def _scalar(self, what):
        if self._data.size != 1:
            raise RuntimeError(f"only one element tensors can be converted to Python scalars "
                               f"({what}() of a tensor of shape {tuple(self._data.shape)})")
        return host(self._data).reshape(())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        _leave(self, "iteration")
        return (self[i] for i in range(self._data.shape[0]))

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return repr(self)

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (host(self._data).copy(), self.requires_grad))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        t = _rebuild(self._data.copy(), self.requires_grad)
        memo[id(self)] = t
        return t


_new = object.__new__


def _rebuild(data, requires_grad):
    t = Tensor._make(data)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _legacy_data(data) -> np.ndarray:
    """``Tensor(data)``: the data as a float32 array (PyTorch's default dtype)."""
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [x._data if isinstance(x, Tensor) else x for x in data]
    arr = np.asarray(data)
    if arr.dtype.kind not in "biuf":
        kind = "str" if arr.dtype.kind in "US" else arr.dtype.name
        raise TypeError(f"new(): invalid data type '{kind}'")
    return np.array(arr, dtype=np.float32)


def host(storage) -> np.ndarray:
    """The values of a tensor's storage as a NumPy array (the array itself on the CPU, a
    copy from any other device)."""
    if type(storage) is np.ndarray:
        return storage
    return _runtime_device.of(storage).to_host(storage)


def _wrap_dim(dim: int, ndim: int, op: str = "") -> int:
    n = ndim if ndim else 1
    if not -n <= dim < n:
        raise IndexError(f"{op}: dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


class Size(tuple):
    """``tensor.shape``: a tuple that prints as ``eager.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"eager.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class device:
    """A device name: ``device("cpu")``, ``device("cuda")``, ``device("cuda", 0)``,
    ``device("cuda:0")``.  As a context manager (``with eager.device("cuda"):``) it is the
    default device of the factories called inside, as :func:`eager.set_default_device`
    sets it, restored on exit (per thread, as PyTorch's; a device this machine cannot use
    raises at the first factory call, as in PyTorch)."""

    __slots__ = ("type", "index", "_outer")

    def __init__(self, spec="cpu", index=None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        kind, _, idx = str(spec).partition(":")
        if kind not in _runtime_device.types():   # the packages in runtime/
            raise RuntimeError(f"Expected one of {', '.join(_runtime_device.types())} device "
                               f"type at start of device string: {spec}")
        self.type = kind
        self.index = int(idx) if idx else index

    def __enter__(self) -> device:
        # the default device this entry replaces, linked to this object's outer entries
        # (set only here: a device made but never entered allocates nothing more)
        self._outer = (STATE.default_device, getattr(self, "_outer", None))
        STATE.default_device = None if self.type == "cpu" else self
        return self

    def __exit__(self, *exc) -> None:
        STATE.default_device, self._outer = self._outer

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = device("cpu")
_STORAGE_DEVICES: dict = {}


def storage_device(storage) -> device:
    """The device holding ``storage`` (a tensor's ``_data``)."""
    dev = _STORAGE_DEVICES.get(type(storage))
    if dev is None:
        kind = _runtime_device.of(storage).type
        dev = _STORAGE_DEVICES[type(storage)] = CPU if kind == "cpu" else device(kind, 0)
    return dev


class _HookHandle:
    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook):
        hooks.append(hook)
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)
