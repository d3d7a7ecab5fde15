"""Activation modules: the elementwise nonlinearities (``ReLU``, ``GELU``, ``Tanh``,
``Sigmoid``, ``SiLU``, ``LeakyReLU``, ``ELU``, ``Softplus``, ``Hardtanh``, ``SELU``, ...),
the softmax family (``Softmax``, ``LogSoftmax``, ``Softmin``, ``Softmax2d``), ``GLU`` and
the learnable ``PReLU``; each is the matching ``F`` function as a layer."""

from __future__ import annotations

from .. import autograd, factories
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["ELU", "GELU", "LeakyReLU", "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax",
           "Softplus", "Tanh"]


class ReLU(Module):
    """Applies the rectified linear unit elementwise: ``ReLU(x) = max(0, x)``.

    Negative values become zero and the rest pass through unchanged.

    Args:
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.ReLU()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([0., 0., 2.])
        >>> x = eager.tensor([-1.0, 3.0])
        >>> nn.ReLU(inplace=True)(x) is x
        True
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Applies the Gaussian error linear unit elementwise: ``GELU(x) = x * Phi(x)``.

    ``Phi`` is the cumulative distribution function of the standard normal distribution,
    computed exactly with ``erf``.  With ``approximate="tanh"`` it uses the approximation
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`` instead.

    Args:
        approximate (str): ``"none"`` for the exact form or ``"tanh"`` for the tanh
            approximation; any other value raises ``ValueError``. Default: ``"none"``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.GELU()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.1587,  0.0000,  1.9545])
        >>> nn.GELU(approximate="tanh")(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.1588,  0.0000,  1.9546])
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate argument must be either none or tanh, got "
                             f"{approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """Applies the hyperbolic tangent elementwise: ``Tanh(x) = tanh(x)``.

    The output lies in ``(-1, 1)``.

    Args:
        This module takes no constructor arguments.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Tanh()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.7616,  0.0000,  0.9640])
    """

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """Applies the logistic sigmoid elementwise: ``Sigmoid(x) = 1 / (1 + exp(-x))``.

    The output lies in ``(0, 1)``.

    Args:
        This module takes no constructor arguments.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Sigmoid()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([0.2689, 0.5000, 0.8808])
    """

    def forward(self, input):
        return F.sigmoid(input)


class SiLU(Module):
    """Applies the sigmoid linear unit (swish) elementwise: ``SiLU(x) = x * sigmoid(x)``.

    Args:
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.SiLU()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.2689,  0.0000,  1.7616])
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """Applies the leaky rectified linear unit elementwise.

    ``LeakyReLU(x) = x`` where ``x > 0``, else ``negative_slope * x``, so negative inputs
    keep a small gradient.

    Args:
        negative_slope (float): the slope used for negative inputs. Default: ``1e-2``.
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.LeakyReLU(0.2)
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.2000,  0.0000,  2.0000])
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class ELU(Module):
    """Applies the exponential linear unit elementwise.

    ``ELU(x) = x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha (float): the value the output approaches for large negative inputs is
            ``-alpha``. Default: ``1.0``.
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.ELU()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.6321,  0.0000,  2.0000])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """Applies the softplus function elementwise, a smooth approximation of ReLU.

    ``Softplus(x) = log(1 + exp(beta * x)) / beta``.  Where ``beta * x > threshold`` the
    output is ``x`` itself (the two agree to within rounding there), which avoids overflow.
    The output is always positive.

    Args:
        beta (float): the ``beta`` in the formula; larger values approach ReLU more
            closely. Default: ``1.0``.
        threshold (float): above this value of ``beta * x`` the function is linear.
            Default: ``20.0``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Softplus()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([0.3133, 0.6931, 2.1269])
        >>> nn.Softplus(beta=2.0)(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([0.0635, 0.3466, 2.0091])
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """Applies softmax along one dimension, so that each slice along ``dim`` sums to 1.

    ``Softmax(x)_i = exp(x_i) / sum_j exp(x_j)``, where ``i`` and ``j`` index dimension
    ``dim``.  It is computed stably (the maximum is subtracted first).  To feed
    ``nn.NLLLoss``, use ``LogSoftmax``, which is more accurate than ``log(Softmax(x))``.

    Args:
        dim (int): the dimension to normalize over. If ``None``, a dimension is chosen as
            PyTorch does (``0`` for 0-, 1- and 3-dimensional input, otherwise ``1``) and a
            deprecation warning is issued. Default: ``None``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input, with values in ``[0, 1]``.

    Example::

        >>> m = nn.Softmax(dim=0)
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([0.0420, 0.1142, 0.8438])
        >>> y = nn.Softmax(dim=1)(eager.randn(2, 3))
        >>> eager.allclose(y.sum(dim=1), eager.ones(2))
        True
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Applies ``log(softmax(x))`` along one dimension, in a numerically stable way.

    ``LogSoftmax(x)_i = x_i - log(sum_j exp(x_j))``, where ``i`` and ``j`` index dimension
    ``dim``.  Its output is what ``nn.NLLLoss`` expects.

    Args:
        dim (int): the dimension to normalize over. If ``None``, a dimension is chosen as
            PyTorch does (``0`` for 0-, 1- and 3-dimensional input, otherwise ``1``) and a
            deprecation warning is issued. Default: ``None``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input, with values in ``(-inf, 0]``.

    Example::

        >>> m = nn.LogSoftmax(dim=0)
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-3.1698, -2.1698, -0.1698])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class Hardtanh(Module):
    """Clamps the input elementwise to the range ``[min_val, max_val]``.

    ``Hardtanh(x) = min_val`` where ``x < min_val``, ``max_val`` where ``x > max_val``,
    else ``x``.  The gradient passes only strictly inside ``(min_val, max_val)``.
    PyTorch's deprecated ``min_value`` / ``max_value`` keyword arguments are not accepted.

    Args:
        min_val (float): the lower end of the range. Default: ``-1.0``.
        max_val (float): the upper end of the range; ``min_val > max_val`` raises
            ``ValueError``. Default: ``1.0``.
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Hardtanh()
        >>> m(eager.tensor([-3.0, 0.5, 7.0]))
        tensor([-1.0000,  0.5000,  1.0000])
        >>> nn.Hardtanh(-0.5, 0.5)(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.5000,  0.0000,  0.5000])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """Applies ReLU capped at 6 elementwise: ``ReLU6(x) = min(max(0, x), 6)``.

    It is ``Hardtanh(0, 6)``, and like it passes the gradient only strictly inside
    ``(0, 6)``.

    Args:
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.ReLU6()
        >>> m(eager.tensor([-3.0, 1.0, 7.0]))
        tensor([0., 1., 6.])
    """

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class _Inplace(Module):
    _fn = None

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class SELU(_Inplace):
    """Applies the scaled exponential linear unit elementwise.

    ``SELU(x) = scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with the fixed
    constants ``alpha ~= 1.6733`` and ``scale ~= 1.0507`` of self-normalizing networks.
    Pair it with ``nn.AlphaDropout`` rather than ``nn.Dropout``.

    Args:
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.SELU()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-1.1113,  0.0000,  2.1014])
    """
    _fn = staticmethod(F.selu)


class Hardswish(_Inplace):
    """Applies the hard swish function elementwise, a cheap approximation of ``SiLU``.

    ``Hardswish(x) = x * relu6(x + 3) / 6``: ``0`` for ``x <= -3``, ``x`` for ``x >= 3``,
    and the quadratic ``x * (x + 3) / 6`` in between.

    Args:
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Hardswish()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.3333,  0.0000,  1.6667])
    """
    _fn = staticmethod(F.hardswish)


class Hardsigmoid(_Inplace):
    """Applies the hard sigmoid elementwise, a piecewise-linear approximation of sigmoid.

    ``Hardsigmoid(x) = relu6(x + 3) / 6``: ``0`` for ``x <= -3``, ``1`` for ``x >= 3``,
    and ``x / 6 + 1 / 2`` in between.

    Args:
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Hardsigmoid()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([0.3333, 0.5000, 0.8333])
    """
    _fn = staticmethod(F.hardsigmoid)


class Mish(_Inplace):
    """Applies the Mish function elementwise: ``Mish(x) = x * tanh(softplus(x))``.

    Args:
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Mish()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.3034,  0.0000,  1.9440])
    """
    _fn = staticmethod(F.mish)


class CELU(Module):
    """Applies the continuously differentiable exponential linear unit elementwise.

    ``CELU(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.  With ``alpha = 1``
    it equals ``ELU``.

    Args:
        alpha (float): the ``alpha`` in the formula; ``0`` raises ``RuntimeError`` when the
            module is called. Default: ``1.0``.
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.CELU(alpha=0.5)
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.4323,  0.0000,  2.0000])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Threshold(Module):
    """Replaces the elements that are not above a threshold by a fixed value.

    ``Threshold(x) = x`` where ``x > threshold``, else ``value``.

    Args:
        threshold (float): the value an element must exceed to be kept.
        value (float): what elements at or below ``threshold`` are replaced with.
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Threshold(0.5, 20.0)
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([20., 20.,  2.])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Applies the randomized leaky rectified linear unit elementwise.

    ``RReLU(x) = x`` where ``x > 0``, else ``a * x``.  In training mode ``a`` is drawn
    independently for every element from the uniform distribution ``U(lower, upper)`` (a
    new draw on each call); in evaluation mode it is fixed at ``(lower + upper) / 2``.

    Args:
        lower (float): the lower bound of the uniform distribution. Default: ``1/8``.
        upper (float): the upper bound of the uniform distribution. Default: ``1/3``.
        inplace (bool): if ``True``, write the result into the input tensor and return
            it. Default: ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.RReLU(0.1, 0.3)
        >>> y = m(eager.tensor([-1.0, -1.0, 2.0]))  # training mode: random slopes
        >>> bool(((y[:2] <= -0.1) & (y[:2] >= -0.3)).all())
        True
        >>> m.eval()(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.2000,  0.0000,  2.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else "")


class _Plain(Module):
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class Softsign(_Plain):
    """Applies the softsign function elementwise: ``Softsign(x) = x / (1 + |x|)``.

    The output lies in ``(-1, 1)``, approaching the bounds more slowly than ``Tanh``.

    Args:
        This module takes no constructor arguments.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Softsign()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.5000,  0.0000,  0.6667])
    """
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    """Applies ``Tanhshrink(x) = x - tanh(x)`` elementwise.

    Args:
        This module takes no constructor arguments.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Tanhshrink()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.2384,  0.0000,  1.0360])
    """
    _fn = staticmethod(F.tanhshrink)


class LogSigmoid(_Plain):
    """Applies ``LogSigmoid(x) = log(1 / (1 + exp(-x)))`` elementwise.

    It is computed as ``-softplus(-x)``, which stays finite for large negative inputs.

    Args:
        This module takes no constructor arguments.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.LogSigmoid()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-1.3133, -0.6931, -0.1269])
    """
    _fn = staticmethod(F.logsigmoid)


class Hardshrink(Module):
    """Applies hard shrinkage elementwise: small values become zero.

    ``Hardshrink(x) = x`` where ``|x| > lambd``, else ``0``.

    Args:
        lambd (float): the half-width of the band around zero that is zeroed.
            Default: ``0.5``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Hardshrink()
        >>> m(eager.tensor([-1.0, -0.3, 0.2, 2.0]))
        tensor([-1.,  0.,  0.,  2.])
    """

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Applies soft shrinkage elementwise: values move towards zero by ``lambd``.

    Those within ``lambd`` of zero become zero:
    ``Softshrink(x) = x - lambd`` where ``x > lambd``, ``x + lambd`` where ``x < -lambd``,
    else ``0``.

    Args:
        lambd (float): the shrinkage amount; a negative value raises ``RuntimeError`` when
            the module is called. Default: ``0.5``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.Softshrink()
        >>> m(eager.tensor([-1.0, -0.3, 0.2, 2.0]))
        tensor([-0.5000,  0.0000,  0.0000,  1.5000])
    """

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class GLU(Module):
    """Applies the gated linear unit: ``GLU(x) = a * sigmoid(b)``.

    ``a`` and ``b`` are the first and second halves of the input along ``dim``, so that
    dimension is halved in the output.

    Args:
        dim (int): the dimension to split; its size must be even (otherwise calling the
            module raises ``RuntimeError``). Default: ``-1``.

    Shape:
        - Input: ``(*_1, M, *_2)`` where ``M`` (the size of ``dim``) is even.
        - Output: ``(*_1, M / 2, *_2)``.

    Example::

        >>> m = nn.GLU()
        >>> m(eager.tensor([[1.0, 2.0, 0.0, 0.0]]))
        tensor([[0.5000, 1.0000]])
        >>> m(eager.randn(4, 6)).shape
        eager.Size([4, 3])
    """

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """Applies softmin along one dimension: ``Softmin(x) = Softmax(-x)``.

    The slices along ``dim`` are non-negative and sum to 1, with the largest weight on
    the smallest element.

    Args:
        dim (int): the dimension to normalize over. If ``None``, a dimension is chosen as
            for ``Softmax`` (with a deprecation warning). Default: ``None``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input, with values in ``[0, 1]``.

    Example::

        >>> m = nn.Softmin(dim=0)
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([0.7054, 0.2595, 0.0351])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Applies softmax over the channels at every spatial location.

    For an ``(N, C, H, W)`` or ``(C, H, W)`` input this is ``Softmax(dim=-3)``: at each
    ``(h, w)`` the ``C`` values are non-negative and sum to 1.  Inputs with another number
    of dimensions raise ``ValueError``.

    Args:
        This module takes no constructor arguments.

    Shape:
        - Input: ``(N, C, H, W)`` or ``(C, H, W)``.
        - Output: the same shape as the input, with values in ``[0, 1]``.

    Example::

        >>> m = nn.Softmax2d()
        >>> y = m(eager.randn(2, 3, 4, 5))
        >>> y.shape
        eager.Size([2, 3, 4, 5])
        >>> eager.allclose(y.sum(dim=1), eager.ones(2, 4, 5))
        True
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


class PReLU(Module):
    """Applies the parametric rectified linear unit: a leaky ReLU with a learned slope.

    ``PReLU(x) = max(0, x) + a * min(0, x)``, where ``a`` is the learnable ``weight``:
    either a single value shared by all channels, or one value per channel, the channel
    dimension being dimension 1 of the input (inputs with fewer than 2 dimensions have no
    channel dimension and need ``num_parameters=1``).

    Args:
        num_parameters (int): ``1``, or the number of input channels ``C`` to learn one
            slope per channel. Default: ``1``.
        init (float): the initial value of every slope. ``reset_parameters()`` fills the
            weight with it again. Default: ``0.25``.
        device, dtype: accepted as PyTorch's, for the weight (the CPU is the only device).

    Shape:
        - Input: ``(*)``, any number of dimensions; with ``num_parameters > 1``, ``(N, C,
          *)`` where ``C = num_parameters``.
        - Output: ``(*)``, the same shape as the input.

    Attributes:
        weight (Tensor): the learnable slopes, of shape ``(num_parameters,)``.

    Example::

        >>> m = nn.PReLU()
        >>> m(eager.tensor([-1.0, 0.0, 2.0]))
        tensor([-0.2500,  0.0000,  2.0000], grad_fn=<...>)
        >>> nn.PReLU(num_parameters=3)(eager.randn(2, 3, 4)).shape
        eager.Size([2, 3, 4])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(factories.full((num_parameters,), float(init), dtype=dtype,
                                               device=device))

    def reset_parameters(self):
        with autograd.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


__all__ += ["CELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid",
            "Mish", "PReLU", "RReLU", "ReLU6", "SELU", "Softmax2d", "Softmin", "Softshrink",
            "Softsign", "Tanhshrink", "Threshold"]
