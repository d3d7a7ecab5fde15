"""Sliding windows (im2col/col2im: convolutions, pooling, unfold/fold), F.pad in every
mode and one_hot run on the device (eager/cuda/kernels_window.py), with the CPU's results,
dtypes, errors and gradients, and never through the host fallback.  Tiny shapes: the
simulator runs ~170 us a thread."""

from __future__ import annotations

import numpy as np
import pytest

import eager
import eager.cuda.ops as cuda_ops
from eager.dispatch import dispatch
from eager.ops import OPS
from tests.gpu.test_cuda_ops_coverage import check

F = eager.nn.functional
RNG = np.random.default_rng(7)
#: none of these goes through the host fallback in any test here (tests/gpu/conftest.py)
ON_DEVICE = ("im2col", "col2im", "pad", "pad_adjoint", "one_hot")


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_no_longer_host_fallbacks():
    assert not set(ON_DEVICE) & set(cuda_ops.HOST_FALLBACK)


# -- convolutions --------------------------------------------------------------------------------

X1, W1 = _f32(2, 2, 7), _f32(4, 1, 3)
X2, W2 = _f32(1, 2, 5, 5), _f32(2, 2, 2, 3)
X3, W3 = _f32(1, 2, 3, 3, 4), _f32(2, 1, 2, 2, 2)


@pytest.mark.parametrize("f, x, w", [
    (lambda x, w: F.conv1d(x, w, stride=2, padding=1, dilation=2, groups=2), X1, W1),
    (lambda x, w: F.conv1d(x, w, padding="same", groups=2), X1, W1),
    (lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2)), X2, W2),
    (lambda x, w: F.conv2d(x, w, padding="same"), X2, W2),
    (lambda x, w: F.conv3d(x, w, stride=(1, 2, 1), padding=1, groups=2), X3, W3),
], ids=["1d-strided-dilated-groups", "1d-same", "2d", "2d-same", "3d-groups"])
def test_convolutions_and_their_gradients(f, x, w):
    check(f, x, w, grad=True, rtol=1e-4, atol=1e-5)


def test_conv_transpose2d_and_its_gradient():
    w = _f32(2, 3, 3, 2)
    check(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1), X2, w,
          grad=True, rtol=1e-4, atol=1e-5)


def test_empty_batch():
    # (not conv2d: CUDA's matmul of (2, 12) by (0, 12, 20) fails to broadcast, a matmul bug)
    # (no gradients: check's weights cannot be shaped like an empty output)
    e = np.zeros((0, 2, 4, 4), np.float32)
    check(lambda x: F.unfold(x, 3, padding=1), e)
    check(lambda x: F.max_pool2d(x, 2), e)
    check(lambda c: F.fold(c, (4, 4), 2, stride=2), np.zeros((0, 8, 4), np.float32))
    check(lambda x: F.pad(x, (1, 1), mode="reflect"), np.zeros((0, 2, 4), np.float32))
    check(lambda x: F.pad(x, (1, 1, 0, 2)), e)


# -- pooling, unfold/fold ------------------------------------------------------------------------

P = _f32(1, 2, 5, 5)


@pytest.mark.parametrize("f", [
    lambda x: F.max_pool2d(x, 2),
    lambda x: F.max_pool2d(x, 3, 2, padding=1, ceil_mode=True),
    lambda x: F.max_pool2d(x, 2, 1, dilation=2),
    lambda x: F.avg_pool2d(x, 2, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 3, 2, padding=1, count_include_pad=False),
], ids=["max", "max-ceil-pad", "max-dilated", "avg-ceil", "avg-pad"])
def test_pooling_and_its_gradient(f):
    check(f, P, grad=True)


def test_max_pool_indices_on_the_device():
    check(lambda x: F.max_pool2d(x, 3, 2, padding=1, return_indices=True), P, grad=True)


def test_pooling_of_integers_and_half():
    check(lambda x: F.max_pool2d(x, 2, padding=1), (P * 10).astype(np.int64))
    check(lambda x: F.max_pool2d(x, 2, padding=1), P.astype(np.float16))


def test_unfold_and_fold_bit_for_bit():
    # col2im sums overlapping windows in the CPU's order: the same bits
    check(lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), P,
          grad=True, rtol=0, atol=0)
    cols = _f32(2, 2 * 4, 16)
    check(lambda c: F.fold(c, (5, 5), 2, padding=1, stride=1), cols, grad=True, rtol=0,
          atol=0)
    check(lambda c: F.fold(c, (4, 4), 2, stride=2), _f32(1, 4, 4), grad=True, rtol=0,
          atol=0)


def test_fold_is_deterministic():
    c = eager.tensor(_f32(1, 3 * 9, 9), device="cuda")
    a, b = (F.fold(c, (5, 5), 3, padding=1, stride=2).cpu().numpy() for _ in range(2))
    assert a.tobytes() == b.tobytes()


