"""dtypes exposed as ``eager.float32`` etc., and PyTorch's type-promotion rules.

A tensor stores a NumPy array; its ``dtype`` is the :class:`DType` for the array's
NumPy dtype.  Promotion follows PyTorch, not NumPy: categories bool < integer <
floating; a Python scalar never widens a tensor of its own category; a 0-dim tensor
only decides the result when its category is higher than the dimensioned tensors'.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np


class DType:
    """A tensor element type (``eager.float32``, ``eager.int64``, ...)."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "category")

    def __init__(self, name: str, np_dtype, category: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category  # 0 bool, 1 integer, 2 floating
        self.is_floating_point = category == 2
        self.is_signed = category != 0
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"eager.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


bool_ = DType("bool", np.bool_, 0)
uint8 = DType("uint8", np.uint8, 1)
int8 = DType("int8", np.int8, 1)
int16 = DType("int16", np.int16, 1)
int32 = DType("int32", np.int32, 1)
int64 = DType("int64", np.int64, 1)
float16 = DType("float16", np.float16, 2)
#: ``ml_dtypes.bfloat16``: NumPy stores it (kind ``"V"``, char ``"E"``), but not every ufunc
#: has a bfloat16 loop, so dispatch computes half types in float32 (see :func:`is_half`)
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, 2)
float32 = DType("float32", np.float32, 2)
float64 = DType("float64", np.float64, 2)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update(
    {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
     "short": int16, "bool_": bool_}
)
BF16_NP = bfloat16.np
#: NumPy dtype chars of the 16-bit floats (float16 "e", ml_dtypes' bfloat16 "E")
HALF_CHARS = "eE"


def finfo(np_dtype):
    """``np.finfo`` that also knows bfloat16 (``ml_dtypes.finfo``)."""
    return ml_dtypes.finfo(np_dtype)


def is_half(np_dtype) -> bool:
    """Whether a NumPy dtype is float16 or bfloat16 (computed in float32 by dispatch)."""
    return np_dtype.char in HALF_CHARS


def is_float(np_dtype) -> bool:
    """Whether a NumPy dtype is a floating dtype, bfloat16 included (its kind is "V")."""
    return np_dtype.kind == "f" or np_dtype == BF16_NP

DEFAULT_FLOAT = float32
DEFAULT_INT = int64


def from_name(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy(np_dtype) -> DType:
    """The DType for a NumPy dtype; TypeError for one we do not support."""
    d = _BY_NP.get(np_dtype)
    if d is None:
        d = _BY_NP.get(np.dtype(np_dtype))
        if d is None:
            raise TypeError(f"unsupported dtype {np.dtype(np_dtype)}; supported: "
                            + ", ".join(x.name for x in ALL))
    return d


def to_numpy(dtype) -> np.dtype:
    """Accept a DType, a NumPy dtype, a Python type or a name; return the NumPy dtype."""
    if type(dtype) is DType:
        return dtype.np
    if dtype is float:
        return DEFAULT_FLOAT.np
    if dtype is int:
        return DEFAULT_INT.np
    if dtype is bool:
        return bool_.np
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype].np
    return from_numpy(np.dtype(dtype)).np


def scalar_category(value) -> int:
    """Category of a Python scalar: 0 bool, 1 int, 2 float (complex unsupported)."""
    t = type(value)
    if t is bool or t is np.bool_:
        return 0
    if t is float or isinstance(value, np.floating):
        return 2
    if t is int or isinstance(value, np.integer):
        return 1
    raise TypeError(f"unsupported scalar type {t.__name__}")


def _category(np_dtype) -> int:
    k = np_dtype.kind
    return 2 if k == "f" or np_dtype == BF16_NP else (0 if k == "b" else 1)


def promote_np(a: np.dtype, b: np.dtype) -> np.dtype:
    """PyTorch promotion of two tensor dtypes of equal standing."""
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 2 and a.char in HALF_CHARS and b.char in HALF_CHARS:
        return float32.np  # float16 with bfloat16: neither holds the other (as PyTorch)
    return np.promote_types(a, b)


def result_type(*args) -> np.dtype:
    """Result NumPy dtype of an elementwise op over tensors and Python scalars: the one
    promotion rule (ops' ``out_dtype`` rules and every cast decision are built on it).

    ``args`` holds anything with ``dtype`` and ``ndim`` standing for a tensor (a NumPy
    array, a compiler IR value, a kernel argument) and Python scalars (None is skipped).
    An object with ``weak=True`` (a Python scalar passed as a graph input) promotes like
    a Python scalar of its dtype's category (NEP 50).
    """
    dim_dt = None  # dimensioned tensors
    zero_dt = None  # 0-dim tensors
    scalar_cat = -1
    for a in args:
        dt = getattr(a, "dtype", None)
        if dt is not None and not getattr(a, "weak", False):
            if a.ndim:
                dim_dt = dt if dim_dt is None else promote_np(dim_dt, dt)
            else:
                zero_dt = dt if zero_dt is None else promote_np(zero_dt, dt)
        elif a is not None:
            c = _category(dt) if dt is not None else scalar_category(a)
            if c > scalar_cat:
                scalar_cat = c
    if dim_dt is None:
        dt = zero_dt
    elif zero_dt is not None and _category(zero_dt) > _category(dim_dt):
        dt = zero_dt
    else:
        dt = dim_dt
    if dt is None:  # scalars only
        return (float32.np, int64.np, int64.np)[2 - scalar_cat] if scalar_cat > 0 else bool_.np
    if scalar_cat > _category(dt):
        return float32.np if scalar_cat == 2 else int64.np
    return dt


def cast_needed(arg, dtype: np.dtype) -> bool:
    """Whether promoting to ``dtype`` changes ``arg`` (a tensor-like of another dtype, or a
    Python scalar of a higher category, which then becomes a 0-d tensor of ``dtype``)."""
    dt = getattr(arg, "dtype", None)
    if dt is not None and not getattr(arg, "weak", False):
        return dt != dtype
    if arg is None:
        return False
    c = _category(dt) if dt is not None else scalar_category(arg)
    return c > _category(dtype)


def floating(dtype: np.dtype) -> np.dtype:
    """``dtype`` if it is a float dtype, else float32 (what float-only ops compute in)."""
    return dtype if is_float(dtype) else float32.np


def upcast_half(arrays) -> list:
    """float16/bfloat16 arrays as float32 (what dispatch and the plain backward of a half op
    compute in); anything else as it is."""
    f32 = float32.np
    return [a.astype(f32) if type(a) is np.ndarray and a.dtype.char in HALF_CHARS else a
            for a in arrays]


# PyTorch's C++ type names (``float != double``) and ScalarType names (``Float``)
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int",
        "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
        "bool": "bool"}
_SCALAR = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
           "int64": "Long",
           "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def cpp_name(dtype) -> str:
    return _CPP.get(np.dtype(dtype).name, np.dtype(dtype).name)


def scalar_name(dtype) -> str:
    return _SCALAR.get(np.dtype(dtype).name, np.dtype(dtype).name)
