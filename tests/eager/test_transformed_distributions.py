"""distributions.TransformedDistribution, LogNormal, Independent and
distributions.transforms against torch.distributions: log_prob values, shapes (batch,
event, rsample), gradients in the base's parameters and the transforms' tensors, cdf,
Jacobians, inverses, caching, signs and supports."""

import math

import numpy as np
import pytest

import eager
from eager import distributions as D
from eager.distributions import transforms as T

torch = pytest.importorskip("torch")
TD = torch.distributions

RNG = np.random.default_rng(5)
LOC = RNG.standard_normal((2, 3))
LSCALE = RNG.standard_normal((2, 3)) * 0.3
ALOC = np.abs(RNG.standard_normal(3))   # >= 0: exp(x) * scale + loc stays in log's domain
ASCALE = RNG.standard_normal(3) * 0.2


def _chains(m, tensors):
    """name -> (base distribution, transforms) over library ``m`` (eager or torch)."""
    d, tr = m.distributions, m.distributions.transforms
    loc, lscale, aloc, ascale = tensors
    normal = d.Normal(loc, lscale.exp())
    return {
        "affine-tanh": (normal, [tr.AffineTransform(0.5, 2.0), tr.TanhTransform()]),
        "exp": (normal, [tr.ExpTransform()]),
        "sigmoid": (normal, [tr.SigmoidTransform()]),
        "compose-tensor-affine": (normal, tr.ComposeTransform(
            [tr.ExpTransform(), tr.AffineTransform(aloc, ascale.exp())])),
        "affine-event1": (normal, [tr.AffineTransform(aloc, ascale.exp(), event_dim=1)]),
        "neg-affine-softplus": (normal, [tr.AffineTransform(-1.0, -0.5),
                                         tr.SoftplusTransform()]),
        "power": (normal, [tr.ExpTransform(), tr.PowerTransform(2.0)]),
        "logit-of-uniform": (d.Uniform(loc.sigmoid() * 0.1, 0.5 + loc.sigmoid() * 0.4),
                             [tr.SigmoidTransform().inv]),
    }


def _tensors(m):
    arrays = [LOC, LSCALE, ALOC, ASCALE]
    return [m.tensor(a, requires_grad=True) for a in arrays]


NAMES = list(_chains(eager, _tensors(eager)))


@pytest.mark.parametrize("name", NAMES)
def test_log_prob_shapes_and_gradients_match_torch(name):
    ours_t, theirs_t = _tensors(eager), _tensors(torch)
    base, tr = _chains(eager, ours_t)[name]
    tbase, ttr = _chains(torch, theirs_t)[name]
    d = D.TransformedDistribution(base, tr)
    td = TD.TransformedDistribution(tbase, ttr)
    assert tuple(d.batch_shape) == tuple(td.batch_shape)
    assert tuple(d.event_shape) == tuple(td.event_shape)
    assert repr(d.support) == repr(td.support)
    assert d.has_rsample == td.has_rsample
    # values inside the support: torch's own samples
    torch.manual_seed(0)
    y = td.sample((4,)).detach()
    lp, tlp = d.log_prob(eager.tensor(y.numpy())), td.log_prob(y)
    assert tuple(lp.shape) == tuple(tlp.shape)
    np.testing.assert_allclose(lp.detach().numpy(), tlp.detach().numpy(), rtol=1e-9,
                               atol=1e-9)
    lp.sum().backward()
    tlp.sum().backward()
    for a, b in zip(ours_t, theirs_t):
        if b.grad is None:
            assert a.grad is None or not np.any(a.grad.numpy())
        else:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-10)
    # sample / rsample shapes
    assert tuple(d.sample((5, 2)).shape) == tuple(td.sample((5, 2)).shape)
    assert tuple(d.rsample().shape) == tuple(td.rsample().shape)


