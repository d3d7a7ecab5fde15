"""Making a tensor from data: :func:`tensor` (a copy of nested lists, scalars, NumPy arrays,
tensors, another library's tensors), :func:`as_tensor` (shares memory when it can) and
:func:`from_numpy` (shares memory), with PyTorch's dtype inference.  The layer below the
public factories (:mod:`eager.factories`), so that the functions of :mod:`eager.fn` and
the autograd engine can make tensors without importing them.
"""

from __future__ import annotations

import numpy as np

from runtime import device as runtime_device

from . import dtypes as _dt
from ._state import STATE
from .devices import device_type, to_device
from .dtypes import is_float as _isf
from .tensor import Tensor, host


def _infer_np_dtype(data) -> np.dtype:
    """The dtype PyTorch gives to nested Python data: Python floats and ints take the
    default dtypes, NumPy scalars and tensors keep theirs, and the kinds promote
    (float over int over bool; the wider float / int)."""
    py, typed = set(), []
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            typed.append(x._data.dtype)
        elif isinstance(x, (np.generic, np.ndarray)) and x.dtype.kind in "biuf":
            typed.append(x.dtype)
        elif isinstance(x, bool):
            py.add("b")
        elif isinstance(x, int):
            py.add("i")
        elif isinstance(x, float):
            py.add("f")
        else:
            raise TypeError(f"tensor(): could not infer dtype of {type(x).__name__}")
    floats = [d for d in typed if _isf(d)] + ([_dt.DEFAULT_FLOAT.np] if "f" in py else [])
    if floats:
        return max(floats, key=lambda d: d.itemsize)
    ints = [d for d in typed if d.kind in "iu"] + ([_dt.DEFAULT_INT.np] if "i" in py else [])
    if ints:
        out = ints[0]
        for d in ints[1:]:
            out = np.promote_types(out, d)
        return out
    if "b" in py or typed:
        return _dt.bool_.np
    return _dt.DEFAULT_FLOAT.np  # empty list


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _foreign_array(data):
    """Another library's tensor (a ``torch.Tensor``, or anything with ``__dlpack__``) as a
    NumPy array, or None.  PyTorch's bfloat16 (no NumPy type) comes over as its bits."""
    if isinstance(data, (list, tuple, int, float, bool, complex)) or data is None:
        return None
    mod = type(data).__module__ or ""
    if mod.startswith("torch"):
        import sys
        torch = sys.modules["torch"]
        t = data.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            return t.contiguous().view(torch.int16).numpy().view(_dt.BF16_NP)
        return t.resolve_conj().resolve_neg().numpy()
    if hasattr(data, "__dlpack__"):
        return np.from_dlpack(data)
    return None


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Copies ``data`` (nested lists, scalars, NumPy arrays or tensors, a torch tensor
    included) into a new tensor that shares no memory with it.

    Args:
        data: the values.
        dtype (eager.dtype, optional): the dtype; inferred when omitted (Python floats
            become the default float dtype, float32; ints int64; bools bool).
        device (str or eager.device, optional): accepted as PyTorch's (CPU).
        requires_grad (bool): record operations on it for autograd. Default: ``False``.

    Example::

        >>> eager.tensor([[0.1, 1.2], [2.2, 3.1]])
        tensor([[0.1000, 1.2000],
                [2.2000, 3.1000]])
        >>> eager.tensor([0, 1]).dtype
        eager.int64
    """
    dev = device_type(device)
    if STATE.tracer is not None and STATE.tracer.has_syms:
        data = STATE.tracer.plain_data(data)  # numbers of a traced call become constants
    if isinstance(data, Tensor):
        arr = host(data._data).copy()
    elif isinstance(data, np.ndarray):
        arr = data.copy()
    elif (foreign := _foreign_array(data)) is not None:
        arr = np.array(foreign, copy=True)
    else:
        if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
            data = [host(x._data) if isinstance(x, Tensor) else x for x in data]
        arr = np.array(data, dtype=_infer_np_dtype(data) if dtype is None else None)
    if dtype is not None:
        arr = arr.astype(_dt.to_numpy(dtype), copy=False)
    _dt.from_numpy(arr.dtype)
    arr = arr if arr.flags.c_contiguous else np.array(arr, order="C")
    t = Tensor._make(arr if dev == "cpu" else runtime_device.get(dev).from_host(arr))
    if STATE.tracer is not None:
        STATE.tracer.on_new_tensor(t)
    return _finish(t, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Converts ``data`` to a tensor, sharing memory with it where it can.

    A tensor that already has the asked dtype is returned as is (moved with ``.to`` when
    ``device`` is given); a NumPy array whose dtype matches, kept on the CPU, is wrapped
    without a copy as by :func:`from_numpy`.  Anything else (lists, scalars, a dtype or
    device change) is copied as by :func:`tensor`.

    Args:
        data: a tensor, a NumPy array, or nested lists / tuples of numbers.
        dtype (eager.dtype, optional): the dtype; inferred from ``data`` when omitted.
            Default: ``None``
        device (str or eager.device, optional): the device of the result; the device of
            ``data`` (CPU for non-tensors) when omitted. Default: ``None``

    Example::

        >>> import numpy as np
        >>> a = np.array([1., 2., 3.])
        >>> t = eager.as_tensor(a)
        >>> a[0] = -1.
        >>> t
        tensor([-1.,  2.,  3.], dtype=eager.float64)
        >>> eager.as_tensor([1, 2, 3])
        tensor([1, 2, 3])
    """
    dev = None if device is None else device_type(device)
    if isinstance(data, Tensor) and (dtype is None or data._data.dtype == _dt.to_numpy(dtype)):
        return data if dev is None else to_device(data, dev)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == _dt.to_numpy(dtype)) \
            and dev in (None, "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """Wraps a NumPy array as a tensor that shares its memory: writes to one show in the
    other.  The array keeps its dtype (float64 stays float64); the result is on the CPU
    and does not require grad.

    Args:
        array (numpy.ndarray): the array to wrap; other types raise ``TypeError``.

    Example::

        >>> import numpy as np
        >>> a = np.array([1, 2, 3])
        >>> t = eager.from_numpy(a)
        >>> t
        tensor([1, 2, 3])
        >>> t[0] = 10
        >>> a
        array([10,  2,  3])
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dt.from_numpy(array.dtype)
    t = Tensor._make(array)
    if STATE.tracer is not None:
        STATE.tracer.on_new_tensor(t)
    return t
