"""Scalar source text every device's kernels share: NumPy type names, typed literals and
casts written as NumPy computes them (``astype``; NEP 50 for Python scalars).

The ops' scalar vocabulary (:mod:`eager.ops.scalarexpr`) re-exports these; a device's
kernel launchers (:mod:`runtime.cuda.launch`) use them for the accumulators of their
reductions, without importing eager.
"""

from __future__ import annotations

import math

import numpy as np

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)

NP_NAME = {np.dtype(t): f"np.{np.dtype(t).name}" for t in
           (np.uint8, np.int8, np.int16, np.int32, np.int64, np.float32, np.float64)}


def literal(x, dtype: np.dtype) -> str:
    """Source for the Python scalar ``x`` converted to ``dtype`` as NumPy does (NEP 50)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return "True" if bool(x) else "False"
    if dtype.kind == "f":
        v = float(x)
        if math.isnan(v):
            text = "np.nan"
        elif math.isinf(v):
            text = "np.inf" if v > 0 else "-np.inf"
        else:
            text = repr(v)
        return text if dtype == F64 else f"{NP_NAME[dtype]}({text})"
    v = int(x)
    # an out-of-range weak int raises in NumPy, so eager never traced one: keep it exact
    return str(v) if dtype == I64 and v >= 0 else f"{NP_NAME[dtype]}({v})"


def cast(expr: str, src: np.dtype, dst: np.dtype) -> str:
    """Source converting the scalar ``expr`` of dtype ``src`` to ``dst`` (as ``astype``)."""
    if src == dst:
        return expr
    if dst == BOOL:
        return f"({expr} != 0)"
    if dst.kind in "iu" and src.kind == "f" and dst != I64:
        # float -> narrow int: through int64, then wrap (what NumPy's C cast does on x86)
        return f"{NP_NAME[dst]}(np.int64({expr}))"
    return f"{NP_NAME[dst]}({expr})"
