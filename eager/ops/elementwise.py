"""Elementwise ops: arithmetic, unary math, activations, comparisons, casts.

Each op's forward runs NumPy on arrays; its backward is written with the op namespace
``F`` (see :mod:`eager.ops.base`).  Ops that PyTorch computes in floating point
(``exp`` of an int tensor, true division of ints) cast integer inputs to float32.
"""

from __future__ import annotations

import math

import numpy as np

from runtime.cpu.erf import erf as _erf
from runtime.cpu.erf import gelu as _gelu_erf

from ..dtypes import floating, result_type
from .base import OUT, A, Op
from .scalarexpr import BOOL, I64

_F32 = np.dtype(np.float32)


# -- result-dtype rules (``out_dtype``), all built on the one promotion rule ------------

def promoted(*args, **params):
    """PyTorch's promotion of the arguments (binary arithmetic)."""
    return result_type(*args)


def promoted_no_bool(*args, **params):
    """Promotion, where bool operands compute in int8 (NumPy's ``//``, ``%``, ``**``)."""
    rt = result_type(*args)
    return np.dtype(np.int8) if rt == BOOL else rt


def same(a, *args, **params):
    """The input's dtype (sign, abs, rounding, relu...)."""
    return a.dtype


def to_float(a, *args, **params):
    """The input's dtype if floating, else float32 (exp of an int tensor is float32)."""
    return floating(a.dtype)


def boolean(*args, **params):
    return BOOL


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


# -- scalar-expression helpers shared by several ops (see eager.ops.scalarexpr) ----------

def device_math(name):
    """``name`` from the device's math table, computed in the input's float dtype."""
    def scalar(S, args, p, out):
        ft = S.floating(args[0].dtype)
        return S.fn(name, S.arg(args[0], ft), ft), ft
    return scalar


def rounding(name):
    """floor/ceil/trunc/rint: the identity on integers."""
    def scalar(S, args, p, out):
        a = args[0]
        if a.dtype.kind != "f":
            return a.name, a.dtype
        return S.fn(name, a.name, a.dtype), a.dtype
    return scalar


def float_test(name, int_value: bool):
    """isnan/isinf/isfinite: a constant on integers."""
    def scalar(S, args, p, out):
        a = args[0]
        if a.dtype.kind != "f":
            return ("True" if int_value else "False"), BOOL
        return S.fn(name, a.name, a.dtype), BOOL
    return scalar


def compare(symbol):
    def scalar(S, args, p, out):
        _, a, b = S.binary(args)
        return f"{a} {symbol} {b}", BOOL
    return scalar


def logical(symbol):
    def scalar(S, args, p, out):
        return f"{S.truth(args[0])} {symbol} {S.truth(args[1])}", BOOL
    return scalar


class Elementwise(Op):
    abstract = True
    elementwise = True
    out_dtype = same


class Binary(Elementwise):
    abstract = True
    promotes = True
    out_dtype = promoted


class FloatUnary(Elementwise):
    """Computed in floating point: integer and bool inputs give float32."""
    abstract = True
    out_dtype = to_float


# -- arithmetic -------------------------------------------------------------------------

class Add(Binary):
    ufunc = np.add

    def forward(a, b):
        return np.add(a, b)

    def backward(F, g, saved, node):
        return g, g

    def scalar(S, args, p, out):
        rt, a, b = S.binary(args)
        return (f"{a} | {b}" if rt == BOOL else f"{a} + {b}"), rt


class Sub(Binary):
    ufunc = np.subtract

    def forward(a, b):
        if type(a) is np.ndarray and a.dtype.kind == "b" and getattr(b, "dtype", None) == a.dtype:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        return np.subtract(a, b)

    def backward(F, g, saved, node):
        return g, (F.neg(g) if node.needs[1] else None)

    def scalar(S, args, p, out):
        rt, a, b = S.binary(args)
        S.need(rt != BOOL)
        return f"{a} - {b}", rt


