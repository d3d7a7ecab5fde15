"""Public op functions with PyTorch's names and signatures (``eager.exp``, ``eager.sum``...).

These normalize arguments (``dim`` to a sorted tuple of non-negative ints, shapes to
tuples, ``alpha`` folded into a multiply) and call the dispatch point through the
tensor namespace ``T``.  Tensor methods in :mod:`eager.ops.methods` call these.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from . import dtypes as _dt
from .dispatch import dispatch
from .ops import elementwise as _ew
from .ops import reduce as _red
from .ops import shape as _shp
from .ops.base import T
from .tensor import Tensor, _wrap_dim


# -- argument normalization -------------------------------------------------------------

def as_tensor_arg(x):
    """Tensors and Python scalars pass through; lists/arrays become tensors."""
    if isinstance(x, (Tensor, int, float, bool)):
        return x
    if isinstance(x, (np.integer, np.floating, np.bool_)):
        return x.item()
    from .factories import tensor
    return tensor(x)


def norm_dims(dim, ndim: int, op: str) -> tuple:
    """``dim`` (None, int or sequence) as a sorted tuple of non-negative ints."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (_wrap_dim(int(dim), ndim, op),)
    dims = tuple(sorted(_wrap_dim(int(d), ndim, op) for d in dim))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dim {tuple(dim)} appears multiple times in the list of dims")
    return dims


def norm_shape(shape, op: str = "") -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Tensor)):
        shape = shape[0]
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"{op}: shape must be a sequence of ints, got {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def infer_shape(shape: tuple, numel: int, op: str, src: tuple) -> tuple:
    """Resolve one ``-1`` entry; error if the total size does not match."""
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"{op}: invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel} "
                           f"({op} of a tensor of shape {src})")
    return shape


# -- arithmetic -------------------------------------------------------------------------

def add(input, other, *, alpha=1):
    if alpha != 1:
        other = dispatch(_ew.Mul, as_tensor_arg(other), alpha)
    return dispatch(_ew.Add, as_tensor_arg(input), as_tensor_arg(other))


def sub(input, other, *, alpha=1):
    if alpha != 1:
        other = dispatch(_ew.Mul, as_tensor_arg(other), alpha)
    return dispatch(_ew.Sub, as_tensor_arg(input), as_tensor_arg(other))


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
        return q if _is_float(input, other) else dispatch(_ew.Cast, q, dtype=_result_np(input, other))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


divide = true_divide = div


def _result_np(*args):
    return _dt.result_type(*[a._data if isinstance(a, Tensor) else a for a in args])


def _is_float(*args) -> bool:
    return _result_np(*args).kind == "f"


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


def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and bool(np.array_equal(input._data, other._data))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    from .factories import tensor
    return tensor(np.isclose(input._data, as_tensor_arg(other)._data if isinstance(other, Tensor)
                             else other, rtol=rtol, atol=atol, equal_nan=equal_nan))


def cast(input, dtype):
    npd = _dt.to_numpy(dtype)
    if input._data.dtype == npd:
        return input
    return dispatch(_ew.Cast, input, dtype=npd)


# -- reductions -------------------------------------------------------------------------

def sum(input, dim=None, keepdim: bool = False, *, dtype=None):
    dims = norm_dims(dim, input.ndim, "sum")
    return dispatch(_red.Sum, input, dim=dims, keepdim=bool(keepdim),
                    dtype=None if dtype is None else _dt.to_numpy(dtype))


# -- shape ------------------------------------------------------------------------------

def reshape(input, *shape):
    shape = infer_shape(norm_shape(shape, "reshape"), input.numel(), "reshape",
                        tuple(input.shape))
    if shape == input._data.shape:
        return dispatch(_shp.Reshape, input, shape=shape)
    return dispatch(_shp.Reshape, input, shape=shape)


def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, Tensor)):
        return cast(input, shape[0])  # view(dtype): only same-size reinterpretation in torch
    shape = infer_shape(norm_shape(shape, "view"), input.numel(), "view", tuple(input.shape))
    return dispatch(_shp.View, input, shape=shape)


def permute(input, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(int(d), nd, "permute") for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute: repeated dim")
    return dispatch(_shp.Permute, input, dims=dims)


def transpose(input, dim0: int, dim1: int):
    nd = input.ndim
    if nd == 0:
        return input
    d0, d1 = _wrap_dim(dim0, nd, "transpose"), _wrap_dim(dim1, nd, "transpose")
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return dispatch(_shp.Permute, input, dims=tuple(dims))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def expand(input, *sizes):
    sizes = norm_shape(sizes, "expand")
    nd = input.ndim
    if len(sizes) < nd:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({nd})")
    src = (1,) * (len(sizes) - nd) + tuple(input.shape)
    shape = []
    for i, (s, n) in enumerate(zip(src, sizes)):
        if n == -1:
            if i < len(sizes) - nd:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
            n = s
        elif s != 1 and s != n:
            raise RuntimeError(f"The expanded size of the tensor ({n}) must match the existing "
                               f"size ({s}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(input.shape)}")
        shape.append(n)
    return dispatch(_shp.Expand, input, shape=tuple(shape))


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def sum_to(input, shape):
    return dispatch(_shp.SumTo, input, shape=tuple(shape))


_ = builtins, Sequence, T

# Tensor methods bound by eager.methods (names of functions in this module).  Modules
# that add ops extend these lists.
METHODS = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "neg", "negative", "abs", "absolute", "exp",
    "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tanh",
    "sigmoid", "erf", "relu", "silu", "sign", "floor", "ceil", "trunc", "round", "reciprocal",
    "square", "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "softplus", "clamp",
    "clip", "minimum", "maximum", "where", "eq", "ne", "lt", "le", "gt", "ge", "greater",
    "greater_equal", "less", "less_equal", "not_equal", "logical_and", "logical_or",
    "logical_xor", "equal", "allclose", "isclose", "sum", "reshape", "view", "permute",
    "transpose", "swapaxes", "swapdims", "t", "expand", "expand_as", "sum_to",
]
# in-place methods ``name_`` and the NumPy ufunc that applies them exactly (or None)
INPLACE = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": None, "pow": None,
    "neg": None, "abs": None, "exp": None, "log": None, "sqrt": None, "tanh": None,
    "sigmoid": None, "relu": None, "clamp": None, "floor": None, "ceil": None, "round": None,
    "sign": None, "remainder": None, "reciprocal": None, "trunc": None,
}
