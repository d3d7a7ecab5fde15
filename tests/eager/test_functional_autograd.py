"""eager.autograd.functional against torch.autograd.functional (float64)."""

import numpy as np
import pytest

import eager
from eager.autograd import functional as AF

torch = pytest.importorskip("torch")
TF = torch.autograd.functional

rng = np.random.default_rng(0)
X = rng.standard_normal(3)
Y = rng.standard_normal((2, 3))
V3 = rng.standard_normal(3)
V2 = rng.standard_normal(2)


def both(*arrays):
    return (tuple(eager.tensor(a) for a in arrays), tuple(torch.tensor(a) for a in arrays))


def close(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            close(o, t)
        return
    assert isinstance(ours, eager.Tensor)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)


def f_single(x):
    return (x.exp() * x.sin()).sum(0) * x


def f_pair(x, y):
    return (x.exp() * y).sum(1), (y * y).sum()


def f_scalar(x, y):
    return (x.exp() * y.pow(2)).sum() + (x * x * x).sum()


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_tensor_and_tuples(create_graph):
    (ex,), (tx,) = both(X)
    close(AF.jacobian(f_single, ex, create_graph=create_graph), TF.jacobian(f_single, tx))
    e, t = both(X, Y)
    ours = AF.jacobian(f_pair, e, create_graph=create_graph)
    close(ours, TF.jacobian(f_pair, t))
    assert ours[0][0].shape == (2, 3) and ours[0][1].shape == (2, 2, 3)
    assert ours[1][1].shape == (2, 3)
    assert ours[0][0].requires_grad == create_graph
    # vectorize gives the same values
    close(AF.jacobian(f_pair, e, vectorize=True), TF.jacobian(f_pair, t, vectorize=True))


def test_jacobian_create_graph_differentiable():
    ex = eager.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    (AF.jacobian(f_single, ex, create_graph=True) ** 2).sum().backward()
    (TF.jacobian(f_single, tx, create_graph=True) ** 2).sum().backward()
    close(ex.grad, tx.grad)


def test_hessian():
    (ex,), (tx,) = both(X)
    close(AF.hessian(lambda x: (x.exp() * x).sum(), ex),
          TF.hessian(lambda x: (x.exp() * x).sum(), tx))
    e, t = both(X, Y[0])
    h = AF.hessian(f_scalar, e)
    close(h, TF.hessian(f_scalar, t))
    close(AF.hessian(f_scalar, e, vectorize=True), TF.hessian(f_scalar, t, vectorize=True))
    assert h[0][1].shape == (3, 3)


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp_vhp_hvp(create_graph):
    (ex, ev), (tx, tv) = both(X, V3)
    for name in ("vhp", "hvp"):
        fe = getattr(AF, name)(lambda x: (x.sin() * x).sum(), ex, ev, create_graph=create_graph)
        ft = getattr(TF, name)(lambda x: (x.sin() * x).sum(), tx, tv)
        close(fe, ft)
    close(AF.jvp(f_single, ex, ev, create_graph=create_graph), TF.jvp(f_single, tx, tv))
    close(AF.vjp(f_single, ex, ev, create_graph=create_graph), TF.vjp(f_single, tx, tv))
    e, t = both(X, Y, V2, V3)
    out, vj = AF.vjp(f_pair, e[:2], (e[2], eager.tensor(1.0, dtype=eager.float64)))
    tout, tvj = TF.vjp(f_pair, t[:2], (t[2], torch.tensor(1.0, dtype=torch.float64)))
    close(out, tout)
    close(vj, tvj)
    assert out[0].requires_grad is False
    e, t = both(X, Y[0], V3, V3 * 2)
    close(AF.jvp(lambda a, b: a * b, e[:2], e[2:]), TF.jvp(lambda a, b: a * b, t[:2], t[2:]))
    close(AF.hvp(f_scalar, e[:2], e[2:]), TF.hvp(f_scalar, t[:2], t[2:]))
    close(AF.vhp(f_scalar, e[:2], e[2:]), TF.vhp(f_scalar, t[:2], t[2:]))


def test_v_none_for_scalars_and_errors():
    s = eager.tensor([0.3], dtype=eager.float64)
    ts = torch.tensor([0.3], dtype=torch.float64)
    close(AF.vjp(lambda x: (x * x).sum(), s)[1], TF.vjp(lambda x: (x * x).sum(), ts)[1])
    close(AF.jvp(lambda x: x.exp() * 2, s)[1], TF.jvp(lambda x: x.exp() * 2, ts)[1])
    ex = eager.tensor(X)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the "
                                           "user-provided function returns"):
        AF.vjp(lambda x: x * 2, ex)
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        AF.vjp(lambda x: x * 2, ex, eager.ones(4, dtype=eager.float64))
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor "
                                        "or a tuple of Tensors"):
        AF.jacobian(lambda x: x, [ex])
    with pytest.raises(RuntimeError, match="The function given to hessian should return a "
                                           "single Tensor"):
        AF.hessian(lambda x: (x.sum(), x.sum()), ex)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        AF.hvp(lambda x: x * 2, ex, ex)


def test_strict_mode():
    e, t = both(X, Y)

    def indep(x, y):
        return x * 2

    # non-strict: zeros for the unused input, like PyTorch
    close(AF.jacobian(indep, e), TF.jacobian(indep, t))
    close(AF.jacobian(indep, e, vectorize=True), TF.jacobian(indep, t, vectorize=True))
    close(AF.vjp(lambda x, y: (x * 2).sum(), e), TF.vjp(lambda x, y: (x * 2).sum(), t))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        AF.jacobian(indep, e, strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in "
                                           "strict mode"):
        AF.vjp(lambda x, y: (x * 2).sum(), e, strict=True)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        AF.vjp(lambda x: eager.ones(2, dtype=eager.float64).sum(), e[0], strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with "
                                           "respect to input 0 is independent"):
        AF.hessian(lambda x: (x * 2).sum(), e[0], strict=True)
    with pytest.raises(RuntimeError, match="strict=True` and `vectorized=True"):
        AF.jacobian(indep, e, strict=True, vectorize=True)
