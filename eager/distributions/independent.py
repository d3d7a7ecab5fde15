"""``Independent(base, n)``: a distribution whose rightmost ``n`` batch dimensions are
reinterpreted as event dimensions (``log_prob`` sums over them), as PyTorch's."""

from __future__ import annotations

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .transforms import _sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """Reinterprets batch dimensions of ``base_distribution`` as event dimensions.

    Args:
        base_distribution (Distribution): the distribution.
        reinterpreted_batch_ndims (int): how many rightmost batch dims become event dims.

    Example::

        >>> d = Independent(Normal(eager.zeros(3, 2), eager.ones(3, 2)), 1)
        >>> d.batch_shape, d.event_shape
        (eager.Size([3]), eager.Size([2]))
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= "
                             f"len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs "
                             f"{len(base_distribution.batch_shape)}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        batch_shape = shape[:len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim:]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(Size(batch_shape), Size(event_shape), validate_args=validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return False if self.reinterpreted_batch_ndims > 0 else \
            self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_dist}, "
                f"{self.reinterpreted_batch_ndims})")
