"""Batch, instance and group normalization (functional forms and layers): finite
differences in float64, PyTorch's outputs, gradients, running statistics, errors, reprs
and state-dict keys."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import eager
from eager import nn
from eager.nn import functional as F
from tests.helpers import check_like_torch, gradcheck

RNG = np.random.default_rng(2)


def rnd(*shape):
    return RNG.standard_normal(shape)


def load_from_torch(ours, theirs):
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def randomize_affine(theirs):
    import torch
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_()


# -- finite differences -------------------------------------------------------------------

def test_functional_gradcheck():
    gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
              rnd(3, 2, 2, 2), rnd(2), rnd(2))
    gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), rnd(2, 4, 3), rnd(4), rnd(4))
    gradcheck(lambda x: F.group_norm(x, 1), rnd(2, 3, 2, 2))
    gradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), rnd(2, 2, 3, 2), rnd(2),
              rnd(2))
    rm, rv = eager.tensor(rnd(2)), eager.tensor(np.abs(rnd(2)) + 0.5)
    gradcheck(lambda x: F.instance_norm(x, rm, rv, use_input_stats=False), rnd(2, 2, 3))
    gradcheck(lambda x: F.batch_norm(x, rm, rv, training=False), rnd(3, 2, 3))


# -- layers against PyTorch ---------------------------------------------------------------

@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("affine,track", [(True, True), (False, True), (True, False)])
def test_batchnorm2d_matches_torch(momentum, affine, track):
    torch = pytest.importorskip("torch")
    kw = dict(momentum=momentum, affine=affine, track_running_stats=track)
    ours, theirs = nn.BatchNorm2d(3, **kw).double(), torch.nn.BatchNorm2d(3, **kw).double()
    randomize_affine(theirs)
    load_from_torch(ours, theirs)
    for _ in range(3):
        check_like_torch(lambda t: ours(t), lambda t: theirs(t), rnd(4, 3, 3, 2) * 2 + 1)
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=name)
    if affine:
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                                   rtol=1e-9)
    ours.eval()
    theirs.eval()
    check_like_torch(lambda t: ours(t), lambda t: theirs(t), rnd(2, 3, 2, 2))
    if track:
        assert int(ours.num_batches_tracked) == 3


def test_batchnorm1d_and_3d_match_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs, shape in [(nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3), (4, 3, 5)),
                                (nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3), (4, 3)),
                                (nn.BatchNorm3d(2), torch.nn.BatchNorm3d(2), (2, 2, 3, 2, 2))]:
        ours, theirs = ours.double(), theirs.double()
        randomize_affine(theirs)
        load_from_torch(ours, theirs)
        check_like_torch(lambda t: ours(t), lambda t: theirs(t), rnd(*shape))
        np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(),
                                   rtol=1e-12)


@pytest.mark.parametrize("affine,track", [(False, False), (True, False), (True, True),
                                          (False, True)])
def test_instancenorm2d_matches_torch(affine, track):
    torch = pytest.importorskip("torch")
    kw = dict(affine=affine, track_running_stats=track, momentum=0.3)
    ours = nn.InstanceNorm2d(3, **kw).double()
    theirs = torch.nn.InstanceNorm2d(3, **kw).double()
    randomize_affine(theirs)
    load_from_torch(ours, theirs)
    for shape in [(4, 3, 3, 2), (3, 2, 5)]:        # batched and unbatched
        check_like_torch(lambda t: ours(t), lambda t: theirs(t), rnd(*shape) * 3 + 1)
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=name)
    ours.eval()
    theirs.eval()
    check_like_torch(lambda t: ours(t), lambda t: theirs(t), rnd(2, 3, 2, 2))


def test_instancenorm1d_and_groupnorm_match_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = nn.InstanceNorm1d(2, affine=True).double(), \
        torch.nn.InstanceNorm1d(2, affine=True).double()
    randomize_affine(theirs)
    load_from_torch(ours, theirs)
    check_like_torch(lambda t: ours(t), lambda t: theirs(t), rnd(3, 2, 5))
    for groups, channels, shape in [(2, 4, (3, 4, 3, 2)), (1, 3, (2, 3, 5)), (3, 3, (2, 3))]:
        ours = nn.GroupNorm(groups, channels).double()
        theirs = torch.nn.GroupNorm(groups, channels).double()
        randomize_affine(theirs)
        load_from_torch(ours, theirs)
        check_like_torch(lambda t: ours(t), lambda t: theirs(t), rnd(*shape) * 2 - 1)
        np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias.grad.numpy(), rtol=1e-9)


def test_float32_normalization_matches_torch():
    torch = pytest.importorskip("torch")
    x = rnd(8, 4, 5, 5).astype(np.float32)
    for ours, theirs in [(nn.BatchNorm2d(4), torch.nn.BatchNorm2d(4)),
                         (nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)),
                         (nn.InstanceNorm2d(4), torch.nn.InstanceNorm2d(4))]:
        out = check_like_torch(lambda t, m=ours: m(t), lambda t, m=theirs: m(t), x, rtol=1e-4,
                               atol=1e-5)
        assert out.dtype == eager.float32


# -- reprs, state dicts -------------------------------------------------------------------

@pytest.mark.parametrize("make,text,keys", [
    (lambda: nn.BatchNorm2d(3), "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
     "track_running_stats=True)", ["weight", "bias", "running_mean", "running_var",
                                   "num_batches_tracked"]),
    (lambda: nn.GroupNorm(2, 4), "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)",
     ["weight", "bias"]),
    (lambda: nn.GroupNorm(2, 4, affine=False), "GroupNorm(2, 4, eps=1e-05, affine=False, "
     "bias=False)", []),
    (lambda: nn.InstanceNorm2d(3), "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, "
     "bias=False, track_running_stats=False)", []),
    (lambda: nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
     "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
     "track_running_stats=True)", ["weight", "bias", "running_mean", "running_var",
                                   "num_batches_tracked"]),
])
def test_repr_and_state_dict(make, text, keys):
    m = make()
    assert repr(m) == text
    assert list(m.state_dict()) == keys


def test_instancenorm_does_not_count_batches():
    m = nn.InstanceNorm2d(2, track_running_stats=True)
    m(eager.randn(2, 2, 3, 3))
    assert int(m.num_batches_tracked) == 0
    assert not np.allclose(m.running_mean.numpy(), 0)


# -- errors -------------------------------------------------------------------------------

def _raises(exc, text, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == text


def test_errors_match_torch_wording():
    x = eager.randn(2, 3, 5, 5)
    _raises(ValueError, "expected 4D input (got 2D input)", lambda: nn.BatchNorm2d(3)(
        eager.randn(3, 5)))
    _raises(ValueError, "expected 2D or 3D input (got 4D input)", lambda: nn.BatchNorm1d(3)(x))
    _raises(RuntimeError, "running_mean should contain 3 elements not 4",
            lambda: nn.BatchNorm2d(4)(x))
    _raises(RuntimeError, "weight should contain 3 elements not 4",
            lambda: F.batch_norm(x, eager.zeros(3), eager.ones(3), eager.ones(4)))
    _raises(RuntimeError, "running_mean must be defined in evaluation mode",
            lambda: F.batch_norm(x, None, None, training=False))
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, "
                                         r"got input size .*\[1, 3, 1, 1\]"):
        nn.BatchNorm2d(3)(eager.randn(1, 3, 1, 1))
    _raises(ValueError, "num_channels (3) must be divisible by num_groups (2)",
            lambda: nn.GroupNorm(2, 3))
    _raises(RuntimeError, "Expected number of channels in input to be divisible by num_groups, "
            "but got input of shape [2, 3, 5, 5] and num_groups=2",
            lambda: nn.GroupNorm(2, 4)(x))
    _raises(RuntimeError, "Expected weight to be a vector of size equal to the number of channels "
            "in input, but got weight of shape [4] and input of shape [2, 3, 5, 5]",
            lambda: F.group_norm(x, 3, eager.ones(4)))
    _raises(RuntimeError, "Expected at least 2 dimensions for input tensor but received 1",
            lambda: F.group_norm(eager.randn(3), 3))
    _raises(ValueError, "expected 3D or 4D input (got 2D input)",
            lambda: nn.InstanceNorm2d(3)(eager.randn(3, 5)))
    _raises(ValueError, "expected input's size at dim=1 to match num_features (4), but got: 3.",
            lambda: nn.InstanceNorm2d(4, affine=True)(x))
    _raises(RuntimeError, "running_mean should contain 6 elements not 8",
            lambda: F.instance_norm(x, eager.zeros(4), eager.ones(4)))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        nn.InstanceNorm2d(3)(eager.randn(2, 3, 1, 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.InstanceNorm2d(4)(x)
    assert any("does not match num_features" in str(w.message) for w in caught)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine,x_grad", [(True, True), (False, True), (True, False)])
def test_layer_norm_backward_on_arrays_equals_the_tensor_formulas_bitwise(dtype, affine,
                                                                          x_grad):
    """A plain backward runs LayerNorm's backward on arrays (its own, in place); with
    create_graph it runs the same formulas as ops on tensors: the same bits."""
    rng = np.random.default_rng(3)
    x = eager.tensor(rng.standard_normal((4, 5, 6)).astype(dtype) * 3 + 1,
                     requires_grad=x_grad)
    w = eager.tensor(rng.standard_normal((5, 6)).astype(dtype), requires_grad=True) \
        if affine else None
    b = eager.tensor(rng.standard_normal((5, 6)).astype(dtype), requires_grad=True) \
        if affine else None
    g = eager.tensor(rng.standard_normal((4, 5, 6)).astype(dtype))
    leaves = [t for t in (x, w, b) if t is not None and t.requires_grad]
    plain = eager.autograd.grad(F.layer_norm(x, (5, 6), w, b, eps=1e-3), leaves, g)
    graph = eager.autograd.grad(F.layer_norm(x, (5, 6), w, b, eps=1e-3), leaves, g,
                                create_graph=True)
    assert F.layer_norm(x, (5, 6), w, b).grad_fn.name() == "LayerNormBackward0"
    for p, q in zip(plain, graph):
        assert p.dtype == q.dtype == x.dtype
        np.testing.assert_array_equal(p.numpy(), q.detach().numpy())
