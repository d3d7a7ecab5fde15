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
    """Zeroes whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``
    in training mode (scaling the rest by ``1 / (1 - p)``); identity in eval mode.

    Args:
        p (float): probability of a channel to be zeroed. Default: 0.5.
        inplace (bool): write into the input. Default: False.
    """
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, H, W)`` or ``(C, H, W)`` input with probability
    ``p`` in training mode; identity in eval mode."""
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout keeping zero mean and unit variance (for SELU networks)."""
    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` of whole channels."""
    _fn = staticmethod(F.feature_alpha_dropout)


class PixelShuffle(Module):
    """Rearranges ``(*, C * r^2, H, W)`` into ``(*, C, H * r, W * r)``.

    Args:
        upscale_factor (int): ``r``.

    Example::

        >>> nn.PixelShuffle(3)(eager.randn(1, 9, 4, 4)).shape
        eager.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearranges ``(*, C, H * r, W * r)`` into ``(*, C * r^2, H, W)`` (inverse of
    ``PixelShuffle``).

    Args:
        downscale_factor (int): ``r``.
    """

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
