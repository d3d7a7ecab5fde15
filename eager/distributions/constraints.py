"""Constraints: which values a parameter or a sample may take (``check(value)`` returns a
bool tensor), with PyTorch's names and reprs (they appear in ``validate_args`` errors)."""

from __future__ import annotations

from .. import linalg as _linalg
from ..dtypes import bool_
from ..factories import full
from ..fn import elementwise as _ew
from ..fn import reduce as _red
from ..fn.linalg import einsum, tril
from .utils import fmt

__all__ = ["Constraint", "boolean", "dependent", "dependent_property", "greater_than",
           "independent", "integer_interval", "interval", "is_dependent", "less_than",
           "lower_cholesky",
           "positive", "positive_definite", "real", "real_vector", "simplex", "square", "symmetric",
           "unit_interval"]


class Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """The support depends on other parameters (checked by the distribution itself)."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def __call__(self, *, is_discrete=False, event_dim=0):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: ``support`` of a distribution."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` over the rightmost ``reinterpreted_batch_ndims`` dims at once."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims: int):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            expected = self.base_constraint.event_dim + n
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.ndim}")
        result = result.reshape(tuple(result.shape[:result.ndim - n]) + (-1,))
        return _red.all(result, -1)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return _ew.logical_or(_ew.eq(value, 0), _ew.eq(value, 1))


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return _ew.logical_and(_ew.logical_and(_ew.eq(_ew.remainder(value, 1), 0),
                                               _ew.le(self.lower_bound, value)),
                               _ew.le(value, self.upper_bound))

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={fmt(self.lower_bound)}, "
                f"upper_bound={fmt(self.upper_bound)})")


class _Real(Constraint):
    def check(self, value):
        return _ew.eq(value, value)   # False for nan


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return _ew.lt(self.lower_bound, value)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={fmt(self.lower_bound)})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return _ew.lt(value, self.upper_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(upper_bound={fmt(self.upper_bound)})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return _ew.logical_and(_ew.le(self.lower_bound, value), _ew.le(value, self.upper_bound))

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={fmt(self.lower_bound)}, "
                f"upper_bound={fmt(self.upper_bound)})")


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        nonneg = _red.all(_ew.ge(value, 0), -1)
        return _ew.logical_and(nonneg, _ew.lt(_ew.abs(_ew.sub(_red.sum(value, -1), 1)), 1e-6))


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = _red.all(_ew.eq(tril(value), value).reshape(tuple(value.shape[:-2]) + (-1,)), -1)
        diag = einsum("...ii->...i", value)
        return _ew.logical_and(lower, _red.all(_ew.gt(diag, 0), -1))


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=bool_)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not bool(_red.all(square)):
            return square
        close = _ew.isclose(value, value.mT, atol=1e-6)
        return _red.all(_red.all(close, -2), -1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not bool(_red.all(sym)):
            return sym
        return _ew.eq(_linalg.cholesky_ex(value)[1], 0)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
greater_than = _GreaterThan
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
square = _Square()
symmetric = _Symmetric()
positive_definite = _PositiveDefinite()
