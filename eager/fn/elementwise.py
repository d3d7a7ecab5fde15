"""Elementwise op functions with PyTorch's names and signatures (``eager.exp``, ``eager.add``...).

They normalize arguments (``alpha`` folded into a multiply, lists to tensors) and call
the dispatch point.  ``METHODS`` and ``INPLACE`` name what :mod:`eager.methods` binds
as Tensor methods.
"""

from __future__ import annotations

import builtins as _builtins

import numpy as np

from .. import dtypes as _dt
from ..construct import tensor
from ..dispatch import dispatch
from ..dtypes import cpp_name as _cpp_name
from ..dtypes import is_float as _isf
from ..dtypes import scalar_name as _scalar_name
from ..ops import elementwise as _ew
from ..ops import factory as _f
from ..tensor import Tensor
from .args import as_tensor_arg
from .index import nonzero
from .linalg import _need_tensor
from .shape import clone

# -- arithmetic -------------------------------------------------------------------------

def add(input, other, *, alpha=1):
    if alpha != 1:
        return _with_alpha(_ew.Add, input, other, alpha)
    return dispatch(_ew.Add, as_tensor_arg(input), as_tensor_arg(other))


def sub(input, other, *, alpha=1):
    if alpha != 1:
        return _with_alpha(_ew.Sub, input, other, alpha)
    return dispatch(_ew.Sub, as_tensor_arg(input), as_tensor_arg(other))


def _with_alpha(op, input, other, alpha):
    """``input op alpha * other``; with a float16/bfloat16 result, computed in float32 and
    rounded once (PyTorch's fused kernel), not rounded after the product too."""
    input, other = as_tensor_arg(input), as_tensor_arg(other)
    out = _result_np(input, other)
    if out.char in "eE":
        f32 = _dt.float32.np
        if isinstance(alpha, float):  # PyTorch's kernel takes alpha in the half type
            alpha = float(np.float32(alpha).astype(out))
        prod = dispatch(_ew.Mul, cast(other, f32), alpha)
        return cast(dispatch(op, cast(input, f32), prod), out)
    return dispatch(op, input, dispatch(_ew.Mul, other, alpha))


subtract = sub


def mul(input, other):
    return dispatch(_ew.Mul, as_tensor_arg(input), as_tensor_arg(other))


multiply = mul


def div(input, other, *, rounding_mode=None):
    input, other = as_tensor_arg(input), as_tensor_arg(other)
    if rounding_mode is None:
        return dispatch(_ew.Div, input, other)
    if rounding_mode == "floor":
        return dispatch(_ew.FloorDivide, input, other) if not _is_float(input, other) \
            else dispatch(_ew.Floor, dispatch(_ew.Div, input, other))
    if rounding_mode == "trunc":
        q = dispatch(_ew.Trunc, dispatch(_ew.Div, input, other))
        if _is_float(input, other):
            return q
        return dispatch(_ew.Cast, q, dtype=_result_np(input, other))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


divide = true_divide = div


def _result_np(*args):
    return _dt.result_type(*[a._data if isinstance(a, Tensor) else a for a in args])


def _is_float(*args) -> bool:
    return _isf(_result_np(*args))


def floor_divide(input, other):
    return dispatch(_ew.FloorDivide, as_tensor_arg(input), as_tensor_arg(other))


def remainder(input, other):
    return dispatch(_ew.Remainder, as_tensor_arg(input), as_tensor_arg(other))


def fmod(input, other):
    input, other = as_tensor_arg(input), as_tensor_arg(other)
    return sub(input, mul(div(input, other, rounding_mode="trunc"), other))


def pow(input, exponent):
    return dispatch(_ew.Pow, as_tensor_arg(input), as_tensor_arg(exponent))


def neg(input):
    return dispatch(_ew.Neg, input)


negative = neg


def _unary(op):
    def fn(input):
        return dispatch(op, input)
    fn.__name__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}``."
    return fn


abs = _unary(_ew.Abs)
absolute = abs
exp = _unary(_ew.Exp)
expm1 = _unary(_ew.Expm1)
log = _unary(_ew.Log)
log1p = _unary(_ew.Log1p)
sqrt = _unary(_ew.Sqrt)
rsqrt = _unary(_ew.Rsqrt)
sin = _unary(_ew.Sin)
cos = _unary(_ew.Cos)
tanh = _unary(_ew.Tanh)
sigmoid = _unary(_ew.Sigmoid)
erf = _unary(_ew.Erf)
relu = _unary(_ew.Relu)
silu = _unary(_ew.Silu)
sign = _unary(_ew.Sign)
floor = _unary(_ew.Floor)
ceil = _unary(_ew.Ceil)
trunc = _unary(_ew.Trunc)
reciprocal = _unary(_ew.Reciprocal)
logical_not = _unary(_ew.LogicalNot)
bitwise_not = _unary(_ew.BitwiseNot)
isnan = _unary(_ew.Isnan)
isinf = _unary(_ew.Isinf)
isfinite = _unary(_ew.Isfinite)


def square(input):
    return dispatch(_ew.Mul, input, input)


def log2(input):
    return dispatch(_ew.Mul, dispatch(_ew.Log, input), 1.0 / np.log(2.0))


def log10(input):
    return dispatch(_ew.Mul, dispatch(_ew.Log, input), 1.0 / np.log(10.0))


def round(input, decimals: int = 0):
    return dispatch(_ew.Round, input, decimals=decimals)


def gelu(input, approximate: str = "none"):
    return dispatch(_ew.Gelu, input, approximate=approximate)


def softplus(input, beta=1.0, threshold=20.0):
    return dispatch(_ew.Softplus, input, beta=beta, threshold=threshold)


