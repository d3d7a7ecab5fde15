"""eager.func (vmap, grad, grad_and_value, vjp, jacrev, functional_call) against torch.func."""

import numpy as np
import pytest

import eager
import eager.nn as enn
import eager.nn.functional as EF
from eager.func import functional_call, grad, grad_and_value, jacrev, vjp, vmap

torch = pytest.importorskip("torch")
TF = torch.func

rng = np.random.default_rng(1)


def arr(*shape):
    return rng.standard_normal(shape)


def E(a):
    return eager.tensor(a)


def T(a):
    return torch.tensor(a)


def close(ours, theirs, tol=1e-10):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            close(o, t, tol)
        return
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs)
        for k in theirs:
            close(ours[k], theirs[k], tol)
        return
    assert isinstance(ours, eager.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


# -- vmap ------------------------------------------------------------------------------

def test_vmap_ops_match_torch():
    """A function touching many batching rules, batched along different dims."""
    x, w, b = arr(4, 3, 5), arr(5, 2), arr(2)

    def f(lib):
        def g(a, w, b):
            h = lib.tanh(a @ w + b)                          # matmul, add, tanh
            s = h.softmax(dim=-1) * h.exp().sum(dim=0, keepdim=True)
            t = s.transpose(0, 1).reshape(-1)[1:5]           # permute, reshape, basic index
            u = lib.stack([t, t * 2], dim=1).mean() + h.amax()
            v = lib.cat([h, h.unsqueeze(0).squeeze(0)], dim=1).sum(-1)
            r = h.repeat(2, 1, 1).sum((0, 2)) + lib.roll(h, 1).sum(1) + lib.roll(h, 1, 0)[:, 0]
            return u * v + lib.where(h[:, 0] > 0, h[:, 1], -h[:, 1]) + r + h.var(0).sum()
        return g

    for in_dims in [(0, None, None), (1, None, None), (-1, None, None)]:
        ex = np.moveaxis(x, 0, in_dims[0])
        ours = vmap(f(eager), in_dims=in_dims)(E(ex), E(w), E(b))
        theirs = TF.vmap(f(torch), in_dims=in_dims)(T(ex), T(w), T(b))
        close(ours, theirs)
    # and the backward formulas of all those ops, through the same rules
    ours = vmap(grad(lambda a, w, b: f(eager)(a, w, b).sum(), argnums=(0, 1, 2)),
                in_dims=(0, None, None))(E(x), E(w), E(b))
    theirs = TF.vmap(TF.grad(lambda a, w, b: f(torch)(a, w, b).sum(), argnums=(0, 1, 2)),
                     in_dims=(0, None, None))(T(x), T(w), T(b))
    close(ours, theirs, tol=1e-9)


@pytest.mark.parametrize("out_dims", [0, 1, -1])
def test_vmap_out_dims_and_batched_weights(out_dims):
    x, w = arr(3, 4), arr(3, 4, 2)

    def f(lib):
        return lambda a, w: (a @ w, a.sum())
    od = (out_dims, 0)
    close(vmap(f(eager), out_dims=od)(E(x), E(w)), TF.vmap(f(torch), out_dims=od)(T(x), T(w)))
    lin = vmap(lambda a, w: EF.linear(a, w.transpose(0, 1)))(E(x), E(w))
    close(lin, TF.vmap(lambda a, w: torch.nn.functional.linear(a, w.T))(T(x), T(w)))


def test_vmap_in_dims_none_trees_and_unbatched_outputs():
    x, y = arr(3, 2), arr(2)
    ours = vmap(lambda p, c: (p["a"] * c[0] + c[1], c[1] * 2),
                in_dims=({"a": 0}, (None, None)), out_dims=(0, None))(
        {"a": E(x)}, (E(y), E(y)))
    theirs = TF.vmap(lambda p, c: (p["a"] * c[0] + c[1], c[1] * 2),
                     in_dims=({"a": 0}, (None, None)), out_dims=(0, None))(
        {"a": T(x)}, (T(y), T(y)))
    close(ours, theirs)
    # an output independent of the batch with an int out_dim is expanded
    close(vmap(lambda a: E(y))(E(x)), TF.vmap(lambda a: T(y))(T(x)))
    # chunk_size gives the same result
    close(vmap(lambda a: a.exp().sum(), chunk_size=2)(E(x)), T(x).exp().sum(1))


def test_nested_vmap():
    x, y = arr(3, 4), arr(5, 4)

    def f(lib):
        return lambda a, b: (a * b).sum() + lib.tanh(a).mean()
    ours = vmap(vmap(f(eager), in_dims=(None, 0)), in_dims=(0, None))(E(x), E(y))
    theirs = TF.vmap(TF.vmap(f(torch), in_dims=(None, 0)), in_dims=(0, None))(T(x), T(y))
    close(ours, theirs)
    assert ours.shape == (3, 5)
    # both levels batched on the same input
    z = arr(2, 3, 4)
    close(vmap(vmap(lambda a: a @ E(x[0])))(E(z)), TF.vmap(TF.vmap(lambda a: a @ T(x[0])))(T(z)))


def test_vmap_errors():
    with pytest.raises(ValueError, match=r"vmap: Expected all tensors to have the same size in "
                                         r"the mapped dimension, got sizes \[2, 3\] for the "
                                         r"mapped dimension"):
        vmap(lambda a, b: a + b)(eager.ones(2, 4), eager.ones(3, 4))
    with pytest.raises(RuntimeError, match="vmap: no batching rule for the op 'svd'"):
        vmap(lambda a: eager.linalg.svd(a)[1])(eager.ones(2, 3, 3))
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        vmap(lambda a, b: a * b)(eager.ones(2), 3.0)
    with pytest.raises(ValueError, match="in_dim to satisfy -1 <= in_dim < 1"):
        vmap(lambda a: a, in_dims=1)(eager.ones(2))
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: a * 2 if a.sum() > 0 else a)(eager.ones(2, 3))
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda a: a, randomness="sometimes")
    with pytest.raises(ValueError, match="out_dims=None"):
        vmap(lambda a: a * 2, out_dims=None)(eager.ones(2, 3))