def test_rsample_is_the_transformed_base_sample_and_differentiable():
    ours_t, theirs_t = _tensors(eager), _tensors(torch)
    base, tr = _chains(eager, ours_t)["compose-tensor-affine"]
    tbase, ttr = _chains(torch, theirs_t)["compose-tensor-affine"]
    d = D.TransformedDistribution(base, tr)
    eager.manual_seed(3)
    y = d.rsample((7,))
    eager.manual_seed(3)
    eps = eager.randn(7, 2, 3, dtype=eager.float64).numpy()
    assert y.shape == (7, 2, 3) and y.requires_grad
    ty = ttr(tbase.loc + torch.tensor(eps) * tbase.scale)   # the same draw through torch
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    (y ** 2).sum().backward()
    (ty ** 2).sum().backward()
    for a, b in zip(ours_t, theirs_t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9)


def test_lognormal_matches_torch():
    loc = eager.tensor(LOC, requires_grad=True)
    ls = eager.tensor(LSCALE, requires_grad=True)
    tloc = torch.tensor(LOC, requires_grad=True)
    tls = torch.tensor(LSCALE, requires_grad=True)
    d, td = D.LogNormal(loc, ls.exp()), TD.LogNormal(tloc, tls.exp())
    x = np.exp(RNG.standard_normal((4, 2, 3)))
    for attr in ("mean", "variance", "mode"):
        np.testing.assert_allclose(getattr(d, attr).detach().numpy(),
                                   getattr(td, attr).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(d.entropy().detach().numpy(), td.entropy().detach().numpy(),
                               rtol=1e-12)
    lp, tlp = d.log_prob(eager.tensor(x)), td.log_prob(torch.tensor(x))
    np.testing.assert_allclose(lp.detach().numpy(), tlp.detach().numpy(), rtol=1e-12)
    (lp.sum() + d.mean.sum()).backward()
    (tlp.sum() + td.mean.sum()).backward()
    np.testing.assert_allclose(loc.grad.numpy(), tloc.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ls.grad.numpy(), tls.grad.numpy(), rtol=1e-10)
    assert repr(d.support) == repr(td.support) and d.has_rsample
    with pytest.raises(ValueError, match="support"):
        d.log_prob(eager.tensor(-1.0))
    with pytest.raises(ValueError, match="scale"):
        D.LogNormal(0.0, -1.0)


def test_cdf_with_decreasing_transform_matches_torch():
    d = D.TransformedDistribution(D.Normal(eager.tensor(LOC), eager.tensor(LSCALE).exp()),
                                  [T.AffineTransform(1.0, -2.0), T.ExpTransform()])
    td = TD.TransformedDistribution(TD.Normal(torch.tensor(LOC), torch.tensor(LSCALE).exp()),
                                    [TD.AffineTransform(1.0, -2.0), TD.ExpTransform()])
    y = np.exp(RNG.standard_normal((2, 3)))
    np.testing.assert_allclose(d.cdf(eager.tensor(y)).numpy(), td.cdf(torch.tensor(y)).numpy(),
                               rtol=1e-7, atol=1e-12)


def test_independent_matches_torch():
    d = D.Independent(D.Normal(eager.tensor(LOC), eager.tensor(LSCALE).exp()), 1)
    td = TD.Independent(TD.Normal(torch.tensor(LOC), torch.tensor(LSCALE).exp()), 1)
    assert (tuple(d.batch_shape), tuple(d.event_shape)) == ((2,), (3,))
    x = RNG.standard_normal((5, 2, 3))
    np.testing.assert_allclose(d.log_prob(eager.tensor(x)).numpy(),
                               td.log_prob(torch.tensor(x)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), td.entropy().numpy(), rtol=1e-12)
    assert repr(d.support) == repr(td.support)
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(0.0, 1.0), 1)


