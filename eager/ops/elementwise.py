"""Elementwise ops: arithmetic, unary math, activations, comparisons, casts.

Each op's forward runs NumPy on arrays; its backward is written with the op namespace
``F`` (see :mod:`eager.ops.base`).  Ops that PyTorch computes in floating point
(``exp`` of an int tensor, true division of ints) cast integer inputs to float32.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from .base import OUT, Op
from .special import erf as _erf

_F32 = np.dtype(np.float32)


def _float(x):
    """Integer/bool arrays become float32 for ops that are defined on floats."""
    if isinstance(x, (np.ndarray, np.generic)):  # NumPy scalars keep their dtype
        return x if x.dtype.kind == "f" else x.astype(_F32)
    return float(x)


def _is_float(x) -> bool:
    """A float array or a Python float (a Python int or bool is not)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind == "f"
    return isinstance(x, float)


class Elementwise(Op):
    abstract = True
    elementwise = True


class Binary(Elementwise):
    abstract = True
    promotes = True


# -- arithmetic -------------------------------------------------------------------------

class Add(Binary):
    ufunc = np.add

    def forward(a, b):
        return np.add(a, b)

    def backward(F, g, saved, node):
        return g, g


class Sub(Binary):
    ufunc = np.subtract

    def forward(a, b):
        if type(a) is np.ndarray and a.dtype.kind == "b" and getattr(b, "dtype", None) == a.dtype:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        return np.subtract(a, b)

    def backward(F, g, saved, node):
        return g, (F.neg(g) if node.needs[1] else None)


