"""eager.utils.checkpoint: gradients equal the plain ones (dropout included: the generators
are restored for the recomputation), the saved activations shrink (measured with
eager.autograd.graph.saved_tensor_bytes), errors and options as PyTorch's, compiled use."""

import warnings

import numpy as np
import pytest

import compiler
import eager
from eager import nn
from eager.autograd.graph import saved_tensor_bytes
from eager.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential
from tests.helpers import gradcheck

WIDTH, BATCH, SEGMENTS = 16, 64, 4


def _model():
    eager.manual_seed(0)
    return [nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh(), nn.Dropout(0.25),
                          nn.Linear(WIDTH, WIDTH), nn.Tanh()).double() for _ in range(SEGMENTS)]


def _run(layers, x, ck, **kw):
    h = x
    for layer in layers:
        h = checkpoint(layer, h, use_reentrant=False, **kw) if ck else layer(h)
    return (h * h).sum()


def _grads(layers, x, ck, seed=1, **kw):
    for layer in layers:
        layer.zero_grad()
    x.grad = None
    eager.manual_seed(seed)
    loss = _run(layers, x, ck, **kw)
    saved = saved_tensor_bytes(loss)
    loss.backward()
    after = eager.rand(3).numpy()          # the generator's stream after the step
    grads = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for l in layers
                                        for p in l.parameters()]
    return loss.item(), grads, saved, after


def test_gradients_equal_plain_ones_with_dropout():
    layers = _model()
    x = eager.randn(BATCH, WIDTH, dtype=eager.float64, requires_grad=True)
    loss0, g0, _, after0 = _grads(layers, x, ck=False)
    loss1, g1, _, after1 = _grads(layers, x, ck=True)
    assert loss0 == loss1
    for a, b in zip(g0, g1):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after0, after1)   # recomputation left the stream alone
    # without restoring the generators, the recomputed dropout masks differ
    _, g2, _, _ = _grads(layers, x, ck=True, preserve_rng_state=False)
    assert not all(np.array_equal(a, b) for a, b in zip(g0, g2))


def test_saved_activation_bytes_shrink():
    layers = _model()
    x = eager.randn(BATCH, WIDTH, dtype=eager.float64, requires_grad=True)
    _, _, plain, _ = _grads(layers, x, ck=False)
    _, _, ck, _ = _grads(layers, x, ck=True)
    act = BATCH * WIDTH * 8                                  # one activation, float64
    weights = sum(p.numel() * 8 for l in layers for p in l.parameters() if p.ndim == 2)
    params = sum(p.numel() * 8 for l in layers for p in l.parameters())
    # plain: the input, and per segment the tanh outputs (one the next segment's input), the
    # scaled dropout mask and the dropout output (the second Linear's input)
    assert plain == weights + (4 * SEGMENTS + 1) * act
    # checkpointed: each segment's input and the final activation (h * h saves h); a
    # checkpoint node keeps every parameter it differentiates (biases too)
    assert ck == params + (SEGMENTS + 1) * act
    loss = _run(layers, x, ck=True)
    loss.backward()
    assert saved_tensor_bytes(loss) == 0                     # freed by backward


def test_autograd_grad_and_closure_parameters():
    layer = nn.Linear(3, 2).double()
    x = eager.randn(4, 3, dtype=eager.float64)             # no grad: only parameters
    out = checkpoint(layer, x, use_reentrant=False).sum()
    gw, gb = eager.autograd.grad(out, [layer.weight, layer.bias])
    np.testing.assert_allclose(gw.numpy(), np.tile(x.numpy().sum(0), (2, 1)))
    np.testing.assert_allclose(gb.numpy(), [4.0, 4.0])
    assert layer.weight.grad is None


def test_finite_differences():
    def f(x, w):
        return checkpoint(lambda a, b: (a @ b).tanh() * a.sum(), x, w, use_reentrant=False)
    rng = np.random.default_rng(0)
    gradcheck(f, rng.standard_normal((3, 4)), rng.standard_normal((4, 2)))


def test_double_backward():
    x = eager.tensor([0.5, -1.0, 2.0], dtype=eager.float64, requires_grad=True)
    y = checkpoint(lambda t: (t ** 3).sum(), x, use_reentrant=False)
    (g,) = eager.autograd.grad(y, [x], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy())


def test_several_outputs_kwargs_and_non_tensors():
    calls = []

    def f(a, b, *, scale):
        calls.append(1)
        return {"s": (a * b).sum() * scale, "p": a * b, "tag": "x", "n": 3}

    a = eager.tensor([1.0, 2.0], dtype=eager.float64, requires_grad=True)
    b = eager.tensor([3.0, 4.0], dtype=eager.float64, requires_grad=True)
    out = checkpoint(f, a, b, scale=2.0, use_reentrant=False)
    assert out["tag"] == "x" and out["n"] == 3 and len(calls) == 1
    (out["s"] + out["p"].sum()).backward()
    assert len(calls) == 2                                 # one recomputation for both outputs
    np.testing.assert_allclose(a.grad.numpy(), 3 * b.detach().numpy())
    np.testing.assert_allclose(b.grad.numpy(), 3 * a.detach().numpy())


