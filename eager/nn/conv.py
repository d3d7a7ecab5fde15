"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d`` with PyTorch's
parameters, weight layout, default initialization, ``padding_mode`` and repr."""

from __future__ import annotations

import math

from ..factories import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(x, n: int) -> tuple:
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,) * n


class _ConvNd(Module):
    _functional = None          # F.conv2d, F.conv_transpose2d, ...
    _nsp = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride, padding,
                 dilation, transposed: bool, output_padding, groups: int, bias: bool,
                 padding_mode: str, device=None, dtype=None):
        super().__init__()
        n = self._nsp
        kernel_size, stride, dilation = (_ntuple(v, n) for v in (kernel_size, stride, dilation))
        if not isinstance(padding, str):
            padding = _ntuple(padding, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str) and not transposed:  # PyTorch's transposed convolutions
            if padding not in ("same", "valid"):        # refuse a string at the forward
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError("padding_mode must be one of {'circular', 'replicate', 'reflect', "
                             f"'zeros'}}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts for padding_mode != 'zeros': last dimension first
        if isinstance(padding, str):
            rev = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i], rev[2 * i + 1] = total // 2, total - total // 2
        else:
            rev = [p for p in reversed(padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = rev
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + kernel_size
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._functional
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """Applies a 1-D convolution over an input of several channels.

    As in PyTorch this is a cross-correlation (the kernel is not flipped): output channel ``j``
    is ``bias[j]`` plus the sum, over the input channels of its group, of each channel
    correlated with its kernel ``weight[j, i]``. With ``groups=g`` the channels are split into
    ``g`` groups convolved independently (``groups=in_channels``: a depthwise convolution).
    Only floating-point inputs are accepted, of the same dtype as the weight.

    Args:
        in_channels (int): number of channels of the input.
        out_channels (int): number of channels the layer produces.
        kernel_size (int or tuple): size of the kernel.
        stride (int or tuple): step of the kernel. Default: ``1``.
        padding (int, tuple or str): padding added on both sides of each spatial dimension, or
            ``"valid"`` (none) or ``"same"`` (the output keeps the input size; only with
            ``stride=1``, and with the extra element on the right when the total is odd).
            Default: ``0``.
        dilation (int or tuple): spacing between kernel elements. Default: ``1``.
        groups (int): number of blocked connections from input to output channels; must divide
            both ``in_channels`` and ``out_channels``. Default: ``1``.
        bias (bool): if ``True``, add a learnable bias. Default: ``True``.
        padding_mode (str): how to pad: ``"zeros"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"`` (the last three pad with ``F.pad`` first). Default: ``"zeros"``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(N, C_in, L_in)`` or ``(C_in, L_in)``.
        - Output: ``(N, C_out, L_out)`` or ``(C_out, L_out)``, with
          ``L_out = floor((L_in + 2 * padding - dilation * (kernel_size - 1) - 1)
          / stride + 1)``.

    Attributes:
        weight: ``(out_channels, in_channels / groups, kernel_size)``, initialized from
            ``U(-sqrt(k), sqrt(k))`` with ``k = 1 / (in_channels / groups * prod(kernel_size))``
            (Kaiming uniform with ``a = sqrt(5)``, as PyTorch).
        bias: ``(out_channels,)``, from the same distribution.

    Example::

        >>> m = nn.Conv1d(16, 33, 3, stride=2)
        >>> m(eager.randn(20, 16, 50)).shape
        eager.Size([20, 33, 24])
        >>> m = nn.Conv1d(4, 8, 5, padding="same", padding_mode="circular")
        >>> m(eager.randn(2, 4, 10)).shape
        eager.Size([2, 8, 10])
        >>> m.weight.shape
        eager.Size([8, 4, 5])
    """

    _functional = staticmethod(F.conv1d)
    _nsp = 1


class Conv2d(_Conv):
    """2-D convolution over an input of ``(N, C_in, H, W)`` (PyTorch's cross-correlation).

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels the convolution produces.
        kernel_size (int or tuple): size of the kernel.
        stride (int or tuple): stride of the convolution. Default: 1.
        padding (int, tuple or str): implicit padding on both sides, or ``"valid"`` /
            ``"same"``. Default: 0.
        dilation (int or tuple): spacing between kernel elements. Default: 1.
        groups (int): blocked connections from input to output channels. Default: 1.
        bias (bool): add a learnable bias. Default: ``True``.
        padding_mode (str): ``"zeros"``, ``"reflect"``, ``"replicate"`` or ``"circular"``.
            Default: ``"zeros"``.

    Shape:
        - Input: ``(N, C_in, H_in, W_in)`` or ``(C_in, H_in, W_in)``.
        - Output: ``(N, C_out, H_out, W_out)`` with
          ``H_out = floor((H_in + 2 * padding[0] - dilation[0] * (kernel_size[0] - 1) - 1)
          / stride[0] + 1)``, and ``W_out`` likewise.

    Attributes:
        weight: ``(out_channels, in_channels / groups, kH, kW)``, initialized like PyTorch
            (Kaiming uniform with ``a = sqrt(5)``).
        bias: ``(out_channels,)``.

    Example::

        >>> m = nn.Conv2d(16, 33, 3, stride=2)
        >>> m(eager.randn(20, 16, 50, 100)).shape
        eager.Size([20, 33, 24, 49])
    """
    _functional = staticmethod(F.conv2d)
    _nsp = 2


class Conv3d(_Conv):
    """Applies a 3-D convolution over an input of several channels.

    As in PyTorch this is a cross-correlation (the kernel is not flipped): output channel ``j``
    is ``bias[j]`` plus the sum, over the input channels of its group, of each channel
    correlated with its kernel ``weight[j, i]``. With ``groups=g`` the channels are split into
    ``g`` groups convolved independently (``groups=in_channels``: a depthwise convolution).
    Only floating-point inputs are accepted, of the same dtype as the weight.

    Args:
        in_channels (int): number of channels of the input.
        out_channels (int): number of channels the layer produces.
        kernel_size (int or tuple): size of the kernel (an int is used for all 3 dimensions).
        stride (int or tuple): step of the kernel. Default: ``1``.
        padding (int, tuple or str): padding added on both sides of each spatial dimension, or
            ``"valid"`` (none) or ``"same"`` (the output keeps the input size; only with
            ``stride=1``, and with the extra element on the right when the total is odd).
            Default: ``0``.
        dilation (int or tuple): spacing between kernel elements. Default: ``1``.
        groups (int): number of blocked connections from input to output channels; must divide
            both ``in_channels`` and ``out_channels``. Default: ``1``.
        bias (bool): if ``True``, add a learnable bias. Default: ``True``.
        padding_mode (str): how to pad: ``"zeros"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"`` (the last three pad with ``F.pad`` first). Default: ``"zeros"``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(N, C_in, D_in, H_in, W_in)`` or ``(C_in, D_in, H_in, W_in)``.
        - Output: ``(N, C_out, D_out, H_out, W_out)`` or ``(C_out, D_out, H_out, W_out)``, with
          ``D_out = floor((D_in + 2 * padding[0] - dilation[0] * (kernel_size[0] - 1) - 1)
          / stride[0] + 1)``, and ``H_out`` and ``W_out`` likewise.

    Attributes:
        weight: ``(out_channels, in_channels / groups, kD, kH, kW)``, initialized from
            ``U(-sqrt(k), sqrt(k))`` with ``k = 1 / (in_channels / groups * prod(kernel_size))``
            (Kaiming uniform with ``a = sqrt(5)``, as PyTorch).
        bias: ``(out_channels,)``, from the same distribution.

    Example::

        >>> m = nn.Conv3d(16, 33, 3, stride=2)
        >>> m(eager.randn(20, 16, 10, 50, 100)).shape
        eager.Size([20, 33, 4, 24, 49])
        >>> m = nn.Conv3d(16, 33, (3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0))
        >>> m(eager.randn(20, 16, 10, 50, 100)).shape
        eager.Size([20, 33, 8, 50, 99])
    """

    _functional = staticmethod(F.conv3d)
    _nsp = 3


class _ConvTranspose(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size) -> tuple:
        """The ``output_padding`` that makes the output ``output_size`` (PyTorch's rule)."""
        if output_size is None:
            return self.output_padding
        n = self._nsp
        non_spatial = 2 if input.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have "
                             f"{n} or {non_spatial + n} elements (got {len(output_size)})")
        lo, hi = [], []
        for d in range(n):
            size = ((input.shape[d + non_spatial] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            lo.append(size)
            hi.append(size + self.stride[d] - 1)
        for size, a, b in zip(output_size, lo, hi):
            if size < a or size > b:
                raise ValueError(f"requested an output size of {tuple(output_size)}, but valid "
                                 f"sizes range from {lo} to {hi} (for an input of "
                                 f"{input.shape[non_spatial:]})")
        return tuple(s - a for s, a in zip(output_size, lo))

    def forward(self, input, output_size=None):
        if isinstance(self.padding, str):
            raise TypeError(f"conv_transpose{self._nsp}d(): argument 'padding' (position 5) must "
                            "be tuple of ints, but found element of type str at pos 0")
        output_padding = self._output_padding(input, output_size)
        return type(self)._functional(input, self.weight, self.bias, self.stride, self.padding,
                                      output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """Applies a 1-D transposed convolution over an input of several channels.

    This is the gradient of :class:`Conv1d` with respect to its input (sometimes called a
    fractionally-strided convolution or, loosely, a deconvolution): each input element scatters
    a copy of the kernel, scaled by its value, into the output, ``stride`` positions apart.
    ``padding`` crops the output on each side, so that a ``Conv1d`` and a
    ``ConvTranspose1d`` with the same arguments have inverse shapes. As a strided
    convolution maps several input sizes to one output size, ``output_padding`` (or the
    ``output_size`` argument of ``forward``) picks which one to produce. Only floating-point
    inputs are accepted, of the same dtype as the weight.

    ``forward(input, output_size=None)``: ``output_size`` (the full size or only the spatial
    sizes) sets ``output_padding`` for that call; a size that cannot be reached raises
    ``ValueError``.

    Args:
        in_channels (int): number of channels of the input.
        out_channels (int): number of channels the layer produces.
        kernel_size (int or tuple): size of the kernel.
        stride (int or tuple): step of the kernel in the output. Default: ``1``.
        padding (int or tuple): the output is cropped by this much on both sides of each
            spatial dimension (``dilation * (kernel_size - 1) - padding`` zero padding of the
            input, in terms of a direct convolution). As in PyTorch, a string (``"same"``,
            ``"valid"``) is taken by the constructor but the forward raises ``TypeError``.
            Default: ``0``.
        output_padding (int or tuple): extra size added on one side (the end) of each spatial
            dimension of the output; must be smaller than ``stride`` or than ``dilation``.
            Default: ``0``.
        groups (int): number of blocked connections from input to output channels; must divide
            both ``in_channels`` and ``out_channels``. Default: ``1``.
        bias (bool): if ``True``, add a learnable bias. Default: ``True``.
        dilation (int or tuple): spacing between kernel elements. Default: ``1``.
        padding_mode (str): only ``"zeros"`` is supported (as in PyTorch); another value
            raises ``ValueError``. Default: ``"zeros"``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(N, C_in, L_in)`` or ``(C_in, L_in)``.
        - Output: ``(N, C_out, L_out)`` or ``(C_out, L_out)``, with
          ``L_out = (L_in - 1) * stride - 2 * padding + dilation * (kernel_size - 1)
          + output_padding + 1``.

    Attributes:
        weight: ``(in_channels, out_channels / groups, kernel_size)`` (note: input channels first),
            initialized from ``U(-sqrt(k), sqrt(k))`` with
            ``k = 1 / (out_channels / groups * prod(kernel_size))`` (Kaiming uniform with
            ``a = sqrt(5)``, as PyTorch).
        bias: ``(out_channels,)``, from the same distribution.

    Example::

        >>> m = nn.ConvTranspose1d(16, 33, 3, stride=2)
        >>> m(eager.randn(20, 16, 50)).shape
        eager.Size([20, 33, 101])
        >>> m.weight.shape
        eager.Size([16, 33, 3])
    """

    _functional = staticmethod(F.conv_transpose1d)
    _nsp = 1


class ConvTranspose2d(_ConvTranspose):
    """Applies a 2-D transposed convolution over an input of several channels.

    This is the gradient of :class:`Conv2d` with respect to its input (sometimes called a
    fractionally-strided convolution or, loosely, a deconvolution): each input element scatters
    a copy of the kernel, scaled by its value, into the output, ``stride`` positions apart.
    ``padding`` crops the output on each side, so that a ``Conv2d`` and a
    ``ConvTranspose2d`` with the same arguments have inverse shapes. As a strided
    convolution maps several input sizes to one output size, ``output_padding`` (or the
    ``output_size`` argument of ``forward``) picks which one to produce. Only floating-point
    inputs are accepted, of the same dtype as the weight.

    ``forward(input, output_size=None)``: ``output_size`` (the full size or only the spatial
    sizes) sets ``output_padding`` for that call; a size that cannot be reached raises
    ``ValueError``.

    Args:
        in_channels (int): number of channels of the input.
        out_channels (int): number of channels the layer produces.
        kernel_size (int or tuple): size of the kernel (an int is used for both dimensions).
        stride (int or tuple): step of the kernel in the output. Default: ``1``.
        padding (int or tuple): the output is cropped by this much on both sides of each
            spatial dimension (``dilation * (kernel_size - 1) - padding`` zero padding of the
            input, in terms of a direct convolution). As in PyTorch, a string (``"same"``,
            ``"valid"``) is taken by the constructor but the forward raises ``TypeError``.
            Default: ``0``.
        output_padding (int or tuple): extra size added on one side (the end) of each spatial
            dimension of the output; must be smaller than ``stride`` or than ``dilation``.
            Default: ``0``.
        groups (int): number of blocked connections from input to output channels; must divide
            both ``in_channels`` and ``out_channels``. Default: ``1``.
        bias (bool): if ``True``, add a learnable bias. Default: ``True``.
        dilation (int or tuple): spacing between kernel elements. Default: ``1``.
        padding_mode (str): only ``"zeros"`` is supported (as in PyTorch); another value
            raises ``ValueError``. Default: ``"zeros"``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(N, C_in, H_in, W_in)`` or ``(C_in, H_in, W_in)``.
        - Output: ``(N, C_out, H_out, W_out)`` or ``(C_out, H_out, W_out)``, with
          ``H_out = (H_in - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kernel_size[0] - 1)
          + output_padding[0] + 1``, and ``W_out`` likewise.

    Attributes:
        weight: ``(in_channels, out_channels / groups, kH, kW)`` (note: input channels first),
            initialized from ``U(-sqrt(k), sqrt(k))`` with
            ``k = 1 / (out_channels / groups * prod(kernel_size))`` (Kaiming uniform with
            ``a = sqrt(5)``, as PyTorch).
        bias: ``(out_channels,)``, from the same distribution.

    Example::

        >>> m = nn.ConvTranspose2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2))
        >>> m(eager.randn(20, 16, 50, 100)).shape
        eager.Size([20, 33, 93, 100])
        >>> down = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        >>> up = nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1)
        >>> x = eager.randn(1, 16, 12, 12)
        >>> h = down(x)
        >>> h.shape
        eager.Size([1, 16, 6, 6])
        >>> up(h).shape
        eager.Size([1, 16, 11, 11])
        >>> up(h, output_size=x.size()).shape
        eager.Size([1, 16, 12, 12])
    """

    _functional = staticmethod(F.conv_transpose2d)
    _nsp = 2


class ConvTranspose3d(_ConvTranspose):
    """Applies a 3-D transposed convolution over an input of several channels.

    This is the gradient of :class:`Conv3d` with respect to its input (sometimes called a
    fractionally-strided convolution or, loosely, a deconvolution): each input element scatters
    a copy of the kernel, scaled by its value, into the output, ``stride`` positions apart.
    ``padding`` crops the output on each side, so that a ``Conv3d`` and a
    ``ConvTranspose3d`` with the same arguments have inverse shapes. As a strided
    convolution maps several input sizes to one output size, ``output_padding`` (or the
    ``output_size`` argument of ``forward``) picks which one to produce. Only floating-point
    inputs are accepted, of the same dtype as the weight.

    ``forward(input, output_size=None)``: ``output_size`` (the full size or only the spatial
    sizes) sets ``output_padding`` for that call; a size that cannot be reached raises
    ``ValueError``.

    Args:
        in_channels (int): number of channels of the input.
        out_channels (int): number of channels the layer produces.
        kernel_size (int or tuple): size of the kernel (an int is used for all 3 dimensions).
        stride (int or tuple): step of the kernel in the output. Default: ``1``.
        padding (int or tuple): the output is cropped by this much on both sides of each
            spatial dimension (``dilation * (kernel_size - 1) - padding`` zero padding of the
            input, in terms of a direct convolution). As in PyTorch, a string (``"same"``,
            ``"valid"``) is taken by the constructor but the forward raises ``TypeError``.
            Default: ``0``.
        output_padding (int or tuple): extra size added on one side (the end) of each spatial
            dimension of the output; must be smaller than ``stride`` or than ``dilation``.
            Default: ``0``.
        groups (int): number of blocked connections from input to output channels; must divide
            both ``in_channels`` and ``out_channels``. Default: ``1``.
        bias (bool): if ``True``, add a learnable bias. Default: ``True``.
        dilation (int or tuple): spacing between kernel elements. Default: ``1``.
        padding_mode (str): only ``"zeros"`` is supported (as in PyTorch); another value
            raises ``ValueError``. Default: ``"zeros"``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(N, C_in, D_in, H_in, W_in)`` or ``(C_in, D_in, H_in, W_in)``.
        - Output: ``(N, C_out, D_out, H_out, W_out)`` or ``(C_out, D_out, H_out, W_out)``, with
          ``D_out = (D_in - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kernel_size[0] - 1)
          + output_padding[0] + 1``, and ``H_out`` and ``W_out`` likewise.

    Attributes:
        weight: ``(in_channels, out_channels / groups, kD, kH, kW)`` (note: input channels first),
            initialized from ``U(-sqrt(k), sqrt(k))`` with
            ``k = 1 / (out_channels / groups * prod(kernel_size))`` (Kaiming uniform with
            ``a = sqrt(5)``, as PyTorch).
        bias: ``(out_channels,)``, from the same distribution.

    Example::

        >>> m = nn.ConvTranspose3d(16, 33, 3, stride=2)
        >>> m(eager.randn(20, 16, 10, 50, 100)).shape
        eager.Size([20, 33, 21, 101, 201])
        >>> m = nn.ConvTranspose3d(16, 33, (3, 5, 2), stride=(2, 1, 1), padding=(0, 4, 2))
        >>> m(eager.randn(20, 16, 10, 50, 100)).shape
        eager.Size([20, 33, 21, 46, 97])
    """

    _functional = staticmethod(F.conv_transpose3d)
    _nsp = 3