class Mul(Binary):
    saves = (0, 1)
    ufunc = np.multiply

    def forward(a, b):
        return np.multiply(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        n = node.needs
        return (F.mul(g, b) if n[0] else None), (F.mul(g, a) if n[1] else None)


class Div(Binary):
    """True division; integer operands give float32, as in PyTorch."""
    saves = (0, 1)

    def forward(a, b):
        if not _is_float(a) and not _is_float(b):
            a, b = _float(a), _float(b)
        return np.true_divide(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        n = node.needs
        ga = F.div(g, b) if n[0] else None
        gb = F.neg(F.div(F.mul(g, a), F.mul(b, b))) if n[1] else None
        return ga, gb


class FloorDivide(Binary):
    differentiable = False

    def forward(a, b):
        return np.floor_divide(a, b)


class Remainder(Binary):
    """Python-style remainder: the result has the sign of the divisor (as PyTorch)."""
    saves = (0, 1)

    def forward(a, b):
        return np.remainder(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        gb = F.neg(F.mul(g, F.floor(F.div(a, b)))) if node.needs[1] else None
        return g, gb


class Pow(Binary):
    saves = (0, 1, OUT)

    def forward(a, b):
        if type(b) is np.ndarray and b.dtype.kind in "iu" and type(a) is np.ndarray \
                and a.dtype.kind in "iu" and (b < 0).any():
            raise RuntimeError("pow: integers to negative integer powers are not allowed")
        return np.power(a, b)

    def backward(F, g, saved, node):
        a, b, out = saved
        n = node.needs
        ga = gb = None
        if n[0]:
            if isinstance(b, (int, float)):
                ga = F.mul(g, F.mul(F.pow(a, b - 1), b)) if b != 0 else F.mul(g, 0.0)
            else:
                ga = F.mul(g, F.mul(b, F.pow(a, F.sub(b, 1))))
        if n[1]:
            # d/db a**b = a**b * log(a), taken as 0 where a == 0 (as PyTorch)
            safe = F.where(F.eq(a, 0), 1.0, a)
            gb = F.mul(g, F.mul(out, F.log(safe)))
        return ga, gb


class Neg(Elementwise):
    ufunc = np.negative

    def forward(a):
        if a.dtype.kind == "b":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return np.negative(a)

    def backward(F, g, saved, node):
        return (F.neg(g),)


class Abs(Elementwise):
    saves = (0,)

    def forward(a):
        return np.abs(a)

    def backward(F, g, saved, node):
        return (F.mul(g, F.sign(saved[0])),)


class Reciprocal(Elementwise):
    saves = (OUT,)

    def forward(a):
        return np.reciprocal(_float(a))

    def backward(F, g, saved, node):
        out = saved[0]
        return (F.neg(F.mul(g, F.mul(out, out))),)


# -- unary math -------------------------------------------------------------------------

class Exp(Elementwise):
    saves = (OUT,)

    def forward(a):
        return np.exp(_float(a))

    def backward(F, g, saved, node):
        return (F.mul(g, saved[0]),)


class Expm1(Elementwise):
    saves = (OUT,)

    def forward(a):
        return np.expm1(_float(a))

    def backward(F, g, saved, node):
        return (F.mul(g, F.add(saved[0], 1.0)),)


class Log(Elementwise):
    saves = (0,)

    def forward(a):
        return np.log(_float(a))

    def backward(F, g, saved, node):
        return (F.div(g, saved[0]),)


class Log1p(Elementwise):
    saves = (0,)

    def forward(a):
        return np.log1p(_float(a))

    def backward(F, g, saved, node):
        return (F.div(g, F.add(saved[0], 1.0)),)


class Sqrt(Elementwise):
    saves = (OUT,)

    def forward(a):
        return np.sqrt(_float(a))

    def backward(F, g, saved, node):
        return (F.div(F.mul(g, 0.5), saved[0]),)


class Rsqrt(Elementwise):
    saves = (OUT,)

    def forward(a):
        a = _float(a)
        return np.reciprocal(np.sqrt(a))

    def backward(F, g, saved, node):
        out = saved[0]
        return (F.mul(g, F.mul(F.mul(out, F.mul(out, out)), -0.5)),)


class Sin(Elementwise):
    saves = (0,)

    def forward(a):
        return np.sin(_float(a))

    def backward(F, g, saved, node):
        return (F.mul(g, F.cos(saved[0])),)


class Cos(Elementwise):
    saves = (0,)

    def forward(a):
        return np.cos(_float(a))

    def backward(F, g, saved, node):
        return (F.neg(F.mul(g, F.sin(saved[0]))),)


class Tanh(Elementwise):
    saves = (OUT,)

    def forward(a):
        return np.tanh(_float(a))

    def backward(F, g, saved, node):
        out = saved[0]
        return (F.mul(g, F.sub(1.0, F.mul(out, out))),)


class Sigmoid(Elementwise):
    saves = (OUT,)

    def forward(a):
        a = _float(a)
        # stable for both signs: exp of a non-positive number only
        e = np.exp(-np.abs(a))
        return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        out = saved[0]
        return (F.mul(g, F.mul(out, F.sub(1.0, out))),)


class Erf(Elementwise):
    saves = (0,)

    def forward(a):
        a = _float(a)
        return _erf(a)  # vectorized; equals math.erf rounded to a's dtype

    def backward(F, g, saved, node):
        a = saved[0]
        return (F.mul(g, F.mul(F.exp(F.neg(F.mul(a, a))), 2.0 / math.sqrt(math.pi))),)


# -- activations ------------------------------------------------------------------------

class Relu(Elementwise):
    saves = (OUT,)

    def forward(a):
        return np.maximum(a, 0).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        return (F.mul(g, F.gt(saved[0], 0)),)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class Gelu(Elementwise):
    """GELU; ``approximate='none'`` (erf form, PyTorch's default) or ``'tanh'``."""
    saves = (0,)

    def forward(a, approximate="none"):
        a = _float(a)
        if approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (a + 0.044715 * a * a * a)
            return (0.5 * a * (1.0 + np.tanh(inner))).astype(a.dtype, copy=False)
        if approximate != "none":
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        return (0.5 * a * (1.0 + _erf(a * _INV_SQRT_2))).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        x = saved[0]
        if node.params.get("approximate", "none") == "tanh":
            x2 = F.mul(x, x)
            inner = F.mul(F.add(x, F.mul(F.mul(x2, x), 0.044715)), _SQRT_2_OVER_PI)
            t = F.tanh(inner)
            dinner = F.mul(F.add(F.mul(x2, 3 * 0.044715), 1.0), _SQRT_2_OVER_PI)
            d = F.add(F.mul(F.add(t, 1.0), 0.5),
                      F.mul(F.mul(F.mul(x, 0.5), F.sub(1.0, F.mul(t, t))), dinner))
        else:
            cdf = F.mul(F.add(F.erf(F.mul(x, _INV_SQRT_2)), 1.0), 0.5)
            pdf = F.mul(F.exp(F.mul(F.mul(x, x), -0.5)), _INV_SQRT_2PI)
            d = F.add(cdf, F.mul(x, pdf))
        return (F.mul(g, d),)


class Silu(Elementwise):
    saves = (0,)

    def forward(a):
        a = _float(a)
        return (a / (1.0 + np.exp(-a))).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        x = saved[0]
        s = F.sigmoid(x)
        return (F.mul(g, F.mul(s, F.add(F.mul(x, F.sub(1.0, s)), 1.0))),)


class Softplus(Elementwise):
    """``log(1 + exp(beta*x)) / beta``, linear where ``beta*x > threshold`` (as PyTorch)."""
    saves = (0,)

    def forward(a, beta=1.0, threshold=20.0):
        a = _float(a)
        z = a * beta
        soft = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta
        return np.where(z > threshold, a, soft).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        x = saved[0]
        beta = node.params.get("beta", 1.0)
        threshold = node.params.get("threshold", 20.0)
        z = F.mul(x, beta)
        return (F.mul(g, F.where(F.gt(z, threshold), 1.0, F.sigmoid(z))),)


class Clamp(Elementwise):
    saves = (0,)

    def forward(a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
        out = a
        if min is not None:
            out = np.maximum(out, min)
        if max is not None:
            out = np.minimum(out, max)
        rt = _dt.result_type(a, *[v for v in (min, max) if v is not None])
        return out.astype(rt, copy=False)

    def backward(F, g, saved, node):
        x = saved[0]
        lo, hi = node.params.get("min"), node.params.get("max")
        mask = None
        if lo is not None:
            mask = F.ge(x, lo)
        if hi is not None:
            m2 = F.le(x, hi)
            mask = m2 if mask is None else F.logical_and(mask, m2)
        return (F.mul(g, mask),)


class Maximum(Binary):
    saves = (0, 1)

    def forward(a, b):
        return np.maximum(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        return _minmax_grads(F, g, F.gt(a, b), F.eq(a, b), node)


class Minimum(Binary):
    saves = (0, 1)

    def forward(a, b):
        return np.minimum(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        return _minmax_grads(F, g, F.lt(a, b), F.eq(a, b), node)


def _minmax_grads(F, g, wins, ties, node):
    """Gradient goes to the winner; ties split it evenly (as PyTorch)."""
    share = F.add(wins, F.mul(ties, 0.5))
    ga = F.mul(g, share) if node.needs[0] else None
    gb = F.mul(g, F.sub(1.0, share)) if node.needs[1] else None
    return ga, gb


class Where(Elementwise):
    saves = (0,)

    def forward(cond, a, b):
        if getattr(cond, "dtype", None) is None or cond.dtype.kind != "b":
            raise RuntimeError(f"where: expected condition to be a bool tensor, got "
                               f"{getattr(cond, 'dtype', type(cond).__name__)}")
        rt = _dt.result_type(a, b)
        return np.where(cond, a, b).astype(rt, copy=False)

    def backward(F, g, saved, node):
        cond = saved[0]
        n = node.needs
        ga = F.where(cond, g, 0.0) if n[1] else None
        gb = F.where(cond, 0.0, g) if n[2] else None
        return None, ga, gb


# -- piecewise-constant ops: zero gradient, as PyTorch --------------------------------

class _ZeroGrad(Elementwise):
    abstract = True

    def backward(F, g, saved, node):
        return (F.mul(g, 0.0),)


class Sign(_ZeroGrad):
    def forward(a):
        return np.sign(a) if a.dtype.kind != "b" else a.copy()


class Floor(_ZeroGrad):
    def forward(a):
        return np.floor(a) if a.dtype.kind == "f" else a.copy()


class Ceil(_ZeroGrad):
    def forward(a):
        return np.ceil(a) if a.dtype.kind == "f" else a.copy()


class Round(_ZeroGrad):
    def forward(a, decimals=0):
        return np.round(a, decimals) if a.dtype.kind == "f" else a.copy()


class Trunc(_ZeroGrad):
    def forward(a):
        return np.trunc(a) if a.dtype.kind == "f" else a.copy()


# -- comparisons and logic: bool results, no gradient -----------------------------------

class Compare(Binary):
    abstract = True
    differentiable = False


class Eq(Compare):
    def forward(a, b):
        return np.equal(a, b)


class Ne(Compare):
    def forward(a, b):
        return np.not_equal(a, b)


class Lt(Compare):
    def forward(a, b):
        return np.less(a, b)


class Le(Compare):
    def forward(a, b):
        return np.less_equal(a, b)


class Gt(Compare):
    def forward(a, b):
        return np.greater(a, b)


class Ge(Compare):
    def forward(a, b):
        return np.greater_equal(a, b)


class LogicalAnd(Compare):
    def forward(a, b):
        return np.logical_and(a, b)


class LogicalOr(Compare):
    def forward(a, b):
        return np.logical_or(a, b)


class LogicalXor(Compare):
    def forward(a, b):
        return np.logical_xor(a, b)


class LogicalNot(Elementwise):
    differentiable = False

    def forward(a):
        return np.logical_not(a)


class BitwiseNot(Elementwise):
    differentiable = False

    def forward(a):
        if a.dtype.kind == "f":
            raise TypeError(f"bitwise_not: not implemented for {a.dtype} tensors")
        return np.invert(a)


class Isnan(Elementwise):
    differentiable = False

    def forward(a):
        return np.isnan(a)


class Isinf(Elementwise):
    differentiable = False

    def forward(a):
        return np.isinf(a)


class Isfinite(Elementwise):
    differentiable = False

    def forward(a):
        return np.isfinite(a)


# -- casts ------------------------------------------------------------------------------

class Cast(Elementwise):
    """Convert to ``dtype`` (a NumPy dtype).  The gradient is cast back by the engine."""

    def forward(a, dtype):
        return np.asarray(a).astype(dtype)

    def backward(F, g, saved, node):
        return (g,)
