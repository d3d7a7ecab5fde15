"""``Uniform(low, high)``: constant density on ``[low, high)`` (reparameterizable)."""

from __future__ import annotations

from numbers import Number

from ..factories import rand
from ..fn import elementwise as _ew
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        if isinstance(low, Number) and isinstance(high, Number):
            batch_shape = Size()
        else:
            batch_shape = self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return float("nan") * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = _ew.le(self.low, value).type_as(self.low)
        ub = _ew.gt(self.high, value).type_as(self.low)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
