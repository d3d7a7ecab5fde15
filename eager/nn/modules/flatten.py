"""PyTorch's import path ``torch.nn.modules.flatten`` for eager's classes."""

from .. import (  # noqa: F401
    Flatten,
    Unflatten,
)

__all__ = ["Flatten", "Unflatten"]
