"""PyTorch's import path ``torch.nn.modules.container`` for eager's classes."""

from ..container import (  # noqa: F401
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)

__all__ = ['ModuleDict', 'ModuleList', 'ParameterDict', 'ParameterList', 'Sequential']
