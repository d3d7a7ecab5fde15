"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``, with PyTorch's arguments and reprs."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "MaxPool1d", "MaxPool2d", "MaxPool3d"]


class _MaxPoolNd(Module):
    _functional = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._functional(input, self.kernel_size, self.stride, self.padding,
                                      self.dilation, ceil_mode=self.ceil_mode,
                                      return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Applies 1-D max pooling: the maximum over each sliding window of every input channel.

    Each window spans ``dilation * (kernel_size - 1) + 1`` input positions and moves by
    ``stride``. Padding positions read as ``-inf`` (the lowest value for integer inputs), so they
    are never picked. If several elements tie, the first one is picked (a NaN counts as the
    largest) and the gradient flows to that element only.

    Args:
        kernel_size (int or tuple): size of the window.
        stride (int or tuple, optional): step between windows. Default: ``kernel_size``.
        padding (int or tuple): implicit padding on both sides of each spatial dimension; at
            most half of ``kernel_size``. Default: ``0``.
        dilation (int or tuple): spacing between the elements of a window. Default: ``1``.
        return_indices (bool): if ``True``, the forward returns ``(output, indices)``, where
            ``indices`` (int64) are the positions of the maxima in each flattened
            ``L_in`` input plane. Default: ``False``.
        ceil_mode (bool): if ``True``, round the output size up instead of down, so a last
            partial window is kept (one that would start inside the right padding is still
            dropped). Default: ``False``.

    Shape:
        - Input: ``(N, C, L_in)`` or ``(C, L_in)``.
        - Output: ``(N, C, L_out)`` or ``(C, L_out)``, with
          ``out = floor((in + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1)``
          for each spatial size (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> m = nn.MaxPool1d(2)
        >>> m(eager.tensor([[1., 5., 2., 0., 3., 4.]]))
        tensor([[5., 2., 4.]])
        >>> m = nn.MaxPool1d(3, stride=2)
        >>> m(eager.randn(20, 16, 50)).shape
        eager.Size([20, 16, 24])
    """

    _functional = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Applies 2-D max pooling: the maximum over each sliding 2-D window of every input channel.

    Each window spans ``dilation * (kernel_size - 1) + 1`` input positions and moves by
    ``stride``. Padding positions read as ``-inf`` (the lowest value for integer inputs), so they
    are never picked. If several elements tie, the first one is picked (a NaN counts as the
    largest) and the gradient flows to that element only.

    Args:
        kernel_size (int or tuple): size of the window; an int is used for
            both dimensions, a tuple gives ``(kH, kW)``.
        stride (int or tuple, optional): step between windows. Default: ``kernel_size``.
        padding (int or tuple): implicit padding on both sides of each spatial dimension; at
            most half of the effective window size. Default: ``0``.
        dilation (int or tuple): spacing between the elements of a window. Default: ``1``.
        return_indices (bool): if ``True``, the forward returns ``(output, indices)``, where
            ``indices`` (int64) are the positions of the maxima in each flattened
            ``H_in * W_in`` input plane. Default: ``False``.
        ceil_mode (bool): if ``True``, round the output size up instead of down, so a last
            partial window is kept (one that would start inside the right padding is still
            dropped). Default: ``False``.

    Shape:
        - Input: ``(N, C, H_in, W_in)`` or ``(C, H_in, W_in)``.
        - Output: ``(N, C, H_out, W_out)`` or ``(C, H_out, W_out)``, with
          ``out = floor((in + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1)``
          for each spatial size (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> m = nn.MaxPool2d(2, return_indices=True)
        >>> out, indices = m(eager.arange(16.).reshape(1, 1, 4, 4))
        >>> out
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
        >>> indices
        tensor([[[[ 5,  7],
                  [13, 15]]]])
        >>> m = nn.MaxPool2d((3, 2), stride=(2, 1), padding=1)
        >>> m(eager.randn(20, 16, 50, 32)).shape
        eager.Size([20, 16, 25, 33])
    """

    _functional = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Applies 3-D max pooling: the maximum over each sliding 3-D window of every input channel.

    Each window spans ``dilation * (kernel_size - 1) + 1`` input positions and moves by
    ``stride``. Padding positions read as ``-inf`` (the lowest value for integer inputs), so they
    are never picked. If several elements tie, the first one is picked (a NaN counts as the
    largest) and the gradient flows to that element only.

    Args:
        kernel_size (int or tuple): size of the window; an int is used for
            all three dimensions, a tuple gives ``(kD, kH, kW)``.
        stride (int or tuple, optional): step between windows. Default: ``kernel_size``.
        padding (int or tuple): implicit padding on both sides of each spatial dimension; at
            most half of the effective window size. Default: ``0``.
        dilation (int or tuple): spacing between the elements of a window. Default: ``1``.
        return_indices (bool): if ``True``, the forward returns ``(output, indices)``, where
            ``indices`` (int64) are the positions of the maxima in each flattened
            ``D_in * H_in * W_in`` input plane. Default: ``False``.
        ceil_mode (bool): if ``True``, round the output size up instead of down, so a last
            partial window is kept (one that would start inside the right padding is still
            dropped). Default: ``False``.

    Shape:
        - Input: ``(N, C, D_in, H_in, W_in)`` or ``(C, D_in, H_in, W_in)``.
        - Output: ``(N, C, D_out, H_out, W_out)`` or ``(C, D_out, H_out, W_out)``, with
          ``out = floor((in + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1)``
          for each spatial size (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> m = nn.MaxPool3d(3, stride=2)
        >>> m(eager.randn(2, 4, 9, 9, 9)).shape
        eager.Size([2, 4, 4, 4, 4])
        >>> m = nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2), ceil_mode=True)
        >>> m(eager.randn(2, 4, 8, 8, 8)).shape
        eager.Size([2, 4, 4, 7, 4])
    """

    _functional = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    """Applies 1-D average pooling: the mean over each sliding window of every input channel.

    The divisor is the number of positions in the window when ``count_include_pad`` is ``True``
    (zero padding counts, the part of a ``ceil_mode`` window beyond the padding does not), or
    the number of real input elements in it when ``False``.
    As in PyTorch, there is no ``dilation`` and, in 1-D, no ``divisor_override``
    argument. Only floating-point inputs are accepted.

    Args:
        kernel_size (int or tuple): size of the window.
        stride (int or tuple, optional): step between windows. Default: ``kernel_size``.
        padding (int or tuple): implicit zero padding on both sides of each spatial dimension;
            at most half of the window size. Default: ``0``.
        ceil_mode (bool): if ``True``, round the output size up instead of down, so a last
            partial window is kept. Default: ``False``.
        count_include_pad (bool): if ``True``, padding positions count in the divisor.
            Default: ``True``.

    Shape:
        - Input: ``(N, C, L_in)`` or ``(C, L_in)``.
        - Output: ``(N, C, L_out)`` or ``(C, L_out)``, with
          ``out = floor((in + 2 * padding - kernel_size) / stride + 1)`` for each spatial size
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> m = nn.AvgPool1d(3, stride=2)
        >>> m(eager.tensor([[[1., 2., 3., 4., 5., 6., 7.]]]))
        tensor([[[2., 4., 6.]]])
        >>> nn.AvgPool1d(4, stride=2, padding=1)(eager.randn(20, 16, 50)).shape
        eager.Size([20, 16, 25])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__()
        one = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,))
        self.kernel_size = one(kernel_size)
        self.stride = one(stride if stride is not None else kernel_size)
        self.padding = one(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    _functional = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._functional(input, self.kernel_size, self.stride, self.padding,
                                      self.ceil_mode, self.count_include_pad,
                                      self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """Applies 2-D average pooling: the mean over each sliding 2-D window of every input channel.

    The divisor is the number of positions in the window when ``count_include_pad`` is ``True``
    (zero padding counts, the part of a ``ceil_mode`` window beyond the padding does not), or
    the number of real input elements in it when ``False``.
    As in PyTorch, there is no ``dilation`` argument. Only floating-point inputs are
    accepted.

    Args:
        kernel_size (int or tuple): size of the window; an int is used for
            both dimensions, a tuple gives ``(kH, kW)``.
        stride (int or tuple, optional): step between windows. Default: ``kernel_size``.
        padding (int or tuple): implicit zero padding on both sides of each spatial dimension;
            at most half of the window size. Default: ``0``.
        ceil_mode (bool): if ``True``, round the output size up instead of down, so a last
            partial window is kept. Default: ``False``.
        count_include_pad (bool): if ``True``, padding positions count in the divisor.
            Default: ``True``.
        divisor_override (int, optional): if given, every window sum is divided by this
            number instead. Default: ``None``.

    Shape:
        - Input: ``(N, C, H_in, W_in)`` or ``(C, H_in, W_in)``.
        - Output: ``(N, C, H_out, W_out)`` or ``(C, H_out, W_out)``, with
          ``out = floor((in + 2 * padding - kernel_size) / stride + 1)`` for each spatial size
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> m = nn.AvgPool2d(2)
        >>> m(eager.arange(16.).reshape(1, 1, 4, 4))
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
        >>> m = nn.AvgPool2d(3, stride=1, padding=1)
        >>> m(eager.ones(1, 3, 3))
        tensor([[[0.4444, 0.6667, 0.4444],
                 [0.6667, 1.0000, 0.6667],
                 [0.4444, 0.6667, 0.4444]]])
        >>> m = nn.AvgPool2d((3, 2), stride=(2, 1))
        >>> m(eager.randn(20, 16, 50, 32)).shape
        eager.Size([20, 16, 24, 31])
    """

    _functional = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """Applies 3-D average pooling: the mean over each sliding 3-D window of every input channel.

    The divisor is the number of positions in the window when ``count_include_pad`` is ``True``
    (zero padding counts, the part of a ``ceil_mode`` window beyond the padding does not), or
    the number of real input elements in it when ``False``.
    As in PyTorch, there is no ``dilation`` argument. Only floating-point inputs are
    accepted.

    Args:
        kernel_size (int or tuple): size of the window; an int is used for
            all three dimensions, a tuple gives ``(kD, kH, kW)``.
        stride (int or tuple, optional): step between windows. Default: ``kernel_size``.
        padding (int or tuple): implicit zero padding on both sides of each spatial dimension;
            at most half of the window size. Default: ``0``.
        ceil_mode (bool): if ``True``, round the output size up instead of down, so a last
            partial window is kept. Default: ``False``.
        count_include_pad (bool): if ``True``, padding positions count in the divisor.
            Default: ``True``.
        divisor_override (int, optional): if given, every window sum is divided by this
            number instead. Default: ``None``.

    Shape:
        - Input: ``(N, C, D_in, H_in, W_in)`` or ``(C, D_in, H_in, W_in)``.
        - Output: ``(N, C, D_out, H_out, W_out)`` or ``(C, D_out, H_out, W_out)``, with
          ``out = floor((in + 2 * padding - kernel_size) / stride + 1)`` for each spatial size
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> m = nn.AvgPool3d(2)
        >>> m(eager.randn(2, 4, 8, 8, 8)).shape
        eager.Size([2, 4, 4, 4, 4])
        >>> m = nn.AvgPool3d((3, 2, 2), stride=(2, 1, 2))
        >>> m(eager.randn(20, 16, 50, 44, 31)).shape
        eager.Size([20, 16, 24, 43, 15])
    """

    _functional = staticmethod(F.avg_pool3d)


class _AdaptivePoolNd(Module):
    _functional = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._functional(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Applies 1-D adaptive average pooling: averages windows chosen to give a fixed output size.

    Along a dimension of input size ``S`` and output size ``O``, output ``i`` is the mean of the
    inputs ``[floor(i * S / O), ceil((i + 1) * S / O))``; windows may overlap and differ in size
    by one. Only floating-point inputs are accepted.

    Args:
        output_size (int): the output length ``L_out``.

    Shape:
        - Input: ``(N, C, L_in)`` or ``(C, L_in)``.
        - Output: ``(N, C, L_out)`` or ``(C, L_out)``, the spatial sizes
          given by ``output_size``.

    Example::

        >>> m = nn.AdaptiveAvgPool1d(2)
        >>> m(eager.tensor([[[1., 2., 3., 4., 5.]]]))
        tensor([[[2., 4.]]])
        >>> nn.AdaptiveAvgPool1d(5)(eager.randn(1, 64, 8)).shape
        eager.Size([1, 64, 5])
    """

    _functional = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Applies 2-D adaptive average pooling: averages windows chosen to give a fixed output size.

    Along a dimension of input size ``S`` and output size ``O``, output ``i`` is the mean of the
    inputs ``[floor(i * S / O), ceil((i + 1) * S / O))``; windows may overlap and differ in size
    by one. Only floating-point inputs are accepted.
    With ``output_size=1`` this is global average pooling.

    Args:
        output_size (int or tuple): the output size ``(H_out, W_out)``; an int is used for
            both, and a ``None`` entry keeps that input size.

    Shape:
        - Input: ``(N, C, H_in, W_in)`` or ``(C, H_in, W_in)``.
        - Output: ``(N, C, H_out, W_out)`` or ``(C, H_out, W_out)``, the spatial sizes
          given by ``output_size``.

    Example::

        >>> m = nn.AdaptiveAvgPool2d((5, 7))
        >>> m(eager.randn(1, 64, 8, 9)).shape
        eager.Size([1, 64, 5, 7])
        >>> m = nn.AdaptiveAvgPool2d((None, 7))
        >>> m(eager.randn(1, 64, 10, 9)).shape
        eager.Size([1, 64, 10, 7])
        >>> nn.AdaptiveAvgPool2d(1)(eager.arange(4.).reshape(1, 2, 2))
        tensor([[[1.5000]]])
    """

    _functional = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    """Applies 3-D adaptive average pooling: averages windows chosen to give a fixed output size.

    Along a dimension of input size ``S`` and output size ``O``, output ``i`` is the mean of the
    inputs ``[floor(i * S / O), ceil((i + 1) * S / O))``; windows may overlap and differ in size
    by one. Only floating-point inputs are accepted.

    Args:
        output_size (int or tuple): the output size ``(D_out, H_out, W_out)``; an int is used
            for all three, and a ``None`` entry keeps that input size.

    Shape:
        - Input: ``(N, C, D_in, H_in, W_in)`` or ``(C, D_in, H_in, W_in)``.
        - Output: ``(N, C, D_out, H_out, W_out)`` or ``(C, D_out, H_out, W_out)``, the spatial sizes
          given by ``output_size``.

    Example::

        >>> m = nn.AdaptiveAvgPool3d((5, 7, 9))
        >>> m(eager.randn(1, 64, 8, 9, 10)).shape
        eager.Size([1, 64, 5, 7, 9])
        >>> nn.AdaptiveAvgPool3d((None, 2, 2))(eager.randn(2, 4, 5, 6, 7)).shape
        eager.Size([2, 4, 5, 2, 2])
    """

    _functional = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._functional(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Applies 1-D adaptive max pooling: the maximum over windows that give a fixed output size.

    The windows are those of :class:`AdaptiveAvgPool1d`: along a dimension of input size ``S``
    and output size ``O``, output ``i`` covers ``[floor(i * S / O), ceil((i + 1) * S / O))``.
    On ties the first maximum is picked and receives the gradient.

    Args:
        output_size (int): the output length ``L_out``.
        return_indices (bool): if ``True``, the forward returns ``(output, indices)``, where
            ``indices`` (int64) are the positions of the maxima in each flattened ``L_in``
            input plane. Default: ``False``.

    Shape:
        - Input: ``(N, C, L_in)`` or ``(C, L_in)``.
        - Output: ``(N, C, L_out)`` or ``(C, L_out)``, the spatial sizes
          given by ``output_size``.

    Example::

        >>> m = nn.AdaptiveMaxPool1d(2)
        >>> m(eager.tensor([[[1., 5., 3., 4., 2.]]]))
        tensor([[[5., 4.]]])
        >>> nn.AdaptiveMaxPool1d(5)(eager.randn(1, 64, 8)).shape
        eager.Size([1, 64, 5])
    """

    _functional = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Applies 2-D adaptive max pooling: the maximum over windows that give a fixed output size.

    The windows are those of :class:`AdaptiveAvgPool2d`: along a dimension of input size ``S``
    and output size ``O``, output ``i`` covers ``[floor(i * S / O), ceil((i + 1) * S / O))``.
    On ties the first maximum is picked and receives the gradient.

    Args:
        output_size (int or tuple): the output size ``(H_out, W_out)``; an int is used for
            both, and a ``None`` entry keeps that input size.
        return_indices (bool): if ``True``, the forward returns ``(output, indices)``, where
            ``indices`` (int64) are the positions of the maxima in each flattened ``H_in * W_in``
            input plane. Default: ``False``.

    Shape:
        - Input: ``(N, C, H_in, W_in)`` or ``(C, H_in, W_in)``.
        - Output: ``(N, C, H_out, W_out)`` or ``(C, H_out, W_out)``, the spatial sizes
          given by ``output_size``.

    Example::

        >>> m = nn.AdaptiveMaxPool2d(2, return_indices=True)
        >>> out, indices = m(eager.arange(16.).reshape(1, 1, 4, 4))
        >>> out
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
        >>> indices
        tensor([[[[ 5,  7],
                  [13, 15]]]])
        >>> nn.AdaptiveMaxPool2d((None, 7))(eager.randn(1, 64, 10, 9)).shape
        eager.Size([1, 64, 10, 7])
    """

    _functional = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Applies 3-D adaptive max pooling: the maximum over windows that give a fixed output size.

    The windows are those of :class:`AdaptiveAvgPool3d`: along a dimension of input size ``S``
    and output size ``O``, output ``i`` covers ``[floor(i * S / O), ceil((i + 1) * S / O))``.
    On ties the first maximum is picked and receives the gradient.

    Args:
        output_size (int or tuple): the output size ``(D_out, H_out, W_out)``; an int is used
            for all three, and a ``None`` entry keeps that input size.
        return_indices (bool): if ``True``, the forward returns ``(output, indices)``, where
            ``indices`` (int64) are the positions of the maxima in each flattened
            ``D_in * H_in * W_in`` input plane. Default: ``False``.

    Shape:
        - Input: ``(N, C, D_in, H_in, W_in)`` or ``(C, D_in, H_in, W_in)``.
        - Output: ``(N, C, D_out, H_out, W_out)`` or ``(C, D_out, H_out, W_out)``, the
          spatial sizes given by ``output_size``.

    Example::

        >>> m = nn.AdaptiveMaxPool3d((5, 7, 9))
        >>> m(eager.randn(1, 64, 8, 9, 10)).shape
        eager.Size([1, 64, 5, 7, 9])
        >>> m = nn.AdaptiveMaxPool3d((7, None, None))
        >>> m(eager.randn(1, 64, 10, 9, 8)).shape
        eager.Size([1, 64, 7, 9, 8])
        >>> out, indices = nn.AdaptiveMaxPool3d(1, return_indices=True)(
        ...     eager.arange(8.).reshape(1, 2, 2, 2))
        >>> out, indices
        (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """

    _functional = staticmethod(F.adaptive_max_pool3d)
