"""The binder: Tensor methods and operators bound to the public functions of :mod:`eager.fn`,
``backward`` and the printed form.

Operators follow Python's protocol (``__add__``/``__radd__``...).  In-place methods
(``add_``, ``mul_``...) compute out of place through the dispatch point, then write
into the tensor's storage and bump its version counter (:func:`inplace`).
"""

from __future__ import annotations

import weakref

import numpy as np

from . import fn as _fn_pkg
from .autograd.engine import backward as _engine_backward
from .devices import cuda_device, to_args, to_device
from .factories import full_like, zeros_like
from .fn import elementwise as fn
from .fn.shape import clone, expand, permute, transpose
from .inplace import check_overlap, fast_inplace, inplace
from .printing import tensor_repr
from .tensor import Tensor
from .tracing import data_read as _leave


def _binary(f, name):
    def op(self, other):
        return f(self, other)

    def rop(self, other):
        return f(other, self)
    op.__name__ = f"__{name}__"
    rop.__name__ = f"__r{name}__"
    return op, rop


def _inplace_method(f, name, ufunc=None):
    def m(self, *args, **kwargs):
        check_overlap(self, args)
        if ufunc is not None and len(args) == 1 and not kwargs and \
                fast_inplace(self, ufunc, args[0]):
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
    return inplace(self, zeros_like(self), "zero_")


def _fill_(self: Tensor, value) -> Tensor:
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return _copy_(self, value)
    return inplace(self, full_like(self, value), "fill_")


def _copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast to self's shape, cast to self's dtype) into self."""
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


#: id(array) -> array: the host arrays made by ``pin_memory`` (kept only while alive)
_PINNED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _pin_memory(self, device=None):
    """A copy of this CPU tensor marked as pinned (``is_pinned()`` is True for it and its
    views).  The memory is ordinary host memory: host-device copies are synchronous here
    either way, so pinning changes no result, only what ``is_pinned`` reports."""
    if self.is_cuda:
        raise RuntimeError(f"cannot pin 'eager.cuda.{_LEGACY[self._data.dtype.name]}Tensor' "
                           "only dense CPU tensors can be pinned")
    if self.is_pinned():
        return self
    out = clone(self)
    _PINNED[id(out._data)] = out._data
    return out


def _is_pinned(self, device=None) -> bool:
    d = self._data
    while isinstance(d, np.ndarray):
        if _PINNED.get(id(d)) is d:
            return True
        d = d.base
    return False


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
    T.pin_memory = _pin_memory
    T.is_pinned = _is_pinned
    T.int = lambda self: fn.cast(self, "int32")
    T.bool = lambda self: fn.cast(self, "bool")
    T.cpu = lambda self, memory_format=None: to_device(self, "cpu")
    T.cuda = lambda self, device=None, non_blocking=False, memory_format=None: \
        to_device(self, cuda_device(device))
    T.T = property(lambda self: permute(self, tuple(range(self.ndim - 1, -1, -1))))
    T.mT = property(lambda self: transpose(self, -2, -1))


_install_conversions()


def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
             inputs=None) -> None:
    """Computes the gradient of this tensor with respect to the graph's leaves, and
    accumulates it into their ``.grad``.

    Args:
        gradient (Tensor, optional): the gradient with respect to this tensor (the
            vector of the vector-Jacobian product); required unless it is a scalar.
        retain_graph (bool, optional): keep the graph for another backward. Default: the
            value of ``create_graph``.
        create_graph (bool): record the backward itself, for higher-order derivatives.
            Default: ``False``.
        inputs (sequence of Tensor, optional): accumulate only into these.

    Example::

        >>> x = eager.tensor([1.0, -2.0, 3.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([ 2., -4.,  6.])
    """
    _engine_backward((self,), None if gradient is None else (gradient,), retain_graph,
                     create_graph, inputs)


def __repr__(self) -> str:
    _leave(self, "repr()")
    return tensor_repr(self)


Tensor.backward = backward
Tensor.__repr__ = Tensor.__str__ = __repr__
