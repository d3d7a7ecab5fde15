"""PyTorch's import path ``torch.nn.modules.upsampling`` for eager's classes."""

from ..upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401

__all__ = ['Upsample', 'UpsamplingBilinear2d', 'UpsamplingNearest2d']
