"""PyTorch's import path ``torch.nn.modules.instancenorm`` for eager's classes."""

from ..normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401

__all__ = ['InstanceNorm1d', 'InstanceNorm2d', 'InstanceNorm3d']
