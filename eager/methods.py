"""Tensor methods and operators, bound to the functions in :mod:`eager.functions`.

Operators follow Python's protocol (``__add__``/``__radd__``...).  In-place methods
(``add_``, ``mul_``...) compute out of place through the dispatch point, then write
into the tensor's storage and bump its version counter (:func:`inplace`).
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from . import fn as _fn_pkg
from ._state import STATE
from .dispatch import copy_into
from .dtypes import is_float as _isf
from .fn import elementwise as fn
from .tensor import Tensor


def inplace(self: Tensor, result: Tensor, opname: str) -> Tensor:
    """Make ``self`` hold ``result``: write its data into self's storage, bump the version,
    and take over its grad_fn.  Raises PyTorch's errors for leaves that require grad."""
    if STATE.grad_enabled and self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if self._base is not None and (result.requires_grad or self._base.requires_grad) \
            and STATE.grad_enabled:
        raise RuntimeError(f"{opname}: in-place modification of a view of a tensor that is part "
                           "of an autograd graph is not supported; use an out-of-place op")
    src = result._data
    dst = self._data
    on_cpu = type(dst) is np.ndarray
    if type(src) is not type(dst):
        from .dispatch import same_device
        same_device((self, result))
    if src.shape != dst.shape:
        try:
            if np.broadcast_shapes(src.shape, dst.shape) != dst.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"{opname}: output with shape {list(dst.shape)} doesn't match the "
                               f"broadcast shape {list(src.shape)}") from None
        if on_cpu:
            src = np.broadcast_to(src, dst.shape)
    if src.dtype != dst.dtype:
        if not np.can_cast(src.dtype, dst.dtype, "same_kind"):
            raise RuntimeError(f"{opname}: result type {src.dtype} can't be cast to the "
                               f"desired output type {dst.dtype}")
        result = fn.cast(result, _dt.from_numpy(dst.dtype))  # recorded: tracer sees dtype
        src = result._data
        if on_cpu and src.shape != dst.shape:
            src = np.broadcast_to(src, dst.shape)
    if not dst.flags.writeable:
        raise RuntimeError(f"{opname}: unsupported operation: the tensor is read-only (more "
                           "than one element of it may refer to a single memory location, as "
                           "after expand(); clone() it first)")
    node = result.grad_fn
    if node is not None and node.saved:
        _save_old_value(node, self)
    if on_cpu:
        np.copyto(dst, src, casting="unsafe")
    else:
        copy_into(dst, src)
    v = self._version
    v[0] += 1
    v[1] = opname
    if STATE.grad_enabled:
        if result.grad_fn is not None:
            self.grad_fn = result.grad_fn
            self.requires_grad = True
        elif self.grad_fn is not None:  # the new value does not depend on the graph
            self.grad_fn = None
            self.requires_grad = False
    if STATE.tracer is not None:
        STATE.tracer.on_inplace(self, result)
    return self


def _save_old_value(node, self: Tensor) -> None:
    """The in-place op's own backward may need ``self`` as it was before the write
    (``h.mul_(w)`` needs the old ``h`` for ``w``'s gradient): point it at a clone, as
    PyTorch saves the original value, instead of the tensor about to be overwritten."""
    saved = node.saved
    snap = None
    for k, entry in enumerate(saved):
        if type(entry) is tuple and entry[0] is self:
            if snap is None:
                snap = self.clone()
            saved[k] = (snap, snap._version[0])


def _fast_inplace(self: Tensor, ufunc, other) -> bool:
    """True in-place ufunc when nothing needs recording (no grad, no tracer)."""
    if STATE.tracer is not None or type(self._data) is not np.ndarray:
        return False
    if self._data.dtype.char in "eE":  # half: dispatch's float32 maths and rounding
        return False
    if isinstance(other, Tensor):
        if other.requires_grad and STATE.grad_enabled:
            return False
        o = other._data
        if o.dtype != self._data.dtype:
            return False
    elif isinstance(other, (int, float)) and not isinstance(other, bool):
        o = other
        if isinstance(other, float) and not _isf(self._data.dtype):
            return False
    else:
        return False
    if self.requires_grad and STATE.grad_enabled:
        return False
    if self._base is not None and self._base.requires_grad and STATE.grad_enabled:
        return False
    ufunc(self._data, o, out=self._data)
    v = self._version
    v[0] += 1
    v[1] = ufunc.__name__ + "_"
    return True


