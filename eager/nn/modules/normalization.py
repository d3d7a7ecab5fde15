"""PyTorch's import path ``torch.nn.modules.normalization`` for eager's classes."""

from .. import (  # noqa: F401
    GroupNorm,
    LayerNorm,
)

__all__ = ["GroupNorm", "LayerNorm"]
