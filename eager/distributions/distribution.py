"""``Distribution``: the base class (shapes, argument and sample validation, ``sample`` from
``rsample``), with PyTorch's semantics and error messages."""

from __future__ import annotations

import warnings

from ..autograd.grad_mode import no_grad
from ..fn import reduce as _red
from ..tensor import Size, Tensor
from . import constraints
from .utils import fmt, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Base class.  ``batch_shape``: independent parameter sets; ``event_shape``: the shape
    of one sample of one of them.  ``validate_args`` (default on, as PyTorch under
    ``__debug__``) checks parameters against ``arg_constraints`` and values against
    ``support``."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue   # not given: derived lazily from a checked parameter
                value = getattr(self, param)
                if not bool(_red.all(constraint.check(value))):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{fmt(value)}")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample (no gradient) of shape ``sample_shape + batch_shape + event_shape``."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterized sample: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning,
                      stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def enumerate_support(self, expand: bool = True):
        raise NotImplementedError

    def _extended_shape(self, sample_shape=()) -> Size:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.ndim - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual = value.size()
        expected = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        support = self.support
        if not bool(_red.all(support.check(value))):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support ({support!r}) "
                             f"of the distribution {self!r}, but found invalid values:\n"
                             f"{fmt(value)}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for p in names:
            v = self.__dict__[p]
            parts.append(f"{p}: {fmt(v) if v.numel() == 1 else v.size()}")
        return self.__class__.__name__ + "(" + ", ".join(parts) + ")"
