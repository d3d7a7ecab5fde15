"""``TransformedDistribution(base, transforms)``: samples of ``base`` pushed through
transforms, with the change-of-variables ``log_prob`` -- PyTorch's construction (shapes
from ``forward_shape``, an ``Independent`` base where a transform's event dims exceed the
base's), and ``LogNormal`` built on it."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .independent import Independent
from .normal import Normal
from .transforms import ComposeTransform, ExpTransform, Transform, _sum_rightmost

__all__ = ["LogNormal", "TransformedDistribution"]


class TransformedDistribution(Distribution):
    """A base distribution followed by transforms: ``X ~ base``, ``Y = f_n(...f_1(X))``.

    ``log_prob(y)`` inverts the transforms and subtracts each one's
    ``log_abs_det_jacobian`` from the base's ``log_prob``.

    Args:
        base_distribution (Distribution): the distribution of ``X``.
        transforms (Transform or list of Transform): applied in order.
        validate_args (bool, optional): check samples against the support.

    Example::

        >>> from eager.distributions import Normal, TransformedDistribution
        >>> from eager.distributions.transforms import AffineTransform, TanhTransform
        >>> d = TransformedDistribution(Normal(0.0, 1.0),
        ...                             [AffineTransform(0.5, 2.0), TanhTransform()])
        >>> y = d.rsample((4,))          # in (-1, 1), differentiable
        >>> d.log_prob(y).shape
        eager.Size([4])
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")

        base_shape = tuple(base_distribution.batch_shape) + \
            tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {Size(base_shape)}.")
        forward_shape = tuple(transform.forward_shape(Size(base_shape)))
        expanded_base_shape = tuple(transform.inverse_shape(Size(forward_shape)))
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            if not hasattr(base_distribution, "expand"):
                raise NotImplementedError(
                    f"{type(base_distribution).__name__} cannot be expanded to batch shape "
                    f"{Size(base_batch_shape)} (eager has no expand() for it yet)")
            base_distribution = base_distribution.expand(Size(base_batch_shape))
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution

        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(Size(forward_shape[:cut]), Size(forward_shape[cut:]),
                         validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support,
                                              len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        """A sample of the base pushed through the transforms (no gradient)."""
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=()):
        """A reparameterized sample: differentiable in the base's parameters and the
        transforms' tensors."""
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        """The base's ``log_prob`` at the inverted value minus the transforms'
        log-Jacobians (summed over event dimensions)."""
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                 event_dim - transform.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class LogNormal(TransformedDistribution):
    """``exp(X)`` for ``X ~ Normal(loc, scale)``.

    Args:
        loc (float or Tensor): mean of the log of the distribution.
        scale (float or Tensor): standard deviation of the log of the distribution.

    Example::

        >>> LogNormal(0.0, 1.0).sample((3,)).shape
        eager.Size([3])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc

    def __repr__(self):
        return Distribution.__repr__(self)
