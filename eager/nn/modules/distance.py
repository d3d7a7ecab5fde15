"""PyTorch's import path ``torch.nn.modules.distance`` for eager's classes."""

from ..distance import CosineSimilarity, PairwiseDistance  # noqa: F401

__all__ = ['CosineSimilarity', 'PairwiseDistance']
