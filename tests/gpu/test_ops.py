"""CUDA ops that are not elementwise (the op table covers those): reductions, matmul and
linear, softmax, cross-entropy, with gradients, against the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import eager
from eager.nn import functional as F

RNG = np.random.default_rng(0)


def both(fn, *arrays, grad=True, rtol=1e-5, atol=1e-6):
    """Run ``fn`` on CPU and CUDA tensors; compare values and input gradients."""
    outs, grads = [], []
    for dev in ("cpu", "cuda"):
        ts = [eager.tensor(a, device=dev, requires_grad=grad and a.dtype.kind == "f")
              for a in arrays]
        out = fn(*ts)
        assert out.device.type == dev
        if grad:
            (out * eager.ones_like(out)).sum().backward()
            grads.append([t.grad for t in ts])
        outs.append(out.detach().cpu().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=rtol, atol=atol)
    for gc, gg in zip(*grads) if grad else ():
        if gc is None:
            assert gg is None
            continue
        assert gg.is_cuda
        np.testing.assert_allclose(gg.cpu().numpy(), gc.numpy(), rtol=rtol, atol=atol)


X = RNG.standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("fn", [
    lambda x: x.sum(), lambda x: x.sum(dim=1), lambda x: x.sum(dim=(0, 2), keepdim=True),
    lambda x: x.mean(dim=-1), lambda x: x.amax(dim=1), lambda x: x.amin(dim=(0, 1)),
    lambda x: x.transpose(0, 2).sum(dim=0), lambda x: F.softmax(x, dim=1),
    lambda x: F.log_softmax(x, dim=-1)], ids=["sum", "sum1", "sum02k", "mean", "amax",
                                              "amin", "sumT", "softmax", "log_softmax"])
def test_reductions_and_softmax(fn):
    both(fn, X)


def test_integer_sum_accumulates_in_int64():
    both(lambda x: x.sum(dim=0), np.array([[1, 2], [3, 4]], np.int32), grad=False)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)),
                                   ((2, 3), (3, 5)), ((2, 2, 3), (3, 4)),
                                   ((2, 2, 3), (1, 3, 2)), ((5, 6), (6, 3)),
                                   # empty: a batch of 0 (broadcast against 1), M, N or K
                                   ((2, 12), (0, 12, 4)), ((1, 2, 3), (0, 3, 4)),
                                   ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((3,), (0, 3, 2))])
def test_matmul_shapes(sa, sb):
    a = RNG.standard_normal(sa).astype(np.float32)
    b = RNG.standard_normal(sb).astype(np.float32)
    both(lambda x, y: x @ y, a, b)


def test_matmul_of_transposed_views_and_linear_with_bias():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    w = RNG.standard_normal((5, 4)).astype(np.float32)
    bias = RNG.standard_normal(5).astype(np.float32)
    both(lambda x, y: x.t() @ x, a, a)
    both(lambda x, wt, b_: F.linear(x, wt, b_), a, w, bias)


def test_cross_entropy_and_nll_loss():
    logits = RNG.standard_normal((4, 3)).astype(np.float32)
    target = np.array([0, 2, 1, 2])
    both(lambda x, t: F.cross_entropy(x, t), logits, target)
    both(lambda x, t: F.nll_loss(F.log_softmax(x, 1), t, reduction="sum"), logits, target)
    ignored = np.array([0, -100, 1, -100])
    both(lambda x, t: F.cross_entropy(x, t), logits, ignored)


@pytest.mark.parametrize("fn", [
    lambda x: eager.cat([x, x * 2], dim=1), lambda x: eager.stack([x, x], dim=0),
    lambda x: x.masked_fill(x > 0, 0.5), lambda x: x.var(dim=1), lambda x: x.std(dim=(0, 2)),
    lambda x: eager.logsumexp(x, dim=2), lambda x: x.max(dim=1).values,
    lambda x: eager.gather(x, 1, eager.tensor([[[0, 2, 1, 0]], [[2, 2, 0, 1]]],
                                              device=x.device))],
    ids=["cat", "stack", "masked_fill", "var", "std", "logsumexp", "max_dim", "gather"])
def test_more_ops_with_gradients(fn):
    both(fn, X, rtol=2e-5)


def test_argmax_argmin_pick_the_first_extreme_and_nan():
    a = np.array([[1.0, 3.0, 3.0, -1.0], [np.nan, 2.0, np.nan, 5.0], [0.0, 0.0, 0.0, 0.0]],
                 np.float32)
    g = eager.tensor(a, device="cuda")
    for d in (0, 1):
        np.testing.assert_array_equal(g.argmax(dim=d).cpu().numpy(), a.argmax(axis=d))
        np.testing.assert_array_equal(g.argmin(dim=d).cpu().numpy(), a.argmin(axis=d))
    assert g.argmax().item() == int(a.argmax())
    i = eager.tensor([[3, 1], [2, 9]], device="cuda")
    assert i.argmax(dim=1).tolist() == [0, 1] and i.argmin().item() == 1
