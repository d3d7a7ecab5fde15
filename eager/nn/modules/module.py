"""PyTorch's import path ``torch.nn.modules.module`` for eager's classes."""

from ..module import Module  # noqa: F401

__all__ = ['Module']
