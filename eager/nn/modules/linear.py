"""PyTorch's import path ``torch.nn.modules.linear`` for eager's classes."""

from ..layers import Bilinear, Identity, Linear  # noqa: F401

__all__ = ['Identity', 'Linear', 'Bilinear']
