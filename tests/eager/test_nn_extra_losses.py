"""The margin, embedding and likelihood losses (cosine_embedding, margin_ranking,
triplet_margin, hinge_embedding, soft_margin, multilabel_soft_margin, gaussian_nll,
poisson_nll) and their modules: values and gradients against PyTorch for every
reduction, the deprecated size_average/reduce flags, PyTorch's errors, and gradients
against finite differences in float64."""

import warnings

import numpy as np
import pytest

import eager
import eager.nn as nn
import eager.nn.functional as F
from tests.helpers import check_like_torch, gradcheck

RNG = np.random.default_rng(5)


def rnd(*shape):
    return RNG.standard_normal(shape)


def signs(*shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


REDUCTIONS = ["none", "mean", "sum"]


def _torch_fn(name):
    torch = pytest.importorskip("torch")
    return getattr(torch.nn.functional, name)


def _compare(name, *arrays, **kw):
    check_like_torch(getattr(F, name), _torch_fn(name), *arrays, rtol=1e-10, atol=1e-12, **kw)


# -- values and gradients against PyTorch ------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3, -0.2])
def test_cosine_embedding_loss(reduction, margin):
    x1, x2 = rnd(6, 5), rnd(6, 5)
    x2[0] = x1[0] * 2.0          # cos = 1
    x2[1] = -x1[1]               # cos = -1
    t = np.array([1, -1, 1, -1, 0, 1])    # 0: no loss
    _compare("cosine_embedding_loss", x1, x2, t, margin=margin, reduction=reduction)
    _compare("cosine_embedding_loss", x1, x2, t.astype(np.float64), margin=margin,
             reduction=reduction)


def test_cosine_embedding_loss_unbatched_and_zero_vectors():
    _compare("cosine_embedding_loss", rnd(4), rnd(4), np.array(-1.0), reduction="none")
    _compare("cosine_embedding_loss", rnd(4), rnd(4), np.array(1), margin=0.1)
    x1 = rnd(3, 4)
    x1[2] = 0.0                   # the 1e-12 in each squared norm keeps it finite
    check_like_torch(F.cosine_embedding_loss, _torch_fn("cosine_embedding_loss"), x1,
                     rnd(3, 4), np.array([1, -1, 1]), rtol=1e-7, reduction="none")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_loss(reduction):
    _compare("margin_ranking_loss", rnd(7), rnd(7), signs(7), reduction=reduction)
    _compare("margin_ranking_loss", rnd(7), rnd(7), signs(7), margin=0.5, reduction=reduction)
    _compare("margin_ranking_loss", rnd(3, 1), rnd(1, 4), signs(3, 4), margin=0.2,
             reduction=reduction)
    _compare("margin_ranking_loss", np.array(0.3), np.array(-0.1), np.array(-1.0),
             reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap", [(2.0, False), (1.0, True), (3.0, False), (2.0, True)])
def test_triplet_margin_loss(reduction, p, swap):
    a, pos, neg = rnd(6, 4), rnd(6, 4), rnd(6, 4)
    _compare("triplet_margin_loss", a, pos, neg, margin=1.5, p=p, swap=swap,
             reduction=reduction)
    _compare("triplet_margin_loss", rnd(5), rnd(5), rnd(5), p=p, swap=swap, eps=1e-3,
             reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding_loss(reduction):
    d = np.abs(rnd(4, 5)) * 1.5
    t = signs(4, 5)
    t[0, 0] = 0.0                     # neither 1 nor -1: both terms
    _compare("hinge_embedding_loss", d, t, reduction=reduction)
    _compare("hinge_embedding_loss", rnd(4, 5), signs(4, 5), margin=0.5, reduction=reduction)
    _compare("hinge_embedding_loss", rnd(3, 5), signs(5), reduction=reduction)   # broadcast


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss(reduction):
    torch = pytest.importorskip("torch")
    for x, y in [(rnd(4, 6) * 3, signs(4, 6)), (rnd(4, 6), signs(6))]:
        check_like_torch(lambda a: F.soft_margin_loss(a, eager.tensor(y), reduction=reduction),
                         lambda a: torch.nn.functional.soft_margin_loss(
                             a, torch.tensor(y), reduction=reduction), x, rtol=1e-10)


def test_soft_margin_loss_target_gets_no_gradient():
    torch = pytest.importorskip("torch")
    y = np.ones(3)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.soft_margin_loss(torch.zeros(3), torch.tensor(y, requires_grad=True))
    with pytest.raises(RuntimeError) as ours:
        F.soft_margin_loss(eager.zeros(3), eager.tensor(y, requires_grad=True))
    assert str(ours.value) == str(theirs.value)
    with eager.no_grad():
        F.soft_margin_loss(eager.zeros(3), eager.tensor(y, requires_grad=True))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(reduction, weighted):
    x = rnd(5, 4) * 3
    t = (RNG.random((5, 4)) < 0.5).astype(np.float64)
    if weighted:
        _compare("multilabel_soft_margin_loss", x, t, np.abs(rnd(4)), reduction=reduction)
        _compare("multilabel_soft_margin_loss", rnd(4), t[0], np.abs(rnd(4)),
                 reduction=reduction)
    else:
        _compare("multilabel_soft_margin_loss", x, t, reduction=reduction)
        _compare("multilabel_soft_margin_loss", rnd(4), t[0], reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(reduction, full):
    mu, y = rnd(4, 3), rnd(4, 3)
    kw = dict(full=full, reduction=reduction)
    _compare("gaussian_nll_loss", mu, y, np.abs(rnd(4, 3)) + 0.1, **kw)
    _compare("gaussian_nll_loss", mu, y, np.abs(rnd(4)) + 0.1, **kw)       # one short
    _compare("gaussian_nll_loss", mu, y, np.abs(rnd(4, 1)) + 0.1, **kw)    # homoscedastic
    _compare("gaussian_nll_loss", mu, y, np.abs(rnd(1, 3)) + 0.1, **kw)
    v = np.abs(rnd(4, 3))
    v[0, :2] = [0.0, 1e-9]                       # clamped at eps (value, not gradient)
    _compare("gaussian_nll_loss", mu, y, v, eps=1e-4, **kw)


def test_gaussian_nll_loss_float_var():
    torch = pytest.importorskip("torch")
    mu, y = rnd(4, 3), rnd(4, 3)
    for var in (0.7, 0.0):
        got = F.gaussian_nll_loss(eager.tensor(mu), eager.tensor(y), var, full=True)
        want = torch.nn.functional.gaussian_nll_loss(torch.tensor(mu), torch.tensor(y), var,
                                                     full=True)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True),
                                            (False, True)])
def test_poisson_nll_loss(reduction, log_input, full):
    torch = pytest.importorskip("torch")
    x = rnd(4, 5) if log_input else np.abs(rnd(4, 5)) + 0.05
    counts = RNG.integers(0, 6, size=(4, 5)).astype(np.float64)
    counts[0, :3] = [0.0, 1.0, 2.0]      # the Stirling term starts above 1
    check_like_torch(lambda a: F.poisson_nll_loss(a, eager.tensor(counts), log_input, full,
                                                  reduction=reduction),
                     lambda a: torch.nn.functional.poisson_nll_loss(
                         a, torch.tensor(counts), log_input, full, reduction=reduction),
                     x, rtol=1e-10, atol=1e-12)
    _compare("poisson_nll_loss", x, np.abs(rnd(4, 5)) * 3, log_input=log_input, full=full,
             eps=1e-3, reduction=reduction)


# -- modules -----------------------------------------------------------------------------

MODULES = [
    ("CosineEmbeddingLoss", dict(margin=0.2), lambda: (rnd(4, 3), rnd(4, 3), signs(4))),
    ("MarginRankingLoss", dict(margin=0.1), lambda: (rnd(5), rnd(5), signs(5))),
    ("TripletMarginLoss", dict(margin=0.7, p=1.0, swap=True),
     lambda: (rnd(4, 3), rnd(4, 3), rnd(4, 3))),
    ("HingeEmbeddingLoss", dict(margin=2.0), lambda: (rnd(3, 4), signs(3, 4))),
    ("SoftMarginLoss", {}, lambda: (rnd(3, 4), signs(3, 4).astype(np.int64))),
    ("MultiLabelSoftMarginLoss", {}, lambda: (rnd(3, 4), (rnd(3, 4) > 0).astype(float))),
    ("GaussianNLLLoss", dict(full=True, eps=1e-3),
     lambda: (rnd(3, 4), rnd(3, 4), np.abs(rnd(3, 1)))),
    ("PoissonNLLLoss", dict(log_input=False, full=True),
     lambda: (np.abs(rnd(3, 4)) + 0.1, np.abs(rnd(3, 4)) * 4)),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw,make", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch(name, kw, make, reduction):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, name)(reduction=reduction, **kw)
    theirs = getattr(torch.nn, name)(reduction=reduction, **kw)
    check_like_torch(ours, theirs, *make(), rtol=1e-10, atol=1e-12)
    assert ours.reduction == reduction


def test_multilabel_soft_margin_module_weight_is_a_buffer():
    w = eager.tensor([1.0, 2.0, 0.5])
    m = nn.MultiLabelSoftMarginLoss(weight=w)
    assert "weight" in dict(m.named_buffers())
    torch = pytest.importorskip("torch")
    tm = torch.nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1.0, 2.0, 0.5],
                                                               dtype=torch.float64))
    check_like_torch(m, tm, rnd(4, 3), (rnd(4, 3) > 0).astype(float), rtol=1e-10)


def test_modules_live_under_torch_import_paths():
    from eager.nn.modules.loss import GaussianNLLLoss, TripletMarginLoss
    assert TripletMarginLoss is nn.TripletMarginLoss
    assert GaussianNLLLoss is nn.GaussianNLLLoss


def test_triplet_module_rejects_nonpositive_margin():
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater "
                                         "than 0, got 0.0 instead"):
        nn.TripletMarginLoss(margin=0.0)


# -- deprecated size_average / reduce ----------------------------------------------------

LEGACY = [(None, False, "none"), (False, None, "sum"), (True, True, "mean"),
          (False, True, "sum"), (True, False, "none")]


@pytest.mark.parametrize("size_average,reduce,reduction", LEGACY)
def test_legacy_flags(size_average, reduce, reduction):
    x1, x2, t = eager.tensor(rnd(4, 3)), eager.tensor(rnd(4, 3)), eager.tensor(signs(4))
    calls = [
        lambda **k: F.cosine_embedding_loss(x1, x2, t, **k),
        lambda **k: F.margin_ranking_loss(x1[:, 0], x2[:, 0], t, **k),
        lambda **k: F.triplet_margin_loss(x1, x2, x1 * 2, **k),
        lambda **k: F.hinge_embedding_loss(x1[:, 0], t, **k),
        lambda **k: F.soft_margin_loss(x1[:, 0], t, **k),
        lambda **k: F.multilabel_soft_margin_loss(x1, (x2 > 0).float(), **k),
        lambda **k: F.poisson_nll_loss(x1, x2.abs(), **k),
    ]
    for call in calls:
        with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
            got = call(size_average=size_average, reduce=reduce, reduction="garbage")
        want = call(reduction=reduction)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    m = nn.SoftMarginLoss(size_average=size_average, reduce=reduce)
    assert m.reduction == reduction


# -- errors as PyTorch -------------------------------------------------------------------

def _both_raise(name, make_args, kw=None):
    """Our error type and message equal PyTorch's (with Size/dtype spelt eager's way)."""
    torch = pytest.importorskip("torch")
    kw = kw or {}
    arrays = make_args()
    with pytest.raises(Exception) as theirs:
        getattr(torch.nn.functional, name)(*[torch.tensor(a) for a in arrays], **kw)
    with pytest.raises(Exception) as ours:
        getattr(F, name)(*[eager.tensor(a) for a in arrays], **kw)
    assert type(ours.value) is type(theirs.value)
    assert str(theirs.value).replace("torch.", "eager.") in str(ours.value)


ERRORS = [
    ("cosine_embedding_loss", lambda: (rnd(3, 4), rnd(3, 4), np.ones((3, 1))), {}),
    ("cosine_embedding_loss", lambda: (rnd(3, 4), rnd(3, 4), np.ones(())), {}),
    ("cosine_embedding_loss", lambda: (rnd(4), rnd(4), np.ones(3)), {}),
    ("cosine_embedding_loss", lambda: (rnd(3, 4), rnd(2, 4), np.ones(3)), {}),
    ("cosine_embedding_loss", lambda: (rnd(3, 4), rnd(3, 4), np.ones(3)),
     {"reduction": "avg"}),
    ("margin_ranking_loss", lambda: (rnd(3), rnd(3), np.ones((3, 1))), {}),
    ("margin_ranking_loss", lambda: (rnd(3), rnd(2), np.ones(3)), {}),
    ("margin_ranking_loss", lambda: (rnd(3), rnd(3), np.ones(3)), {"reduction": "x"}),
    ("triplet_margin_loss", lambda: (rnd(3, 4), rnd(3, 4), rnd(4)), {}),
    ("triplet_margin_loss", lambda: (rnd(3, 4), rnd(3, 4), rnd(3, 4)), {"margin": 0}),
    ("triplet_margin_loss", lambda: (rnd(3, 4), rnd(3, 4), rnd(3, 4)), {"margin": -1.0}),
    ("triplet_margin_loss", lambda: (rnd(3, 4), rnd(3, 4), rnd(3, 4)), {"reduction": "x"}),
    ("hinge_embedding_loss", lambda: (rnd(3, 4), np.ones(2)), {}),
    ("hinge_embedding_loss", lambda: (rnd(3, 4), np.ones(4)), {"reduction": "x"}),
    ("soft_margin_loss", lambda: (rnd(3, 4), np.ones(2)), {}),
    ("soft_margin_loss", lambda: (rnd(3, 4), np.ones(4)), {"reduction": "x"}),
    ("multilabel_soft_margin_loss", lambda: (rnd(3, 4), np.ones((3, 4))), {"reduction": "x"}),
    ("multilabel_soft_margin_loss", lambda: (rnd(3, 4), np.ones(2)), {}),
    ("multilabel_soft_margin_loss", lambda: (np.array(1.0), np.array(1.0)), {}),
    ("poisson_nll_loss", lambda: (rnd(3, 4), np.ones((3, 4))), {"reduction": "x"}),
    ("poisson_nll_loss", lambda: (rnd(3, 4), np.ones(2)), {}),
    ("gaussian_nll_loss", lambda: (rnd(3, 4), rnd(3, 4), np.ones((3, 4))), {"reduction": "x"}),
    ("gaussian_nll_loss", lambda: (rnd(3, 4), rnd(3, 4), -np.ones((3, 4))), {}),
    ("gaussian_nll_loss", lambda: (rnd(3, 4), rnd(3, 4), np.ones((1, 1))), {}),
    ("gaussian_nll_loss", lambda: (rnd(3, 4), rnd(3, 4), np.ones(4)), {}),
    ("gaussian_nll_loss", lambda: (rnd(3, 4), rnd(3, 4), np.ones((3, 4, 1))), {}),
]


@pytest.mark.parametrize("name,make,kw", ERRORS, ids=[f"{e[0]}-{i}" for i, e in
                                                      enumerate(ERRORS)])
def test_errors_match_torch(name, make, kw):
    _both_raise(name, make, kw)


def test_gaussian_nll_loss_negative_float_var():
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(eager.randn(3), eager.randn(3), -1.0)


# -- gradients against finite differences (float64) --------------------------------------

def test_gradcheck_cosine_embedding_loss():
    t = eager.tensor([1, -1, -1, 1, -1])
    gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, t, margin=-0.5, reduction="none"),
              rnd(5, 3), rnd(5, 3))
    gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, eager.tensor(1)), rnd(3), rnd(3))


def test_gradcheck_margin_ranking_and_hinge_and_soft_margin():
    t = eager.tensor(signs(6))
    gradcheck(lambda a, b: F.margin_ranking_loss(a, b, t, margin=0.3, reduction="none"),
              rnd(6), rnd(6))
    gradcheck(lambda d: F.hinge_embedding_loss(d, t, margin=1.2, reduction="sum"), rnd(6))
    gradcheck(lambda x: F.soft_margin_loss(x, t * 0.7), rnd(6) * 2)


def test_gradcheck_triplet_margin_loss():
    for p, swap in [(2.0, False), (2.0, True), (1.5, True)]:
        gradcheck(lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=2.0, p=p, swap=swap,
                                                        reduction="none"),
                  rnd(4, 3), rnd(4, 3), rnd(4, 3))


def test_gradcheck_multilabel_soft_margin_loss():
    t = (rnd(3, 4) > 0).astype(np.float64)
    gradcheck(lambda x, w: F.multilabel_soft_margin_loss(x, eager.tensor(t), w,
                                                         reduction="none"),
              rnd(3, 4), np.abs(rnd(4)))
    gradcheck(lambda x, y: F.multilabel_soft_margin_loss(x, y), rnd(3, 4), RNG.random((3, 4)))


def test_gradcheck_gaussian_nll_loss():
    gradcheck(lambda m, y, v: F.gaussian_nll_loss(m, y, v, full=True, reduction="none"),
              rnd(3, 4), rnd(3, 4), np.abs(rnd(3, 4)) + 0.2)
    gradcheck(lambda m, v: F.gaussian_nll_loss(m, eager.zeros(3, 4, dtype=eager.float64), v),
              rnd(3, 4), np.abs(rnd(3)) + 0.2)


def test_gaussian_nll_loss_clamp_keeps_the_variance_gradient():
    torch = pytest.importorskip("torch")
    v = np.array([[0.0, 1e-8, 0.5]])
    check_like_torch(lambda m, var: F.gaussian_nll_loss(m, eager.ones(1, 3,
                                                                      dtype=eager.float64),
                                                        var, eps=1e-3),
                     lambda m, var: torch.nn.functional.gaussian_nll_loss(
                         m, torch.ones(1, 3, dtype=torch.float64), var, eps=1e-3),
                     rnd(1, 3), v, rtol=1e-10)


def test_gradcheck_poisson_nll_loss():
    counts = np.array([[0.0, 1.0, 2.0, 7.0], [3.0, 0.5, 1.5, 4.0]])
    c = eager.tensor(counts)
    gradcheck(lambda x: F.poisson_nll_loss(x, c, full=True, reduction="none"), rnd(2, 4))
    gradcheck(lambda x: F.poisson_nll_loss(x, c, log_input=False, full=True),
              np.abs(rnd(2, 4)) + 0.3)
    # the target's gradient too (Stirling term where target > 1, finite elsewhere)
    gradcheck(lambda x, t: F.poisson_nll_loss(x, t, full=True, reduction="sum"), rnd(2, 4),
              counts + 0.25)


def test_float32_inputs_stay_float32():
    x1, x2 = eager.randn(3, 4), eager.randn(3, 4)
    t = eager.tensor([1.0, -1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outs = [F.cosine_embedding_loss(x1, x2, t), F.margin_ranking_loss(x1[:, 0], x2[:, 0], t),
                F.triplet_margin_loss(x1, x2, x1), F.hinge_embedding_loss(x1, 1.0 - x2),
                F.soft_margin_loss(x1, x2), F.multilabel_soft_margin_loss(x1, (x2 > 0).float()),
                F.gaussian_nll_loss(x1, x2, x2.abs()), F.gaussian_nll_loss(x1, x2, 1.0),
                F.poisson_nll_loss(x1, x2.abs(), full=True)]
    assert all(o.dtype == eager.float32 for o in outs)
