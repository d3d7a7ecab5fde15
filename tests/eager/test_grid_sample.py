"""``F.affine_grid`` and ``F.grid_sample``: values and gradients (input, grid, theta)
against PyTorch for every mode, padding mode and ``align_corners``, 4-D and 5-D, PyTorch's
errors and warnings, and gradients against finite differences in float64."""

import itertools
import warnings

import numpy as np
import pytest

import eager
import eager.nn.functional as F
from tests.helpers import check_like_torch, gradcheck

RNG = np.random.default_rng(11)


def rnd(*shape):
    return RNG.standard_normal(shape)


def grid_points(*shape, spread=1.4):
    """Grid coordinates, some outside [-1, 1] (padding matters there)."""
    return RNG.uniform(-spread, spread, size=shape)


def _tf():
    return pytest.importorskip("torch").nn.functional


CASES_2D = [(m, p, a) for m in ("bilinear", "nearest", "bicubic")
            for p in ("zeros", "border", "reflection") for a in (False, True)]


@pytest.mark.parametrize("mode,padding_mode,align_corners", CASES_2D)
def test_grid_sample_2d_matches_torch(mode, padding_mode, align_corners):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    check_like_torch(F.grid_sample, _tf().grid_sample, rnd(2, 3, 5, 6),
                     grid_points(2, 4, 7, 2, spread=1.6), rtol=1e-9, atol=1e-11, **kw)
    # far outside (several reflections) and a one-pixel-wide input
    check_like_torch(F.grid_sample, _tf().grid_sample, rnd(1, 2, 4, 1),
                     grid_points(1, 3, 5, 2, spread=5.0), rtol=1e-9, atol=1e-11, **kw)


CASES_3D = [(m, p, a) for m in ("bilinear", "nearest")
            for p in ("zeros", "border", "reflection") for a in (False, True)]


@pytest.mark.parametrize("mode,padding_mode,align_corners", CASES_3D)
def test_grid_sample_3d_matches_torch(mode, padding_mode, align_corners):
    check_like_torch(F.grid_sample, _tf().grid_sample, rnd(2, 2, 3, 4, 5),
                     grid_points(2, 2, 3, 4, 3), rtol=1e-9, atol=1e-11, mode=mode,
                     padding_mode=padding_mode, align_corners=align_corners)


@pytest.mark.parametrize("align_corners", [False, True])
def test_nearest_ties_round_to_even(align_corners):
    # x = 0 is the midpoint between pixels 1 and 2 of a width-4 input without
    # align_corners; with it, x = -1/3 is between 0 and 1 of a width-3 input... both tie
    xs = np.array([-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0])
    grid = np.stack([xs, xs[::-1]], -1).reshape(1, 1, -1, 2)
    for w in (3, 4, 5):
        check_like_torch(F.grid_sample, _tf().grid_sample, rnd(1, 1, w, w), grid,
                         mode="nearest", align_corners=align_corners,
                         padding_mode="reflection")


def test_points_on_pixel_centres_and_borders_match_torch_gradients():
    # an identity affine grid puts points exactly on pixels and on the border, where
    # PyTorch's clipping gives no gradient
    torch = pytest.importorskip("torch")
    for ac in (False, True):
        theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        grid = _tf().affine_grid(torch.tensor(theta), [1, 1, 4, 5], align_corners=ac).numpy()
        for pad in ("zeros", "border", "reflection"):
            check_like_torch(F.grid_sample, _tf().grid_sample, rnd(1, 2, 4, 5), grid,
                             padding_mode=pad, align_corners=ac, rtol=1e-9, atol=1e-11)


def test_float32_matches_torch():
    torch = pytest.importorskip("torch")
    x = rnd(2, 3, 6, 5).astype(np.float32)
    g = grid_points(2, 4, 4, 2).astype(np.float32)
    for mode in ("bilinear", "nearest", "bicubic"):
        got = F.grid_sample(eager.tensor(x), eager.tensor(g), mode=mode, align_corners=False)
        want = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), mode=mode,
                                               align_corners=False)
        assert got.dtype == eager.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


# -- affine_grid ---------------------------------------------------------------------------

@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(align_corners):
    for size in ([2, 3, 4, 5], [2, 1, 1, 3], [2, 3, 5, 1]):
        check_like_torch(F.affine_grid, _tf().affine_grid, rnd(2, 2, 3), size=size,
                         align_corners=align_corners, rtol=1e-12, atol=1e-14)
    for size in ([2, 3, 4, 5, 6], [2, 1, 2, 1, 3]):
        check_like_torch(F.affine_grid, _tf().affine_grid, rnd(2, 3, 4), size=size,
                         align_corners=align_corners, rtol=1e-12, atol=1e-14)


def test_affine_grid_then_grid_sample_matches_torch():
    torch = pytest.importorskip("torch")

    def ours(theta, img):
        return F.grid_sample(img, F.affine_grid(theta, [2, 3, 6, 7], align_corners=False),
                             align_corners=False, padding_mode="border")

    def theirs(theta, img):
        tf = torch.nn.functional
        return tf.grid_sample(img, tf.affine_grid(theta, [2, 3, 6, 7], align_corners=False),
                              align_corners=False, padding_mode="border")

    theta = np.array([[[0.8, -0.3, 0.1], [0.2, 1.1, -0.2]], [[1.2, 0.1, 0.3], [0.0, 0.7, 0.1]]])
    check_like_torch(ours, theirs, theta, rnd(2, 3, 5, 5), rtol=1e-9, atol=1e-11)