def test_windows_of_integers_bool_and_half():
    xi = (P * 10).astype(np.int64)
    check(lambda x: F.unfold(x, 2, padding=1), xi)
    check(lambda x: F.unfold(x, 2, padding=1), P > 0)
    check(lambda x: F.unfold(x, 2, padding=1), P.astype(np.float16))
    check(lambda x: F.unfold(x, 2, padding=1).to(eager.bfloat16), P.astype(np.float16))
    check(lambda c: F.fold(c, (3, 3), 2), _f32(1, 4, 4).astype(np.float16), grad=True,
          rtol=1e-3, atol=1e-3)
    check(lambda c: F.fold(c, (3, 3), 2), (_f32(1, 4, 4) * 5).astype(np.int64))
    check(lambda c: F.fold(c, (3, 3), 2), _f32(1, 4, 4) > 0)
    for dt in (np.uint8, np.int8, np.int32, np.float64):   # overlaps wrap as the CPU's
        check(lambda c: F.fold(c, (3, 3), 2), (np.arange(16) * 37 % 256).astype(dt)
              .reshape(1, 4, 4))


def test_window_errors_are_the_cpus():
    check(lambda x: F.unfold(x, 6), P)                          # no window fits
    check(lambda c: F.fold(c, (3, 3), 2), _f32(1, 5, 4))         # not C * prod(kernel) rows
    check(lambda c: F.fold(c, (3, 3), 2), _f32(1, 4, 3))         # not prod(L) columns


# -- F.pad ---------------------------------------------------------------------------------------

#: an input for padding 1, 2 or 3 trailing dimensions (N, C, *spatial)
Q = {1: _f32(2, 3, 5), 2: _f32(1, 2, 4, 5), 3: _f32(1, 2, 3, 4, 5)}


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad, dims", [
    ((2, 1), 1), ((-1, 2), 1), ((1, 2, 2, 0), 2), ((2, -1, -1, 1), 2),
    ((1, 0, 2, 1, 1, 2), 3), ((-1, 1, 1, -1, 2, 0), 3),
], ids=["1d", "1d-crop", "2d", "2d-crop", "3d", "3d-crop"])
def test_pad_every_mode_bit_for_bit(mode, pad, dims):
    check(lambda t: F.pad(t, pad, mode=mode), Q[dims], grad=True, rtol=0, atol=0)


def test_pad_wide_replicate_folds_as_the_cpu():
    check(lambda t: F.pad(t, (5, 6), mode="replicate"), _f32(2, 3), grad=True, rtol=0,
          atol=0)
    check(lambda t: F.pad(t, (3, 3, 3, 3), mode="replicate"), _f32(1, 2, 2), grad=True,
          rtol=1e-6)


def test_pad_of_other_dtypes_and_views():
    check(lambda t: F.pad(t, (1, 2, -1, 1), value=7), (P * 10).astype(np.int64))
    check(lambda t: F.pad(t, (1, 2), value=1), P > 0)
    check(lambda t: F.pad(t, (1, 2, 1, 0), value=0.1), P.astype(np.float16))
    check(lambda t: F.pad(t.to(eager.bfloat16), (2, 1), mode="reflect"), P)
    check(lambda t: F.pad(t, (1, 1), mode="circular"), (P[0] * 10).astype(np.int32))
    check(lambda t: F.pad(t.transpose(2, 3)[..., 1:], (1, 2, 2, 1), mode="reflect"), P,
          grad=True, rtol=0, atol=0)


def test_pad_errors_are_the_cpus():
    check(lambda t: F.pad(t, (-3, -3)), _f32(2, 5))
    check(lambda t: F.pad(t, (3, 0), mode="reflect"), _f32(1, 2, 3))
    g = np.zeros((2, 6), np.float32)
    check(lambda g: dispatch(OPS["pad_adjoint"], g, pads=((1, 1),), mode="reflect",
                             shape=(2, 5)), g)


# -- one_hot -------------------------------------------------------------------------------------

def test_one_hot():
    labels = np.array([[0, 3, 1], [2, 2, 0]], np.int64)
    check(lambda t: F.one_hot(t), labels)
    check(lambda t: F.one_hot(t, 5), labels)
    check(lambda t: F.one_hot(t, 4), labels.astype(np.int32))
    check(lambda t: F.one_hot(t[:, 1:], -1), labels)
    check(lambda t: F.one_hot(t, 3), np.zeros((0,), np.int64))


def test_one_hot_errors_are_the_cpus():
    check(lambda t: F.one_hot(t, 3), np.array([0, 3], np.int64))
    check(lambda t: F.one_hot(t, 3), np.array([0, -1], np.int64))
    check(lambda t: F.one_hot(t), np.zeros((0,), np.int64))
    check(lambda t: F.one_hot(t), np.array([1.0], np.float32))


# -- a small CNN step on the device --------------------------------------------------------------

def test_a_cnn_step_never_leaves_the_device():
    def step(x, w1, w2):
        h = F.relu(F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), w1))
        h = F.max_pool2d(h, 2)
        return F.conv2d(h, w2, padding=1).mean((2, 3))
    check(step, _f32(2, 1, 4, 4), _f32(2, 1, 3, 3), _f32(3, 2, 2, 2), grad=True, rtol=1e-4,
          atol=1e-5)


def test_convolution_of_an_empty_batch_with_gradients():
    x = np.zeros((0, 2, 4, 4), np.float32)
    w = np.ones((3, 2, 2, 2), np.float32)
    check(lambda x, w: F.conv2d(x, w, padding=1), x, w, grad=True)
    check(lambda x: F.max_pool2d(x, 2), x, grad=True)
