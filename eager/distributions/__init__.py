"""``eager.distributions``: probability distributions with PyTorch's API — ``Normal``,
``Uniform``, ``Bernoulli``, ``Categorical``, ``MultivariateNormal`` (``sample``,
``rsample`` where reparameterizable, ``log_prob``, ``entropy``, ``mean``, ``variance``,
``batch_shape``/``event_shape``, ``validate_args``), ``kl_divergence`` / ``register_kl``
and ``constraints``."""

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "MultivariateNormal", "Normal",
           "Uniform", "constraints", "kl_divergence", "register_kl"]
