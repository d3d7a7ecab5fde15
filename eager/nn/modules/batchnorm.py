"""PyTorch's import path ``torch.nn.modules.batchnorm`` for eager's classes."""

from .. import (  # noqa: F401
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
