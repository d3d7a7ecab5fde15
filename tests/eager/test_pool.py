"""Pooling (max, average, adaptive; 1-D, 2-D, 3-D) and its layers: finite differences in
float64, PyTorch's values, gradients (ties included), indices, errors and reprs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import eager
from eager import nn
from eager.nn import functional as F
from tests.helpers import check_like_torch, gradcheck

RNG = np.random.default_rng(1)


def rnd(*shape):
    return RNG.standard_normal(shape)


def with_ties(*shape):
    """Random values with some windows holding equal maxima (as after a ReLU)."""
    x = rnd(*shape)
    x[..., :3, :3] = np.maximum(x[..., :3, :3], 0.0)
    x[0, 0, 1:3, 1:3] = 0.5
    return x


# -- finite differences -------------------------------------------------------------------

@pytest.mark.parametrize("kw", [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": (2, 3), "stride": 1, "dilation": (2, 1)},
])
def test_max_pool2d_gradcheck(kw):
    gradcheck(lambda x: F.max_pool2d(x, **kw), rnd(2, 2, 6, 5))


@pytest.mark.parametrize("kw", [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
    {"kernel_size": (2, 3), "stride": 1, "divisor_override": 5},
])
def test_avg_pool2d_gradcheck(kw):
    gradcheck(lambda x: F.avg_pool2d(x, **kw), rnd(2, 2, 6, 5))


def test_1d_and_3d_pooling_gradcheck():
    gradcheck(lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), rnd(2, 2, 7))
    gradcheck(lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), rnd(2, 2, 7))
    gradcheck(lambda x: F.max_pool3d(x, 2, padding=1), rnd(1, 2, 3, 2, 3))
    gradcheck(lambda x: F.avg_pool3d(x, (2, 1, 2), ceil_mode=True), rnd(1, 2, 3, 2, 3))


def test_adaptive_pooling_gradcheck():
    gradcheck(lambda x: F.adaptive_avg_pool2d(x, (3, 2)), rnd(2, 2, 5, 4))
    gradcheck(lambda x: F.adaptive_max_pool2d(x, (3, 2)), rnd(2, 2, 5, 4))
    gradcheck(lambda x: F.adaptive_max_pool2d(x, 2), rnd(2, 2, 4, 6))    # sizes divide
    gradcheck(lambda x: F.adaptive_avg_pool1d(x, 3), rnd(2, 2, 7))
    gradcheck(lambda x: F.adaptive_max_pool1d(x, 3), rnd(2, 2, 7))


def test_pooling_double_backward_gradcheck():
    def grad_x(pool):
        def fn(x):
            x = x if x.requires_grad else x.detach().requires_grad_()
            y = pool(x)
            (g,) = eager.autograd.grad((y * y).sum(), x, create_graph=True)
            return g
        return fn

    gradcheck(grad_x(lambda x: F.max_pool2d(x, 2, 1)), rnd(1, 2, 4, 4))
    gradcheck(grad_x(lambda x: F.avg_pool2d(x, 3, 2, 1)), rnd(1, 2, 4, 4))


# -- against PyTorch ----------------------------------------------------------------------

def _valid(fn, *args):
    import torch
    try:
        fn(torch.zeros(1, 1, 7, 6), *args)
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", list(itertools.product(
    [2, 3, (3, 2)], [None, 2, (2, 1)], [0, 1], [1, 2], [False, True])))
def test_max_pool2d_matches_torch(kernel, stride, padding, dilation, ceil_mode):
    torch = pytest.importorskip("torch")
    args = (kernel, stride, padding, dilation, ceil_mode)
    if not _valid(torch.nn.functional.max_pool2d, *args):
        pytest.skip("not a valid pooling (PyTorch refuses it too)")
    check_like_torch(F.max_pool2d, torch.nn.functional.max_pool2d, with_ties(2, 3, 7, 6),
                     kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
                     ceil_mode=ceil_mode, return_indices=True)


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor", list(
    itertools.product([2, 3], [None, 2], [0, 1], [False, True], [False, True], [None, 3])))
def test_avg_pool2d_matches_torch(kernel, stride, padding, ceil_mode, count_include_pad,
                                  divisor):
    torch = pytest.importorskip("torch")
    args = (kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    if not _valid(torch.nn.functional.avg_pool2d, *args):
        pytest.skip("not a valid pooling (PyTorch refuses it too)")
    check_like_torch(F.avg_pool2d, torch.nn.functional.avg_pool2d, rnd(2, 3, 7, 6),
                     kernel_size=kernel, stride=stride, padding=padding, ceil_mode=ceil_mode,
                     count_include_pad=count_include_pad, divisor_override=divisor)


def test_1d_3d_unbatched_and_nan_pooling_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = rnd(2, 3, 9)
    x[0, 0, :4] = 1.0
    for k, s, p, c in itertools.product([2, 3], [None, 2], [0, 1], [False, True]):
        kw = dict(kernel_size=k, stride=s, padding=p, ceil_mode=c)
        check_like_torch(F.max_pool1d, tf.max_pool1d, x, return_indices=True, **kw)
        check_like_torch(F.avg_pool1d, tf.avg_pool1d, x, count_include_pad=False, **kw)
    check_like_torch(F.max_pool2d, tf.max_pool2d, with_ties(1, 3, 7, 6)[0], kernel_size=2,
                     return_indices=True)
    check_like_torch(F.max_pool3d, tf.max_pool3d, rnd(1, 2, 5, 4, 6), kernel_size=2,
                     stride=(1, 2, 2), padding=1,
                     return_indices=True)
    check_like_torch(F.avg_pool3d, tf.avg_pool3d, rnd(1, 2, 5, 4, 6), kernel_size=(2, 3, 2),
                     ceil_mode=True)
    nan = rnd(1, 2, 4, 4)
    nan[0, 1, 2, 3] = np.nan
    out, ind = F.max_pool2d(eager.tensor(nan), 2, return_indices=True)
    t_out, t_ind = tf.max_pool2d(torch.tensor(nan), 2, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(ind.numpy(), t_ind.numpy())
    assert ind.dtype == eager.int64
    ints = eager.tensor(RNG.integers(0, 9, (1, 2, 4, 4)))
    np.testing.assert_array_equal(F.max_pool2d(ints, 2).numpy(),
                                  tf.max_pool2d(torch.tensor(ints.numpy()), 2).numpy())


@pytest.mark.parametrize("out", [1, 2, 3, (4, None), (5, 6), (7, 4)])
def test_adaptive_pool2d_matches_torch(out):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = with_ties(2, 3, 7, 6)
    check_like_torch(F.adaptive_avg_pool2d, tf.adaptive_avg_pool2d, x, output_size=out)
    check_like_torch(F.adaptive_max_pool2d, tf.adaptive_max_pool2d, x, output_size=out,
                     return_indices=True)
    check_like_torch(F.adaptive_max_pool2d, tf.adaptive_max_pool2d, x[0], output_size=out,
                     return_indices=True)


def test_adaptive_pool1d_3d_match_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = rnd(2, 3, 9)
    for out in [1, 2, 4, 9]:
        check_like_torch(F.adaptive_avg_pool1d, tf.adaptive_avg_pool1d, x, output_size=out)
        check_like_torch(F.adaptive_max_pool1d, tf.adaptive_max_pool1d, x, output_size=out,
                         return_indices=True)
    check_like_torch(F.adaptive_avg_pool3d, tf.adaptive_avg_pool3d, rnd(1, 2, 5, 4, 6),
                     output_size=(2, 3, 4))


def test_float32_pooling_keeps_dtype():
    torch = pytest.importorskip("torch")
    x = rnd(2, 3, 8, 8).astype(np.float32)
    for ours, theirs in [(F.max_pool2d, torch.nn.functional.max_pool2d),
                         (F.avg_pool2d, torch.nn.functional.avg_pool2d)]:
        out = check_like_torch(ours, theirs, x, kernel_size=3, stride=2, padding=1, rtol=1e-6,
                               atol=1e-6)
        assert out.dtype == eager.float32
    out = check_like_torch(F.adaptive_avg_pool2d, torch.nn.functional.adaptive_avg_pool2d, x,
                           output_size=3,
                           rtol=1e-5, atol=1e-6)
    assert out.dtype == eager.float32


# -- modules ------------------------------------------------------------------------------

@pytest.mark.parametrize("make,text", [
    (lambda: nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, "
                              "ceil_mode=False)"),
    (lambda: nn.MaxPool2d(3, 2, 1, dilation=2, return_indices=True, ceil_mode=True),
     "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)"),
    (lambda: nn.MaxPool1d(2), "MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, "
                              "ceil_mode=False)"),
    (lambda: nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    (lambda: nn.AvgPool2d(3, 1, 1, True, False, 2),
     "AvgPool2d(kernel_size=3, stride=1, padding=1)"),
    (lambda: nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
    (lambda: nn.AdaptiveAvgPool2d((1, 1)), "AdaptiveAvgPool2d(output_size=(1, 1))"),
    (lambda: nn.AdaptiveAvgPool1d(2), "AdaptiveAvgPool1d(output_size=2)"),
    (lambda: nn.AdaptiveMaxPool2d((2, None)), "AdaptiveMaxPool2d(output_size=(2, None))"),
])
def test_module_repr(make, text):
    m = make()
    assert repr(m) == text
    assert list(m.state_dict()) == []


def test_modules_match_torch():
    torch = pytest.importorskip("torch")
    x = with_ties(2, 3, 7, 6)
    for ours, theirs in [
        (nn.MaxPool2d(3, 2, 1, return_indices=True, ceil_mode=True),
         torch.nn.MaxPool2d(3, 2, 1, return_indices=True, ceil_mode=True)),
        (nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
         torch.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False)),
        (nn.AvgPool1d(3, 2, 1), torch.nn.AvgPool1d(3, 2, 1)),
        (nn.AdaptiveAvgPool2d((2, 3)), torch.nn.AdaptiveAvgPool2d((2, 3))),
        (nn.AdaptiveMaxPool2d(4, return_indices=True), torch.nn.AdaptiveMaxPool2d(4, True)),
    ]:
        arr = x[:, 0] if isinstance(ours, nn.AvgPool1d) else x
        check_like_torch(lambda t, m=ours: m(t), lambda t, m=theirs: m(t), arr)


# -- errors -------------------------------------------------------------------------------

def _raises(exc, text, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == text


def test_pooling_errors_match_torch_wording():
    x = eager.randn(2, 3, 5, 5)
    small = eager.randn(1, 1, 2, 2)
    _raises(RuntimeError, "Given input size: (1x2x2). Calculated output size: (1x0x0). Output "
            "size is too small", lambda: F.max_pool2d(small, 3))
    _raises(RuntimeError, "Given input size: (1x2x2). Calculated output size: (1x0x0). Output "
            "size is too small", lambda: F.avg_pool2d(small, 3))
    _raises(RuntimeError, "pad should be at most half of effective kernel size, but got pad=2, "
            "kernel_size=3 and dilation=1", lambda: F.max_pool2d(eager.randn(1, 1, 5, 5), 3,
                                                                 padding=2))
    _raises(RuntimeError, "non-empty 3D or 4D (batch mode) tensor expected for input",
            lambda: F.max_pool2d(eager.randn(5, 5), 2))
    _raises(RuntimeError, "max_pool2d: kernel_size must either be a single int, or a tuple of "
            "two ints", lambda: F.max_pool2d(x, (2, 2, 2)))
    _raises(RuntimeError, "max_pool2d: stride must either be omitted, a single int, or a tuple of "
            "two ints", lambda: F.max_pool2d(x, 2, stride=(1, 1, 1)))
    _raises(RuntimeError, "stride should not be zero", lambda: F.max_pool2d(x, 2, stride=0))
    _raises(RuntimeError, "dilation should be greater than zero, but got dilationH: 0 "
            "dilationW: 0", lambda: F.max_pool2d(x, 2, dilation=0))
    _raises(RuntimeError, "pad must be non-negative, but got pad: -1",
            lambda: F.max_pool2d(x, 2, padding=-1))
    _raises(RuntimeError, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
            "for input, but got:[1, 0, 4, 4]", lambda: F.max_pool2d(eager.randn(1, 0, 4, 4), 2))
    _raises(RuntimeError, "divisor must be not zero",
            lambda: F.avg_pool2d(x, 3, divisor_override=0))
    _raises(RuntimeError, "max_pool1d() Invalid computed output size: 0",
            lambda: F.max_pool1d(eager.randn(1, 1, 2), 3))
    _raises(RuntimeError, "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
            "batch size for input, but got:[1, 1, 1, 2]",
            lambda: F.max_pool1d(eager.randn(1, 1, 1, 2), 1))
    _raises(RuntimeError, "max_pool1d() padding should be at most half of kernel size, but got "
            "padding=2 and kernel_size=2", lambda: F.max_pool1d(eager.randn(1, 1, 5), 2,
                                                                padding=2))
    _raises(RuntimeError, "Given input size: (1x1x2). Calculated output size: (1x1x0). Output "
            "size is too small", lambda: F.avg_pool1d(eager.randn(1, 1, 2), 3))
    _raises(RuntimeError, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]",
            lambda: F.adaptive_avg_pool2d(eager.randn(5, 5), 2))
    _raises(RuntimeError, "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [5, 5]",
            lambda: F.adaptive_max_pool2d(eager.randn(5, 5), 2))
    _raises(RuntimeError, "adaptive_avg_pool2d: output_size must be 2",
            lambda: F.adaptive_avg_pool2d(x, (2, 2, 2)))
    _raises(RuntimeError, "adaptive_avg_pool2d(): Expected input to have non-zero size for "
            "non-batch dimensions, but input has sizes [1, 1, 0, 5] with dimension 2 being "
            "empty", lambda: F.adaptive_avg_pool2d(eager.randn(1, 1, 0, 5), 2))