def clamp(input, min=None, max=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        return out
    return dispatch(_ew.Clamp, input, min=min, max=max)


clip = clamp


def minimum(input, other):
    return dispatch(_ew.Minimum, as_tensor_arg(input), as_tensor_arg(other))


def maximum(input, other):
    return dispatch(_ew.Maximum, as_tensor_arg(input), as_tensor_arg(other))


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return dispatch(_ew.Where, condition, as_tensor_arg(input), as_tensor_arg(other))


def _compare(op):
    def fn(input, other):
        return dispatch(op, as_tensor_arg(input), as_tensor_arg(other))
    fn.__name__ = op.name
    return fn


eq = _compare(_ew.Eq)
ne = _compare(_ew.Ne)
lt = _compare(_ew.Lt)
le = _compare(_ew.Le)
gt = _compare(_ew.Gt)
ge = _compare(_ew.Ge)
logical_and = _compare(_ew.LogicalAnd)
logical_or = _compare(_ew.LogicalOr)
logical_xor = _compare(_ew.LogicalXor)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _on_device(*xs) -> bool:
    return any(isinstance(x, Tensor) and type(x._data) is not np.ndarray for x in xs)


def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    if _on_device(input, other):   # counted on the device; one scalar comes back
        return int(ne(input, other).sum().item()) == 0
    return bool(np.array_equal(input._data, other._data))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    if _on_device(input, other):
        far = logical_not(isclose(input, other, rtol, atol, equal_nan))
        return int(far.sum().item()) == 0
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _isclose_ops(input, other, rtol, atol, equal_nan):
    """isclose from device ops: |a - b| <= atol + rtol * |b|, or a == b (infinities)."""
    b_abs = abs(other) if isinstance(other, Tensor) else _builtins.abs(other)
    close = le(abs(sub(input, other)), add(mul(b_abs, rtol), atol))
    close = logical_or(close, eq(input, other))
    if equal_nan:
        nan_b = isnan(other) if isinstance(other, Tensor) else np.isnan(other)
        close = logical_or(close, logical_and(isnan(input), nan_b))
    return close


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if _on_device(input, other):
        return _isclose_ops(input, other, rtol, atol, equal_nan)
    return tensor(np.isclose(input._data, as_tensor_arg(other)._data if isinstance(other, Tensor)
                             else other, rtol=rtol, atol=atol, equal_nan=equal_nan))


def cast(input, dtype):
    npd = _dt.to_numpy(dtype)
    if input._data.dtype == npd:
        return input
    return dispatch(_ew.Cast, input, dtype=npd)



# -- interpolation, clamping, non-finite replacement ------------------------------------------

def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def lerp(input, end, weight):
    """``input + weight * (end - input)``, with PyTorch's two-sided formula (exact at
    ``weight`` 0 and 1); ``weight`` a Python number or a tensor, all three broadcast."""
    _need_tensor("lerp", input, "input", 1)
    _need_tensor("lerp", end, "end", 2)
    a, b = input._data.dtype, end._data.dtype
    if a != b:
        raise RuntimeError(f"expected dtype {_cpp_name(a)} for `end` but got dtype "
                           f"{_cpp_name(b)}")
    kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
    if not _isf(a):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(a)}'")
    if a.char in "eE":  # half: the formula in float32, rounded once (PyTorch's kernel)
        f32 = _dt.float32
        w = cast(weight, f32) if isinstance(weight, Tensor) else weight
        return cast(lerp(cast(input, f32), cast(end, f32), w), _dt.from_numpy(a))
    step = sub(end, input)
    if not isinstance(weight, Tensor):
        w = float(weight)
        return add(input, mul(step, w)) if -0.5 < w < 0.5 else sub(end, mul(step, 1.0 - w))
    if weight.ndim and weight._data.dtype != a:
        raise RuntimeError(f"expected dtype {_cpp_name(a)} for `weight` but got dtype "
                           f"{_cpp_name(weight._data.dtype)}")
    weight = cast(weight, _dt.from_numpy(a))
    low = lt(abs(weight), 0.5)
    return where(low, add(input, mul(weight, step)), sub(end, mul(step, sub(1.0, weight))))


def nan_to_num(input, nan: float = 0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default the
    dtype's largest and lowest finite values); the gradient passes where ``input`` is
    finite.  Integer and bool tensors are returned as a copy."""
    dt = input._data.dtype
    if not _isf(dt):
        return clone(input)
    info = _dt.finfo(dt)
    hi = float(info.max) if posinf is None else float(posinf)
    lo = float(info.min) if neginf is None else float(neginf)

    def const(v):  # a 0-d tensor of the input's dtype (the replacements keep it)
        return dispatch(_f.Full, shape=(), value=v, dtype=dt)
    bad = where(isnan(input), const(float(nan)), where(gt(input, 0), const(hi), const(lo)))
    return where(isfinite(input), input, bad)


METHODS = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "neg", "negative", "abs", "absolute",
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tanh",
    "sigmoid", "erf", "relu", "silu", "sign", "floor", "ceil", "trunc", "round",
    "reciprocal", "square", "logical_not", "bitwise_not", "isnan", "isinf", "isfinite",
    "softplus", "clamp", "clip", "minimum", "maximum", "where", "eq", "ne", "lt", "le",
    "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "equal", "allclose", "isclose",
    "clamp_min", "clamp_max", "lerp", "nan_to_num",
]
INPLACE = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": None, "pow": None,
    "neg": None, "abs": None, "exp": None, "log": None, "sqrt": None, "tanh": None,
    "sigmoid": None, "relu": None, "clamp": None, "floor": None, "ceil": None, "round": None,
    "sign": None, "remainder": None, "reciprocal": None, "trunc": None,
    "clip": None, "clamp_min": None, "clamp_max": None, "lerp": None, "nan_to_num": None,
}
