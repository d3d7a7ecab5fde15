"""PyTorch's import path ``torch.nn.modules.sparse`` for eager's classes."""

from ..embedding_bag import EmbeddingBag  # noqa: F401
from ..layers import Embedding  # noqa: F401

__all__ = ['Embedding', 'EmbeddingBag']
