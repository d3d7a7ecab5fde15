"""eager.distributions: values, shapes and gradients against torch.distributions, gradients
by finite differences, sampling statistics, validate_args errors, kl_divergence, and the
linalg ops under MultivariateNormal (eager.linalg.cholesky, solve_triangular)."""

import math

import numpy as np
import pytest

import compiler
import eager
from eager import distributions as D
from tests.helpers import gradcheck

RNG = np.random.default_rng(11)


def _spd(n, batch=()):
    m = RNG.standard_normal(batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _params():
    """name -> (constructor(lib, *tensors), float64 arrays; 'pos' arrays get exp'd)."""
    loc, scale = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    low = RNG.standard_normal(3)
    return {
        "Normal": (lambda m, a, b: m.distributions.Normal(a, b.exp()), [loc, scale]),
        "Uniform": (lambda m, a, b: m.distributions.Uniform(a, a + b.exp()),
                    [low, RNG.standard_normal(3)]),
        "Bernoulli-probs": (lambda m, p: m.distributions.Bernoulli(probs=p.sigmoid()),
                            [RNG.standard_normal(4)]),
        "Bernoulli-logits": (lambda m, x: m.distributions.Bernoulli(logits=x),
                             [RNG.standard_normal(4)]),
        "Categorical-probs": (lambda m, p: m.distributions.Categorical(probs=p.exp()),
                              [RNG.standard_normal((2, 5))]),
        "Categorical-logits": (lambda m, x: m.distributions.Categorical(logits=x),
                               [RNG.standard_normal((2, 5))]),
        "MVN-scale_tril": (lambda m, mu, s: m.distributions.MultivariateNormal(
            mu, scale_tril=_tril_from(m, s)),
            [RNG.standard_normal((2, 3)), RNG.standard_normal((3, 3))]),
        "MVN-covariance": (lambda m, mu, c: m.distributions.MultivariateNormal(
            mu, covariance_matrix=(c + c.mT) * 0.5), [RNG.standard_normal(3), _spd(3)]),
        "MVN-precision": (lambda m, mu, c: m.distributions.MultivariateNormal(
            mu, precision_matrix=(c + c.mT) * 0.5), [RNG.standard_normal((2, 3)), _spd(3)]),
    }


def _tril_from(m, s):
    """A lower-triangular factor with a positive diagonal, made of ops both libraries have."""
    n = s.shape[-1]
    eye = m.eye(n, dtype=s.dtype)
    return s.tril(-1) + eye * s.exp()


PARAMS = _params()


def _values(name, dist_np):
    """Points at which to evaluate log_prob/cdf (inside the support)."""
    if name.startswith("Normal"):
        return RNG.standard_normal((4, 2, 3))
    if name.startswith("Uniform"):
        return None      # built from the bounds in the test
    if name.startswith("Bernoulli"):
        return RNG.integers(0, 2, (3, 4)).astype(np.float64)
    if name.startswith("Categorical"):
        return RNG.integers(0, 5, (3, 2)).astype(np.int64)
    return RNG.standard_normal((4, 2, 3))


def _make(lib, name, arrays, requires_grad=False):
    ts = [lib.tensor(a, requires_grad=requires_grad) for a in arrays]
    return PARAMS[name][0](lib, *ts), ts


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_values_and_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    arrays = PARAMS[name][1]
    ours, ot = _make(eager, name, arrays, requires_grad=True)
    theirs, tt = _make(torch, name, arrays, requires_grad=True)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    v = _values(name, arrays)
    if v is None:   # Uniform: points inside [low, high)
        lo, hi = _np(theirs.low), _np(theirs.high)
        v = lo + (hi - lo) * RNG.random((4,) + lo.shape)
    vo, vt = eager.tensor(v), torch.tensor(v)
    checks = [("log_prob", lambda d, x: d.log_prob(x)), ("entropy", lambda d, x: d.entropy()),
              ("mean", lambda d, x: d.mean), ("variance", lambda d, x: d.variance),
              ("stddev", lambda d, x: d.stddev)]
    if name.startswith(("Normal", "Uniform")):
        checks.append(("cdf", lambda d, x: d.cdf(x)))
    if name.startswith("MVN"):
        checks += [("covariance_matrix", lambda d, x: d.covariance_matrix),
                   ("precision_matrix", lambda d, x: d.precision_matrix),
                   ("scale_tril", lambda d, x: d.scale_tril)]
    if name.startswith(("Bernoulli", "Categorical")):
        checks += [("probs", lambda d, x: d.probs), ("logits", lambda d, x: d.logits)]
    for what, f in checks:
        a, b = f(ours, vo), f(theirs, vt)
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12, err_msg=what)
        assert tuple(a.shape) == tuple(b.shape), what
    # gradients of a scalar built from log_prob and entropy
    lo = ours.log_prob(vo).sum() + ours.entropy().sum()
    lt = theirs.log_prob(vt).sum() + theirs.entropy().sum()
    lo.backward()
    lt.backward()
    for a, b in zip(ot, tt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_log_prob_entropy_gradients_by_finite_differences(name):
    arrays = PARAMS[name][1]
    d0, _ = _make(eager, name, arrays)
    v = _values(name, arrays)
    if v is None:
        lo, hi = _np(d0.low), _np(d0.high)
        v = lo + (hi - lo) * (0.2 + 0.6 * RNG.random((4,) + lo.shape))
    vt = eager.tensor(v)

    def f(*ts):
        d = PARAMS[name][0](eager, *ts)
        return d.log_prob(vt).sum() + d.entropy().sum()
    gradcheck(f, *arrays, atol=1e-6, rtol=1e-5)


def test_rsample_is_reparameterized():
    loc = eager.tensor([0.5, -1.0], dtype=eager.float64, requires_grad=True)
    scale = eager.tensor([2.0, 0.5], dtype=eager.float64, requires_grad=True)
    d = D.Normal(loc, scale)
    eager.manual_seed(0)
    x = d.rsample((5,))
    assert x.shape == (5, 2) and x.requires_grad
    x.sum().backward()
    eps = (_np(x) - _np(loc)) / _np(scale)
    np.testing.assert_allclose(loc.grad.numpy(), [5.0, 5.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0))
    s = d.sample((3,))
    assert s.shape == (3, 2) and not s.requires_grad
    u = D.Uniform(loc, loc + scale).rsample((4,))
    assert u.requires_grad
    L = eager.tensor([[1.0, 0.0], [0.5, 2.0]], dtype=eager.float64, requires_grad=True)
    m = D.MultivariateNormal(loc, scale_tril=L).rsample((7,))
    assert m.shape == (7, 2) and m.requires_grad
    m.sum().backward()
    assert L.grad is not None
    assert not D.Bernoulli(0.3).has_rsample and not D.Categorical(eager.ones(3)).has_rsample


def test_sampling_statistics():
    eager.manual_seed(1)
    n = 20000
    x = D.Normal(eager.tensor([1.0, -2.0]), eager.tensor([0.5, 2.0])).sample((n,)).numpy()
    np.testing.assert_allclose(x.mean(0), [1, -2], atol=0.05)
    np.testing.assert_allclose(x.std(0), [0.5, 2], atol=0.05)
    u = D.Uniform(eager.tensor(2.0), eager.tensor(5.0)).sample((n,)).numpy()
    assert u.min() >= 2 and u.max() < 5 and abs(u.mean() - 3.5) < 0.03
    b = D.Bernoulli(probs=eager.tensor([0.2, 0.9])).sample((n,)).numpy()
    np.testing.assert_allclose(b.mean(0), [0.2, 0.9], atol=0.015)
    p = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    c = D.Categorical(probs=eager.tensor(p)).sample((n,)).numpy()
    assert c.shape == (n, 2) and c.dtype == np.int64
    for k in range(2):
        np.testing.assert_allclose(np.bincount(c[:, k], minlength=3) / n, p[k], atol=0.015)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    m = D.MultivariateNormal(eager.tensor([1.0, 0.0], dtype=eager.float64),
                             covariance_matrix=eager.tensor(cov)).sample((n,)).numpy()
    np.testing.assert_allclose(np.cov(m.T), cov, atol=0.06)
    np.testing.assert_allclose(m.mean(0), [1, 0], atol=0.03)


def test_shapes_and_support():
    d = D.Normal(0.0, 1.0)
    assert d.batch_shape == () and d.sample().shape == () and d.sample((2, 3)).shape == (2, 3)
    c = D.Categorical(logits=eager.zeros(4, 3))
    assert c.batch_shape == (4,) and c.event_shape == () and c.sample((2,)).shape == (2, 4)
    assert c.enumerate_support().shape == (3, 4)
    assert c.enumerate_support(expand=False).shape == (3, 1)
    np.testing.assert_array_equal(c.mode.numpy(), [0, 0, 0, 0])
    b = D.Bernoulli(logits=eager.zeros(2))
    assert b.enumerate_support().shape == (2, 2)
    assert np.isnan(b.mode.numpy()).all()
    m = D.MultivariateNormal(eager.zeros(4, 3), eager.eye(3))
    assert m.batch_shape == (4,) and m.event_shape == (3,) and m.sample((5,)).shape == (5, 4, 3)
    assert m.log_prob(eager.zeros(2, 1, 3)).shape == (2, 4)
    assert repr(d) == "Normal(loc: 0.0, scale: 1.0)"


ERRORS = [
    lambda m: m.distributions.Normal(0.0, -1.0),
    lambda m: m.distributions.Normal(m.zeros(2), m.tensor([1.0, -1.0])),
    lambda m: m.distributions.Normal(0.0, 1.0).log_prob(1.0),
    lambda m: m.distributions.Normal(m.zeros(2), 1.0).log_prob(m.zeros(3)),
    lambda m: m.distributions.Uniform(1.0, 0.0),
    lambda m: m.distributions.Uniform(0.0, 1.0).log_prob(m.tensor(2.0)),
    lambda m: m.distributions.Bernoulli(probs=1.5),
    lambda m: m.distributions.Bernoulli(),
    lambda m: m.distributions.Bernoulli(0.3).log_prob(m.tensor(0.5)),
    lambda m: m.distributions.Categorical(m.tensor([0.5, -0.6])),
    lambda m: m.distributions.Categorical(m.tensor(1.0)),
    lambda m: m.distributions.Categorical(logits=m.zeros(3)).log_prob(m.tensor(3)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2),
                                                 scale_tril=m.tensor([[1.0, 1.0], [0.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
    lambda m: m.distributions.MultivariateNormal(m.tensor(0.0), m.eye(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.ones(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2)).log_prob(m.zeros(3)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_validate_args_errors_match_torch(k):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        ERRORS[k](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[k](eager)
    assert str(ours.value) == str(theirs.value).replace("torch.", "eager.")


@pytest.mark.filterwarnings("ignore:invalid value encountered in log:RuntimeWarning")
def test_validate_args_off():
    d = D.Normal(0.0, -1.0, validate_args=False)
    assert np.isnan(d.log_prob(eager.tensor(0.0)).item())
    D.Categorical(logits=eager.zeros(3), validate_args=False).log_prob(eager.tensor(1))


KL_PAIRS = {
    ("Normal", "Normal"): (lambda m, a, b, c, d: (m.distributions.Normal(a, b.exp()),
                                                  m.distributions.Normal(c, d.exp())), 4),
    ("Uniform", "Uniform"): (lambda m, a, b, c, d: (
        m.distributions.Uniform(a, a + b.exp()),
        m.distributions.Uniform(a - c.exp(), a + b.exp() + d.exp())), 4),
    ("Uniform", "Normal"): (lambda m, a, b, c, d: (m.distributions.Uniform(a, a + b.exp()),
                                                   m.distributions.Normal(c, d.exp())), 4),
    ("Bernoulli", "Bernoulli"): (lambda m, a, b: (m.distributions.Bernoulli(logits=a),
                                                  m.distributions.Bernoulli(probs=b.sigmoid())),
                                 2),
    ("Categorical", "Categorical"): (lambda m, a, b: (m.distributions.Categorical(logits=a),
                                                      m.distributions.Categorical(b.exp())), 2),
    ("MVN", "MVN"): (lambda m, a, b, c, d: (
        m.distributions.MultivariateNormal(a, scale_tril=_tril_from(m, b)),
        m.distributions.MultivariateNormal(c, covariance_matrix=(d + d.mT) * 0.5)), 4),
}


def _kl_arrays(pair, n):
    if pair[0] == "MVN":
        return [RNG.standard_normal((2, 3)), RNG.standard_normal((3, 3)) * 0.3,
                RNG.standard_normal(3), _spd(3)]
    if pair[0] == "Categorical":
        return [RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))]
    return [RNG.standard_normal(3) for _ in range(n)]


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence(pair):
    make, n = KL_PAIRS[pair]
    arrays = _kl_arrays(pair, n)

    def kl(*ts):
        p, q = make(eager, *ts)
        return D.kl_divergence(p, q)
    gradcheck(kl, *arrays)
    torch = pytest.importorskip("torch")
    ot = [eager.tensor(a, requires_grad=True) for a in arrays]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    a = D.kl_divergence(*make(eager, *ot))
    b = torch.distributions.kl_divergence(*make(torch, *tt))
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
    a.sum().backward()
    b.sum().backward()
    for x, y in zip(ot, tt):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_kl_special_values():
    inf = math.inf
    assert (D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0)).numpy() == inf).all()
    k = D.kl_divergence(D.Uniform(eager.tensor([0.0, 0.0]), eager.tensor([1.0, 1.0])),
                        D.Uniform(eager.tensor([0.5, -1.0]), eager.tensor([2.0, 2.0])))
    assert k.numpy()[0] == inf and k.numpy()[1] == pytest.approx(math.log(3.0))
    kb = D.kl_divergence(D.Bernoulli(eager.tensor([0.0, 1.0, 0.5])),
                         D.Bernoulli(eager.tensor([0.5, 0.5, 0.0])))
    np.testing.assert_allclose(kb.numpy()[:2], [math.log(2), math.log(2)], rtol=1e-6)
    assert kb.numpy()[2] == inf
    kc = D.kl_divergence(D.Categorical(eager.tensor([0.5, 0.5, 0.0])),
                         D.Categorical(eager.tensor([0.5, 0.0, 0.5])))
    assert kc.item() == inf
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p "
                                                  "type Normal and q type Bernoulli"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.3))

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return eager.tensor(42.0)
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 2.0)).item() > 0   # inherited


