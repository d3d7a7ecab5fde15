"""PyTorch's import path ``torch.nn.modules.sparse`` for eager's classes."""

from .. import (  # noqa: F401
    Embedding,
)

__all__ = ["Embedding"]
