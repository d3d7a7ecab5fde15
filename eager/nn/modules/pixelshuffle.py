"""PyTorch's import path ``torch.nn.modules.pixelshuffle`` for eager's classes."""

from ..dropout import PixelShuffle, PixelUnshuffle  # noqa: F401

__all__ = ['PixelShuffle', 'PixelUnshuffle']
