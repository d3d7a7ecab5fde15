"""``eager.utils``: ``data`` (datasets, samplers, DataLoader) and ``checkpoint``."""

from . import data

__all__ = ["data"]