def _binary(f, name):
    def op(self, other):
        return f(self, other)

    def rop(self, other):
        return f(other, self)
    op.__name__ = f"__{name}__"
    rop.__name__ = f"__r{name}__"
    return op, rop


def _dense(a: np.ndarray) -> bool:
    """Whether ``a``'s elements fill one block of memory, in any order of dimensions
    (PyTorch's ``is_non_overlapping_and_dense``)."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expected = a.itemsize
    for stride, size in sorted((abs(st), sz) for st, sz in zip(a.strides, a.shape)
                               if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _check_overlap(self: Tensor, args) -> None:
    """PyTorch's refusal of an in-place op whose input lies partly over the memory it
    writes (``a.add_(a.t())``, ``a.mul_(a[0])``): the result would depend on the order in
    which elements are written.  As PyTorch (``get_overlap_status``): the same elements
    with the same strides are fine, and so are tensors not dense in memory (too hard to
    tell, PyTorch does not refuse them either)."""
    d = self._data
    if type(d) is not np.ndarray:
        return
    root = d if d.base is None else d.base
    for a in args:
        if not isinstance(a, Tensor):
            continue
        o = a._data
        if o is d or type(o) is not np.ndarray or (o if o.base is None else o.base) is not root \
                or not o.size or not d.size or not _dense(o) or not _dense(d):
            continue
        ob, db = o.__array_interface__["data"][0], d.__array_interface__["data"][0]
        ob, db = ob + min(0, *_offsets(o)), db + min(0, *_offsets(d))   # lowest address
        oe, de = ob + o.nbytes, db + d.nbytes
        if (ob, oe) == (db, de) and o.strides == d.strides:
            continue
        if ob < de and db < oe:
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.")


def _offsets(a: np.ndarray) -> list:
    """Byte offsets of ``a``'s last element along each negative stride (from its data
    pointer to the lowest address it reaches)."""
    return [st * (sz - 1) for st, sz in zip(a.strides, a.shape) if st < 0] or [0]


def _inplace_method(f, name, ufunc=None):
    def m(self, *args, **kwargs):
        _check_overlap(self, args)
        if ufunc is not None and len(args) == 1 and not kwargs and \
                _fast_inplace(self, ufunc, args[0]):
            return self
        return inplace(self, f(self, *args, **kwargs), name)
    m.__name__ = name
    return m


def _fill_method(f, name):
    def m(self, *args, **kwargs):
        return inplace(self, f(self, *args, **kwargs), name)
    m.__name__ = name
    m.__doc__ = f.__doc__
    return m


# Tensor attributes a function of the same name must not replace
_KEEP = {"size", "numel", "dim", "shape", "dtype", "ndim"}


def _install():
    T = Tensor
    for name, f in [("add", fn.add), ("sub", fn.sub), ("mul", fn.mul), ("truediv", fn.div),
                    ("floordiv", fn.floor_divide), ("mod", fn.remainder), ("pow", fn.pow),
                    ("and", fn.logical_and), ("or", fn.logical_or), ("xor", fn.logical_xor)]:
        op, rop = _binary(f, name)
        setattr(T, f"__{name}__", op)
        setattr(T, f"__r{name}__", rop)
    T.__neg__ = fn.neg
    T.__abs__ = fn.abs
    T.__pos__ = lambda self: self
    T.__invert__ = lambda self: fn.logical_not(self) if self._data.dtype.kind == "b" \
        else fn.bitwise_not(self)
    for name, f in [("eq", fn.eq), ("ne", fn.ne), ("lt", fn.lt), ("le", fn.le), ("gt", fn.gt),
                    ("ge", fn.ge)]:
        setattr(T, f"__{name}__", f)
    T.__hash__ = lambda self: id(self)

    # augmented assignment is in place, as in PyTorch
    for name, f, uf in [("add", fn.add, np.add), ("sub", fn.sub, np.subtract),
                        ("mul", fn.mul, np.multiply), ("truediv", fn.div, None),
                        ("floordiv", fn.floor_divide, None), ("mod", fn.remainder, None),
                        ("pow", fn.pow, None)]:
        setattr(T, f"__i{name}__", _inplace_method(f, f"__i{name}__", uf))

    # plain methods: x.exp(), x.sum(dim), ...; in-place forms x.exp_()
    for mod in _fn_pkg.FAMILIES:
        for name in mod.METHODS:
            if name not in _KEEP:
                setattr(T, name, getattr(mod, name))
        for name, uf in mod.INPLACE.items():
            setattr(T, name + "_", _inplace_method(getattr(mod, name), name + "_", uf))
        for name, f in getattr(mod, "FILLS", {}).items():  # x.normal_(): x := f(x, ...)
            setattr(T, name, _fill_method(f, name))


_install()


def to_args(args, kwargs) -> tuple:
    """(device type or None, dtype or None) asked for by ``to(dtype)``, ``to(device)``,
    ``to(other)``, ``to(device, dtype)`` (and ``device=``/``dtype=`` keywords)."""
    from .tensor import device as _device
    dtype = kwargs.get("dtype")
    dev = kwargs.get("device")
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _device)):
            dev = a
        elif a is not None:
            dtype = a
    if dev is None:
        return None, dtype
    dev = _device(dev)
    if dev.type == "cuda" and dev.index:
        from .factories import _device_type
        _device_type(dev)     # cuda:1 on one GPU: PyTorch's invalid device ordinal
    return dev.type, dtype


def to_args_dtype(args, kwargs):
    """The dtype asked for by ``to(...)`` (None if only a device)."""
    return to_args(args, kwargs)[1]


def to_device(t: Tensor, device_type: str) -> Tensor:
    """``t`` on ``device_type`` (``t`` itself when it is there already): a recorded,
    differentiable copy."""
    if t.device.type == device_type:
        return t
    from .dispatch import dispatch
    from .factories import _device_type
    from .ops.device import ToDevice
    _device_type(device_type)  # PyTorch's error when the device cannot be used here
    return dispatch(ToDevice, t, device=device_type, source=t.device.type)


def _cuda_device(device) -> str:
    """``Tensor.cuda(device)``: the index checked (PyTorch's invalid device ordinal)."""
    if device is not None:
        from .tensor import device as _device
        to_args((_device("cuda", device) if isinstance(device, int) else device,), {})
    return "cuda"


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``."""
    dev, dtype = to_args(args, kwargs)
    out = self
    if dev is not None:
        out = to_device(out, dev)
    if dtype is not None:
        out = fn.cast(out, dtype)
    if kwargs.get("copy") and out is self:
        return self.clone()
    return out


_LEGACY = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
           "int64": "Long",
           "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _zero_(self: Tensor) -> Tensor:
    from .factories import zeros_like
    return inplace(self, zeros_like(self), "zero_")


def _fill_(self: Tensor, value) -> Tensor:
    from .factories import full_like
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return _copy_(self, value)
    return inplace(self, full_like(self, value), "fill_")


def _copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast to self's shape, cast to self's dtype) into self."""
    from .fn.shape import clone, expand
    if not isinstance(src, Tensor):
        src = fn.as_tensor_arg(src)
        if not isinstance(src, Tensor):
            return _fill_(self, src)
    moved = src.device.type != self.device.type
    if moved:   # PyTorch copies across devices (differentiably, as to())
        src = src.to(self.device)
    if tuple(src.shape) != tuple(self.shape):
        src = expand(src, self.shape)
    elif not moved:
        src = clone(src)
    return inplace(self, fn.cast(src, self.dtype), "copy_")


def _install_conversions():
    T = Tensor
    T.zero_ = _zero_
    T.fill_ = _fill_
    T.copy_ = _copy_
    T.to = _to
    T.type = lambda self, dtype=None: (f"eager.{_LEGACY[self._data.dtype.name]}Tensor"
                                       if dtype is None else fn.cast(self, dtype))
    T.type_as = lambda self, other: fn.cast(self, other.dtype)
    T.float = lambda self: fn.cast(self, "float32")
    T.double = lambda self: fn.cast(self, "float64")
    T.half = lambda self: fn.cast(self, "float16")
    T.bfloat16 = lambda self: fn.cast(self, "bfloat16")
    T.long = lambda self: fn.cast(self, "int64")
    T.int = lambda self: fn.cast(self, "int32")
    T.bool = lambda self: fn.cast(self, "bool")
    T.cpu = lambda self, memory_format=None: to_device(self, "cpu")
    T.cuda = lambda self, device=None, non_blocking=False, memory_format=None: \
        to_device(self, _cuda_device(device))
    from .fn.shape import permute, transpose
    T.T = property(lambda self: permute(self, tuple(range(self.ndim - 1, -1, -1))))
    T.mT = property(lambda self: transpose(self, -2, -1))


_install_conversions()