# -- grad, grad_and_value, vjp, jacrev -------------------------------------------------

def test_grad_argnums_has_aux_and_value():
    x, y = arr(3), arr(3)

    def f(lib):
        def g(a, b):
            loss = (lib.sin(a) * b * b).sum()
            return loss, {"double": loss * 2}
        return g
    ours = grad_and_value(f(eager), argnums=(0, 1), has_aux=True)(E(x), E(y))
    theirs = TF.grad_and_value(f(torch), argnums=(0, 1), has_aux=True)(T(x), T(y))
    close(ours[0], theirs[0])
    close(ours[1][0], theirs[1][0])
    close(ours[1][1], theirs[1][1])
    assert not ours[0][0].requires_grad and not ours[1][0].requires_grad
    g1 = grad(lambda a, b: (a * b.exp()).sum(), argnums=-1)(E(x), E(y))
    close(g1, TF.grad(lambda a, b: (a * b.exp()).sum(), argnums=-1)(T(x), T(y)))
    # a dict argument gets a dict gradient
    close(grad(lambda p: (p["w"] ** 2).sum() + p["b"].sum())({"w": E(x), "b": E(y)}),
          TF.grad(lambda p: (p["w"] ** 2).sum() + p["b"].sum())({"w": T(x), "b": T(y)}))


def test_grad_of_grad_and_outer_backward():
    x = arr(3)

    def f(a):
        return (a ** 3).sum()
    close(grad(lambda a: grad(f)(a).sum())(E(x)),
          TF.grad(lambda a: TF.grad(f)(a).sum())(T(x)))
    ex = E(x).requires_grad_()
    grad(f)(ex).sum().backward()      # the gradient stays differentiable for outer autograd
    close(ex.grad, T(6 * x))


