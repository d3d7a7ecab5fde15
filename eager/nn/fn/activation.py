"""Activations beyond the core set (``hardtanh``, ``relu6``, ``selu``, ``celu``,
``hardswish``, ``hardsigmoid``, ``threshold``, ``mish``, ``softsign``, ``tanhshrink``,
``hardshrink``, ``softshrink``, ``logsigmoid``, ``prelu``, ``rrelu``, ``glu``,
``softmin``) and their in-place forms, with PyTorch's signatures.

Each is composed of eager ops (``where``, ``expm1``, ``softplus``, ...), so gradients and
compiled replay come for free.  The gradient masks are PyTorch's: ``hardtanh`` passes the
gradient only strictly inside ``(min_val, max_val)``.

In place (``inplace=True`` or the ``*_`` names): the value is computed out of place and
written into ``input`` (``eager.methods.inplace``).  When ``input`` takes part in a graph,
the composite reads a clone of it, so the saved operands of its inner ops are not the
tensor being overwritten (PyTorch's kernels save their result instead; the clone costs one
copy and keeps backward correct).
"""

from __future__ import annotations

from ..._state import STATE
from ...fn import elementwise as _ew

__all__ = ["celu", "celu_", "elu_", "glu", "hardshrink", "hardsigmoid", "hardswish",
           "hardtanh", "hardtanh_", "leaky_relu_", "logsigmoid", "mish", "prelu", "relu6",
           "rrelu", "rrelu_", "selu", "selu_", "softmin", "softshrink", "softsign",
           "tanhshrink", "threshold", "threshold_"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def apply_inplace(input, fn, inplace: bool, name: str):
    """``fn(input)``, written into ``input`` when ``inplace`` (see the module docstring)."""
    if not inplace:
        return fn(input)
    from ...methods import inplace as _inplace
    src = input.clone() if (input.requires_grad and STATE.grad_enabled) else input
    return _inplace(input, fn(src), name)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``min_val`` below ``min_val``, ``max_val`` above ``max_val``, ``x`` between.

    Args:
        input (Tensor): any shape.
        min_val, max_val (float): the range (``min_val <= max_val``).
        inplace (bool): write the result into ``input``.

    Example::

        >>> F.hardtanh(eager.tensor([-2.0, 0.5, 3.0]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")

    def f(x):
        inner = _ew.where(_ew.ge(x, max_val), float(max_val), x)
        return _ew.where(_ew.le(x, min_val), float(min_val), inner)
    return apply_inplace(input, f, inplace, "hardtanh_")


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace: bool = False):
    """``min(max(0, x), 6)`` (``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _elu_like(x, alpha: float, scale: float = 1.0, inner: float = 1.0):
    neg = _ew.expm1(x if inner == 1.0 else _ew.mul(x, inner))
    out = _ew.where(_ew.gt(x, 0), x, _ew.mul(neg, alpha))
    return out if scale == 1.0 else _ew.mul(out, scale)


def elu_(input, alpha: float = 1.0):
    return apply_inplace(input, lambda x: _elu_like(x, alpha), True, "elu_")


def selu(input, inplace: bool = False):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with PyTorch's constants."""
    return apply_inplace(input, lambda x: _elu_like(x, _SELU_ALPHA, _SELU_SCALE), inplace,
                         "selu_")


def selu_(input):
    return selu(input, True)


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return apply_inplace(input, lambda x: _elu_like(x, alpha, 1.0, 1.0 / alpha), inplace,
                         "celu_")


def celu_(input, alpha: float = 1.0):
    return celu(input, alpha, True)


def leaky_relu_(input, negative_slope: float = 0.01):
    from ..functional import leaky_relu
    return leaky_relu(input, negative_slope, True)


def hardsigmoid(input, inplace: bool = False):
    """``relu6(x + 3) / 6``."""
    return apply_inplace(input, lambda x: _ew.div(relu6(_ew.add(x, 3.0)), 6.0), inplace,
                         "hardsigmoid_")


def hardswish(input, inplace: bool = False):
    """``x * relu6(x + 3) / 6``."""
    return apply_inplace(input, lambda x: _ew.mul(x, _ew.div(relu6(_ew.add(x, 3.0)), 6.0)),
                         inplace, "hardswish_")


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``x`` where ``x > threshold``, else ``value``."""
    return apply_inplace(
        input, lambda x: _ew.where(_ew.gt(x, threshold), x, float(value)),
        inplace, "threshold_")


def threshold_(input, threshold_: float, value: float):
    return threshold(input, threshold_, value, True)


def mish(input, inplace: bool = False):
    """``x * tanh(softplus(x))``."""
    return apply_inplace(input, lambda x: _ew.mul(x, _ew.tanh(_ew.softplus(x))), inplace,
                         "mish_")


def softsign(input):
    """``x / (1 + |x|)``."""
    return _ew.div(input, _ew.add(_ew.abs(input), 1.0))


def tanhshrink(input):
    """``x - tanh(x)``."""
    return _ew.sub(input, _ew.tanh(input))


def hardshrink(input, lambd: float = 0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    keep = _ew.logical_or(_ew.gt(input, lambd), _ew.lt(input, -lambd))
    return _ew.where(keep, input, 0.0)


def softshrink(input, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    lo = _ew.where(_ew.lt(input, -lambd), _ew.add(input, lambd), 0.0)
    return _ew.where(_ew.gt(input, lambd), _ew.sub(input, lambd), lo)


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return _ew.neg(_ew.softplus(_ew.neg(input)))


def prelu(input, weight):
    """``max(0, x) + weight * min(0, x)``; ``weight`` has one value or one per channel
    (dimension 1 of ``input``)."""
    w = weight
    if weight.numel() != 1:
        if input.ndim < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{input.shape[1] if input.ndim >= 2 else 1}.")
        w = weight.reshape((weight.numel(),) + (1,) * (input.ndim - 2))
    return _ew.where(_ew.gt(input, 0), input, _ew.mul(w, input))


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False):
    """Leaky ReLU with a random slope drawn uniformly from ``[lower, upper]`` per element in
    training, and the fixed slope ``(lower + upper) / 2`` in evaluation."""
    def f(x):
        if training:
            from ... import factories as _fac
            slope = _fac.rand(tuple(x.shape), dtype=x.dtype)
            slope = _ew.add(_ew.mul(slope, upper - lower), lower)
        else:
            slope = (lower + upper) / 2.0
        return _ew.where(_ew.gt(x, 0), x, _ew.mul(x, slope))
    return apply_inplace(input, f, inplace, "rrelu_")


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    return rrelu(input, lower, upper, training, True)


def glu(input, dim: int = -1):
    """``a * sigmoid(b)`` where ``a, b`` are the halves of ``input`` along ``dim``."""
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {n}")
    a, b = input.chunk(2, dim)
    return _ew.mul(a, _ew.sigmoid(b))


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``softmax(-x, dim)``."""
    from ..functional import softmax
    return softmax(_ew.neg(input), dim, _stacklevel, dtype)

