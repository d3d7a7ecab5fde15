"""PyTorch's import path ``torch.nn.modules.normalization`` for eager's classes."""

from ..normalization import GroupNorm, LayerNorm  # noqa: F401

__all__ = ['GroupNorm', 'LayerNorm']
