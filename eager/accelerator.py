"""``eager.accelerator``: PyTorch's device-agnostic accelerator API over eager's one
accelerator, CUDA (``is_available`` is False without it)."""

from __future__ import annotations

from . import cuda as _cuda
from .tensor import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "device_count", "is_available", "set_device_idx", "set_device_index",
           "synchronize"]


def is_available() -> bool:
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device("cuda")`` when CUDA is available, else None."""
    return _device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    return _cuda.device_count()


def current_device_index() -> int:
    return _cuda.current_device() if _cuda.is_available() else -1


current_device_idx = current_device_index


def set_device_index(device) -> None:
    if _cuda.is_available():
        _cuda.set_device(device) if hasattr(_cuda, "set_device") else None


set_device_idx = set_device_index


def synchronize(device=None) -> None:
    if _cuda.is_available():
        _cuda.synchronize(device)
