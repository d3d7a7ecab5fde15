"""PyTorch's import path ``torch.nn.modules.instancenorm`` for eager's classes."""

from .. import (  # noqa: F401
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