def test_inputs_modified_in_place_are_detected():
    x = eager.tensor([1.0, 2.0], dtype=eager.float64, requires_grad=True)
    h = x * 1.0
    y = checkpoint(lambda t: (t * t).sum(), h, use_reentrant=False)
    with eager.no_grad():
        h.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_determinism_check():
    n = [2]

    def f(x):
        n[0] += 1
        return x[: n[0]] * 2.0

    x = eager.arange(6.0, requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="Recomputed values for the following tensors "
                                              "have different metadata"):
        y.sum().backward()
    n[0] = 2
    y = checkpoint(f, x, use_reentrant=False, determinism_check="none")
    with pytest.raises(RuntimeError):      # unchecked: the shapes no longer line up
        y.sum().backward()


def test_no_grad_and_no_grad_inputs():
    layer = nn.Linear(2, 2)
    with eager.no_grad():
        y = checkpoint(layer, eager.ones(1, 2), use_reentrant=False)
    assert y.grad_fn is None and not y.requires_grad
    z = checkpoint(lambda t: t * 2, eager.ones(2), use_reentrant=False)
    assert z.grad_fn is None


def test_options_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint as tcp

    import eager.utils.checkpoint as ecp
    for lib, m in ((torch, tcp), (eager, ecp)):
        x = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning) as rec:
            m.checkpoint(lambda t: t * 2, x)
        msgs = [str(r.message) for r in rec if "use_reentrant" in str(r.message)]
        assert msgs and "should be passed explicitly" in msgs[0]
        errs = []
        for call in (lambda: m.checkpoint(lambda t, k: t, x, k=1, use_reentrant=True),
                     lambda: m.checkpoint(lambda t: t, x, use_reentrant=True,
                                          context_fn=lambda: None),
                     lambda: m.checkpoint(lambda t: t, x, use_reentrant=False,
                                          determinism_check="strict"),
                     lambda: m.checkpoint_sequential([lambda t: t], 1, x, use_reentrant=False,
                                                     foo=1)):
            with pytest.raises(ValueError) as e:
                call()
            errs.append(str(e.value))
        if lib is torch:
            theirs = errs
        else:
            assert errs == theirs


def test_checkpoint_sequential_and_reentrant_flag_compute_the_same():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    ws = [rng.standard_normal((5, 5)) * 0.5 for _ in range(6)]

    def build(lib):
        seq = lib.nn.Sequential(*[lib.nn.Linear(5, 5, bias=False).double() for _ in ws])
        with lib.no_grad():
            for layer, w in zip(seq, ws):
                layer.weight.copy_(lib.tensor(w))
        return seq

    x = rng.standard_normal((3, 5))
    results = []
    for lib, m, reentrant in ((torch, torch.utils.checkpoint, True),
                              (eager, eager.utils.checkpoint, True),
                              (eager, eager.utils.checkpoint, False)):
        seq = build(lib)
        xt = lib.tensor(x, requires_grad=True)
        out = m.checkpoint_sequential(seq, 3, xt, use_reentrant=reentrant)
        out.tanh().sum().backward()
        results.append([xt.grad.numpy()] + [l.weight.grad.numpy() for l in seq])
    for ours in results[1:]:
        for a, b in zip(ours, results[0]):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_compiled_step_with_checkpoint_equals_eager():
    def make():
        layers = _model()
        opt = eager.optim.SGD([p for l in layers for p in l.parameters()], lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = _run(layers, x, ck=True)
            loss.backward()
            opt.step()
            return loss
        return layers, step

    xs = [eager.tensor(np.random.default_rng(k).standard_normal((8, WIDTH))) for k in range(5)]
    le, step_e = make()
    lc, step_c = make()
    cstep = compiler.compile(step_c)
    eager.manual_seed(3)
    want = [step_e(x).item() for x in xs]
    eager.manual_seed(3)
    got = []
    for k, x in enumerate(xs):
        got.append(cstep(x).item())
        if k == 1:
            compiler.wait()
    # fused tanh is within 2 ULP of NumPy's (docs/ARCHITECTURE-compiler.md)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for a, b in zip([p for l in lc for p in l.parameters()],
                    [p for l in le for p in l.parameters()]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cstep.stats()["hits"] >= 2


def test_checkpoint_sequential_equals_plain():
    layers = _model()
    seq = nn.Sequential(*layers)
    x = eager.randn(BATCH, WIDTH, dtype=eager.float64, requires_grad=True)
    results = []
    for ck in (False, True):
        seq.zero_grad()
        x.grad = None
        eager.manual_seed(5)
        out = checkpoint_sequential(seq, 3, x, use_reentrant=False) if ck else seq(x)
        out.sum().backward()
        results.append([x.grad.numpy().copy()] + [p.grad.numpy().copy()
                                                   for p in seq.parameters()])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
