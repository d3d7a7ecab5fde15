"""``eager.distributions``: probability distributions with PyTorch's API — ``Normal``,
``Uniform``, ``Bernoulli``, ``Categorical``, ``MultivariateNormal`` (``sample``,
``rsample`` where reparameterizable, ``log_prob``, ``entropy``, ``mean``, ``variance``,
``batch_shape``/``event_shape``, ``validate_args``), ``Independent``,
``TransformedDistribution`` and ``LogNormal`` over ``transforms`` (``ExpTransform``,
``AffineTransform``, ``SigmoidTransform``, ``TanhTransform``, ``ComposeTransform``, ...),
``kl_divergence`` / ``register_kl`` and ``constraints``."""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import (
                         AbsTransform,
                         AffineTransform,
                         ComposeTransform,
                         ExpTransform,
                         PowerTransform,
                         SigmoidTransform,
                         SoftplusTransform,
                         TanhTransform,
                         Transform,
                         identity_transform,
)
from .uniform import Uniform

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Categorical", "ComposeTransform",
           "Distribution", "ExpTransform", "Independent", "LogNormal", "MultivariateNormal",
           "Normal", "PowerTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform",
           "Transform", "TransformedDistribution", "Uniform", "constraints",
           "identity_transform", "kl_divergence", "register_kl", "transforms"]
