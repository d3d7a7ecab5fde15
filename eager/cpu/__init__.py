"""``eager.cpu``: the CPU device's namespace (``eager.cpu.amp.autocast``, as PyTorch)."""

from . import amp

__all__ = ["amp"]
