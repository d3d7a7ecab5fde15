"""``Parameter``: a Tensor that a Module registers as one of its parameters."""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dtypes import is_float as _isf
from ..tensor import Tensor

_new = object.__new__


class Parameter(Tensor):
    """A leaf Tensor that requires grad by default and is registered when assigned to a
    Module attribute.  ``Parameter(t)`` shares ``t``'s storage and version counter."""

    def __new__(cls, data=None, requires_grad: bool = True):
        if data is None:
            arr, version = np.empty((0,), dtype=_dt.DEFAULT_FLOAT.np), [0, None]
        elif isinstance(data, Tensor):
            arr, version = data._data, data._version
        else:
            arr, version = np.asarray(data), [0, None]
            _dt.from_numpy(arr.dtype)
        if requires_grad and not _isf(arr.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t = _new(cls)
        t._data = arr
        t.requires_grad = bool(requires_grad)
        t.grad = None
        t.grad_fn = None
        t._version = version
        t._base = None
        t._retains_grad = False
        t._hooks = None
        t._post_accumulate_hooks = None
        return t

    def __init__(self, data=None, requires_grad: bool = True):
        pass  # all done in __new__

    def __repr__(self) -> str:
        return Parameter.__repr__.prefix + super().__repr__()

    __repr__.prefix = "Parameter containing:\n"  # (a compiled replay prints it so too)
    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data.copy(), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(self._data.copy()), self.requires_grad)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


def is_parameter(obj) -> bool:
    return isinstance(obj, Parameter)
