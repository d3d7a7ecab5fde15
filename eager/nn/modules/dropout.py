"""PyTorch's import path ``torch.nn.modules.dropout`` for eager's classes."""

from ..dropout import (  # noqa: F401
    AlphaDropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from ..layers import Dropout  # noqa: F401

__all__ = ['AlphaDropout', 'Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'FeatureAlphaDropout']
