"""The dedicated nll_loss op (and its gradient op) behind cross_entropy / nll_loss for
(N, C) inputs with class-index targets."""

import numpy as np
import pytest

import eager
import eager.nn.functional as F
from tests.helpers import gradcheck

RNG = np.random.default_rng(5)
T = np.array([0, 1, 3, 1, 2])


def _ce(a, **kw):
    return F.cross_entropy(a, eager.tensor(T), **kw)


def _nll(a, **kw):
    return F.nll_loss(F.log_softmax(a, dim=1), eager.tensor(T), **kw)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("fn", [_ce, _nll])
def test_gradcheck(reduction, ignore_index, fn):
    x = RNG.standard_normal((5, 4))
    kw = {"ignore_index": ignore_index, "reduction": reduction}
    assert gradcheck(lambda a: fn(a, **kw), x)
    assert fn(eager.tensor(x, requires_grad=True), **kw).grad_fn.name() == "NllLossBackward0"


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_double_backward_through_the_gradient_op(reduction):
    """grad-of-grad of cross_entropy w.r.t. the logits and the output gradient (through
    nll_loss_grad's own backward)."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((5, 4))
    xe, xt = eager.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ge_out = eager.tensor(np.array(0.7), requires_grad=True)
    gt_out = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    le = F.cross_entropy(xe, eager.tensor(T), reduction=reduction)
    lt = torch.nn.functional.cross_entropy(xt, torch.tensor(T), reduction=reduction)
    (ge,) = eager.autograd.grad(le, xe, grad_outputs=ge_out, create_graph=True)
    (gt,) = torch.autograd.grad(lt, xt, grad_outputs=gt_out, create_graph=True)
    w = RNG.standard_normal((5, 4))
    (ge * eager.tensor(w)).sum().backward()
    (gt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ge_out.grad.numpy(), gt_out.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("ignore_index", [-100, 3])
def test_matches_torch_with_double_backward(reduction, ignore_index):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((5, 4))
    xe = eager.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    le = F.cross_entropy(xe, eager.tensor(T), ignore_index=ignore_index, reduction=reduction)
    lt = torch.nn.functional.cross_entropy(xt, torch.tensor(T), ignore_index=ignore_index,
                                           reduction=reduction)
    np.testing.assert_allclose(le.item(), lt.item(), rtol=1e-12)
    (ge,) = eager.autograd.grad(le, xe, create_graph=True)
    (gt,) = torch.autograd.grad(lt, xt, create_graph=True)
    np.testing.assert_allclose(ge.detach().numpy(), gt.detach().numpy(), rtol=1e-12)
    (ge * ge).sum().backward()
    (gt * gt).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_all_ignored_gives_nan_loss_and_zero_gradient():
    x = eager.tensor(RNG.standard_normal((5, 4)), requires_grad=True)
    loss = F.cross_entropy(x, eager.tensor(np.full(5, -100)))
    assert np.isnan(loss.item())
    loss.backward()
    assert not x.grad.numpy().any()


def test_ignored_row_with_minus_inf_does_not_poison_the_loss():
    logp = np.log(np.full((2, 3), 1 / 3))
    logp[1, 0] = -np.inf  # row 1 is ignored; its class-0 entry must not matter
    loss = F.nll_loss(eager.tensor(logp), eager.tensor(np.array([2, -100])))
    np.testing.assert_allclose(loss.item(), np.log(3))


def test_out_of_bounds_target_names_it():
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        F.cross_entropy(eager.randn(3, 4), eager.tensor([0, 9, 1]))
