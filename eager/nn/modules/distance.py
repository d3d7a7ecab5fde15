"""PyTorch's import path ``torch.nn.modules.distance`` for eager's classes."""

from .. import (  # noqa: F401
    CosineSimilarity,
    PairwiseDistance,
)

__all__ = ["CosineSimilarity", "PairwiseDistance"]
