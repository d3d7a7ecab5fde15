"""Activations: ``relu``, ``gelu``, ``silu``, ``sigmoid``, ``tanh``, ``softplus``,
``leaky_relu``, ``elu``, ``softmax``/``log_softmax`` and the rest (``hardtanh``, ``relu6``,
``selu``, ``celu``, ``hardswish``, ``hardsigmoid``, ``threshold``, ``mish``, ``softsign``,
``tanhshrink``, ``hardshrink``, ``softshrink``, ``logsigmoid``, ``prelu``, ``rrelu``, ``glu``,
``softmin``) and their in-place forms, with PyTorch's signatures.

Each is composed of eager ops (``where``, ``expm1``, ``softplus``, ...), so gradients and
compiled replay come for free.  The gradient masks are PyTorch's: ``hardtanh`` passes the
gradient only strictly inside ``(min_val, max_val)``.

In place (``inplace=True`` or the ``*_`` names): the value is computed out of place and
written into ``input`` (``eager.inplace.inplace``).  When ``input`` takes part in a graph,
the composite reads a clone of it, so the saved operands of its inner ops are not the
tensor being overwritten (PyTorch's kernels save their result instead; the clone costs one
copy and keeps backward correct).
"""

from __future__ import annotations

import warnings

from ... import factories as _fac
from ..._state import STATE
from ...fn import elementwise as _ew
from ...fn import reduce as _red
from ...inplace import inplace as _inplace

