"""The checks of ``test_torch_conformance.py`` that need no PyTorch: PyTorch 2.13's messages
written out, and ``adaptive_max_pool3d``'s gradient by finite differences (float64)."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import eager
from eager import nn
from eager.nn import functional as F
from tests.helpers import gradcheck


def test_channel_dropout_messages():
    with pytest.raises(RuntimeError, match=r"^dropout1d: Expected 2D or 3D input, but received "
                       r"a 4D input\. Note that dropout1d exists to provide channel-wise dropout "
                       r"on inputs with 1 spatial dimension, a channel dimension, and an "
                       r"optional batch dimension \(i\.e\. 2D or 3D inputs\)\.$"):
        nn.Dropout1d()(eager.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning) as caught:
        y = nn.Dropout3d()(eager.ones(2, 3))
    assert str(caught[0].message) == (
        "dropout3d: Received a 2-D input to dropout3d, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please "
        "use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
        "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension "
        "(i.e. 4D or 5D inputs).")
    assert y.shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="^Feature dropout requires at least 2 "
                           "dimensions in the input$"):
            F.dropout2d(eager.ones(4), 0.5)
        assert F.dropout2d(eager.ones(4), 1.0).tolist() == [0.0] * 4
        eager.manual_seed(0)
        rows = F.dropout3d(eager.ones(32, 5), 0.5).numpy()    # one draw per row
        assert (rows.min(1) == rows.max(1)).all() and 0 < rows[:, 0].sum() < 64


def _softmax_here(name, level):
    return getattr(F, name)(eager.ones(2, 3), _stacklevel=level)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_implicit_softmax_dim_warning_follows_stacklevel(name):
    inner = _softmax_here.__code__.co_firstlineno + 1     # its return line
    for level in (3, 4):
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has") as w:
            here = sys._getframe().f_lineno + 1
            _softmax_here(name, level)
        assert (w[0].filename, w[0].lineno) == (__file__, inner if level == 3 else here)
    module = getattr(nn, {"softmax": "Softmax", "log_softmax": "LogSoftmax",
                          "softmin": "Softmin"}[name])()
    with pytest.warns(UserWarning) as w:
        here = sys._getframe().f_lineno + 1
        module(eager.ones(2, 3))
    assert (w[0].filename, w[0].lineno) == (__file__, here)   # the line calling the module


def test_module_cuda_checks_the_device():
    with pytest.raises(RuntimeError, match="^Invalid device, must be cuda device$"):
        nn.Linear(2, 2).cuda("cpu")
    relu = nn.ReLU()
    assert relu.cuda("cpu") is relu and relu.cuda(7) is relu     # no tensors: nothing to do


@pytest.mark.skipif(not eager.cuda.is_available(), reason="no CUDA here")
def test_module_cuda_uses_the_device_index():
    n = eager.cuda.device_count()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        nn.Linear(2, 2).cuda(n)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        nn.Linear(2, 2).cuda(f"cuda:{n}")
    m = nn.Linear(2, 2).cuda(0)
    assert m.weight.device.type == "cuda" and m.bias.device.type == "cuda"


@pytest.mark.parametrize("cls", ["RNNCell", "GRUCell", "LSTMCell"])
def test_rnn_cells_check_sizes(cls):
    cell = getattr(nn, cls)(4, 3)

    def h(*s):
        return (eager.zeros(*s), eager.zeros(*s)) if cls == "LSTMCell" else eager.zeros(*s)
    with pytest.raises(RuntimeError, match="^input has inconsistent input_size: got 5 "
                       "expected 4$"):
        cell(eager.zeros(2, 5))
    with pytest.raises(RuntimeError, match="^Input batch size 2 doesn't match hidden0 batch "
                       "size 1$"):
        cell(eager.zeros(2, 4), h(1, 3))
    with pytest.raises(RuntimeError, match="^hidden0 has inconsistent hidden_size: got 5, "
                       "expected 3$"):
        cell(eager.zeros(4), h(5))
    out = cell(eager.zeros(2, 4), h(2, 3))
    assert (out[0] if cls == "LSTMCell" else out).shape == (2, 3)


def test_lstm_cell_checks_the_cell_state():
    cell = nn.LSTMCell(4, 3)
    with pytest.raises(RuntimeError, match="^Input batch size 2 doesn't match hidden1 batch "
                       "size 3$"):
        cell(eager.zeros(2, 4), (eager.zeros(2, 3), eager.zeros(3, 3)))
    with pytest.raises(ValueError, match=r"^LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D"):
        cell(eager.zeros(2, 4), (eager.zeros(2, 3), eager.zeros(2, 3, 1)))
    with pytest.raises(RuntimeError, match="^lstm_cell expects two hidden states$"):
        cell(eager.zeros(2, 4), (eager.zeros(2, 3),))


def test_flatten_unflatten_refuse_out_of_range_dims():
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range "
                       r"of \[-2, 1\], but got 3\)$"):
        nn.Flatten(3)(eager.zeros(2, 3))
    with pytest.raises(IndexError, match=r"of \[-1, 0\], but got 1\)$"):
        nn.Flatten()(eager.zeros(4))
    with pytest.raises(IndexError, match=r"of \[-2, 1\], but got -3\)$"):
        nn.Unflatten(-3, (1, 3))(eager.zeros(2, 3))
    with pytest.raises(TypeError, match="^unflattened_size must be a tuple of ints, but found "
                       "type int$"):
        nn.Unflatten(1, 3)
    assert nn.Flatten(0)(eager.tensor(2.0)).shape == (1,)
    assert nn.Unflatten(-1, (2, -1))(eager.zeros(3, 4, 10)).shape == (3, 4, 2, 5)


def test_smooth_l1_and_huber_refuse_bad_thresholds():
    x, y = eager.zeros(3), eager.ones(3)
    for beta in (-1.0, float("nan")):
        with pytest.raises(RuntimeError, match="^smooth_l1_loss does not support negative "
                           r"values for beta\.$"):
            nn.SmoothL1Loss(beta=beta)(x, y)
    for delta in (0.0, -1.0):
        with pytest.raises(RuntimeError, match="^huber_loss does not support non-positive "
                           r"values for delta\.$"):
            nn.HuberLoss(delta=delta)(x, y)
    with pytest.raises(ValueError, match=r"^Weights and input must have the same size\.$"):
        F.huber_loss(x, y, weight=eager.ones(1))
    assert float(F.smooth_l1_loss(x, y, beta=0.0)) == 1.0                     # l1_loss


def test_group_norm_refuses_single_value_groups():
    with pytest.raises(ValueError, match=r"^Expected more than 1 value per channel when "
                       r"training, got input size \[1, 1\]$"):
        nn.GroupNorm(1, 1, affine=False).eval()(eager.ones(1, 1))
    # as PyTorch 2.13, affine=False does not check the channel count
    assert nn.GroupNorm(2, 4, affine=False)(eager.randn(2, 6, 3)).shape == (2, 6, 3)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_conv_transpose_string_padding_raises_at_the_forward(nsp):
    m = getattr(nn, f"ConvTranspose{nsp}d")(2, 3, 3, padding="same")     # taken, as PyTorch
    with pytest.raises(TypeError, match=f"^conv_transpose{nsp}d\\(\\): argument 'padding'"):
        m(eager.zeros((1, 2) + (4,) * nsp))
    with pytest.raises(TypeError, match=f"^conv_transpose{nsp}d\\(\\): argument 'padding' must "
                       "be tuple of ints, not str$"):
        getattr(F, f"conv_transpose{nsp}d")(eager.zeros((1, 2) + (4,) * nsp),
                                             eager.zeros((2, 3) + (3,) * nsp), padding="valid")


def test_random_factories():
    with pytest.raises(NotImplementedError, match="^\"check_uniform_bounds\" not implemented "
                       "for 'Long'$"):
        eager.rand_like(eager.zeros(2, dtype=eager.int64))
    with pytest.raises(NotImplementedError, match="^\"normal_kernel_cpu\" not implemented for "
                       "'Bool'$"):
        eager.randn(2, dtype=eager.bool)
    assert eager.rand_like(eager.zeros(2, 3), memory_format=eager.channels_last).shape == (2, 3)
    assert eager.randn_like(eager.zeros(2), memory_format=eager.preserve_format).shape == (2,)
    assert eager.rand(size=(2, 3)).shape == (2, 3) and eager.randn(size=[4]).shape == (4,)
    with pytest.raises(RuntimeError, match="floating point"):
        eager.randint(0, 5, (2,), requires_grad=True)
    t = eager.randint(0, 5, (2,), dtype=eager.float32, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert eager.randint_like(eager.zeros(2), 5, requires_grad=True).requires_grad


def test_threshold_inplace_keyword():
    x = eager.tensor([-1.0, 0.5, 2.0])
    assert F.threshold_(x, threshold=0.5, value=-3.0) is x
    assert x.tolist() == [-3.0, -3.0, 2.0]


def test_gqa_message_is_a_sentence():
    with pytest.raises(RuntimeError, match="^Number of heads in key and value must divide the "
                       "number of heads in query: got 4 query heads, 3 key heads and 2 value "
                       r"heads"):
        F.scaled_dot_product_attention(eager.zeros(1, 4, 3, 8), eager.zeros(1, 3, 3, 8),
                                       eager.zeros(1, 2, 3, 8), enable_gqa=True)


@pytest.mark.parametrize("shape,out", [((1, 2, 5, 4, 3), (2, 3, 2)), ((2, 3, 4, 4), 2),
                                       ((1, 1, 3, 5, 4), (None, 2, 3))])
def test_adaptive_max_pool3d_gradcheck(shape, out):
    x = np.random.default_rng(11).standard_normal(shape)
    gradcheck(lambda t: F.adaptive_max_pool3d(t, out), x)
    gradcheck(lambda t: nn.AdaptiveMaxPool3d(out)(t), x)


def test_adaptive_max_pool3d_indices_point_at_the_maxima():
    x = eager.randn(2, 3, 5, 6, 7)
    y, idx = F.adaptive_max_pool3d(x, (2, 4, 3), return_indices=True)
    assert y.shape == idx.shape == (2, 3, 2, 4, 3) and idx.dtype == eager.int64
    flat = x.numpy().reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2),
                                  y.numpy().reshape(2, 3, -1))
    assert F.adaptive_max_pool3d(x, (2, 0, 3)).shape == (2, 3, 2, 0, 3)
    with pytest.raises(NotImplementedError, match="adaptive_max_pool3d_cpu"):
        F.adaptive_max_pool3d(eager.zeros(1, 1, 2, 2, 2, dtype=eager.int64), 1)
