"""Helpers of :mod:`eager.nn.module`: repr indentation, hook handles, name checks, and
state-dict value conversion/copying."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autograd.grad_mode import no_grad
from ..factories import from_numpy, zeros_like
from ..inplace import inplace
from ..tensor import Tensor


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_: str, num_spaces: int) -> str:
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return "eager." + type(obj).__name__
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


class _RemovableHandle:
    _next_id = 0

    def __init__(self, hooks: dict):
        self.hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# -- helpers ----------------------------------------------------------------------------

def _check_name(name, what):
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')


def _remove_from(name, *stores):
    for d in stores:
        if name in d:
            if isinstance(d, dict):
                del d[name]
            else:
                d.discard(name)


def _as_array(value):
    """A state-dict value as a NumPy array (eager tensors, arrays, torch tensors...)."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__array__") or isinstance(value, (int, float, list, tuple)):
        try:
            if hasattr(value, "detach"):  # e.g. a torch tensor
                value = value.detach().cpu().numpy()
            return np.asarray(value)
        except Exception:  # noqa: BLE001 (not array-like)
            return None
    return None


def _copy_into(t: Tensor, arr: np.ndarray) -> None:
    """``t.copy_(arr)``: write through the in-place path (version bump, tracer notice)."""
    inplace(t, from_numpy(np.array(arr, dtype=t._data.dtype)), "copy_")


def _zero_grad_tensor(p: Tensor) -> None:
    g = p.grad
    if g.grad_fn is not None:
        g.detach_()
    else:
        g.requires_grad_(False)
    zero = getattr(g, "zero_", None)
    if zero is not None:
        zero()
    else:
        with no_grad():
            inplace(g, zeros_like(g), "zero_")