def test_grad_errors():
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, "
                                           "got tensor with 1 dims"):
        grad(lambda a: a * 2)(eager.ones(3))
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        grad(lambda a: a.sum(), has_aux=True)(eager.ones(3))
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        grad(lambda a, b: a.sum(), argnums=(0, 0))(eager.ones(3), eager.ones(3))
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 2 positional inputs"):
        grad(lambda a, b: a.sum(), argnums=2)(eager.ones(3), eager.ones(3))
    # unused input: zeros, as PyTorch
    assert grad(lambda a, b: a.sum(), argnums=1)(eager.ones(3), eager.ones(2)).tolist() == \
        [0.0, 0.0]


def test_vjp_and_jacrev():
    x, y, ct = arr(3), arr(2, 3), arr(2)

    def f(lib):
        return lambda a, b: lib.tanh(b @ a)
    out, fn = vjp(f(eager), E(x), E(y))
    tout, tfn = TF.vjp(f(torch), T(x), T(y))
    close(out, tout)
    close(fn(E(ct)), tfn(T(ct)))
    close(jacrev(f(eager), argnums=(0, 1))(E(x), E(y)),
          TF.jacrev(f(torch), argnums=(0, 1))(T(x), T(y)))
    close(jacrev(lambda a: (a.exp() * a, a.sum()))(E(x)),
          TF.jacrev(lambda a: (a.exp() * a, a.sum()))(T(x)))


# -- per-sample gradients: vmap(grad(f)) -----------------------------------------------

def test_per_sample_grads_linear_model():
    eager.manual_seed(0)
    model = enn.Sequential(enn.Linear(4, 5), enn.Tanh(), enn.Linear(5, 3)).double()
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(),
                                 torch.nn.Linear(5, 3)).double()
    with torch.no_grad():
        for (n, p), (tn, tp) in zip(model.named_parameters(), tmodel.named_parameters()):
            assert n == tn
            tp.copy_(torch.tensor(p.detach().numpy()))
    x, y = arr(6, 4), arr(6, 3)

    def loss(lib, fc, m):
        def f(params, a, b):
            out = fc(m, params, (a.unsqueeze(0),))
            return ((out - b.unsqueeze(0)) ** 2).mean()
        return f
    params = {k: v.detach() for k, v in model.named_parameters()}
    tparams = {k: v.detach() for k, v in tmodel.named_parameters()}
    ours = vmap(grad(loss(eager, functional_call, model)), in_dims=(None, 0, 0))(
        params, E(x), E(y))
    theirs = TF.vmap(TF.grad(loss(torch, TF.functional_call, tmodel)), in_dims=(None, 0, 0))(
        tparams, T(x), T(y))
    close(ours, theirs)
    assert ours["0.weight"].shape == (6, 5, 4)
    # the mean of the per-sample gradients is the batch gradient
    batch = grad(lambda p: sum(loss(eager, functional_call, model)(p, E(x[i]), E(y[i]))
                               for i in range(6)) / 6)(params)
    close(ours["2.bias"].mean(0), T(batch["2.bias"].numpy()))


def test_per_sample_grads_cross_entropy_style():
    w, x = arr(3, 4), arr(5, 4)
    labels = np.array([0, 2, 1, 1, 0])

    def f(lib):
        def g(w, a, t):
            logp = (a @ w.T).log_softmax(dim=-1)
            return -(logp * t).sum()
        return g
    onehot = np.eye(3)[labels]
    close(vmap(grad(f(eager)), in_dims=(None, 0, 0))(E(w), E(x), E(onehot)),
          TF.vmap(TF.grad(f(torch)), in_dims=(None, 0, 0))(T(w), T(x), T(onehot)))


