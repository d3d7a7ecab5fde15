"""``eager.cuda.amp``: the deprecated ``torch.cuda.amp`` names, ``autocast`` (``device_type``
fixed to ``"cuda"``) and ``GradScaler`` (device ``"cuda"``), as aliases of ``eager.amp``."""

from __future__ import annotations

from .. import amp as _amp
from ..dtypes import float16

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class autocast(_amp.autocast):
    """``eager.amp.autocast("cuda", ...)`` (PyTorch's deprecated spelling)."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        super().__init__("cuda", dtype=float16 if dtype is None else dtype, enabled=enabled)


class GradScaler(_amp.GradScaler):
    """``eager.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True):
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, **kwargs):
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd):
    return bwd
