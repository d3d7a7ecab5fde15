"""The CPU device: NumPy arrays as storage, ``@numba.njit`` loop templates, mathlib.

Modules: :mod:`.loops` (the kernel templates and their reduction helpers, imported by
generated kernels), :mod:`.mathlib` (vectorizable exp/log/tanh/... for Numba loops),
:mod:`.launch` (serial or ``prange`` variant, whichever is faster), :mod:`.buffers`
(output buffer reuse).  Importing this package imports no Numba: the templates load on
first use.
"""

from __future__ import annotations

import numpy as np

from ..cache import load_module
from ..device import Device
from . import loops

_MATHLIB = ("exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "sigmoid", "erf")
_NUMPY = ("sqrt", "floor", "ceil", "trunc", "rint", "isnan", "isinf", "isfinite")

#: scalar math names -> Numba source (see :class:`runtime.device.Device`)
MATH = {**{f: f"mathlib.{f}({{0}})" for f in _MATHLIB},
        **{f: f"np.{f}({{0}})" for f in _NUMPY}}


class CPU(Device):
    type = "cpu"
    storage_types = (np.ndarray,)
    #: float16 has no Numba arithmetic; no complex
    dtypes = frozenset(np.dtype(t) for t in (np.bool_, np.uint8, np.int8, np.int16,
                                             np.int32, np.int64, np.float32, np.float64))
    math = MATH
    reductions = frozenset({"sum", "mean", "amax", "amin"})
    #: single-node groups smaller than this stay NumPy calls (a ufunc is as good as a
    #: kernel there; larger ones get parallel loops and buffer reuse)
    singleton_min = 32768
    #: a reduction of its own (the input from NumPy or an input) is a kernel from this
    #: size: ~3x faster than NumPy's reduce call at every size measured, 512 to 131072
    #: elements (a short last dimension, a cast to float64 as LayerNorm's backward has)
    lone_reduce_min = 256

    def empty(self, shape, dtype):
        return np.empty(shape, dtype)

    def from_host(self, array):
        return np.array(array, order="C")

    def to_host(self, storage):
        return storage

    def load(self, source: str):
        return load_module(source, prefix="dgk")

    @property
    def templates(self):
        return loops


DEVICE = CPU()
