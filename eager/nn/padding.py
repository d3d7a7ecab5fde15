"""Padding layers: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad`` and
``CircularPad`` in 1, 2 and 3 dimensions (``F.pad`` with a fixed amount and mode)."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


def _amounts(padding, nsp: int) -> tuple:
    if isinstance(padding, (tuple, list)):
        if len(padding) != 2 * nsp:
            raise ValueError(f"padding must be an int or a tuple of {2 * nsp} ints, got "
                             f"{tuple(padding)}")
        return tuple(padding)
    return (padding,) * (2 * nsp)


class _PadNd(Module):
    _nsp = 0
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _amounts(padding, self._nsp)

    def forward(self, input):
        n = self._nsp
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _nsp = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    _nsp = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    _nsp = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    _nsp = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    _nsp = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    _nsp = 3
    _mode = "replicate"


class CircularPad1d(_PadNd):
    _nsp = 1
    _mode = "circular"


class CircularPad2d(_PadNd):
    _nsp = 2
    _mode = "circular"


class CircularPad3d(_PadNd):
    _nsp = 3
    _mode = "circular"


class ConstantPad1d(_ConstantPadNd):
    _nsp = 1


class ConstantPad2d(_ConstantPadNd):
    _nsp = 2


class ConstantPad3d(_ConstantPadNd):
    _nsp = 3


class ZeroPad1d(_ZeroPadNd):
    _nsp = 1


class ZeroPad2d(_ZeroPadNd):
    _nsp = 2


class ZeroPad3d(_ZeroPadNd):
    _nsp = 3