def test_affine_grid_float32():
    g = F.affine_grid(eager.randn(1, 2, 3), [1, 1, 3, 3], align_corners=False)
    assert g.dtype == eager.float32 and tuple(g.shape) == (1, 3, 3, 2)


# -- errors and warnings -------------------------------------------------------------------

def _same_error(ours, theirs):
    with pytest.raises(Exception) as t:
        theirs()
    with pytest.raises(Exception) as e:
        ours()
    assert type(e.value) is type(t.value)
    assert str(e.value) == str(t.value).replace("torch.", "eager.")


def _both(fn_name, *arrays, **kw):
    torch = pytest.importorskip("torch")
    _same_error(lambda: getattr(F, fn_name)(*[eager.tensor(a) for a in arrays], **kw),
                lambda: getattr(torch.nn.functional, fn_name)(
                    *[torch.tensor(a) for a in arrays], **kw))


GS_ERRORS = [
    ((rnd(2, 3, 4, 5), rnd(2, 6, 7, 2)), dict(mode="foo", align_corners=False)),
    ((rnd(2, 3, 4, 5), rnd(2, 6, 7, 2)), dict(padding_mode="foo", align_corners=False)),
    ((rnd(2, 3, 4, 5), rnd(1, 6, 7, 2)), dict(align_corners=False)),
    ((rnd(2, 3, 4, 5), rnd(2, 6, 7, 3)), dict(align_corners=False)),
    ((rnd(2, 3, 4, 5), rnd(2, 6, 7)), dict(align_corners=False)),
    ((rnd(3, 4, 5), rnd(6, 7, 2)), dict(align_corners=False)),
    ((rnd(2, 3, 4), rnd(2, 5, 1)), dict(align_corners=False)),
    ((rnd(2, 3, 4, 5), rnd(2, 6, 7, 2, 2)), dict(align_corners=False)),
    ((rnd(2, 3, 0, 5), rnd(2, 6, 7, 2)), dict(align_corners=False)),
    ((rnd(2, 3, 4, 5, 2), rnd(2, 6, 7, 2, 3)), dict(mode="bicubic", align_corners=False)),
    ((rnd(2, 3, 4, 5).astype(np.float32), rnd(2, 6, 7, 2)), dict(align_corners=False)),
    ((np.ones((2, 3, 4, 5), dtype=np.int64), np.ones((2, 6, 7, 2), dtype=np.int64)),
     dict(align_corners=False)),
]


@pytest.mark.parametrize("arrays,kw", GS_ERRORS, ids=[str(i) for i in range(len(GS_ERRORS))])
def test_grid_sample_errors_match_torch(arrays, kw):
    _both("grid_sample", *arrays, **kw)


AG_ERRORS = [
    (rnd(2, 2, 3), [2, 3, 4, 5, 6]),
    (rnd(2, 3, 4), [2, 3, 4, 5]),
    (rnd(2, 3, 4), [2, 3, 4]),
    (rnd(2, 2, 3), [2, 3, 0, 5]),
    (np.ones((2, 2, 3), dtype=np.int64), [2, 3, 4, 5]),
    (rnd(3, 2, 3), [2, 3, 4, 5]),
]


@pytest.mark.parametrize("theta,size", AG_ERRORS, ids=[str(i) for i in range(len(AG_ERRORS))])
def test_affine_grid_errors_match_torch(theta, size):
    _both("affine_grid", theta, size=size, align_corners=False)


def test_align_corners_default_warns_like_torch():
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has "
                                         "changed to align_corners=False since 1.3.0"):
        g = F.affine_grid(eager.randn(1, 2, 3), [1, 1, 2, 2])
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.grid_sample(eager.randn(1, 1, 2, 2), g)
    with pytest.warns(UserWarning, match="affine_grid behavior has changed for unit-size "
                                         "grids when align_corners=True"):
        F.affine_grid(eager.randn(1, 2, 3), [1, 1, 1, 2], align_corners=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(eager.randn(1, 1, 2, 2), g, align_corners=False)


# -- finite differences ----------------------------------------------------------------------

@pytest.mark.parametrize("mode,padding_mode,align_corners",
                         [(m, p, a) for m, p, a in CASES_2D if m != "nearest"])
def test_grid_sample_gradcheck_2d(mode, padding_mode, align_corners):
    gradcheck(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode,
                                         align_corners=align_corners),
              rnd(1, 2, 3, 4), grid_points(1, 2, 3, 2, spread=1.3), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("padding_mode,align_corners",
                         list(itertools.product(("zeros", "border", "reflection"),
                                                (False, True))))
def test_grid_sample_gradcheck_3d(padding_mode, align_corners):
    gradcheck(lambda x, g: F.grid_sample(x, g, padding_mode=padding_mode,
                                         align_corners=align_corners),
              rnd(1, 1, 2, 3, 3), grid_points(1, 2, 2, 1, 3, spread=1.3))


def test_grid_sample_nearest_gradients():
    x = eager.tensor(rnd(1, 1, 3, 3), requires_grad=True)
    g = eager.tensor(grid_points(1, 2, 2, 2), requires_grad=True)
    F.grid_sample(x, g, mode="nearest", align_corners=True).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), 0.0)     # as PyTorch: none for the grid
    gradcheck(lambda x: F.grid_sample(x, g.detach(), mode="nearest", align_corners=True),
              rnd(1, 1, 3, 3))


def test_affine_grid_gradcheck():
    gradcheck(lambda t: F.affine_grid(t, [2, 1, 3, 4], align_corners=False), rnd(2, 2, 3))
    gradcheck(lambda t: F.affine_grid(t, [1, 1, 2, 3, 2], align_corners=True), rnd(1, 3, 4))
