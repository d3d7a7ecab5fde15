"""PyTorch's import path ``torch.nn.modules.linear`` for eager's classes."""

from .. import (  # noqa: F401
    Bilinear,
    Identity,
    Linear,
)

__all__ = ["Identity", "Linear", "Bilinear"]
