"""Convolutions (``conv1d/2d/3d``, ``conv_transpose1d/2d``), ``unfold``/``fold`` and the
``Conv*``/``ConvTranspose*`` layers: finite differences in float64 (gradients and
gradients of gradients), PyTorch's values, gradients, errors, reprs and state-dict keys."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import eager
from eager import nn
from eager.nn import functional as F
from tests.helpers import check_like_torch, gradcheck

RNG = np.random.default_rng(0)


def rnd(*shape):
    return RNG.standard_normal(shape)


# -- finite differences -------------------------------------------------------------------

@pytest.mark.parametrize("kw", [
    {},
    {"stride": 2, "padding": 1},
    {"dilation": 2, "padding": (1, 0)},
    {"groups": 2, "stride": (1, 2)},
    {"padding": "same"},                      # even kernel width: asymmetric padding
])
def test_conv2d_gradcheck(kw):
    cin = 4 if kw.get("groups") else 2
    w = rnd(3 if not kw.get("groups") else 4, cin // kw.get("groups", 1), 3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kw), rnd(2, cin, 5, 5), w,
                  rnd(w.shape[0]))


def test_conv1d_conv3d_gradcheck():
    gradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=1, dilation=2), rnd(2, 3, 7),
              rnd(2, 3, 2))
    gradcheck(lambda x, w, b: F.conv3d(x, w, b, padding=(1, 0, 0)), rnd(1, 2, 3, 3, 2),
              rnd(2, 2, 2, 2, 2), rnd(2))


@pytest.mark.parametrize("kw", [
    {},
    {"stride": 2, "output_padding": 1},
    {"stride": (2, 1), "padding": 1, "dilation": 2},
    {"groups": 2, "stride": 2, "padding": (0, 1)},
    {"dilation": 2, "output_padding": 1},     # output_padding < dilation, >= stride
])
def test_conv_transpose2d_gradcheck(kw):
    g = kw.get("groups", 1)
    gradcheck(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw), rnd(2, 4, 3, 3),
              rnd(4, 2, 3, 2), rnd(2 * g))


def test_conv_transpose1d_gradcheck():
    gradcheck(lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=1, output_padding=2),
              rnd(2, 2, 4), rnd(2, 3, 3))


def test_unfold_fold_gradcheck():
    gradcheck(lambda x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
              rnd(2, 2, 5, 4))
    gradcheck(lambda c: F.fold(c, (4, 5), 2, padding=1, stride=2), rnd(2, 8, 9))


def test_double_backward_gradcheck():
    """The gradients of a convolution are differentiable again: finite differences of
    the input gradient (with ``create_graph``) w.r.t. input and weight."""

    def leaf(t):  # the finite-difference calls pass tensors without requires_grad
        return t if t.requires_grad else t.detach().requires_grad_()

    def grad_x(x, w):
        x = leaf(x)
        y = F.conv2d(x, w, stride=2, padding=1, groups=2)
        (gx,) = eager.autograd.grad((y * y).sum(), x, create_graph=True)
        return gx

    def grad_w(x, w):
        w = leaf(w)
        y = F.conv_transpose2d(x, w, stride=2, output_padding=1)
        (gw,) = eager.autograd.grad((y * y).sum(), w, create_graph=True)
        return gw

    gradcheck(grad_x, rnd(1, 2, 4, 4), rnd(2, 1, 3, 3))
    gradcheck(grad_w, rnd(1, 2, 3, 3), rnd(2, 1, 3, 3))


def test_gradient_penalty_matches_torch():
    """WGAN-GP's penalty ``(||d D(x) / dx|| - 1)^2`` backpropagated to the critic's
    weights (a gradient of a gradient through conv, LeakyReLU, avg pooling)."""
    torch = pytest.importorskip("torch")

    def critic(ns, x, w1, w2):
        h = ns.leaky_relu(ns.conv2d(x, w1, stride=2, padding=1), 0.2)
        return ns.avg_pool2d(ns.conv2d(h, w2, padding=1), 2).sum()

    arrays = [rnd(3, 2, 6, 6), rnd(4, 2, 3, 3), rnd(2, 4, 3, 3)]
    results = []
    for lib, ns in ((eager, F), (torch, torch.nn.functional)):
        x, w1, w2 = (lib.tensor(a, requires_grad=True) for a in arrays)
        (gx,) = lib.autograd.grad(critic(ns, x, w1, w2), x, create_graph=True)
        penalty = ((gx.reshape(3, -1).norm(dim=1) - 1) ** 2).mean()
        penalty.backward()
        results.append([penalty.detach().numpy(), w1.grad.numpy(), w2.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


# -- against PyTorch ----------------------------------------------------------------------

def _conv_cases():
    for stride, padding, dilation, groups in itertools.product(
            [1, 2], [0, 1, "same", "valid"], [1, 2], [1, 2]):
        if padding == "same" and stride != 1:
            continue
        yield stride, padding, dilation, groups


@pytest.mark.parametrize("stride,padding,dilation,groups", list(_conv_cases()))
def test_conv2d_matches_torch(stride, padding, dilation, groups):
    torch = pytest.importorskip("torch")
    x, w, b = rnd(2, 4, 6, 5), rnd(6, 4 // groups, 3, 2), rnd(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_like_torch(F.conv2d, torch.nn.functional.conv2d, x, w, b, stride=stride,
                         padding=padding, dilation=dilation, groups=groups)


@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups", [
    c for c in itertools.product([1, 2], [0, 1], [0, 1], [1, 2], [1, 2])
    if c[2] < c[0] or c[2] < c[3]])
def test_conv_transpose2d_matches_torch(stride, padding, output_padding, dilation, groups):
    torch = pytest.importorskip("torch")
    x, w, b = rnd(2, 4, 3, 4), rnd(4, 3, 2, 3), rnd(3 * groups)
    check_like_torch(F.conv_transpose2d, torch.nn.functional.conv_transpose2d, x, w, b,
                     stride=stride, padding=padding, output_padding=output_padding,
                     groups=groups, dilation=dilation)


def test_conv1d_conv3d_unbatched_and_float32_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    check_like_torch(F.conv1d, tf.conv1d, rnd(3, 9), rnd(2, 3, 3), padding="same",
                     dilation=3)
    check_like_torch(F.conv1d, tf.conv1d, rnd(2, 4, 9), rnd(4, 2, 4), stride=3, groups=2)
    check_like_torch(F.conv3d, tf.conv3d, rnd(1, 2, 4, 3, 5), rnd(2, 2, 2, 2, 3),
                     stride=(1, 2, 1), padding=1)
    check_like_torch(F.conv_transpose1d, tf.conv_transpose1d, rnd(2, 7), rnd(2, 3, 3),
                     stride=2)
    check_like_torch(eager.conv2d, torch.conv2d, rnd(1, 2, 4, 4), rnd(3, 2, 2, 2))  # top level
    check_like_torch(eager.conv_transpose2d, torch.conv_transpose2d, rnd(1, 2, 3, 3),
                     rnd(2, 3, 2, 2), stride=2)
    check_like_torch(eager.max_pool2d, torch.max_pool2d, rnd(1, 2, 4, 4), kernel_size=2)
    x, w = rnd(4, 3, 10, 10).astype(np.float32), rnd(5, 3, 3, 3).astype(np.float32)
    out = check_like_torch(F.conv2d, tf.conv2d, x, w, padding=1, rtol=1e-5, atol=1e-5)
    assert out.dtype == eager.float32
    empty = F.conv2d(eager.zeros(0, 3, 5, 5), eager.tensor(w))
    assert tuple(empty.shape) == (0, 5, 3, 3)


def test_unfold_fold_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    check_like_torch(F.unfold, tf.unfold, rnd(2, 3, 6, 5), kernel_size=(2, 3), dilation=(1, 2),
                     padding=1, stride=2)
    check_like_torch(F.unfold, tf.unfold, rnd(3, 4, 4), kernel_size=2)
    check_like_torch(F.fold, tf.fold, rnd(2, 12, 9), output_size=(5, 4), kernel_size=2,
                     padding=1, stride=2)
    check_like_torch(F.fold, tf.fold, rnd(4, 9), output_size=4, kernel_size=2)


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_module_matches_torch(padding_mode):
    """Same state dict, same output and gradients, including the non-zero padding modes
    (``F.pad`` then an unpadded convolution, as PyTorch)."""
    torch = pytest.importorskip("torch")
    kw = dict(stride=2, padding=(2, 1), groups=2, padding_mode=padding_mode)
    ours = nn.Conv2d(4, 6, (3, 2), **kw).double()
    theirs = torch.nn.Conv2d(4, 6, (3, 2), **kw).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = rnd(2, 4, 5, 6)
    check_like_torch(lambda t: ours(t), lambda t: theirs(t), x)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-9)
    np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias.grad.numpy(), rtol=1e-9)


def test_conv_same_padding_module_matches_torch():
    torch = pytest.importorskip("torch")
    for kw in ({"padding": "same", "dilation": 2}, {"padding": "same", "padding_mode": "reflect"}):
        ours, theirs = nn.Conv1d(2, 3, 4, **kw).double(), torch.nn.Conv1d(2, 3, 4, **kw).double()
        ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_like_torch(lambda t: ours(t), lambda t: theirs(t), rnd(2, 2, 9))


def test_conv_transpose_output_size_matches_torch():
    torch = pytest.importorskip("torch")
    ours = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).double()
    theirs = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = rnd(1, 3, 4, 4)
    for size in [(7, 7), (8, 7), [1, 2, 8, 8]]:
        out = check_like_torch(lambda t: ours(t, output_size=size),
                               lambda t: theirs(t, output_size=size), x)
        assert tuple(out.shape[2:]) == tuple(size[-2:])
    with pytest.raises(ValueError, match=r"requested an output size of \(9, 9\), but valid "
                                         r"sizes range from \[7, 7\] to \[8, 8\]"):
        ours(eager.tensor(x), output_size=(9, 9))


# -- modules ------------------------------------------------------------------------------

@pytest.mark.parametrize("make,text,keys", [
    (lambda: nn.Conv2d(1, 8, 3), "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1))",
     ["weight", "bias"]),
    (lambda: nn.Conv2d(8, 16, (3, 5), stride=2, padding=1, dilation=2, groups=2, bias=False,
                       padding_mode="reflect"),
     "Conv2d(8, 16, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
     "groups=2, bias=False, padding_mode=reflect)", ["weight"]),
    (lambda: nn.Conv2d(3, 4, 3, padding="same"),
     "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=same)", ["weight", "bias"]),
    (lambda: nn.Conv1d(2, 4, 3, padding=1),
     "Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,))", ["weight", "bias"]),
    (lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1),
     "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))",
     ["weight", "bias"]),
    (lambda: nn.ConvTranspose2d(4, 2, 3, padding=1, dilation=2, groups=2, bias=False),
     "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), "
     "dilation=(2, 2), groups=2, bias=False)", ["weight"]),
    (lambda: nn.Conv3d(1, 2, 3), "Conv3d(1, 2, kernel_size=(3, 3, 3), stride=(1, 1, 1))",
     ["weight", "bias"]),
    (lambda: nn.Unfold(2), "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)", []),
    (lambda: nn.Fold((4, 4), 2),
     "Fold(output_size=(4, 4), kernel_size=2, dilation=1, padding=0, stride=1)", []),
])
def test_module_repr_and_state_dict(make, text, keys):
    m = make()
    assert repr(m) == text
    assert list(m.state_dict()) == keys


def test_parameter_shapes_and_default_init():
    m = nn.Conv2d(4, 6, (3, 2), groups=2)
    assert tuple(m.weight.shape) == (6, 2, 3, 2) and m.weight.dtype == eager.float32
    bound = 1 / math.sqrt(2 * 3 * 2)           # kaiming_uniform(a=sqrt(5)) on fan_in
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > bound / 2
    t = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(t.weight.shape) == (4, 3, 3, 3)
    assert nn.Conv2d(1, 2, 3, dtype=eager.float64).weight.dtype == eager.float64


# -- errors -------------------------------------------------------------------------------

def _raises(exc, text, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == text


def test_conv_errors_match_torch_wording():
    x = eager.randn(2, 3, 5, 5)
    _raises(RuntimeError, "Given groups=1, weight of size [4, 2, 3, 3], expected input[2, 3, 5, 5] "
            "to have 2 channels, but got 3 channels instead",
            lambda: F.conv2d(x, eager.randn(4, 2, 3, 3)))
    _raises(RuntimeError, "Calculated padded input size per channel: (2 x 2). Kernel size: "
            "(3 x 3). Kernel size can't be greater than actual input size",
            lambda: F.conv2d(eager.randn(1, 1, 2, 2), eager.randn(1, 1, 3, 3)))
    _raises(RuntimeError, "Given groups=2, expected weight to be divisible by 2 at dimension 0, "
            "but got weight of size [3, 2, 3, 3] instead",
            lambda: F.conv2d(eager.randn(1, 4, 5, 5), eager.randn(3, 2, 3, 3), groups=2))
    _raises(RuntimeError, "Given groups=2, weight of size [4, 1, 3, 3], expected input[1, 3, 5, 5] "
            "to have 2 channels, but got 3 channels instead",
            lambda: F.conv2d(eager.randn(1, 3, 5, 5), eager.randn(4, 1, 3, 3), groups=2))
    _raises(RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
            "input of size: [5, 5]", lambda: F.conv2d(eager.randn(5, 5), eager.randn(1, 1, 3, 3)))
    _raises(RuntimeError, "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
            "input of size: [2, 3, 5, 5]", lambda: F.conv1d(x, eager.randn(4, 3, 3)))
    _raises(RuntimeError, "Input type (float) and weight type (double) should be the same",
            lambda: F.conv2d(x, eager.randn(4, 3, 3, 3, dtype=eager.float64)))
    _raises(RuntimeError, "Input type (float) and bias type (double) should be the same",
            lambda: F.conv2d(x, eager.randn(4, 3, 3, 3), eager.randn(4, dtype=eager.float64)))
    _raises(RuntimeError, "Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional "
            "with 4 elements, but got bias of size [5] instead",
            lambda: F.conv2d(x, eager.randn(4, 3, 3, 3), eager.randn(5)))
    w = eager.randn(4, 3, 3, 3)
    _raises(RuntimeError, "padding='same' is not supported for strided convolutions",
            lambda: F.conv2d(x, w, stride=2, padding="same"))
    _raises(RuntimeError, "Invalid padding string: 'foo'", lambda: F.conv2d(x, w, padding="foo"))
    _raises(RuntimeError, "negative padding is not supported", lambda: F.conv2d(x, w, padding=-1))
    _raises(RuntimeError, "non-positive stride is not supported", lambda: F.conv2d(x, w, stride=0))
    _raises(RuntimeError, "non-positive dilation is not supported",
            lambda: F.conv2d(x, w, dilation=0))
    _raises(RuntimeError, "expected padding to be a single integer value or a list of 2 values to "
            "match the convolution dimensions, but got padding=[1, 1, 1]",
            lambda: F.conv2d(x, w, padding=(1, 1, 1)))


def test_conv_transpose_errors_match_torch_wording():
    x = eager.randn(2, 3, 5, 5)
    _raises(RuntimeError, "Given transposed=1, weight of size [4, 2, 3, 3], expected "
            "input[2, 3, 5, 5] to have 4 channels, but got 3 channels instead",
            lambda: F.conv_transpose2d(x, eager.randn(4, 2, 3, 3)))
    _raises(RuntimeError, "output padding must be smaller than either stride or dilation, but got "
            "output_padding_height: 2 output_padding_width: 2 stride_height: 2 stride_width: 2 "
            "dilation_height: 1 dilation_width: 1",
            lambda: F.conv_transpose2d(x, eager.randn(3, 2, 3, 3), stride=2, output_padding=2))
    _raises(RuntimeError, "Given transposed=1, weight of size [3, 2, 3, 3], expected bias to be "
            "1-dimensional with 2 elements, but got bias of size [3] instead",
            lambda: F.conv_transpose2d(x, eager.randn(3, 2, 3, 3), eager.randn(3)))
    _raises(RuntimeError, "Given input size per channel: (1 x 1). Calculated output size per "
            "channel: (-1 x -1). Output size is too small",
            lambda: F.conv_transpose2d(eager.randn(1, 3, 1, 1), eager.randn(3, 2, 1, 1),
                                       padding=1))


def test_conv_module_errors_match_torch_wording():
    _raises(ValueError, "in_channels must be divisible by groups",
            lambda: nn.Conv2d(3, 4, 3, groups=2))
    _raises(ValueError, "out_channels must be divisible by groups",
            lambda: nn.Conv2d(4, 3, 3, groups=2))
    _raises(ValueError, "Invalid padding string 'foo', should be one of {'valid', 'same'}",
            lambda: nn.Conv2d(3, 4, 3, padding="foo"))
    _raises(ValueError, "padding='same' is not supported for strided convolutions",
            lambda: nn.Conv2d(3, 4, 3, padding="same", stride=2))
    _raises(ValueError, "padding_mode must be one of {'circular', 'replicate', 'reflect', "
            "'zeros'}, but got padding_mode='foo'", lambda: nn.Conv2d(3, 4, 3, padding_mode="foo"))
    _raises(ValueError, 'Only "zeros" padding mode is supported for ConvTranspose2d',
            lambda: nn.ConvTranspose2d(3, 2, 3, padding_mode="reflect"))
    _raises(RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
            "input of size: [5, 5]", lambda: nn.Conv2d(1, 1, 3)(eager.randn(5, 5)))


def test_unfold_fold_errors_match_torch_wording():
    _raises(RuntimeError, "Given input with spatial size (2, 2), kernel_size=(3, 3), "
            "dilation=(1, 1), padding=(0, 0), calculated shape of the array of sliding blocks "
            "as (0, 0), but its components must be at least one.",
            lambda: F.unfold(eager.randn(1, 1, 2, 2), 3))
    _raises(RuntimeError, "Given output_size=(4, 4), kernel_size=(2, 2), dilation=(1, 1), "
            "padding=(0, 0), stride=(1, 1), expected size of input's dimension 2 to match the "
            "calculated number of sliding blocks 3 * 3 = 9, but got input.size(2)=10.",
            lambda: F.fold(eager.randn(1, 4, 10), (4, 4), 2))
    _raises(RuntimeError, "Expected size of input's dimension 1 to be divisible by the product of "
            "kernel_size, but got input.size(1)=5 and kernel_size=(2, 2).",
            lambda: F.fold(eager.randn(1, 5, 9), (4, 4), 2))
