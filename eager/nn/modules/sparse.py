"""PyTorch's import path ``torch.nn.modules.sparse`` for eager's classes."""

from .. import (  # noqa: F401
    Embedding,
)
from ..embedding_bag import EmbeddingBag  # noqa: F401

__all__ = ["Embedding", "EmbeddingBag"]
