"""``eager.cpu.amp``: PyTorch's CPU-specific autocast spelling."""

from ..amp import GradScaler
from ..amp import autocast as _autocast


class autocast(_autocast):
    """``eager.cpu.amp.autocast(enabled=True, dtype=eager.bfloat16, cache_enabled=True)``:
    ``eager.autocast("cpu", ...)``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


__all__ = ["GradScaler", "autocast"]
