"""Helpers shared by the distributions: ``broadcast_all``, ``probs_to_logits``,
``logits_to_probs``, ``clamp_probs`` and ``lazy_property`` (PyTorch's
``torch.distributions.utils``)."""

from __future__ import annotations

from numbers import Number

from ..autograd.grad_mode import enable_grad
from ..dtypes import DEFAULT_FLOAT
from ..dtypes import finfo as _finfo
from ..factories import tensor
from ..fn import elementwise as _ew
from ..fn import reduce as _red
from ..fn.shape import broadcast_tensors
from ..tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits"]


def fmt(value) -> str:
    """``f"{value}"`` as PyTorch writes it in messages: a 0-d tensor as its Python number."""
    if isinstance(value, Tensor) and value.ndim == 0:
        return format(value.item(), "")
    return f"{value}"


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape: numbers become tensors of the tensors'
    dtype (the default float dtype when there are none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not any(isinstance(v, Tensor) for v in values):
        return tuple(tensor(float(v), dtype=DEFAULT_FLOAT) for v in values)
    dtype = next(v for v in values if isinstance(v, Tensor)).dtype
    values = [v if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in values]
    return tuple(broadcast_tensors(*values))


def clamp_probs(probs: Tensor) -> Tensor:
    eps = float(_finfo(probs._data.dtype).eps)
    return _ew.clamp(probs, min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or log-probabilities of (clamped) ``probs``."""
    ps = clamp_probs(probs)
    if is_binary:
        return _ew.sub(_ew.log(ps), _ew.log1p(_ew.neg(ps)))
    return _ew.log(ps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Sigmoid (binary) or softmax over the last dimension."""
    if is_binary:
        return _ew.sigmoid(logits)
    return _red.softmax(logits, -1)


class lazy_property:
    """Computed (with grad enabled) on first access, then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
