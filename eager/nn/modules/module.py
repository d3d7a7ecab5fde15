"""PyTorch's import path ``torch.nn.modules.module`` for eager's classes."""

from .. import (  # noqa: F401
    Module,
)

__all__ = ["Module"]
