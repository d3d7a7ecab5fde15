"""PyTorch's import path ``torch.nn.modules.flatten`` for eager's classes."""

from ..layers import Flatten, Unflatten  # noqa: F401

__all__ = ['Flatten', 'Unflatten']
