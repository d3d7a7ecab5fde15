"""Zero-copy exchange with other array libraries: ``eager.from_dlpack`` takes any object
with ``__dlpack__`` (NumPy, PyTorch CPU tensors) or ``__cuda_array_interface__`` (CuPy,
PyTorch CUDA tensors, Numba device arrays); tensors offer ``__dlpack__`` (CPU) and
``__cuda_array_interface__`` (CUDA) in return."""

from __future__ import annotations

import numpy as np

from runtime import device as runtime_device

from .tensor import Tensor, host


def from_dlpack(ext) -> Tensor:
    """A tensor sharing memory with ``ext`` (a CUDA tensor for CUDA memory)."""
    if isinstance(ext, Tensor):
        return ext
    if hasattr(ext, "__cuda_array_interface__"):
        return Tensor._make(runtime_device.get("cuda").from_interface(ext))
    return Tensor._make(np.from_dlpack(ext))


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    d = self._data
    if type(d) is not np.ndarray:
        raise BufferError("a CUDA tensor is exported through __cuda_array_interface__ "
                          "(CuPy, PyTorch and Numba read it without a copy)")
    if self.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    return host(d).__dlpack__()


def _dlpack_device(self) -> tuple:
    return (1, 0) if type(self._data) is np.ndarray else (2, 0)


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
