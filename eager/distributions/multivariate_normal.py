"""``MultivariateNormal(loc, covariance_matrix= | precision_matrix= | scale_tril=)``: the
Gaussian over vectors, parameterized by one of the three matrices (reparameterizable).
Everything goes through the lower Cholesky factor ``L`` of the covariance."""

from __future__ import annotations

import math

from ..factories import eye, randn
from ..fn.linalg import einsum, matmul
from ..fn.shape import broadcast_shapes, flip
from ..linalg import cholesky, solve_triangular
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """``bmat @ bvec`` over broadcast batch dimensions."""
    return matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^-1 x`` = ``|L^-1 x|^2``, over broadcast batch dimensions."""
    y = solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1)
    return (y * y).sum(-1)


def _diag(m):
    return einsum("...ii->...i", m)


def _precision_to_scale_tril(P):
    """``L`` with ``L L^T = P^-1``, through the Cholesky factor of ``P`` reversed."""
    Lf = cholesky(flip(P, (-2, -1)))
    L_inv = flip(Lf, (-2, -1)).mT
    return solve_triangular(L_inv, eye(P.shape[-1], dtype=P.dtype), upper=False)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        given, name = next((m, n) for m, n in ((scale_tril, "scale_tril"),
                                               (covariance_matrix, "covariance_matrix"),
                                               (precision_matrix, "precision_matrix"))
                           if m is not None)
        if given.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        batch_shape = tuple(broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, given.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        event_shape = tuple(self.loc.shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        L_inv = solve_triangular(L, eye(L.shape[-1], dtype=L.dtype), upper=False)
        return matmul(L_inv.mT, L_inv).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = _diag(self._unbroadcasted_scale_tril).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = _diag(self._unbroadcasted_scale_tril).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(Size(self._batch_shape))
