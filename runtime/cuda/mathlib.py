"""CUDA device functions for the scalar math names that ``math`` (libdevice) lacks.

Each is written per float type with typed constants, so float32 code stays float32
(a Python float constant would make Numba compute in float64).  They are
``register_jitable`` functions: compiled into each kernel that calls them for the
kernel's target, so compiling a kernel needs no GPU context (see :mod:`.ptxcheck`).
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable


@register_jitable
def sigmoid32(x):
    # as eager: e = exp(-|x|); 1 / (1 + e) for x >= 0, e / (1 + e) otherwise
    e = math.exp(-abs(x))
    d = np.float32(1.0) + e
    return np.float32(1.0) / d if x >= np.float32(0.0) else e / d


@register_jitable
def sigmoid64(x):
    e = math.exp(-abs(x))
    d = 1.0 + e
    return 1.0 / d if x >= 0.0 else e / d


@register_jitable
def rint32(x):
    # round half to even (NumPy's rint); values from 2**23 on are integers already
    if not abs(x) < np.float32(8388608.0):
        return x
    r = np.float32(math.floor(x + np.float32(0.5)))
    if r - x == np.float32(0.5) and math.fmod(r, np.float32(2.0)) != np.float32(0.0):
        r = r - np.float32(1.0)
    return np.float32(math.copysign(r, x))


@register_jitable
def rint64(x):
    if not abs(x) < 4503599627370496.0:
        return x
    r = float(math.floor(x + 0.5))
    if r - x == 0.5 and math.fmod(r, 2.0) != 0.0:
        r = r - 1.0
    return math.copysign(r, x)


@register_jitable
def trunc32(x):
    return np.float32(math.copysign(np.float32(math.floor(abs(x))), x))


@register_jitable
def trunc64(x):
    return math.copysign(np.float64(math.floor(abs(x))), x)
