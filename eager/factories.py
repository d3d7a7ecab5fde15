"""Tensor factories: ``tensor``, ``from_numpy``, ``zeros``, ``ones``, ``full``, ``empty``,
``arange``, ``linspace``, ``eye``, ``rand``, ``randn``, ``randint``, ``randperm`` and the
``*_like`` forms.  Random factories draw from ``generator=`` (an :class:`eager.Generator`;
None: the default generator, seeded by :func:`eager.manual_seed`).

Python floats become float32, ints int64, bools bool; a NumPy array keeps its dtype.
"""

from __future__ import annotations

import numpy as np

from runtime import device as runtime_device

from . import dtypes as _dt
from ._state import STATE
from .dispatch import dispatch
from .dtypes import is_float as _isf
from .fn.args import norm_shape
from .methods import to_device
from .ops import factory as _f
from .random import check as _check_generator
from .tensor import Tensor, host
from .tensor import device as _device_cls


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
    dev = _device_type(device)
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
    dev = None if device is None else _device_type(device)
    if isinstance(data, Tensor) and (dtype is None or data._data.dtype == _dt.to_numpy(dtype)):
        return data if dev is None else to_device(data, dev)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == _dt.to_numpy(dtype)) \
            and dev in (None, "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dt.from_numpy(array.dtype)
    t = Tensor._make(array)
    if STATE.tracer is not None:
        STATE.tracer.on_new_tensor(t)
    return t


def _device_type(device) -> str:
    """The device type asked for (``"cpu"`` when None); PyTorch's error for a bad name,
    and a clear one when the device cannot be used here."""
    if device is None:
        return "cpu"
    dev = _device_cls(device)
    kind = dev.type
    if kind != "cpu" and not runtime_device.available(kind):
        raise RuntimeError(f"Torch not compiled with CUDA enabled: no {kind} device here "
                           f"(install the 'cuda' extra on a machine with a GPU, or set "
                           f"NUMBA_ENABLE_CUDASIM=1 for the simulator)")
    if kind == "cuda" and dev.index:
        from .cuda import check_device
        check_device(dev)     # cuda:1 on one GPU: PyTorch's invalid device ordinal
    return kind


def _on(device) -> dict:
    """The ``device`` param of a factory op: none on the CPU (its forward takes none)."""
    kind = _device_type(device)
    return {} if kind == "cpu" else {"device": kind}


def _float_dtype(dtype) -> np.dtype:
    return _dt.DEFAULT_FLOAT.np if dtype is None else _dt.to_numpy(dtype)


def _plain(*values) -> tuple:
    """``values`` with the dynamic Python numbers of a traced call (a ``SymInt`` or
    ``SymFloat`` of ``compile``) specialized: a factory's shape and dtype depend on
    them, so the trace is guarded on their values (another value traces again)."""
    tracer = STATE.tracer
    if tracer is not None and tracer.has_syms:
        return tracer.plain_data(values)
    return values


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    on = _on(device)
    fill_value, = _plain(fill_value)
    shape = norm_shape((size,) if isinstance(size, int) else tuple(size), "full")
    if dtype is None:
        dtype = _dt.result_type(fill_value)
    t = dispatch(_f.Full, shape=shape, value=fill_value, dtype=_dt.to_numpy(dtype), **on)
    return _finish(t, requires_grad)


def _size_kw(args: tuple, size, name: str) -> tuple:
    """The shape from ``*size`` or the ``size=`` keyword (PyTorch accepts both)."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,) if isinstance(size, int) else tuple(size)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False, memory_format=None) -> Tensor:
    """A tensor filled with 0, of shape ``size``.

    Args:
        *size (ints or a sequence): the shape (``size=`` as a keyword also works).
        dtype (eager.dtype, optional): default: the default float dtype (float32).
        device, layout, pin_memory, memory_format: accepted as PyTorch's.
        requires_grad (bool): default: ``False``.

    Example::

        >>> eager.zeros(2, 3)
        tensor([[0., 0., 0.],
                [0., 0., 0.]])
    """
    size = _size_kw(args, size, "zeros")
    on = _on(device)
    t = dispatch(_f.Full, shape=norm_shape(size, "zeros"), value=0, dtype=_float_dtype(dtype),
                 **on)
    return _finish(t, requires_grad)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False, memory_format=None) -> Tensor:
    size = _size_kw(args, size, "ones")
    on = _on(device)
    t = dispatch(_f.Full, shape=norm_shape(size, "ones"), value=1, dtype=_float_dtype(dtype),
                 **on)
    return _finish(t, requires_grad)


def empty(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False, memory_format=None) -> Tensor:
    """An uninitialized tensor (here: zeros); the shape as ``*size`` or ``size=``."""
    size = _size_kw(args, size, "empty")
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    on = _on(device)
    start, end, step = _plain(start, end, step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        dtype = _dt.result_type(start, end, step)
    t = dispatch(_f.Arange, start=start, end=end, step=step, dtype=_dt.to_numpy(dtype), **on)
    return _finish(t, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    on = _on(device)
    t = dispatch(_f.Linspace, start=start, end=end, steps=int(steps),
                 dtype=_float_dtype(dtype), **on)
    return _finish(t, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    on = _on(device)
    t = dispatch(_f.Eye, n=int(n), m=int(n if m is None else m), dtype=_float_dtype(dtype), **on)
    return _finish(t, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    on = _on(device)
    g = _check_generator(generator, "rand")
    t = dispatch(_f.Rand, shape=norm_shape(size, "rand"), dtype=_float_dtype(dtype), generator=g,
                 **on)
    return _finish(t, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of samples from the standard normal distribution ``N(0, 1)``.

    Args:
        *size (ints or a sequence): the shape.
        generator (eager.Generator, optional): the random-number generator to draw from.
        dtype (eager.dtype, optional): default: the default float dtype (float32).
        device (optional): accepted as PyTorch's.
        requires_grad (bool): default: ``False``.

    Example::

        >>> eager.randn(2, 3).shape
        eager.Size([2, 3])
    """
    on = _on(device)
    g = _check_generator(generator, "randn")
    t = dispatch(_f.Randn, shape=norm_shape(size, "randn"), dtype=_float_dtype(dtype),
                 generator=g, **on)
    return _finish(t, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    on = _on(device)
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    g = _check_generator(generator, "randint")
    return dispatch(_f.Randint, low=int(low), high=int(high), shape=norm_shape(tuple(size)),
                    dtype=_dt.DEFAULT_INT.np if dtype is None else _dt.to_numpy(dtype),
                    generator=g, **on)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``)."""
    on = _on(device)
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    g = _check_generator(generator, "randperm")
    t = dispatch(_f.Randperm, n=n, dtype=_dt.DEFAULT_INT.np if dtype is None
                 else _dt.to_numpy(dtype), generator=g, **on)
    return _finish(t, requires_grad)


def _like(fn):
    def like(input, *, dtype=None, device=None, requires_grad=False, **kw):
        dt = input.dtype if dtype is None else dtype
        dev = input.device if device is None else device
        return fn(tuple(input.shape), dtype=dt, device=dev, requires_grad=requires_grad, **kw)
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    dt = input.dtype if dtype is None else dtype
    dev = input.device if device is None else device
    return full(tuple(input.shape), fill_value, dtype=dt, device=dev,
                requires_grad=requires_grad)


def randint_like(input, low, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), generator=generator,
                   dtype=dtype or input.dtype,
                   device=input.device if device is None else device)