def test_batch_shape_grows_with_a_transform_parameter():
    d = D.TransformedDistribution(D.Normal(0.0, 1.0),
                                  [T.AffineTransform(eager.zeros(4), eager.ones(4))])
    td = TD.TransformedDistribution(TD.Normal(0.0, 1.0),
                                    [TD.AffineTransform(torch.zeros(4), torch.ones(4))])
    assert tuple(d.batch_shape) == tuple(td.batch_shape) == (4,)
    assert tuple(d.sample((2,)).shape) == (2, 4)


TRANSFORMS = {
    "exp": lambda tr: tr.ExpTransform(),
    "sigmoid": lambda tr: tr.SigmoidTransform(),
    "tanh": lambda tr: tr.TanhTransform(),
    "softplus": lambda tr: tr.SoftplusTransform(),
    "affine": lambda tr: tr.AffineTransform(0.3, -1.7),
    "power": lambda tr: tr.PowerTransform(3.0),
    "compose": lambda tr: tr.ComposeTransform([tr.AffineTransform(0.1, 0.5),
                                               tr.SigmoidTransform()]),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_values_inverse_and_jacobian_match_torch(name):
    t, tt = TRANSFORMS[name](T), TRANSFORMS[name](TD.transforms)
    x = RNG.standard_normal(6) * 1.5
    if name == "power":
        x = np.abs(x) + 0.1
    y, ty = t(eager.tensor(x)), tt(torch.tensor(x))
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-12)
    np.testing.assert_allclose(t.inv(y).numpy(), tt.inv(ty).numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(t.log_abs_det_jacobian(eager.tensor(x), y).numpy(),
                               tt.log_abs_det_jacobian(torch.tensor(x), ty).numpy(),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.inv.log_abs_det_jacobian(y, eager.tensor(x)).numpy(),
                               tt.inv.log_abs_det_jacobian(ty, torch.tensor(x)).numpy(),
                               rtol=1e-10, atol=1e-12)
    assert t.inv.inv is t and t.bijective == tt.bijective
    assert repr(t.domain) == repr(tt.domain) and repr(t.codomain) == repr(tt.codomain)
    assert repr(t.inv.domain) == repr(tt.inv.domain)
    assert repr(t) == repr(tt)
    s, ts = t.sign, tt.sign
    assert float(s) == float(ts)


def test_transform_cache_equality_event_dim_and_shapes():
    t = T.ExpTransform(cache_size=1)
    x = eager.randn(3)
    y = t(x)
    assert t(x) is y and t.inv(y) is x   # cached
    assert T.ExpTransform().inv(y) is not x
    with pytest.raises(ValueError, match="cache_size"):
        T.ExpTransform(cache_size=2)
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.ExpTransform().inv == T.ExpTransform().inv
    a = T.AffineTransform(eager.zeros(2, 1), 1.0, event_dim=1)
    assert a.event_dim == 1 and tuple(a.forward_shape((3,))) == (2, 3)
    c = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0)], cache_size=1)
    assert all(p._cache_size == 1 for p in c.parts)
    assert c.inv.inv is c and c.sign == 1
    assert T.identity_transform(x) is x
    assert D.transforms is T and D.TanhTransform is T.TanhTransform


def test_tanh_squashed_gaussian_policy_gradient():
    """The SAC-style use: a tanh-squashed Gaussian's rsample and log_prob of that sample,
    differentiated end to end (finite-difference check of one parameter)."""
    def loss(mu_value):
        mu = eager.tensor([mu_value, -0.3], dtype=eager.float64, requires_grad=True)
        d = D.TransformedDistribution(D.Normal(mu, eager.tensor([0.5, 0.8], dtype=eager.float64)),
                                      [T.TanhTransform(cache_size=1)])
        eager.manual_seed(1)
        a = d.rsample()
        out = (d.log_prob(a) + a ** 2).sum()
        out.backward()
        return float(out), float(mu.grad[0])
    f0, g = loss(0.2)
    h = 1e-6
    fd = (loss(0.2 + h)[0] - loss(0.2 - h)[0]) / (2 * h)
    assert math.isclose(g, fd, rel_tol=1e-5, abs_tol=1e-7)