def test_compiled_log_prob_and_rsample_equal_eager():
    def f(mu, log_sigma, x):
        d = D.Normal(mu, log_sigma.exp(), validate_args=False)
        z = d.rsample((3,))
        return d.log_prob(x).sum() + (z * z).mean() + d.entropy().sum()

    cf = compiler.compile(f)
    mu = eager.tensor([0.1, -0.3], dtype=eager.float64)
    ls = eager.tensor([0.2, -0.1], dtype=eager.float64)
    xs = [eager.tensor(RNG.standard_normal(2)) for _ in range(5)]
    eager.manual_seed(4)
    want = [f(mu, ls, x).item() for x in xs]
    eager.manual_seed(4)
    got = []
    for k, x in enumerate(xs):
        got.append(cf(mu, ls, x).item())
        if k == 1:
            compiler.wait()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert cf.stats()["hits"] >= 3


# -- eager.linalg ------------------------------------------------------------------------

def test_cholesky_and_solve_triangular():
    A = _spd(4, (2,))
    L = eager.linalg.cholesky(eager.tensor(A))
    np.testing.assert_allclose(_np(L), np.linalg.cholesky(A), rtol=1e-12)
    U = eager.linalg.cholesky(eager.tensor(A), upper=True)
    np.testing.assert_allclose(_np(U), np.swapaxes(np.linalg.cholesky(A), -1, -2), rtol=1e-12)
    gradcheck(lambda a: eager.linalg.cholesky((a + a.mT) * 0.5), A)
    gradcheck(lambda a: eager.linalg.cholesky((a + a.mT) * 0.5, upper=True), A[0])
    T = np.tril(RNG.standard_normal((3, 3))) + 3 * np.eye(3)
    B = RNG.standard_normal((2, 3, 2))
    for upper in (False, True):
        for left in (True, False):
            for unit in (False, True):
                Tm = T.T if upper else T
                Bm = B if left else np.swapaxes(B, -1, -2)
                X = eager.linalg.solve_triangular(eager.tensor(Tm), eager.tensor(Bm),
                                                  upper=upper, left=left, unitriangular=unit)
                Te = Tm.copy()
                if unit:
                    np.fill_diagonal(Te, 1.0)
                Te = np.triu(Te) if upper else np.tril(Te)
                np.testing.assert_allclose(_np(X), np.linalg.solve(Te, Bm) if left else
                                           np.swapaxes(np.linalg.solve(Te.T, np.swapaxes(
                                               Bm, -1, -2)), -1, -2), rtol=1e-10)
                gradcheck(lambda a, b: eager.linalg.solve_triangular(
                    a, b, upper=upper, left=left, unitriangular=unit), Tm, Bm)
    info = eager.linalg.cholesky_ex(eager.tensor(np.stack([np.eye(2), [[1.0, 2], [2, 1]]])))[1]
    assert info.tolist() == [0, 2]


LINALG_ERRORS = [
    lambda m: m.linalg.cholesky(m.ones(3)),
    lambda m: m.linalg.cholesky(m.ones(2, 3)),
    lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda m: m.linalg.cholesky(m.stack([m.eye(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])])),
    lambda m: m.linalg.cholesky(m.eye(2, dtype=m.long)),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2), upper=False),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(3, 1), upper=False),
    lambda m: m.linalg.solve_triangular(m.ones(2, 3), m.ones(2, 1), upper=False),
    lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(1, 3), upper=False, left=False),
]


@pytest.mark.parametrize("k", range(len(LINALG_ERRORS)))
def test_linalg_errors_match_torch(k):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        LINALG_ERRORS[k](torch)
    with pytest.raises(RuntimeError) as ours:
        LINALG_ERRORS[k](eager)
    assert str(ours.value) == str(theirs.value)
    assert isinstance(ours.value, eager.linalg.LinAlgError) == \
        isinstance(theirs.value, torch.linalg.LinAlgError)
