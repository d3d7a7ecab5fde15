"""More elementwise functions with PyTorch's names, dtype rules and errors: ``atan2``
(``arctan2``), ``addcmul``, ``addcdiv``, ``logaddexp``, ``logaddexp2``, ``heaviside``,
``frac``, ``xlogy``, ``hypot``, ``copysign``, ``deg2rad``, ``rad2deg``.

Each is composed of existing elementwise ops (``where``, ``mul``, ``log1p``...), so the
gradients, half-precision handling and compiled replay come from those ops:

* ``atan2`` has no op of its own: it reduces ``y/x`` (or ``x/y``) to ``[-1, 1]`` with
  ``where`` (quadrants, signed zeros and infinities as C's ``atan2``) and evaluates
  Cephes' rational approximation of ``atan`` (float64: within a few ulp of the C
  library; float32 arithmetic for float32 inputs).  Its gradient is that of the
  approximation, ``x/(x^2+y^2)`` and ``-y/(x^2+y^2)`` to rounding; at ``(0, 0)`` it is
  ``(1, 0)`` where PyTorch's formula gives NaN.
* ``hypot`` scales by ``max(|x|, |y|)`` so it neither overflows nor underflows.
* ``copysign`` reads the sign bit (``-0.0`` and signed NaNs included) by viewing the
  floats as integers of the same width.
* ``heaviside`` is not differentiable (PyTorch's backward raises): its result never
  requires grad.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..dtypes import result_type, scalar_name
from ..ops import factory as _f
from ..ops import shape as _shp
from ..tensor import Tensor
from .args import as_tensor_arg
from .elementwise import (
    abs,
    add,
    cast,
    div,
    eq,
    exp,
    isfinite,
    isinf,
    isnan,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    lt,
    maximum,
    mul,
    neg,
    sign,
    sqrt,
    sub,
    trunc,
    where,
)
from .linalg import _need_tensor

__all__ = ["addcdiv", "addcmul", "arctan2", "atan2", "copysign", "deg2rad", "frac",
           "heaviside", "hypot", "logaddexp", "logaddexp2", "rad2deg", "xlogy"]

_SIGNED = {8: np.int64, 4: np.int32, 2: np.int16}


def _result_type(*xs):
    return result_type(*(x._data if isinstance(x, Tensor) else x for x in xs))


def _to_float(*xs):
    """The arguments cast to their promoted type, integers promoted to float32."""
    out = _dt.floating(_result_type(*xs))
    return [cast(x, _dt.from_numpy(out)) if isinstance(x, Tensor) else x for x in xs], out


def _float_only(name: str, *xs) -> None:
    dt = _result_type(*xs)
    if not _isf(dt):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_name(dt)}'")


def signbit(x):
    """The sign bit of a float tensor (``-0.0`` and ``-nan`` included), ``< 0`` of others."""
    if not isinstance(x, Tensor):
        return math.copysign(1.0, x) < 0
    dt = x._data.dtype
    if not _isf(dt):
        return lt(x, 0)
    return lt(dispatch(_shp.ViewDtype, x, dtype=np.dtype(_SIGNED[dt.itemsize])), 0)


# -- atan2 --------------------------------------------------------------------------------

# Cephes' atan: x + x z P(z)/Q(z), z = x^2, on |x| <= 0.66
_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
      -1.228866684490136173410e2, -6.485021904942025371773e1)
_Q = (2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
      4.853903996359136964868e2, 1.945506571482613964425e2)
_MOREBITS = 6.123233995736765886130e-17


def _atan_core(x):
    z = mul(x, x)
    p = _P[0]
    for c in _P[1:]:
        p = add(mul(p, z), c)
    q = add(z, _Q[0])
    for c in _Q[1:]:
        q = add(mul(q, z), c)
    return where(eq(x, 0), x, add(x, mul(x, div(mul(z, p), q))))   # atan(-0) = -0


def _atan_unit(t):
    """``atan(t)`` for ``t`` in ``[-1, 1]``, odd in ``t`` (no ``abs``: its derivative
    would be lost at 0)."""
    s = cast(where(lt(t, 0), -1, 1), _dt.from_numpy(t._data.dtype))
    u = div(sub(t, s), add(mul(t, s), 1.0))        # (|t| - 1) / (|t| + 1), signed
    reduced = add(mul(s, math.pi / 4 + 0.5 * _MOREBITS), _atan_core(u))
    return where(lt(abs(t), 0.66), _atan_core(t), reduced)


def atan2(input, other) -> Tensor:
    """Elementwise arctangent of ``input / other`` in the quadrant of the point
    ``(other, input)``, in ``[-pi, pi]``.

    Args:
        input (Tensor): the first input tensor (``y``).
        other (Tensor): the second input tensor (``x``); the two broadcast.

    Example::

        >>> eager.atan2(eager.tensor([1.0, -1.0]), eager.tensor([-1.0, 0.0]))
        tensor([ 2.3562, -1.5708])
    """
    _need_tensor("atan2", input, "input", 1)
    _need_tensor("atan2", other, "other", 2)
    (y, x), dt = _to_float(input, other)
    swap = lt(abs(x), abs(y))
    num, den = where(swap, x, y), where(swap, y, x)   # |num| <= |den|
    both_inf = logical_and(isinf(num), isinf(den))
    num = where(both_inf, sign(num), num)
    den = where(both_inf, sign(den), den)
    t = div(num, where(eq(den, 0), 1.0, den))
    a = _atan_unit(t)
    neg_y = signbit(y)
    half_turn = mul(cast(where(neg_y, -1, 1), _dt.from_numpy(dt)), math.pi)
    direct = where(signbit(x), add(a, half_turn), a)
    return where(swap, sub(mul(half_turn, 0.5), a), direct)


arctan2 = atan2


# -- fused multiply-add forms ---------------------------------------------------------------

def _value(value, dt):
    return value if _isf(dt) or dt.kind == "b" else int(value)


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2``, all three broadcast.

    Args:
        input (Tensor): the tensor to add to.
        tensor1 (Tensor): the first factor.
        tensor2 (Tensor): the second factor.
        value (Number, optional): multiplier of the product (truncated to an integer for
            integer results). Default: 1.

    Example::

        >>> eager.addcmul(eager.ones(3), eager.tensor([1., 2, 3]), eager.tensor([2., 2, 2]),
        ...               value=0.5)
        tensor([2., 3., 4.])
    """
    for x, name, pos in ((input, "input", 1), (tensor1, "tensor1", 2), (tensor2, "tensor2", 3)):
        _need_tensor("addcmul", x, name, pos)
    dt = _result_type(input, tensor1, tensor2)
    t1, t2 = cast(tensor1, _dt.from_numpy(dt)), cast(tensor2, _dt.from_numpy(dt))
    v = _value(value, dt)
    prod = mul(mul(t1, v) if v != 1 else t1, t2)
    return add(input, prod)


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2``, all three broadcast; integer ``tensor1`` and
    ``tensor2`` are refused (as PyTorch).

    Args:
        input (Tensor): the tensor to add to.
        tensor1 (Tensor): the numerator.
        tensor2 (Tensor): the denominator.
        value (Number, optional): multiplier of the quotient. Default: 1.

    Example::

        >>> eager.addcdiv(eager.zeros(2), eager.tensor([1., 2.]), eager.tensor([4., 4.]),
        ...               value=2)
        tensor([0.5000, 1.0000])
    """
    for x, name, pos in ((input, "input", 1), (tensor1, "tensor1", 2), (tensor2, "tensor2", 3)):
        _need_tensor("addcdiv", x, name, pos)
    if not _isf(tensor1._data.dtype) and not _isf(tensor2._data.dtype):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    dt = _result_type(input, tensor1, tensor2)
    t1, t2 = cast(tensor1, _dt.from_numpy(dt)), cast(tensor2, _dt.from_numpy(dt))
    v = _value(value, dt)
    return add(input, div(mul(t1, v) if v != 1 else t1, t2))


# -- log-space sums ------------------------------------------------------------------------

def _logaddexp(name, input, other, base2: bool):
    _need_tensor(name, input, "input", 1)
    _need_tensor(name, other, "other", 2)
    _float_only(name, input, other)
    (a, b), _ = _to_float(input, other)
    m = maximum(a, b)
    d = neg(abs(sub(a, b)))
    if base2:
        r = add(m, mul(log1p(exp(mul(d, math.log(2.0)))), 1.0 / math.log(2.0)))
    else:
        r = add(m, log1p(exp(d)))
    return where(logical_and(isinf(a), eq(a, b)), a, r)


def logaddexp(input, other) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow.

    Args:
        input (Tensor): the first input (floating point).
        other (Tensor): the second input; the two broadcast.

    Example::

        >>> eager.logaddexp(eager.tensor([-1.0, 1000.0]), eager.tensor([-1.0, 1000.0]))
        tensor([-3.0685e-01,  1.0007e+03])
    """
    return _logaddexp("logaddexp", input, other, False)