def test_grad_of_vmap():
    x, w = arr(4, 3), arr(3)
    close(grad(lambda a: vmap(lambda r: (r.sin() * r).sum())(a).pow(2).sum())(E(x)),
          TF.grad(lambda a: TF.vmap(lambda r: (r.sin() * r).sum())(a).pow(2).sum())(T(x)))

    # unbatched tensors used inside vmap (an in_dims=None argument, a closed-over one):
    # their gradient from outside is the sum over the samples
    def f(lib, v):
        return lambda a, c: lib.vmap(lambda r, c: (r * v * c).tanh().sum(), in_dims=(0, None))(
            a, c).sum()
    ew, tw = E(w).requires_grad_(), T(w).requires_grad_()
    ours = grad(f(eager.func, ew), argnums=(0, 1))(E(x), E(w))
    theirs = TF.grad(f(TF, tw), argnums=(0, 1))(T(x), T(w))
    close(ours, theirs)
    f(eager.func, ew)(E(x), E(w)).backward()
    f(TF, tw)(T(x), T(w)).backward()
    close(ew.grad, tw.grad)


# -- functional_call -------------------------------------------------------------------

def test_functional_call_swaps_and_restores():
    lin = enn.Linear(3, 2).double()
    w0, b0 = lin.weight, lin.bias
    w, b = E(arr(2, 3)), E(arr(2))
    x = E(arr(4, 3))
    out = functional_call(lin, {"weight": w, "bias": b}, (x,))
    close(out, T(x.numpy() @ w.numpy().T + b.numpy()))
    assert lin.weight is w0 and lin.bias is b0
    out = functional_call(lin, ({"weight": w}, {"bias": b}), x)
    close(out, T(x.numpy() @ w.numpy().T + b.numpy()))

    class Boom(enn.Module):
        def __init__(self):
            super().__init__()
            self.inner = enn.Linear(3, 2)

        def forward(self, a):
            raise ValueError("boom")
    m = Boom()
    w1 = m.inner.weight
    with pytest.raises(ValueError, match="boom"):
        functional_call(m, {"inner.weight": w}, (x,))
    assert m.inner.weight is w1
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(lin, ({"weight": w}, {"weight": w}), (x,))
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        functional_call(lin, {"weight": w}, (x,), strict=True)


def test_vmap_inplace_and_randomness():
    x = arr(4, 3)

    def f(a):
        h = a * 2
        h += 1                           # in-place on a batched tensor
        return (h * h).sum()
    close(vmap(grad(f))(E(x)), TF.vmap(TF.grad(f))(T(x)))
    ex, tx = E(x.copy()), T(x.copy())
    vmap(lambda a: a.mul_(2))(ex)        # writes through to the input, as PyTorch
    TF.vmap(lambda a: a.mul_(2))(tx)
    close(ex, tx)
    with pytest.raises(RuntimeError, match="vmap: called random operation while in "
                                           "randomness error mode"):
        vmap(lambda a: EF.dropout(a, 0.5))(E(x))
    out = vmap(lambda a: a * eager.rand(3), randomness="same")(eager.ones(4, 3))
    assert np.all(out.numpy() == out.numpy()[0])   # one draw shared by every sample
    eager.rand(2)                                  # the generator works again afterwards


def test_vmap_gradients_by_finite_differences():
    from tests.helpers import gradcheck
    w = arr(3, 2)

    def f(x, wt):
        inner = vmap(lambda r, m: (r @ m).tanh() * r.sum(), in_dims=(1, None), out_dims=1)
        return inner(x, wt)
    assert gradcheck(f, arr(3, 4), w)


