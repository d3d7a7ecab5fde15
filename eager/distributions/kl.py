"""``kl_divergence(p, q)`` and ``register_kl``, with the pairs PyTorch registers among the
distributions here: Bernoulli/Bernoulli, Categorical/Categorical, Normal/Normal,
Uniform/Uniform, MultivariateNormal/MultivariateNormal, Uniform/Normal and Normal/Uniform
(infinite: a Normal puts mass outside any interval)."""

from __future__ import annotations

import math
import warnings

from ..factories import full_like
from ..fn import elementwise as _ew
from ..fn.linalg import einsum
from ..fn.shape import broadcast_shapes
from ..linalg import solve_triangular
from ..nn.functional import softplus
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p, type_q):
    """Decorator: ``fn(p, q)`` computes KL(p || q) for these two distribution types (and
    their subclasses, the most specific registration winning)."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    def rank(m, flip=False):
        a = type_p.__mro__.index(m[0])
        b = type_q.__mro__.index(m[1])
        return (b, a) if flip else (a, b)
    left = min(matches, key=rank)
    right = min(matches, key=lambda m: rank(m, True))
    if _KL_REGISTRY[left] is not _KL_REGISTRY[right]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                      f"register_kl({left[0].__name__}, {right[1].__name__})", RuntimeWarning,
                      stacklevel=3)
    return _KL_REGISTRY[left]


def kl_divergence(p: Distribution, q: Distribution):
    """KL(p || q), one value per batch element."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


_INF = math.inf


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _ew.where(_ew.eq(q.probs, 0), _INF, t1)
    t1 = _ew.where(_ew.eq(p.probs, 0), 0.0, t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _ew.where(_ew.eq(q.probs, 1), _INF, t2)
    t2 = _ew.where(_ew.eq(p.probs, 1), 0.0, t2)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _ew.where(_ew.eq(q.probs, 0).expand_as(t), _INF, t)
    t = _ew.where(_ew.eq(p.probs, 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = einsum("...ii->...i", qL).log().sum(-1) - \
        einsum("...ii->...i", pL).log().sum(-1)
    batch = tuple(broadcast_shapes(tuple(qL.shape[:-2]), tuple(pL.shape[:-2])))
    n = p.event_shape[0]
    X = solve_triangular(qL.expand(batch + (n, n)), pL.expand(batch + (n, n)), upper=False)
    term2 = (X * X).reshape(batch + (n * n,)).sum(-1)
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = _ew.logical_or(_ew.gt(q.low, p.low), _ew.lt(q.high, p.high))
    return _ew.where(outside, _INF, result)


@register_kl(Normal, Uniform)
def _kl_normal_infinity(p, q):
    return full_like(p.loc, _INF)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