def logaddexp2(input, other) -> Tensor:
    """``log2(2**input + 2**other)`` without overflow.

    Args:
        input (Tensor): the first input (floating point).
        other (Tensor): the second input; the two broadcast.

    Example::

        >>> eager.logaddexp2(eager.tensor([1.0, 3.0]), eager.tensor([1.0, 3.0]))
        tensor([2., 4.])
    """
    return _logaddexp("logaddexp2", input, other, True)


# -- step, fractional part, x log y, hypot, copysign, angles ---------------------------------

def heaviside(input, values) -> Tensor:
    """The Heaviside step: 0 where ``input < 0``, ``values`` where ``input == 0``, 1 where
    ``input > 0`` (NaN gives 0).  Not differentiable.

    Args:
        input (Tensor): the input tensor.
        values (Tensor): the value at 0, of ``input``'s dtype; broadcasts with ``input``.

    Example::

        >>> eager.heaviside(eager.tensor([-1.5, 0.0, 2.0]), eager.tensor([0.5]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    _need_tensor("heaviside", input, "input", 1)
    _need_tensor("heaviside", values, "values", 2)
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    x, v = input.detach(), values.detach()
    step = cast(lt(0, x), _dt.from_numpy(x._data.dtype))
    return where(eq(x, 0), v, step)


def frac(input) -> Tensor:
    """The fractional part ``input - trunc(input)`` (sign of ``input``).

    Args:
        input (Tensor): the input tensor (floating point).

    Example::

        >>> eager.frac(eager.tensor([1.5, -2.25]))
        tensor([ 0.5000, -0.2500])
    """
    _need_tensor("frac", input, "input", 1)
    _float_only("frac", input)
    return sub(input, trunc(input))


def xlogy(input, other) -> Tensor:
    """``input * log(other)``, 0 where ``input == 0`` (unless ``other`` is NaN).

    Args:
        input (Tensor or Number): the multiplier.
        other (Tensor or Number): the argument of the logarithm; one of the two must be
            a tensor, and they broadcast.

    Example::

        >>> eager.xlogy(eager.tensor([0.0, 2.0]), eager.tensor([0.0, 3.0]))
        tensor([0.0000, 2.1972])
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("xlogy() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    input, other = as_tensor_arg(input), as_tensor_arg(other)
    (x, y), dt = _to_float(input, other)
    if isinstance(y, Tensor):
        logy, y_nan = log(y), isnan(y)
    else:
        with np.errstate(all="ignore"):
            logy = float(np.log(np.float64(y)))
        y_nan = math.isnan(y)
    if not isinstance(x, Tensor):                    # a number times log(y)
        prod = mul(x, logy)
        return prod if x != 0 else where(y_nan, prod, 0.0)
    if not isinstance(y, Tensor):
        prod = mul(x, logy)
        return prod if math.isfinite(logy) or y_nan else where(eq(x, 0), 0.0, prod)
    # log(y) taken as 0 where x == 0 and it is infinite or NaN from y < 0 (so the gradient
    # wrt x is log(y) elsewhere, as PyTorch's); a NaN y stays NaN
    bad = logical_and(eq(x, 0), logical_not(logical_or(isfinite(logy), y_nan)))
    return mul(x, where(bad, 0.0, logy))


def hypot(input, other) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow or underflow (infinite if either is).

    Args:
        input (Tensor): the first input (floating point).
        other (Tensor): the second input; the two broadcast.

    Example::

        >>> eager.hypot(eager.tensor([3.0, 1e30]), eager.tensor([4.0, 1e30]))
        tensor([5.0000e+00, 1.4142e+30])
    """
    _need_tensor("hypot", input, "input", 1)
    _need_tensor("hypot", other, "other", 2)
    _float_only("hypot", input, other)
    (a, b), _ = _to_float(input, other)
    m = maximum(abs(a), abs(b))
    s = where(logical_or(eq(m, 0), isinf(m)), 1.0, m)
    r = mul(s, sqrt(add(mul(div(a, s), div(a, s)), mul(div(b, s), div(b, s)))))
    return where(logical_or(isinf(a), isinf(b)), math.inf, r)


def copysign(input, other) -> Tensor:
    """``|input|`` with the sign (bit) of ``other``; integers give floats.

    Args:
        input (Tensor): magnitudes.
        other (Tensor or Number): signs; broadcasts with ``input``.

    Example::

        >>> eager.copysign(eager.tensor([1.0, -2.0, 3.0]), eager.tensor([-0.0, 1.0, -1.0]))
        tensor([-1.,  2., -3.])
    """
    _need_tensor("copysign", input, "input", 1)
    other = as_tensor_arg(other)
    (a, b), _ = _to_float(input, other)
    mag = abs(a)
    neg_sign = signbit(b)
    if isinstance(neg_sign, bool):
        return neg(mag) if neg_sign else mag
    out = where(neg_sign, neg(mag), mag)
    if b.requires_grad:   # PyTorch gives `other` a zero gradient, not none
        out = where(dispatch(_f.Full, shape=(), value=True, dtype=np.dtype(np.bool_)), out, b)
    return out


def _angle(name, input, factor):
    _need_tensor(name, input, "input", 1)
    (x,), _ = _to_float(input)
    return mul(x, factor)


def deg2rad(input) -> Tensor:
    """Degrees to radians (``input * pi / 180``); integers give floats.

    Args:
        input (Tensor): angles in degrees.

    Example::

        >>> eager.deg2rad(eager.tensor([180.0, 90.0]))
        tensor([3.1416, 1.5708])
    """
    return _angle("deg2rad", input, math.pi / 180.0)


def rad2deg(input) -> Tensor:
    """Radians to degrees (``input * 180 / pi``); integers give floats.

    Args:
        input (Tensor): angles in radians.

    Example::

        >>> eager.rad2deg(eager.tensor([3.141592653589793, -1.5707963267948966]))
        tensor([180., -90.])
    """
    return _angle("rad2deg", input, 180.0 / math.pi)


METHODS = ["atan2", "arctan2", "addcmul", "addcdiv", "logaddexp", "logaddexp2", "heaviside",
           "frac", "xlogy", "hypot", "copysign", "deg2rad", "rad2deg"]
INPLACE: dict = {n: None for n in ("atan2", "arctan2", "addcmul", "addcdiv", "heaviside",
                                   "frac", "xlogy", "hypot", "copysign", "deg2rad",
                                   "rad2deg")}
