"""Grad-mode switches: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is a context manager and a decorator, as in PyTorch.
"""

from __future__ import annotations

import functools

from .._state import STATE


class _GradMode:
    _enabled = True

    def __init__(self):
        self._prev = []

    def __enter__(self):
        self._prev.append(STATE.grad_enabled)
        STATE.grad_enabled = self._enabled
        return self

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Context manager (and decorator) that disables gradient recording: results computed
    inside have ``requires_grad=False`` even when their inputs require gradients. Use it
    for inference and for updates that must not enter the graph.

    Example::

        >>> x = eager.tensor([1.0], requires_grad=True)
        >>> with eager.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
        >>> @eager.no_grad()
        ... def doubler(x):
        ...     return x * 2
        >>> doubler(x).requires_grad
        False
    """
    _enabled = False


class enable_grad(_GradMode):
    """Enable gradient recording inside the block (e.g. within ``no_grad``)."""
    _enabled = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(mode)``: takes effect at once, and as a context restores on exit."""

    def __init__(self, mode: bool):
        super().__init__()
        self._enabled = bool(mode)
        self._prev.append(STATE.grad_enabled)
        STATE.grad_enabled = self._enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._prev:
            STATE.grad_enabled = self._prev.pop()
        return False

    def __call__(self, fn):
        STATE.grad_enabled = self._prev.pop()  # used as a decorator: undo the immediate set
        mode = self._enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class inference_mode(_GradMode):
    """Like ``no_grad`` (tensors made inside never require grad)."""

    def __init__(self, mode: bool = True):
        super().__init__()
        self._enabled = not mode

    def __enter__(self):
        self._prev.append((STATE.grad_enabled, STATE.inference))
        STATE.grad_enabled = self._enabled
        STATE.inference = not self._enabled
        return self

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.inference = self._prev.pop()
        return False

    def __call__(self, fn):
        mode = not self._enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper


def is_grad_enabled() -> bool:
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference
