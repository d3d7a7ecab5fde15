"""Padding, resampling (``F.pad``, ``F.interpolate``, padding and upsampling layers) and the
distance functions (``normalize``, ``cosine_similarity``, ``pairwise_distance``,
``kl_div``): finite differences in float64, PyTorch's values, gradients, errors, reprs."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import eager
from eager import nn
from eager.nn import functional as F
from tests.helpers import check_like_torch, gradcheck

RNG = np.random.default_rng(3)


def rnd(*shape):
    return RNG.standard_normal(shape)


# -- pad ----------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradcheck(mode):
    gradcheck(lambda x: F.pad(x, (2, 1, -1, 2), mode=mode), rnd(2, 2, 4, 3))
    gradcheck(lambda x: F.pad(x, (1, 2), mode=mode), rnd(2, 4))

    def grad_x(x):  # the adjoint's own backward: a gradient of a gradient
        x = x if x.requires_grad else x.detach().requires_grad_()
        y = F.pad(x, (2, 1, 1, 1), mode=mode)
        (g,) = eager.autograd.grad((y * y).sum(), x, create_graph=True)
        return g
    gradcheck(grad_x, rnd(1, 1, 3, 3))


@pytest.mark.parametrize("mode,pad,shape", [
    (m, p, s) for m in ("constant", "reflect", "replicate", "circular")
    for p, s in [((1, 2), (2, 5)), ((2, 1, 0, 3), (2, 3, 5, 4)), ((-1, 2, 1, -2), (1, 2, 4, 5)),
                 ((1, 1, 2, 0, 1, 2), (1, 2, 3, 4, 3))]])
def test_pad_matches_torch(mode, pad, shape):
    torch = pytest.importorskip("torch")
    check_like_torch(F.pad, torch.nn.functional.pad, rnd(*shape), pad=pad, mode=mode)


def test_constant_pad_value_and_crop_match_torch():
    torch = pytest.importorskip("torch")
    check_like_torch(F.pad, torch.nn.functional.pad, rnd(2, 3, 4), pad=(1, 2, 0, 1), value=2.5)
    check_like_torch(F.pad, torch.nn.functional.pad, rnd(2, 3, 4), pad=(-2, -1, 1, 0, 1, 1))


def test_pad_errors_match_torch_wording():
    x = eager.randn(2, 3, 5, 5)

    def raises(exc, text, fn):
        with pytest.raises(exc) as info:
            fn()
        assert str(info.value) == text

    raises(RuntimeError, "Padding length must be divisible by 2",
           lambda: F.pad(x, (1, 1, 1), mode="reflect"))
    raises(RuntimeError, "Padding length should be less than or equal to two times the input "
           "dimension but got padding length 10 and input of dimension 4",
           lambda: F.pad(x, (1,) * 10))
    raises(RuntimeError, "Argument #4: Padding size should be less than the corresponding input "
           "dimension, but got: padding (5, 5) at dimension 3 of input [2, 3, 5, 5]",
           lambda: F.pad(x, (5, 5, 1, 1), mode="reflect"))
    raises(NotImplementedError, "Padding size 2 is not supported for 4D input tensor.",
           lambda: F.pad(x, (1, 1), mode="replicate"))
    raises(NotImplementedError, "Padding size 2 is not supported for 1D input tensor.",
           lambda: F.pad(eager.randn(3), (1, 1), mode="reflect"))
    raises(RuntimeError, "Padding value causes wrapping around more than once.",
           lambda: F.pad(x, (6, 6, 0, 0), mode="circular"))
    raises(NotImplementedError, "Unrecognised padding mode foo",
           lambda: F.pad(x, (1, 1), mode="foo"))
    raises(RuntimeError, "Padding mode \"reflect\" doesn't take in value argument",
           lambda: F.pad(x, (1, 1, 1, 1), mode="reflect", value=1.0))


@pytest.mark.parametrize("make,text", [
    (lambda: nn.ZeroPad2d(1), "ZeroPad2d((1, 1, 1, 1))"),
    (lambda: nn.ReflectionPad2d((1, 2, 3, 4)), "ReflectionPad2d((1, 2, 3, 4))"),
    (lambda: nn.ReplicationPad1d(2), "ReplicationPad1d((2, 2))"),
    (lambda: nn.ConstantPad2d(1, 3.5), "ConstantPad2d(padding=(1, 1, 1, 1), value=3.5)"),
    (lambda: nn.CircularPad1d((1, 2)), "CircularPad1d((1, 2))"),
])
def test_padding_layer_repr(make, text):
    assert repr(make()) == text


def test_padding_layers_match_torch():
    torch = pytest.importorskip("torch")
    x = rnd(2, 3, 4, 5)
    for name, args in [("ReflectionPad2d", ((1, 2, 3, 0),)), ("ReplicationPad2d", (2,)),
                       ("CircularPad2d", ((1, 0, 2, 1),)), ("ZeroPad2d", ((1, 2, 0, 1),)),
                       ("ConstantPad2d", (1, -1.5)), ("ReflectionPad1d", (2,))]:
        ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
        arr = x[0] if name.endswith("1d") else x
        check_like_torch(lambda t, m=ours: m(t), lambda t, m=theirs: m(t), arr)


# -- interpolate --------------------------------------------------------------------------

_SIZES = [((10, 12), None), ((3, 4), None), ((7, 5), None), (None, 2), (None, 1.7),
          (None, (0.5, 3))]


@pytest.mark.parametrize("mode,align_corners,recompute", [
    ("nearest", None, None), ("nearest-exact", None, None), ("bilinear", False, None),
    ("bilinear", True, None), ("bilinear", False, True), ("area", None, None)])
def test_interpolate_2d_matches_torch(mode, align_corners, recompute):
    torch = pytest.importorskip("torch")
    x = rnd(2, 3, 5, 6)
    for size, scale in _SIZES:
        check_like_torch(F.interpolate, torch.nn.functional.interpolate, x, size=size,
                         scale_factor=scale, mode=mode, align_corners=align_corners,
                         recompute_scale_factor=recompute if scale is not None else None)


def test_interpolate_1d_3d_and_float32_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    check_like_torch(F.interpolate, tf.interpolate, rnd(2, 3, 7), scale_factor=2.5,
                     mode="linear")
    check_like_torch(F.interpolate, tf.interpolate, rnd(2, 3, 7), size=4, mode="linear",
                     align_corners=True)
    check_like_torch(F.interpolate, tf.interpolate, rnd(1, 2, 3, 4, 5), size=(5, 3, 7),
                     mode="trilinear")
    check_like_torch(F.interpolate, tf.interpolate, rnd(1, 2, 3, 4, 5), scale_factor=2)
    x = rnd(2, 3, 5, 6).astype(np.float32)
    for (mode, ac), scale in itertools.product(
            [("nearest", None), ("bilinear", False), ("bilinear", True)],
            [1.5, 2, 3, 0.7, 1 / 3]):
        out = check_like_torch(F.interpolate, tf.interpolate, x, scale_factor=scale, mode=mode,
                               align_corners=ac, rtol=1e-5, atol=1e-6)
        assert out.dtype == eager.float32


def test_interpolate_gradcheck():
    gradcheck(lambda x: F.interpolate(x, size=(4, 3), mode="bilinear"), rnd(1, 2, 3, 4))
    gradcheck(lambda x: F.interpolate(x, scale_factor=1.5, mode="nearest"), rnd(1, 2, 3, 2))
    gradcheck(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), rnd(1, 2, 2, 2))


def test_upsample_layers():
    torch = pytest.importorskip("torch")
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.Upsample(size=5, mode="bilinear", align_corners=True)) == \
        "Upsample(size=5, mode='bilinear')"
    assert repr(nn.UpsamplingBilinear2d(size=4)) == "UpsamplingBilinear2d(size=4, mode='bilinear')"
    x = rnd(1, 2, 3, 4)
    for ours, theirs in [(nn.Upsample(scale_factor=(2, 1.5), mode="bilinear"),
                          torch.nn.Upsample(scale_factor=(2, 1.5), mode="bilinear")),
                         (nn.UpsamplingBilinear2d(size=(5, 7)),
                          torch.nn.UpsamplingBilinear2d(size=(5, 7))),
                         (nn.UpsamplingNearest2d(scale_factor=3),
                          torch.nn.UpsamplingNearest2d(scale_factor=3))]:
        check_like_torch(lambda t, m=ours: m(t), lambda t, m=theirs: m(t), x)


def test_interpolate_errors_match_torch_wording():
    x = eager.randn(2, 3, 5, 5)

    def raises(exc, text, **kw):
        with pytest.raises(exc) as info:
            F.interpolate(kw.pop("input", x), **kw)
        assert str(info.value) == text

    raises(ValueError, "only one of size or scale_factor should be defined", size=3,
           scale_factor=2)
    raises(ValueError, "either size or scale_factor should be defined")
    raises(NotImplementedError, "Got 3D input, but bilinear mode needs 4D input",
           input=eager.randn(1, 1, 5), size=3, mode="bilinear")
    raises(ValueError, "align_corners option can only be set with the interpolating modes: "
           "linear | bilinear | bicubic | trilinear", size=3, align_corners=True)
    raises(NotImplementedError, "Input Error: Only 3D, 4D and 5D input Tensors supported (got "
           "2D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
           "area | nearest-exact (got nearest)", input=eager.randn(3, 5), size=3)
    raises(RuntimeError, "Input and output sizes should be greater than 0, but got input (H: 5, "
           "W: 5) output (H: 0, W: 0)", size=0)
    with pytest.raises(ValueError, match="Input and output must have the same number of "
                                         "spatial dimensions"):
        F.interpolate(x, size=(3, 3, 3))


# -- normalize, cosine similarity, pairwise distance, kl_div --------------------------------

def test_distances_gradcheck():
    a, b = rnd(3, 4), rnd(3, 4)
    gradcheck(lambda x: F.normalize(x, p=3.0), a)
    gradcheck(lambda x, y: F.cosine_similarity(x, y), a, b)
    gradcheck(lambda x, y: F.cosine_similarity(x, y, dim=0), a, b[:1])
    gradcheck(lambda x, y: F.pairwise_distance(x, y, p=1.5), a, b)
    gradcheck(lambda x, t: F.kl_div(x, t, reduction="batchmean", log_target=True), a, b)


def test_distances_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    a, b = rnd(3, 4), rnd(3, 4)
    zero = a.copy()
    zero[1] = 0.0                 # the eps clamps: value clamped, gradient the norm's
    for p in (2.0, 1.0, 3.0):
        check_like_torch(F.normalize, tf.normalize, a, p=p)
        check_like_torch(F.normalize, tf.normalize, zero, p=p, dim=0)
        check_like_torch(F.pairwise_distance, tf.pairwise_distance, a, b, p=p)
        check_like_torch(F.pairwise_distance, tf.pairwise_distance, a[0], b[0], p=p,
                         keepdim=True)
    check_like_torch(F.cosine_similarity, tf.cosine_similarity, a, b)
    check_like_torch(F.cosine_similarity, tf.cosine_similarity, zero, b)
    check_like_torch(F.cosine_similarity, tf.cosine_similarity, a, b[:1], dim=0)
    check_like_torch(F.cosine_similarity, tf.cosine_similarity, a[0], b[0], dim=0)
    check_like_torch(eager.cosine_similarity, torch.cosine_similarity, a, b)     # top level
    check_like_torch(eager.pairwise_distance, torch.pairwise_distance, a, b)
    check_like_torch(lambda x, y: nn.CosineSimilarity(dim=0)(x, y),
                     lambda x, y: torch.nn.CosineSimilarity(dim=0)(x, y), a, b)
    check_like_torch(lambda x, y: nn.PairwiseDistance(p=1.0)(x, y),
                     lambda x, y: torch.nn.PairwiseDistance(p=1.0)(x, y), a, b)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(4\) must match the size of "
                                           r"tensor b \(5\) at non-singleton dimension 1"):
        F.cosine_similarity(eager.randn(3, 4), eager.randn(3, 5))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
def test_kl_div_matches_torch(reduction):
    torch = pytest.importorskip("torch")
    logp = np.log(RNG.dirichlet(np.ones(4), 3))
    target = RNG.dirichlet(np.ones(4), 3)
    target[0, 1] = 0.0            # xlogy: 0 * log 0 counts 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_like_torch(lambda x: F.kl_div(x, eager.tensor(target), reduction=reduction),
                         lambda x: torch.nn.functional.kl_div(x, torch.tensor(target),
                                                              reduction=reduction), logp)
        check_like_torch(F.kl_div, torch.nn.functional.kl_div, logp, np.log(target + 0.1),
                         reduction=reduction, log_target=True)
        check_like_torch(lambda x, t: nn.KLDivLoss(reduction=reduction)(x, t),
                         lambda x, t: torch.nn.KLDivLoss(reduction=reduction)(x, t),
                         logp, target + 0.1)


def test_kl_div_mean_warns_and_bad_reduction():
    x = eager.randn(3, 4)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, x.exp())
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.kl_div(x, x.exp(), reduction="foo")
    assert repr(nn.KLDivLoss()) == "KLDivLoss()"
