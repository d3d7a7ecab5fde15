"""PyTorch's import path ``torch.nn.modules.pixelshuffle`` for eager's classes."""

from .. import (  # noqa: F401
    PixelShuffle,
    PixelUnshuffle,
)

__all__ = ["PixelShuffle", "PixelUnshuffle"]
