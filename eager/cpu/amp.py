"""``eager.cpu.amp``: PyTorch's older, CPU-specific spellings (deprecated there too)."""

import warnings

from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast


class autocast(_autocast):
    """``eager.cpu.amp.autocast(enabled=True, dtype=eager.bfloat16, cache_enabled=True)``:
    ``eager.amp.autocast("cpu", ...)``, with PyTorch's FutureWarning."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``eager.cpu.amp.GradScaler(init_scale=2.0**16, ...)``: ``eager.amp.GradScaler("cpu",
    ...)``, with PyTorch's FutureWarning."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


__all__ = ["GradScaler", "autocast"]
