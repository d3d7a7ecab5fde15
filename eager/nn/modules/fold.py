"""PyTorch's import path ``torch.nn.modules.fold`` for eager's classes."""

from ..fold import Fold, Unfold  # noqa: F401

__all__ = ['Fold', 'Unfold']
