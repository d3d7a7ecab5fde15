"""PyTorch's import path ``torch.nn.modules.batchnorm`` for eager's classes."""

from ..normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from ..sync_batchnorm import SyncBatchNorm  # noqa: F401

__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'SyncBatchNorm']
