"""``eager.utils``: ``data`` (datasets, samplers, DataLoader) and ``checkpoint``."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
