"""``Bernoulli(probs=... | logits=...)``: 1 with probability ``probs``."""

from __future__ import annotations

from numbers import Number

from ..autograd.grad_mode import no_grad
from ..factories import arange
from ..fn import elementwise as _ew
from ..fn.random import bernoulli
from ..nn.functional import binary_cross_entropy_with_logits
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = _ew.ge(self.probs, 0.5).to(self.probs.dtype)
        return _ew.where(_ew.eq(self.probs, 0.5), float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True):
        values = arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
