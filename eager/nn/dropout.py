"""Dropout modules beyond ``Dropout``: ``Dropout1d``/``Dropout2d``/``Dropout3d`` (whole
channels), ``AlphaDropout``/``FeatureAlphaDropout`` (for SELU networks); and
``PixelShuffle``/``PixelUnshuffle``."""

from __future__ import annotations

from . import functional as F
from .layers import Dropout
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout", "PixelShuffle", "PixelUnshuffle"]


class _DropoutNd(Dropout):
    _fn = None

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Randomly zeroes whole channels of 1-D feature maps during training.

    In training mode each channel ``input[n, c, :]`` is zeroed with probability ``p``,
    independently, and the kept channels are scaled by ``1 / (1 - p)`` so the expected
    value is unchanged.  In evaluation mode (``m.eval()``) the module returns its input.
    Dropping whole channels suits convolutional features, whose neighbouring elements are
    strongly correlated.  A new mask is drawn on every call.

    Args:
        p (float): probability of a channel to be zeroed, in ``[0, 1]`` (checked when the module
            is built). Default: ``0.5``.
        inplace (bool): if ``True``, write the result into the input tensor. Default:
            ``False``.

    Shape:
        - Input: ``(N, C, L)`` or ``(C, L)``; other numbers of dimensions raise
          ``RuntimeError``.
        - Output: the same shape as the input.

    Example::

        >>> m = nn.Dropout1d(p=0.5)
        >>> y = m(eager.ones(2, 8, 5))
        >>> y.shape
        eager.Size([2, 8, 5])
        >>> bool((y.amax(dim=2) == y.amin(dim=2)).all())  # whole channels kept or zeroed
        True
        >>> m.eval()(eager.ones(2, 8, 5)).equal(eager.ones(2, 8, 5))
        True
    """
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Randomly zeroes whole channels of 2-D feature maps during training.

    In training mode each channel ``input[n, c, :, :]`` is zeroed with probability ``p``,
    independently, and the kept channels are scaled by ``1 / (1 - p)``; in evaluation
    mode the module returns its input.  As in PyTorch, a 3-D input is not taken as an
    unbatched ``(C, H, W)`` image: it is treated as ``(N, C, L)`` (1-D channel-wise
    dropout) with a warning; use ``Dropout1d`` for that case.

    Args:
        p (float): probability of a channel to be zeroed, in ``[0, 1]`` (checked when the module
            is built). Default: ``0.5``.
        inplace (bool): if ``True``, write the result into the input tensor. Default:
            ``False``.

    Shape:
        - Input: ``(N, C, H, W)`` (or ``(N, C, L)``, see above); other numbers of
          dimensions are deprecated (a warning, then one draw per entry of the first two
          dimensions, as PyTorch does).
        - Output: the same shape as the input.

    Example::

        >>> m = nn.Dropout2d(p=0.5)
        >>> y = m(eager.ones(1, 8, 2, 2))
        >>> y.shape
        eager.Size([1, 8, 2, 2])
        >>> bool((y.amax(dim=(2, 3)) == y.amin(dim=(2, 3))).all())  # per channel
        True
        >>> sorted(set(y.flatten().tolist()))
        [0.0, 2.0]
    """
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Randomly zeroes whole channels of 3-D feature maps during training.

    In training mode each channel ``input[n, c, :, :, :]`` is zeroed with probability
    ``p``, independently, and the kept channels are scaled by ``1 / (1 - p)``; in
    evaluation mode the module returns its input.

    Args:
        p (float): probability of a channel to be zeroed, in ``[0, 1]`` (checked when the module
            is built). Default: ``0.5``.
        inplace (bool): if ``True``, write the result into the input tensor. Default:
            ``False``.

    Shape:
        - Input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``; other numbers of dimensions are
          deprecated (a warning, then the input is taken as one unbatched sample, as
          PyTorch does).
        - Output: the same shape as the input.

    Example::

        >>> m = nn.Dropout3d(p=0.2)
        >>> m(eager.randn(2, 4, 3, 5, 5)).shape
        eager.Size([2, 4, 3, 5, 5])
    """
    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout for self-normalizing (``SELU``) networks that keeps mean and variance.

    In training mode each element is dropped with probability ``p``; dropped elements are
    set to SELU's negative saturation value ``-alpha' = -scale * alpha ~= -1.7581`` instead
    of zero, and then the whole output is transformed as ``a * y + b`` with
    ``a = ((1 - p) * (1 + p * alpha'^2)) ** -0.5`` and ``b = a * alpha' * p``, so that an
    input with zero mean and unit variance keeps them.  In evaluation mode the module
    returns its input.

    Args:
        p (float): probability of an element to be zeroed, in ``[0, 1]`` (checked when the module
            is built). Default: ``0.5``.
        inplace (bool): if ``True``, write the result into the input tensor. Default:
            ``False``.

    Shape:
        - Input: ``(*)``, any number of dimensions.
        - Output: ``(*)``, the same shape as the input.

    Example::

        >>> m = nn.AlphaDropout(p=0.2)
        >>> m(eager.randn(20, 16)).shape
        eager.Size([20, 16])
        >>> x = eager.randn(3)
        >>> m.eval()(x) is x
        True
    """
    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` that drops whole channels instead of single elements.

    The mask has shape ``(N, C, 1, ..., 1)``: dimensions 0 and 1 of the input are always
    taken as batch and channel (an unbatched input is not recognised, as in PyTorch's
    ``F.feature_alpha_dropout``).  Dropped channels take the value ``-alpha'`` and the
    output is rescaled as in ``AlphaDropout``.  In evaluation mode the module returns its
    input.

    Args:
        p (float): probability of a channel to be zeroed, in ``[0, 1]`` (checked when the module
            is built). Default: ``0.5``.
        inplace (bool): if ``True``, write the result into the input tensor. Default:
            ``False``.

    Shape:
        - Input: ``(N, C, *)``, for example ``(N, C, D, H, W)``.
        - Output: the same shape as the input.

    Example::

        >>> m = nn.FeatureAlphaDropout(p=0.2)
        >>> m(eager.randn(2, 4, 3, 5, 5)).shape
        eager.Size([2, 4, 3, 5, 5])
    """
    _fn = staticmethod(F.feature_alpha_dropout)


class PixelShuffle(Module):
    """Rearranges channels into space: ``(*, C * r^2, H, W)`` to ``(*, C, H * r, W * r)``.

    Each group of ``r^2`` consecutive channels becomes an ``r x r`` block of pixels, which
    makes this a cheap learned upsampling step after a convolution (sub-pixel
    convolution).  ``PixelUnshuffle`` is its inverse.

    Args:
        upscale_factor (int): the factor ``r`` by which height and width grow; it must be
            positive, and the channel count must be divisible by ``r^2``.

    Shape:
        - Input: ``(*, C_in, H_in, W_in)`` with ``C_in = C_out * r^2``, at least 3
          dimensions.
        - Output: ``(*, C_out, H_in * r, W_in * r)``.

    Example::

        >>> nn.PixelShuffle(3)(eager.randn(1, 9, 4, 4)).shape
        eager.Size([1, 1, 12, 12])
        >>> nn.PixelShuffle(2)(eager.arange(8.0).reshape(1, 4, 1, 2))
        tensor([[[[0., 2., 1., 3.],
                  [4., 6., 5., 7.]]]])
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearranges space into channels: ``(*, C, H * r, W * r)`` to ``(*, C * r^2, H, W)``.

    Each ``r x r`` block of pixels becomes ``r^2`` channels; it is the inverse of
    ``PixelShuffle``.

    Args:
        downscale_factor (int): the factor ``r`` by which height and width shrink; it must
            be positive and divide both.

    Shape:
        - Input: ``(*, C_in, H_in, W_in)`` with ``H_in`` and ``W_in`` divisible by ``r``, at
          least 3 dimensions.
        - Output: ``(*, C_in * r^2, H_in / r, W_in / r)``.

    Example::

        >>> nn.PixelUnshuffle(3)(eager.randn(1, 1, 12, 12)).shape
        eager.Size([1, 9, 4, 4])
        >>> x = eager.randn(2, 3, 8, 8)
        >>> nn.PixelShuffle(2)(nn.PixelUnshuffle(2)(x)).equal(x)
        True
    """

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
