"""Gradient clipping with PyTorch's semantics: ``clip_grad_norm_`` (one norm over every
gradient, scaled down in place when above ``max_norm``), ``clip_grad_value_``, and the two
halves of the former, ``get_total_norm`` and ``clip_grads_with_norm_``.

Everything runs as eager ops under ``no_grad`` (a compiled training step traces it; only
``error_if_nonfinite=True`` reads the norm into Python).  ``foreach`` is accepted and
ignored (there is one implementation)."""

from __future__ import annotations

import math

import numpy as np

from ..._state import STATE
from ...autograd.grad_mode import no_grad
from ...factories import tensor
from ...fn.elementwise import clamp
from ...fn.reduce import norm
from ...fn.shape import stack
from ...inplace import fast_inplace
from ...ops.reduce import norm_quiet
from ...tensor import Tensor

_ndarray = np.ndarray
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _tensors(tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters) -> list:
    return [p.grad for p in _tensors(parameters) if p.grad is not None]


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together (as if concatenated): the norm of
    their norms.  ``inf`` is the largest absolute value."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensor(0.0)
    if math.isinf(norm_type) and any(t.numel() == 0 for t in tensors):
        raise RuntimeError(  # PyTorch's messages (its foreach kernel has only +inf)
            "_foreach_norm cannot compute the infinity norm on an empty tensor because the "
            "operation does not have an identity" if norm_type > 0 else
            "linalg.vector_norm cannot compute the -inf norm on an empty tensor because the "
            "operation does not have an identity")
    with no_grad():
        total_norm = _numpy_total_norm(tensors, norm_type)
        if total_norm is None:
            norms = [norm(t, norm_type) for t in tensors]
            total_norm = norm(stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total_norm


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale every gradient by ``min(1, max_norm / (total_norm + 1e-6))``, in place."""
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        cast = {}   # the coefficient in each gradient dtype, converted once
        for g in grads:
            c = cast.get(g.dtype)
            if c is None:
                c = cast[g.dtype] = coef.to(g.dtype)
            # (g.mul_(c) without its overlap check: c is a fresh 0-d tensor)
            if not fast_inplace(g, np.multiply, c):
                g.mul_(c)


def _numpy_total_norm(tensors, norm_type: float):
    """The total norm computed by the norm op's own forward on the arrays (the values the
    ops compute, without a Tensor and a dispatch per gradient), when nothing records and
    every tensor is a float32/float64 NumPy array of one dtype; else None."""
    if STATE.tracer is not None:
        return None
    arrays = [t._data for t in tensors]
    dt = arrays[0].dtype
    if dt not in _FLOATS or any(type(a) is not _ndarray or a.dtype != dt for a in arrays):
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # Norm's, once
        norms = np.empty(len(arrays), dt)
        if norm_type == 2.0:
            # norm_quiet's 2-norm of each whole array in three calls: the same operations
            # (|a|*|a| is a*a, and a sum over every axis is the sum over axis None)
            square, total, sqrt = np.multiply, np.add.reduce, np.sqrt
            for i, a in enumerate(arrays):
                norms[i] = sqrt(total(square(a, a), axis=None))
        else:
            for i, a in enumerate(arrays):
                norms[i] = norm_quiet(a, norm_type, tuple(range(a.ndim)))
        return Tensor._make(np.asarray(norm_quiet(norms, norm_type, (0,))))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Clip the gradients of ``parameters`` so that their total ``norm_type``-norm is at
    most ``max_norm`` (scaled in place); returns the total norm before clipping.  With
    ``error_if_nonfinite``, a nan/inf total norm raises instead of scaling."""
    parameters = _tensors(parameters)
    grads = _grads(parameters)
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