__all__ = ["celu", "celu_", "elu", "elu_", "gelu", "glu", "hardshrink", "hardsigmoid", "hardswish",
           "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "log_softmax", "logsigmoid",
           "mish", "prelu", "relu", "relu6", "relu_", "rrelu", "rrelu_", "selu", "selu_", "sigmoid",
           "silu", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh", "tanhshrink",
           "threshold", "threshold_"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def apply_inplace(input, fn, inplace: bool, name: str):
    """``fn(input)``, written into ``input`` when ``inplace`` (see the module docstring)."""
    if not inplace:
        return fn(input)
    src = input.clone() if (input.requires_grad and STATE.grad_enabled) else input
    return _inplace(input, fn(src), name)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """Clamps ``input`` elementwise to the range ``[min_val, max_val]``.

    The gradient is passed only strictly inside ``(min_val, max_val)``, as in PyTorch.

    Args:
        input (Tensor): the input, of any shape.
        min_val (float, optional): the lower end of the range. Default: ``-1.0``
        max_val (float, optional): the upper end of the range; ``min_val > max_val`` raises
            ``ValueError``. Default: ``1.0``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the shape of the input.

    Example::

        >>> F.hardtanh(eager.tensor([-2.0, 0.5, 3.0]))
        tensor([-1.0000,  0.5000,  1.0000])
        >>> F.hardtanh(eager.tensor([-2.0, 0.25, 3.0]), min_val=0.0, max_val=2.0)
        tensor([0.0000, 0.2500, 2.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")

    def f(x):
        inner = _ew.where(_ew.ge(x, max_val), float(max_val), x)
        return _ew.where(_ew.le(x, min_val), float(min_val), inner)
    return apply_inplace(input, f, inplace, "hardtanh_")


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """In-place :func:`hardtanh`: clamps ``input`` to ``[min_val, max_val]`` and returns it.

    Args:
        input (Tensor): the tensor to modify.
        min_val (float, optional): the lower end of the range. Default: ``-1.0``
        max_val (float, optional): the upper end of the range. Default: ``1.0``

    Example::

        >>> x = eager.tensor([-2.0, 0.5, 3.0])
        >>> F.hardtanh_(x)
        tensor([-1.0000,  0.5000,  1.0000])
        >>> x
        tensor([-1.0000,  0.5000,  1.0000])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace: bool = False):
    """Applies ``min(max(0, x), 6)`` elementwise (:func:`hardtanh` with the range ``[0, 6]``).

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.relu6(eager.tensor([-1.0, 3.0, 8.0]))
        tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def _elu_like(x, alpha: float, scale: float = 1.0, inner: float = 1.0):
    neg = _ew.expm1(x if inner == 1.0 else _ew.mul(x, inner))
    out = _ew.where(_ew.gt(x, 0), x, _ew.mul(neg, alpha))
    return out if scale == 1.0 else _ew.mul(out, scale)


def elu_(input, alpha: float = 1.0):
    """In-place :func:`elu`, written into ``input``.

    The result is ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        input (Tensor): the tensor to modify.
        alpha (float, optional): the value the negative side saturates to, negated.
            Default: ``1.0``

    Example::

        >>> x = eager.tensor([-1.0, 0.0, 1.0])
        >>> F.elu_(x, alpha=2.0)
        tensor([-1.2642,  0.0000,  1.0000])
    """
    return apply_inplace(input, lambda x: _elu_like(x, alpha), True, "elu_")


def selu(input, inplace: bool = False):
    """Applies the scaled exponential linear unit (SELU) elementwise.

    The result is ``scale * (x if x > 0 else alpha * (exp(x) - 1))``.

    ``alpha`` (about 1.6733) and ``scale`` (about 1.0507) are PyTorch's fixed constants, chosen
    so that stacked SELU layers keep activations near zero mean and unit variance.

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.selu(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-1.1113,  0.0000,  1.0507])
    """
    return apply_inplace(input, lambda x: _elu_like(x, _SELU_ALPHA, _SELU_SCALE), inplace,
                         "selu_")


def selu_(input):
    """In-place :func:`selu`.

    Args:
        input (Tensor): the tensor to modify.

    Example::

        >>> x = eager.tensor([-1.0, 0.0, 1.0])
        >>> F.selu_(x)
        tensor([-1.1113,  0.0000,  1.0507])
    """
    return selu(input, True)


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """Applies the continuously differentiable ELU (CELU) elementwise.

    The result is ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        input (Tensor): the input, of any shape.
        alpha (float, optional): the saturation scale of the negative side; must not be 0
            (raises ``RuntimeError``). Default: ``1.0``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.celu(eager.tensor([-1.0, 0.0, 1.0]), alpha=0.5)
        tensor([-0.4323,  0.0000,  1.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return apply_inplace(input, lambda x: _elu_like(x, alpha, 1.0, 1.0 / alpha), inplace,
                         "celu_")


def celu_(input, alpha: float = 1.0):
    """In-place :func:`celu`.

    Args:
        input (Tensor): the tensor to modify.
        alpha (float, optional): the saturation scale of the negative side. Default: ``1.0``

    Example::

        >>> x = eager.tensor([-1.0, 0.0, 1.0])
        >>> F.celu_(x)
        tensor([-0.6321,  0.0000,  1.0000])
    """
    return celu(input, alpha, True)


def leaky_relu_(input, negative_slope: float = 0.01):
    """In-place :func:`leaky_relu`: ``x`` where ``x > 0``, else ``negative_slope * x``.

    Args:
        input (Tensor): the tensor to modify.
        negative_slope (float, optional): the slope for negative inputs. Default: ``0.01``

    Example::

        >>> x = eager.tensor([-2.0, 0.0, 3.0])
        >>> F.leaky_relu_(x, 0.1)
        tensor([-0.2000,  0.0000,  3.0000])
    """
    return leaky_relu(input, negative_slope, True)


def hardsigmoid(input, inplace: bool = False):
    """Applies the hard sigmoid ``relu6(x + 3) / 6`` elementwise.

    It is a piecewise-linear approximation of the sigmoid: 0 below -3, 1 above 3, linear
    between.

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.hardsigmoid(eager.tensor([-4.0, 0.0, 1.5, 4.0]))
        tensor([0.0000, 0.5000, 0.7500, 1.0000])
    """
    return apply_inplace(input, lambda x: _ew.div(relu6(_ew.add(x, 3.0)), 6.0), inplace,
                         "hardsigmoid_")


def hardswish(input, inplace: bool = False):
    """Applies ``x * relu6(x + 3) / 6`` elementwise (the hard swish of MobileNetV3).

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.hardswish(eager.tensor([-1.0, 0.0, 1.0, 4.0]))
        tensor([-0.3333,  0.0000,  0.6667,  4.0000])
    """
    return apply_inplace(input, lambda x: _ew.mul(x, _ew.div(relu6(_ew.add(x, 3.0)), 6.0)),
                         inplace, "hardswish_")


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """Replaces the elements of ``input`` not greater than ``threshold`` by ``value``.

    Args:
        input (Tensor): the input, of any shape.
        threshold (float): elements ``<= threshold`` are replaced.
        value (float): the replacement.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.threshold(eager.tensor([0.5, 1.0, 2.0]), 1.0, -1.0)
        tensor([-1., -1.,  2.])
    """
    return apply_inplace(
        input, lambda x: _ew.where(_ew.gt(x, threshold), x, float(value)),
        inplace, "threshold_")


_threshold = threshold  # for threshold_, whose parameter has the function's name


def threshold_(input, threshold: float, value: float):
    """In-place :func:`threshold`.

    Args:
        input (Tensor): the tensor to modify.
        threshold (float): elements ``<= threshold`` are replaced.
        value (float): the replacement.

    Example::

        >>> x = eager.tensor([0.5, 1.0, 2.0])
        >>> F.threshold_(x, 1.0, 0.0)
        tensor([0., 0., 2.])
        >>> F.threshold_(x, threshold=1.0, value=-1.0)
        tensor([-1., -1.,  2.])
    """
    return _threshold(input, threshold, value, True)


def mish(input, inplace: bool = False):
    """Applies ``x * tanh(softplus(x))`` elementwise.

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.mish(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.3034,  0.0000,  0.8651])
    """
    return apply_inplace(input, lambda x: _ew.mul(x, _ew.tanh(_ew.softplus(x))), inplace,
                         "mish_")


def softsign(input):
    """Applies ``x / (1 + |x|)`` elementwise.

    Args:
        input (Tensor): the input, of any shape.

    Example::

        >>> F.softsign(eager.tensor([-3.0, 0.0, 1.0]))
        tensor([-0.7500,  0.0000,  0.5000])
    """
    return _ew.div(input, _ew.add(_ew.abs(input), 1.0))


def tanhshrink(input):
    """Applies ``x - tanh(x)`` elementwise.

    Args:
        input (Tensor): the input, of any shape.

    Example::

        >>> F.tanhshrink(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.2384,  0.0000,  0.2384])
    """
    return _ew.sub(input, _ew.tanh(input))


def hardshrink(input, lambd: float = 0.5):
    """Keeps the elements with ``|x| > lambd`` and sets the others to 0.

    Args:
        input (Tensor): the input, of any shape.
        lambd (float, optional): the half-width of the zeroed band. Default: ``0.5``

    Example::

        >>> F.hardshrink(eager.tensor([-1.0, -0.5, 0.2, 0.7]))
        tensor([-1.0000,  0.0000,  0.0000,  0.7000])
    """
    keep = _ew.logical_or(_ew.gt(input, lambd), _ew.lt(input, -lambd))
    return _ew.where(keep, input, 0.0)


def softshrink(input, lambd: float = 0.5):
    """Shrinks ``input`` toward zero by ``lambd`` (soft thresholding).

    The result is ``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 in
    between.

    Args:
        input (Tensor): the input, of any shape.
        lambd (float, optional): the shrinkage, not negative (raises ``RuntimeError``).
            Default: ``0.5``

    Example::

        >>> F.softshrink(eager.tensor([-1.0, -0.5, 0.2, 0.7]))
        tensor([-0.5000,  0.0000,  0.0000,  0.2000])
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    lo = _ew.where(_ew.lt(input, -lambd), _ew.add(input, lambd), 0.0)
    return _ew.where(_ew.gt(input, lambd), _ew.sub(input, lambd), lo)


def logsigmoid(input):
    """Applies ``log(sigmoid(x))`` elementwise, computed stably as ``-softplus(-x)``.

    Args:
        input (Tensor): the input, of any shape.

    Example::

        >>> F.logsigmoid(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-1.3133, -0.6931, -0.3133])
    """
    return _ew.neg(_ew.softplus(_ew.neg(input)))


def prelu(input, weight):
    """Applies ``max(0, x) + weight * min(0, x)`` elementwise, with a learnable negative slope.

    Args:
        input (Tensor): the input; with more than one slope, dimension 1 is the channel
            dimension.
        weight (Tensor): the slopes: one element (shared by all inputs) or one per channel
            (``input.shape[1]`` elements; a mismatch raises ``RuntimeError``).

    Shape:
        - Input: ``(N, C, *)``, or any shape with a one-element ``weight``.
        - Weight: ``(1,)`` or ``(C,)``.
        - Output: the shape of the input.

    Example::

        >>> x = eager.tensor([[-1.0, 2.0], [-3.0, -4.0]])
        >>> F.prelu(x, eager.tensor([0.1, 0.5]))
        tensor([[-0.1000,  2.0000],
                [-0.3000, -2.0000]])
    """
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
    """Randomized leaky ReLU: ``x`` where ``x > 0``, else ``a * x``.

    In training, ``a`` is drawn per element uniformly from ``[lower, upper]`` (from the
    default generator); otherwise it is the fixed ``(lower + upper) / 2``.  Note that
    ``training`` defaults to ``False`` here, as in PyTorch's functional form.

    Args:
        input (Tensor): the input, of any shape.
        lower (float, optional): the smallest slope. Default: ``1/8``
        upper (float, optional): the largest slope. Default: ``1/3``
        training (bool, optional): draw random slopes. Default: ``False``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.rrelu(eager.tensor([-2.0, 0.0, 2.0]), 0.1, 0.3)
        tensor([-0.4000,  0.0000,  2.0000])
        >>> y = F.rrelu(eager.tensor([-2.0]), 0.1, 0.3, training=True)
        >>> bool(-0.6 <= y.item() <= -0.2)
        True
    """
    def f(x):
        if training:
            slope = _fac.rand(tuple(x.shape), dtype=x.dtype)
            slope = _ew.add(_ew.mul(slope, upper - lower), lower)
        else:
            slope = (lower + upper) / 2.0
        return _ew.where(_ew.gt(x, 0), x, _ew.mul(x, slope))
    return apply_inplace(input, f, inplace, "rrelu_")


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """In-place :func:`rrelu`.

    Args:
        input (Tensor): the tensor to modify.
        lower (float, optional): the smallest slope. Default: ``1/8``
        upper (float, optional): the largest slope. Default: ``1/3``
        training (bool, optional): draw random slopes. Default: ``False``

    Example::

        >>> x = eager.tensor([-2.0, 0.0, 2.0])
        >>> F.rrelu_(x, 0.1, 0.3)
        tensor([-0.4000,  0.0000,  2.0000])
    """
    return rrelu(input, lower, upper, training, True)


def glu(input, dim: int = -1):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``input``.

    ``input`` is split in two along ``dim``.

    Args:
        input (Tensor): the input; its size along ``dim`` must be even.
        dim (int, optional): the dimension to split. Default: ``-1``

    Shape:
        - Input: ``(*, 2M, *)``, with ``2M`` at ``dim``.
        - Output: ``(*, M, *)``.

    Example::

        >>> F.glu(eager.tensor([[1.0, 2.0, 0.0, 0.0]]))
        tensor([[0.5000, 1.0000]])
        >>> F.glu(eager.randn(4, 6), dim=1).shape
        eager.Size([4, 3])
    """
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {n}")
    a, b = input.chunk(2, dim)
    return _ew.mul(a, _ew.sigmoid(b))


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    """Applies ``softmax(-x)`` along ``dim``: the smallest elements get the largest weights.

    Args:
        input (Tensor): the input.
        dim (int, optional): the dimension the result sums to 1 over; omitting it is
            deprecated and picks a dimension with a warning, as PyTorch does. Default: ``None``
        _stacklevel (int, optional): the ``stacklevel`` of the implicit-``dim`` warning
            (3: the line calling this function). Default: ``3``
        dtype (eager.dtype, optional): cast ``input`` to this dtype first. Default: ``None``

    Example::

        >>> F.softmin(eager.tensor([1.0, 2.0, 3.0]), dim=0)
        tensor([0.6652, 0.2447, 0.0900])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    return softmax(_ew.neg(input), dim, _stacklevel, dtype)


def relu(input, inplace: bool = False):
    """Applies the rectified linear unit ``max(0, x)`` elementwise.

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.relu(eager.tensor([-2.0, -0.5, 0.0, 1.0, 3.0]))
        tensor([0., 0., 0., 1., 3.])
    """
    return input.relu_() if inplace else _ew.relu(input)


def relu_(input):
    """In-place :func:`relu`: replaces the negative elements of ``input`` with 0.

    Args:
        input (Tensor): the tensor to modify.

    Example::

        >>> x = eager.tensor([-1.0, 2.0])
        >>> F.relu_(x)
        tensor([0., 2.])
        >>> x
        tensor([0., 2.])
    """
    return input.relu_()


def gelu(input, approximate: str = "none"):
    """Applies the Gaussian error linear unit (GELU) elementwise.

    The result is ``x * Phi(x)``, ``Phi`` being the standard normal CDF.

    Args:
        input (Tensor): the input, of any shape.
        approximate (str, optional): ``"none"`` for the exact form (with ``erf``) or
            ``"tanh"`` for the tanh approximation. Default: ``"none"``

    Example::

        >>> F.gelu(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.1587,  0.0000,  0.8413])
        >>> F.gelu(eager.tensor([-1.0, 0.0, 1.0]), approximate="tanh")
        tensor([-0.1588,  0.0000,  0.8412])
    """
    return _ew.gelu(input, approximate=approximate)


def silu(input, inplace: bool = False):
    """Applies the sigmoid linear unit (swish) ``x * sigmoid(x)`` elementwise.

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.silu(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.2689,  0.0000,  0.7311])
    """
    out = _ew.silu(input)
    if inplace:
        return _inplace(input, out, "silu_")
    return out


def sigmoid(input):
    """Applies the logistic sigmoid ``1 / (1 + exp(-x))`` elementwise.

    Args:
        input (Tensor): the input, of any shape.

    Example::

        >>> F.sigmoid(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([0.2689, 0.5000, 0.7311])
    """
    return _ew.sigmoid(input)


def tanh(input):
    """Applies the hyperbolic tangent elementwise.

    Args:
        input (Tensor): the input, of any shape.

    Example::

        >>> F.tanh(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.7616,  0.0000,  0.7616])
    """
    return _ew.tanh(input)


def softplus(input, beta=1.0, threshold=20.0):
    """Applies ``log(1 + exp(beta * x)) / beta`` elementwise, a smooth approximation of ReLU.

    Where ``beta * x > threshold`` the result is ``x`` itself (the two agree there to
    within float precision, and this avoids overflow).

    Args:
        input (Tensor): the input, of any shape.
        beta (float, optional): the sharpness; larger is closer to ReLU. Default: ``1.0``
        threshold (float, optional): above this value of ``beta * x`` the function is linear.
            Default: ``20.0``

    Example::

        >>> F.softplus(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([0.3133, 0.6931, 1.3133])
        >>> F.softplus(eager.tensor([-1.0, 0.0, 30.0]), beta=2.0)
        tensor([ 0.0635,  0.3466, 30.0000])
    """
    return _ew.softplus(input, beta=beta, threshold=threshold)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """Applies leaky ReLU elementwise: ``x`` where ``x > 0``, else ``negative_slope * x``.

    In place, the value is computed from a clone of ``input`` when it is part of a graph, so
    backward still works.

    Args:
        input (Tensor): the input, of any shape.
        negative_slope (float, optional): the slope for negative inputs. Default: ``0.01``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.leaky_relu(eager.tensor([-2.0, 0.0, 3.0]), 0.1)
        tensor([-0.2000,  0.0000,  3.0000])
    """
    return apply_inplace(
        input, lambda x: _ew.where(_ew.gt(x, 0), x, _ew.mul(x, negative_slope)), inplace,
        "leaky_relu_")


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """Applies the exponential linear unit (ELU) elementwise.

    The result is ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        input (Tensor): the input, of any shape.
        alpha (float, optional): the value the negative side saturates to, negated.
            Default: ``1.0``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.elu(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.6321,  0.0000,  1.0000])
    """
    out = _ew.where(_ew.gt(input, 0), input, _ew.mul(_ew.expm1(input), alpha))
    if inplace:
        return _inplace(input, out, "elu_")
    return out


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's deprecated implicit ``dim``; the warning points ``stacklevel`` frames up
    from here (3, the default ``_stacklevel``: the caller of ``softmax``)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """Applies softmax along ``dim``: ``exp(x_i) / sum_j exp(x_j)``.

    Each slice along ``dim`` of the result is non-negative and sums to 1.

    Args:
        input (Tensor): the input.
        dim (int, optional): the dimension to normalize over.  Omitting it is deprecated: a
            warning is issued and dimension 0 is used for 0-, 1- and 3-D input, else 1 (as
            PyTorch). Default: ``None``
        _stacklevel (int, optional): the ``stacklevel`` of the implicit-``dim`` warning
            (3: the line calling this function). Default: ``3``
        dtype (eager.dtype, optional): cast ``input`` to this dtype first (e.g. to compute an
            integer tensor's softmax in float64). Default: ``None``

    Example::

        >>> F.softmax(eager.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]), dim=1)
        tensor([[0.0900, 0.2447, 0.6652],
                [0.3333, 0.3333, 0.3333]])
        >>> F.softmax(eager.tensor([1, 2]), dim=0, dtype=eager.float64)
        tensor([0.2689, 0.7311], dtype=eager.float64)
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    if dtype is not None:
        input = _ew.cast(input, dtype)
    return _red.softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """Applies ``log(softmax(x))`` along ``dim``, computed stably in one step.

    Args:
        input (Tensor): the input.
        dim (int, optional): the dimension to normalize over; omitting it is deprecated and
            picks one with a warning, as in :func:`softmax`. Default: ``None``
        _stacklevel (int, optional): the ``stacklevel`` of the implicit-``dim`` warning
            (3: the line calling this function). Default: ``3``
        dtype (eager.dtype, optional): cast ``input`` to this dtype first. Default: ``None``

    Example::

        >>> F.log_softmax(eager.tensor([[1.0, 2.0, 3.0]]), dim=1)
        tensor([[-2.4076, -1.4076, -0.4076]])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    if dtype is not None:
        input = _ew.cast(input, dtype)
    return _red.log_softmax(input, dim)
