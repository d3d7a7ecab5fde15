"""``eager.amp``: automatic mixed precision (``autocast``) and gradient scaling
(``GradScaler``), as ``torch.amp``."""

from .autocast_mode import (
                            autocast,
                            get_autocast_dtype,
                            is_autocast_cpu_enabled,
                            is_autocast_enabled,
)
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "get_autocast_dtype", "is_autocast_cpu_enabled",
           "is_autocast_enabled"]
