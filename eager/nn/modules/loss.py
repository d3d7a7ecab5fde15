"""PyTorch's import path ``torch.nn.modules.loss`` for eager's classes."""

from ..extra_losses import *  # noqa: F403
from ..extra_losses import __all__ as _extra_losses
from ..loss import (  # noqa: F401
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MSELoss", "NLLLoss", "SmoothL1Loss"] + _extra_losses
