"""PyTorch's import path ``torch.nn.modules.upsampling`` for eager's classes."""

from .. import (  # noqa: F401
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