def test_vmap_indexing_max_and_cross_entropy():
    x, w = arr(4, 5, 3), arr(6, 3)
    labels = np.array([0, 2, -100, 1, 0])
    tok = rng.integers(0, 6, (4, 5))

    def cases(lib, fn, F):
        vm, gr = fn.vmap, fn.grad
        X, W, L, K = lib.tensor(x), lib.tensor(w), lib.tensor(labels), lib.tensor(tok)
        return [
            vm(lambda a: F.cross_entropy(a, L))(X),
            vm(gr(lambda a, t: F.cross_entropy(a * a, t)), in_dims=(0, None))(X, L),
            vm(gr(lambda a, t: F.cross_entropy(a.tanh(), t, reduction="sum")))(X, K % 3),
            vm(lambda a: a.max(0).values)(X),
            vm(gr(lambda a: a.max(1).values.sum()))(X),
            vm(lambda a: a[lib.tensor([0, 2, 2])] * 2)(X),
            vm(lambda a: a[:, lib.tensor([0, 2])])(X),
            vm(gr(lambda v, k: v[k].pow(2).sum()), in_dims=(None, 0))(W, K),   # embedding
            vm(lambda a, k: a[k], in_dims=(0, 0))(X, K % 5),
        ]
    close(cases(eager, eager.func, EF), cases(torch, TF, torch.nn.functional))


def test_per_sample_grads_small_cnn():
    eager.manual_seed(0)

    def net(nn):
        return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(0), nn.Linear(12, 3)).double()
    m, tm = net(enn), net(torch.nn)
    with torch.no_grad():
        for p, q in zip(m.parameters(), tm.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    x, y = arr(3, 2, 4, 4), rng.integers(0, 3, 3)

    def per_sample(lib, mod, fn):
        params = {k: v.detach() for k, v in mod.named_parameters()}

        def loss(p, a, b):
            out = fn.functional_call(mod, p, (a,))
            return lib.nn.functional.cross_entropy(out.unsqueeze(0), b.unsqueeze(0))
        return fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(x),
                                                            lib.tensor(y))
    close(per_sample(eager, m, eager.func), per_sample(torch, tm, TF))


def test_jacrev_aux_chunks_and_vmap_kwargs():
    x = arr(3)

    def f(lib):
        return lambda a: ((a.sin() * a.sum()), a.cos())
    ours, aux = jacrev(f(eager), has_aux=True, chunk_size=2)(E(x))
    theirs, taux = TF.jacrev(f(torch), has_aux=True, chunk_size=2)(T(x))
    close(ours, theirs)
    close(aux, taux)
    # keyword arguments are passed unbatched
    y = arr(4, 3)
    close(vmap(lambda a, scale=1.0: a * scale)(E(y), scale=E(x)),
          TF.vmap(lambda a, scale=1.0: a * scale)(T(y), scale=T(x)))
    with pytest.raises(ValueError, match="in_dims"):
        vmap(lambda a, b: a + b, in_dims=(0,))(E(y), E(y))


def test_backward_inside_vmap_into_unbatched_grad_is_an_error():
    w = eager.ones(3, dtype=eager.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="backward\\(\\) inside vmap would accumulate "
                                           "per-sample gradients"):
        vmap(lambda a: (a * w).sum().backward())(eager.ones(2, 3, dtype=eager.float64))
    # autograd.grad inside vmap gives the per-sample gradients instead
    a = arr(2, 3)
    g = vmap(lambda r: eager.autograd.grad((r * r * w).sum(), w)[0])(E(a))
    close(g, T(a * a))


def test_hessian_and_nested_jacrev():
    from eager.func import hessian
    x, y = arr(3), arr(2, 3)

    def f(a):
        return (a.sin() * a.sum()).exp().sum()
    close(hessian(f)(E(x)), TF.hessian(f)(T(x)))

    def g(a, b):
        return (b @ a).tanh()
    ours = jacrev(jacrev(g), argnums=1)(E(x), E(y))
    close(ours, TF.jacrev(TF.jacrev(g), argnums=1)(T(x), T(y)))
    assert ours.shape == (2, 3, 2, 3) and not ours.requires_grad


def test_vmap_half_types_compute_like_eager():
    for dt in (eager.float16, eager.bfloat16):
        x = eager.tensor(arr(4, 7)).to(dt)
        w = eager.tensor(arr(7, 3)).to(dt)
        ours = vmap(lambda a: ((a * 1.7).exp() @ w).sum())(x)
        ref = ((x * 1.7).exp() @ w).sum(1)
        assert ours.dtype == dt
        assert ours.float().tolist() == ref.float().tolist()