class Mul(Binary):
    saves = (0, 1)
    ufunc = np.multiply

    def forward(a, b):
        return np.multiply(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        n = node.needs
        return (F.mul(g, b) if n[0] else None), (F.mul(g, a) if n[1] else None)

    def scalar(S, args, p, out):
        rt, a, b = S.binary(args)
        return (f"{a} & {b}" if rt == BOOL else f"{a} * {b}"), rt


class Div(Binary):
    """True division; integer operands give float32, as in PyTorch."""
    saves = (0, 1)

    def out_dtype(a, b):
        return floating(result_type(a, b))

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

    def scalar(S, args, p, out):
        rt = S.floating(S.promoted(*args))   # true division: integers divide in float32
        return f"{S.arg(args[0], rt)} / {S.arg(args[1], rt)}", rt


class IntegerDivisionByZero(RuntimeError, ZeroDivisionError):
    """Integer ``//`` or ``%`` by zero: PyTorch raises ``RuntimeError: ZeroDivisionError``
    (NumPy would give 0 with a warning); also a Python ``ZeroDivisionError``."""


def _check_integer_divisor(a, b) -> None:
    """Raise as PyTorch does when an integer division has a zero divisor."""
    kind = getattr(b, "dtype", None)
    kind = kind.kind if kind is not None else ("i" if isinstance(b, int) else "f")
    if kind in "iub" and np.result_type(a, b).kind in "iu" and not np.all(b):
        raise IntegerDivisionByZero("ZeroDivisionError")


class FloorDivide(Binary):
    differentiable = False

    out_dtype = promoted_no_bool

    def forward(a, b):
        _check_integer_divisor(a, b)
        return np.floor_divide(a, b)

    def scalar(S, args, p, out):
        rt, a, b = S.binary(args)
        # integers: the forward checks for a zero divisor (a fused kernel would give 0),
        # so only a divisor known nonzero (a literal, or checked by the caller) fuses
        S.need(rt != BOOL and (rt.kind == "f" or args[1].nonzero))
        return f"{a} // {b}", rt


class Remainder(Binary):
    """Python-style remainder: the result has the sign of the divisor (as PyTorch)."""
    saves = (0, 1)

    out_dtype = promoted_no_bool

    def forward(a, b):
        _check_integer_divisor(a, b)
        return np.remainder(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        gb = F.neg(F.mul(g, F.floor(F.div(a, b)))) if node.needs[1] else None
        return g, gb

    def scalar(S, args, p, out):
        rt, a, b = S.binary(args)
        # integers: the forward checks for a zero divisor (a fused kernel would give 0),
        # so only a divisor known nonzero (a literal, or checked by the caller) fuses
        S.need(rt != BOOL and (rt.kind == "f" or args[1].nonzero))
        return f"{a} % {b}", rt


class Pow(Binary):
    saves = (0, 1, OUT)

    out_dtype = promoted_no_bool

    def forward(a, b):
        if type(b) is np.ndarray and b.dtype.kind in "iu" and type(a) is np.ndarray \
                and a.dtype.kind in "iu" and (b < 0).any():
            raise RuntimeError("pow: integers to negative integer powers are not allowed")
        if type(a) is np.ndarray and not a.shape and a.dtype.kind == "f" and (
                type(b) is float or type(b) is int or
                type(b) is np.ndarray and not b.shape and b.dtype == a.dtype):
            # 0-d floats: NumPy's scalar power, C's pow() as Python's float ** (the ufunc
            # on a 0-d array may take a SIMD pow that differs from it in the last bit); the
            # generated Python computes 0-d float pow the same way (an Adam step's bias
            # corrections must equal the Python floats of its eager step)
            return np.asarray(a[()] ** (b[()] if type(b) is np.ndarray else b))
        if type(b) is np.ndarray and not b.shape and b.dtype.kind == "f" and (
                type(a) is float or type(a) is int):
            return np.asarray(a ** b[()])
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

    def scalar(S, args, p, out):
        rt = S.promoted(*args)
        S.need(rt != BOOL)
        base, ex = args
        a = S.arg(base, rt)
        if ex.is_lit and not isinstance(ex.value, bool):
            e = ex.value
            if e == 2:                       # NumPy: square
                return f"{a} * {a}", rt
            if e in (3, 4) and (rt.kind == "f" or float(e).is_integer()):
                return " * ".join([a] * int(e)), rt
            if e == 1:
                return a, rt
            if rt.kind == "f":
                if e == 0:
                    return S.literal(1, rt), rt
                if e == 0.5:                 # NumPy: sqrt
                    return S.fn("sqrt", a, rt), rt
                if e == -1:                  # NumPy: reciprocal
                    return f"{S.literal(1, rt)} / {a}", rt
                return f"{a} ** {S.literal(e, rt)}", rt
            S.need(isinstance(e, int) and e >= 0)   # integer ** negative raises in eager
            return f"{a} ** {e}", I64 if rt != I64 else rt
        S.need(rt.kind == "f")               # integer tensor exponents may be negative
        return f"{a} ** {S.arg(ex, rt)}", rt


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

    def scalar(S, args, p, out):
        a = args[0]
        S.need(a.dtype != BOOL)
        return f"-{a.name}", a.dtype if a.dtype.kind == "f" else I64


def _bool_refused(kernel: str) -> NotImplementedError:
    """PyTorch's error for a kernel without a bool loop (``kernel``: its name, e.g.
    ``abs_cpu``)."""
    return NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def same_no_bool(name: str):
    """The input's dtype, bool refused (the dtype rule of ops PyTorch has no bool kernel
    for; the error names the op, as the rule does not know the device)."""
    def out_dtype(a, *args, **params):
        if a.dtype == BOOL:
            raise _bool_refused(name)
        return a.dtype
    return out_dtype


class Abs(Elementwise):
    """``abs``; bool is refused (PyTorch: ``"abs_cpu" not implemented for 'Bool'``)."""
    saves = (0,)
    out_dtype = same_no_bool("abs")

    def forward(a):
        if a.dtype == BOOL:
            raise _bool_refused("abs_cpu")
        return np.abs(a)

    def backward(F, g, saved, node):
        return (F.mul(g, F.sign(saved[0])),)

    def scalar(S, args, p, out):
        a = args[0]
        S.need(a.dtype != BOOL)
        return f"abs({a.name})", a.dtype if a.dtype.kind == "f" else I64


class Reciprocal(FloatUnary):
    saves = (OUT,)

    def forward(a):
        return np.reciprocal(_float(a))

    def backward(F, g, saved, node):
        out = saved[0]
        return (F.neg(F.mul(g, F.mul(out, out))),)

    def scalar(S, args, p, out):
        ft = S.floating(args[0].dtype)
        return f"{S.literal(1, ft)} / {S.arg(args[0], ft)}", ft


# -- unary math -------------------------------------------------------------------------

class Exp(FloatUnary):
    saves = (OUT,)

    def forward(a):
        return np.exp(_float(a))

    def backward(F, g, saved, node):
        return (F.mul(g, saved[0]),)

    scalar = device_math("exp")


class Expm1(FloatUnary):
    saves = (OUT,)

    def forward(a):
        return np.expm1(_float(a))

    def backward(F, g, saved, node):
        return (F.mul(g, F.add(saved[0], 1.0)),)

    scalar = device_math("expm1")


class Log(FloatUnary):
    saves = (0,)

    def forward(a):
        return np.log(_float(a))

    def backward(F, g, saved, node):
        return (F.div(g, saved[0]),)

    scalar = device_math("log")


class Log1p(FloatUnary):
    saves = (0,)

    def forward(a):
        return np.log1p(_float(a))

    def backward(F, g, saved, node):
        return (F.div(g, F.add(saved[0], 1.0)),)

    scalar = device_math("log1p")


class Sqrt(FloatUnary):
    saves = (OUT,)

    def forward(a):
        return np.sqrt(_float(a))

    def backward(F, g, saved, node):
        return (F.div(F.mul(g, 0.5), saved[0]),)

    scalar = device_math("sqrt")


class Rsqrt(FloatUnary):
    saves = (OUT,)

    def forward(a):
        a = _float(a)
        return np.reciprocal(np.sqrt(a))

    def backward(F, g, saved, node):
        out = saved[0]
        return (F.mul(g, F.mul(F.mul(out, F.mul(out, out)), -0.5)),)

    def scalar(S, args, p, out):
        ft = S.floating(args[0].dtype)
        return f"{S.literal(1, ft)} / {S.fn('sqrt', S.arg(args[0], ft), ft)}", ft


class Sin(FloatUnary):
    saves = (0,)

    def forward(a):
        return np.sin(_float(a))

    def backward(F, g, saved, node):
        return (F.mul(g, F.cos(saved[0])),)

    scalar = device_math("sin")


class Cos(FloatUnary):
    saves = (0,)

    def forward(a):
        return np.cos(_float(a))

    def backward(F, g, saved, node):
        return (F.neg(F.mul(g, F.sin(saved[0]))),)

    scalar = device_math("cos")


class Tanh(FloatUnary):
    saves = (OUT,)

    def forward(a):
        return np.tanh(_float(a))

    def backward(F, g, saved, node):
        out = saved[0]
        return (F.mul(g, F.sub(1.0, F.mul(out, out))),)

    scalar = device_math("tanh")


class Sigmoid(FloatUnary):
    multipass = True
    saves = (OUT,)

    def forward(a):
        a = _float(a)
        # stable for both signs: exp of a non-positive number only
        e = np.exp(-np.abs(a))
        return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        out = saved[0]
        return (F.mul(g, F.mul(out, F.sub(1.0, out))),)

    scalar = device_math("sigmoid")


class Erf(FloatUnary):
    multipass = True
    saves = (0,)

    def forward(a):
        a = _float(a)
        return _erf(a)  # vectorized; the kernels' bits (runtime.cpu.erf)

    def backward(F, g, saved, node):
        a = saved[0]
        return (F.mul(g, F.mul(F.exp(F.neg(F.mul(a, a))), 2.0 / math.sqrt(math.pi))),)

    scalar = device_math("erf")


# -- activations ------------------------------------------------------------------------

class Relu(Elementwise):
    saves = (OUT,)

    def forward(a):
        return np.maximum(a, 0).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        return (F.mul(g, F.gt(saved[0], 0)),)

    def scalar(S, args, p, out):
        a = args[0]
        if a.dtype == BOOL:
            return a.name, BOOL
        z = S.literal(0, a.dtype)
        if a.dtype.kind == "f":
            return S.max_nan(a.name, z), a.dtype
        return f"({a.name} if {a.name} >= {z} else {z})", a.dtype


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class Gelu(FloatUnary):
    """GELU; ``approximate='none'`` (erf form, PyTorch's default) or ``'tanh'``."""
    multipass = True
    saves = (0,)

    def forward(a, approximate="none"):
        a = _float(a)
        if approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (a + 0.044715 * a * a * a)
            return (0.5 * a * (1.0 + np.tanh(inner))).astype(a.dtype, copy=False)
        if approximate != "none":
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        if isinstance(a, np.ndarray):  # 0.5 * a * (1 + erf(a * _INV_SQRT_2)), in blocks
            return _gelu_erf(a)
        return (0.5 * a * (1.0 + _erf(a * _INV_SQRT_2))).astype(a.dtype, copy=False)

    def forward_aux(a, approximate="none"):
        """The forward, and for the erf form on a float32 array its ``1 + erf(x/sqrt 2)``
        (the backward's ``erf(x/sqrt 2) + 1``: the same value)."""
        if approximate == "none" and isinstance(a, np.ndarray) and a.dtype == np.float32:
            return _gelu_erf(a, keep=True)
        return Gelu.forward(a, approximate), None

    def backward(F, g, saved, node):
        x = saved[0]
        if F is A and node.aux is not None:      # 1 + erf from the forward (float32)
            u = node.aux
            d = np.multiply(x, x)
            np.multiply(d, -0.5, out=d)
            np.exp(d, out=d)
            np.multiply(d, _INV_SQRT_2PI, out=d)
            np.multiply(x, d, out=d)
            np.add(np.multiply(u, 0.5), d, out=d)   # cdf + x * pdf
            return (np.multiply(g, d, out=d) if g.dtype == d.dtype else np.multiply(g, d),)
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

    def scalar(S, args, p, out):
        ft = S.floating(args[0].dtype)
        x = S.tmp()
        L = lambda v: S.literal(v, ft)
        lines = [(x, S.arg(args[0], ft))]
        approx = p.get("approximate", "none")
        if approx == "tanh":   # as forward: c * (a + 0.044715 * a * a * a), then tanh
            inner = S.tmp()
            lines.append((inner, f"{L(_SQRT_2_OVER_PI)} * ({x} + {L(0.044715)} * {x} * {x} * {x})"))
            lines.append((None, f"{L(0.5)} * {x} * ({L(1.0)} + {S.fn('tanh', inner, ft)})"))
        else:
            S.need(approx == "none")
            erf = S.fn("erf", f"{x} * {L(_INV_SQRT_2)}", ft)
            lines.append((None, f"{L(0.5)} * {x} * ({L(1.0)} + {erf})"))
        return lines, ft


class Silu(FloatUnary):
    multipass = True
    saves = (0,)

    def forward(a):
        a = _float(a)
        return (a / (1.0 + np.exp(-a))).astype(a.dtype, copy=False)

    def backward(F, g, saved, node):
        x = saved[0]
        s = F.sigmoid(x)
        return (F.mul(g, F.mul(s, F.add(F.mul(x, F.sub(1.0, s)), 1.0))),)

    def scalar(S, args, p, out):
        ft = S.floating(args[0].dtype)
        x = S.tmp()
        return [(x, S.arg(args[0], ft)),
                (None, f"{x} / ({S.literal(1.0, ft)} + {S.fn('exp', f'-{x}', ft)})")], ft


class Softplus(FloatUnary):
    """``log(1 + exp(beta*x)) / beta``, linear where ``beta*x > threshold`` (as PyTorch)."""
    multipass = True
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

    def scalar(S, args, p, out):
        ft = S.floating(args[0].dtype)
        beta, threshold = p.get("beta", 1.0), p.get("threshold", 20.0)
        S.need(isinstance(beta, (int, float)) and isinstance(threshold, (int, float)))
        x, z, soft = S.tmp(), S.tmp(), S.tmp()
        zero = S.literal(0, ft)
        log1p_exp = S.fn("log1p", S.fn("exp", f"-abs({z})", ft), ft)
        # as forward: z = a*beta; soft = (max(z, 0) + log1p(exp(-|z|))) / beta
        return [(x, S.arg(args[0], ft)),
                (z, f"{x} * {S.literal(beta, ft)}"),
                (soft, f"({S.max_nan(z, zero)} + {log1p_exp}) / {S.literal(beta, ft)}"),
                (None, f"{x} if {z} > {S.literal(threshold, ft)} else {soft}")], ft


class Clamp(Elementwise):
    saves = (0,)

    def out_dtype(a, min=None, max=None):
        return result_type(a, min, max)

    def forward(a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
        out = a
        if min is not None:
            out = np.maximum(out, min)
        if max is not None:
            out = np.minimum(out, max)
        return out.astype(Clamp.out_dtype(a, min, max), copy=False)

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

    def scalar(S, args, p, out):
        lo, hi = p.get("min"), p.get("max")
        S.need(all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                   for v in (lo, hi)) and (lo is not None or hi is not None))
        a = args[0]
        S.need(a.dtype != BOOL and out != BOOL)
        e = S.cast(a.name, a.dtype, out)
        lines = []
        for bound, pick in ((lo, S.max_nan), (hi, S.min_nan)):
            if bound is None:
                continue
            t = S.tmp()
            lines.append((t, e))
            b = S.literal(bound, out)
            cmp = ">=" if pick is S.max_nan else "<="
            e = pick(t, b) if out.kind == "f" else f"({t} if {t} {cmp} {b} else {b})"
        lines.append((None, e))
        return lines, out


class Maximum(Binary):
    saves = (0, 1)

    def forward(a, b):
        return np.maximum(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        return _minmax_grads(F, g, F.gt(a, b), F.eq(a, b), node)

    def scalar(S, args, p, out):
        rt, a, b = S.binary(args)
        if rt == BOOL:
            return f"{a} | {b}", rt
        if rt.kind == "f":
            return S.max_nan(a, b), rt
        return f"({a} if {a} >= {b} else {b})", rt


class Minimum(Binary):
    saves = (0, 1)

    def forward(a, b):
        return np.minimum(a, b)

    def backward(F, g, saved, node):
        a, b = saved
        return _minmax_grads(F, g, F.lt(a, b), F.eq(a, b), node)

    def scalar(S, args, p, out):
        rt, a, b = S.binary(args)
        if rt == BOOL:
            return f"{a} & {b}", rt
        if rt.kind == "f":
            return S.min_nan(a, b), rt
        return f"({a} if {a} <= {b} else {b})", rt


def _minmax_grads(F, g, wins, ties, node):
    """Gradient goes to the winner; ties split it evenly (as PyTorch)."""
    share = F.add(wins, F.mul(ties, 0.5))
    ga = F.mul(g, share) if node.needs[0] else None
    gb = F.mul(g, F.sub(1.0, share)) if node.needs[1] else None
    return ga, gb


class Where(Elementwise):
    saves = (0,)

    def out_dtype(cond, a, b):
        return result_type(a, b)

    def forward(cond, a, b):
        if getattr(cond, "dtype", None) is None or cond.dtype.kind != "b":
            raise RuntimeError(f"where: expected condition to be a bool tensor, got "
                               f"{getattr(cond, 'dtype', type(cond).__name__)}")
        return np.where(cond, a, b).astype(Where.out_dtype(cond, a, b), copy=False)

    def backward(F, g, saved, node):
        cond = saved[0]
        n = node.needs
        ga = F.where(cond, g, 0.0) if n[1] else None
        gb = F.where(cond, 0.0, g) if n[2] else None
        return None, ga, gb

    def scalar(S, args, p, out):
        c, a, b = args
        S.need(c.is_lit or c.dtype == BOOL)
        rt = S.promoted(a, b)
        return f"({S.arg(a, rt)} if {S.truth(c)} else {S.arg(b, rt)})", rt


# -- piecewise-constant ops: zero gradient, as PyTorch --------------------------------

class _ZeroGrad(Elementwise):
    abstract = True

    def backward(F, g, saved, node):
        return (F.mul(g, 0.0),)


class Sign(_ZeroGrad):
    def forward(a):
        return np.sign(a) if a.dtype.kind != "b" else a.copy()

    def scalar(S, args, p, out):
        a = args[0]
        if a.dtype == BOOL:
            return a.name, BOOL
        dt = a.dtype
        one, zero = S.literal(1, dt), S.literal(0, dt)
        mone = S.literal(-1, dt) if dt.kind != "u" else zero
        x = a.name
        tail = f"({zero} if {x} == {zero} else {x})" if dt.kind == "f" else zero
        return f"({one} if {x} > {zero} else ({mone} if {x} < {zero} else {tail}))", dt


class Floor(_ZeroGrad):
    def forward(a):
        return np.floor(a) if a.dtype.kind == "f" else a.copy()

    scalar = rounding("floor")


class Ceil(_ZeroGrad):
    def forward(a):
        return np.ceil(a) if a.dtype.kind == "f" else a.copy()

    scalar = rounding("ceil")


class Round(_ZeroGrad):
    def forward(a, decimals=0):
        return np.round(a, decimals) if a.dtype.kind == "f" else a.copy()

    def scalar(S, args, p, out):
        S.need(p.get("decimals", 0) == 0)
        return rounding("rint")(S, args, p, out)


class Trunc(_ZeroGrad):
    def forward(a):
        return np.trunc(a) if a.dtype.kind == "f" else a.copy()

    scalar = rounding("trunc")


# -- comparisons and logic: bool results, no gradient -----------------------------------

class Compare(Binary):
    abstract = True
    differentiable = False
    out_dtype = boolean


class Eq(Compare):
    def forward(a, b):
        return np.equal(a, b)

    scalar = compare("==")


class Ne(Compare):
    def forward(a, b):
        return np.not_equal(a, b)

    scalar = compare("!=")


class Lt(Compare):
    def forward(a, b):
        return np.less(a, b)

    scalar = compare("<")


class Le(Compare):
    def forward(a, b):
        return np.less_equal(a, b)

    scalar = compare("<=")


class Gt(Compare):
    def forward(a, b):
        return np.greater(a, b)

    scalar = compare(">")


class Ge(Compare):
    def forward(a, b):
        return np.greater_equal(a, b)

    scalar = compare(">=")


class LogicalAnd(Compare):
    def forward(a, b):
        return np.logical_and(a, b)

    scalar = logical("&")


class LogicalOr(Compare):
    def forward(a, b):
        return np.logical_or(a, b)

    scalar = logical("|")


class LogicalXor(Compare):
    def forward(a, b):
        return np.logical_xor(a, b)

    scalar = logical("^")


class LogicalNot(Elementwise):
    differentiable = False
    out_dtype = boolean

    def forward(a):
        return np.logical_not(a)

    def scalar(S, args, p, out):
        return f"not {S.truth(args[0])}", BOOL


class BitwiseNot(Elementwise):
    differentiable = False

    def forward(a):
        if a.dtype.kind == "f":
            raise TypeError(f"bitwise_not: not implemented for {a.dtype} tensors")
        return np.invert(a)

    def scalar(S, args, p, out):
        a = args[0]
        S.need(a.dtype.kind in "biu")
        if a.dtype == BOOL:
            return f"not {a.name}", BOOL
        return f"~{a.name}", I64


class Isnan(Elementwise):
    differentiable = False
    out_dtype = boolean

    def forward(a):
        return np.isnan(a)

    scalar = float_test("isnan", False)


class Isinf(Elementwise):
    differentiable = False
    out_dtype = boolean

    def forward(a):
        return np.isinf(a)

    scalar = float_test("isinf", False)


class Isfinite(Elementwise):
    differentiable = False
    out_dtype = boolean

    def forward(a):
        return np.isfinite(a)

    scalar = float_test("isfinite", True)


# -- casts ------------------------------------------------------------------------------

#: dtype char -> the dtypes it converts to exactly (float32/float64 targets)
_WIDE = {"f": (np.dtype(np.float32), np.dtype(np.float64)), "d": (np.dtype(np.float64),),
         "e": (np.dtype(np.float32), np.dtype(np.float64)), "?": (np.dtype(np.float32),
                                                                 np.dtype(np.float64))}


class Cast(Elementwise):
    """Convert to ``dtype`` (a NumPy dtype).  The gradient is cast back by the engine."""

    def out_dtype(a, dtype):
        return np.dtype(dtype)

    def forward(a, dtype):
        a = np.asarray(a)
        if a.dtype.kind in "fiub" and np.dtype(dtype) in _WIDE.get(a.dtype.char, ()):
            return a.astype(dtype)       # exact: nothing to overflow, no errstate context
        with np.errstate(over="ignore"):  # out of the target's range: inf, as PyTorch
            return a.astype(dtype)

    def backward(F, g, saved, node):
        return (g,)

    def scalar(S, args, p, out):
        return S.arg(args[0], out), out
