"""PyTorch's import path ``torch.nn.modules.fold`` for eager's classes."""

from .. import (  # noqa: F401
    Fold,
    Unfold,
)

__all__ = ["Fold", "Unfold"]
