"""Where tensors live: the device a user names (``"cuda:0"``, ``eager.device``, None for
the CPU) checked and reduced to the device type ops are dispatched on, with PyTorch's
errors for a device this machine cannot use or an index it does not have; and moving a
tensor there (``to``, ``cpu()``, ``cuda()``) as one recorded, differentiable op."""

from __future__ import annotations

from runtime import device as runtime_device

from ._state import STATE
from .dispatch import dispatch
from .ops.device import ToDevice
from .tensor import Tensor
from .tensor import device as _device


class DeviceUnavailableError(RuntimeError, AssertionError):
    """A device this machine cannot use was asked for.  PyTorch raises AssertionError
    ("Torch not compiled with CUDA enabled"); this is both, so code catching either works."""


def device_count(kind: str) -> int:
    """How many devices of ``kind`` this machine has (0 when it cannot use them)."""
    if kind == "cpu":
        return 1
    return runtime_device.get(kind).device_count() if runtime_device.available(kind) else 0


def check_cuda_ordinal(device) -> None:
    """PyTorch's error for a CUDA device index this machine does not have (``cuda:1`` on
    one GPU); ``device``: an ``eager.device``, a string or an int (None: the current)."""
    if device is None:
        return
    if isinstance(device, int):
        index = device
    else:
        dev = _device(device)
        if dev.type != "cuda" or dev.index is None:
            return
        index = dev.index
    if not 0 <= index < device_count("cuda"):
        raise RuntimeError("CUDA error: invalid device ordinal\nCUDA kernel errors might be "
                           "asynchronously reported at some other API call, so the stacktrace "
                           "below might be incorrect.\nFor debugging consider passing "
                           "CUDA_LAUNCH_BLOCKING=1")


def device_type(device) -> str:
    """The device type asked for (None: the default device, ``"cpu"`` unless
    :func:`set_default_device` or ``with eager.device(...)`` set another); PyTorch's error
    for a bad name, and a clear one when the device cannot be used here."""
    if device is None:
        device = STATE.default_device
        if device is None:
            return "cpu"
    dev = _device(device)
    kind = dev.type
    if kind != "cpu" and not runtime_device.available(kind):
        raise DeviceUnavailableError(
            f"Torch not compiled with CUDA enabled: no {kind} device here (install the "
            f"'cuda' extra on a machine with a GPU, or set NUMBA_ENABLE_CUDASIM=1 for the "
            f"simulator)")
    if kind == "cuda" and dev.index:
        check_cuda_ordinal(dev)
    return kind


def set_default_device(device) -> None:
    """``torch.set_default_device``: the device factories (``zeros``, ``tensor``,
    ``randn``, ...) use when called without ``device=``, in this thread; None or ``"cpu"``
    restores the CPU.  A compiled function traces again under another default device."""
    dev = None if device is None else _device(device)
    STATE.default_device = None if dev is None or dev.type == "cpu" else dev


def get_default_device() -> _device:
    """``torch.get_default_device``: ``device(type='cpu')``, or the device set by
    :func:`set_default_device` / ``with eager.device(...)`` (index 0 when none was
    named, as PyTorch reports it)."""
    dev = STATE.default_device
    if dev is None:
        return _device("cpu")
    return _device(dev.type, 0 if dev.index is None else dev.index)


def factory_params(device) -> dict:
    """The ``device`` param of a factory op: none on the CPU (its forward takes none)."""
    kind = device_type(device)
    return {} if kind == "cpu" else {"device": kind}


def to_args(args, kwargs) -> tuple:
    """(device type or None, dtype or None) asked for by ``to(dtype)``, ``to(device)``,
    ``to(other)``, ``to(device, dtype)`` (and ``device=``/``dtype=`` keywords)."""
    dtype = kwargs.get("dtype")
    dev = kwargs.get("device")
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _device)):
            dev = a
        elif a is not None:
            dtype = a
    if dev is None:
        return None, dtype
    dev = _device(dev)
    if dev.type == "cuda" and dev.index:
        device_type(dev)     # cuda:1 on one GPU: PyTorch's invalid device ordinal
    return dev.type, dtype


def to_device(t: Tensor, kind: str) -> Tensor:
    """``t`` on device type ``kind`` (``t`` itself when it is there already): a recorded,
    differentiable copy."""
    if t.device.type == kind:
        return t
    device_type(kind)  # PyTorch's error when the device cannot be used here
    return dispatch(ToDevice, t, device=kind, source=t.device.type)


def cuda_device(device) -> str:
    """``Tensor.cuda(device)``: the index checked (PyTorch's invalid device ordinal), and
    PyTorch's error for a device that is no CUDA device."""
    if device is not None:
        dev = _device("cuda", device) if isinstance(device, int) else _device(device)
        if dev.type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        to_args((dev,), {})
    return "cuda"
