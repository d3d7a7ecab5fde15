"""``Unfold`` and ``Fold``: sliding local blocks extracted from, and summed back into, a
batch of images (``F.unfold``/``F.fold`` as layers)."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Combines an array of sliding local blocks into an image, summing overlaps.

    The inverse arrangement of ``Unfold``: column ``l`` of each of the ``C * prod(k)``
    rows is a block that is added back at its position in an ``output_size`` image, and
    values that fall in the padding are discarded.  Where blocks overlap their values are
    summed, so ``Fold(Unfold(x))`` multiplies each pixel by the number of blocks that
    cover it.  As in PyTorch, only 2-D images (two spatial dimensions) are supported.
    Every size argument is an int or a pair ``(height, width)``.

    Args:
        output_size (int or tuple): the spatial size ``(H, W)`` of the output.
        kernel_size (int or tuple): the size ``k`` of each block.
        dilation (int or tuple): spacing between the elements of a block.
            Default: ``1``.
        padding (int or tuple): implicit zero padding on both sides of each spatial
            dimension. Default: ``0``.
        stride (int or tuple): step between neighbouring blocks. Default: ``1``.

    Shape:
        - Input: ``(N, C * prod(k), L)`` or ``(C * prod(k), L)``, where ``L`` must equal the
          number of block positions in an ``output_size`` image with these ``dilation``,
          ``padding`` and ``stride``.
        - Output: ``(N, C, H, W)`` or ``(C, H, W)``, with ``(H, W) = output_size``.

    Example::

        >>> fold = nn.Fold(output_size=(4, 5), kernel_size=(2, 2))
        >>> fold(eager.randn(1, 3 * 2 * 2, 12)).shape
        eager.Size([1, 3, 4, 5])
        >>> x = eager.arange(1.0, 10.0).reshape(1, 1, 3, 3)
        >>> nn.Fold(3, 2)(nn.Unfold(2)(x))  # overlaps summed
        tensor([[[[ 1.,  4.,  3.],
                  [ 8., 20., 12.],
                  [ 7., 16.,  9.]]]])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts sliding local blocks from a batch of images into columns.

    Each ``k``-sized block of the (padded) input, across all ``C`` channels, is flattened
    into a column of ``C * prod(k)`` values, and the ``L`` blocks are laid side by side.
    A convolution is then a matrix product with this output (im2col).  As in PyTorch,
    only 2-D images (two spatial dimensions) are supported, and every size argument is an
    int or a pair ``(height, width)``.

    Args:
        kernel_size (int or tuple): the size ``k`` of each block.
        dilation (int or tuple): spacing between the elements of a block.
            Default: ``1``.
        padding (int or tuple): implicit zero padding on both sides of each spatial
            dimension. Default: ``0``.
        stride (int or tuple): step between neighbouring blocks. Default: ``1``.

    Shape:
        - Input: ``(N, C, H, W)`` or ``(C, H, W)``.
        - Output: ``(N, C * prod(k), L)`` or ``(C * prod(k), L)``, where ``L`` is the number
          of block positions: the product over the two spatial dimensions ``d`` of
          ``floor((size[d] + 2 * padding[d] - dilation[d] * (k[d] - 1) - 1) / stride[d]) + 1``.

    Example::

        >>> unfold = nn.Unfold(kernel_size=(2, 3))
        >>> unfold(eager.randn(2, 5, 3, 4)).shape
        eager.Size([2, 30, 4])
        >>> nn.Unfold(2)(eager.arange(1.0, 10.0).reshape(1, 1, 3, 3))
        tensor([[[1., 2., 4., 5.],
                 [2., 3., 5., 6.],
                 [4., 5., 7., 8.],
                 [5., 6., 8., 9.]]])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
