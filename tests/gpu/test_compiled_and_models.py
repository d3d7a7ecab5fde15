"""Compiled graphs on CUDA (fused kernels, branch guards, fallbacks) and the examples'
models trained on CUDA, against the CPU."""

from __future__ import annotations

import importlib.util
import os
from types import SimpleNamespace

import numpy as np
import pytest

import compiler
import compiler.program as program_module
import eager
from compiler.codegen import numba_cuda as NC
from compiler.ir import Const, Guard, Node, Value
from compiler.passes.fusion import FusedElementwise
from eager import nn, optim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples",
                                                                     f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def branchy(x, w):
    h = eager.tanh(x * 1.5 + w)
    if h.sum() > 0:              # a branch guard: only this scalar goes to the host
        return (h * 2 - 1).relu().sum(dim=1)
    return (h * h).mean(dim=1) - 1


def test_compiled_branches_on_cuda_match_eager_and_fuse():
    cf = compiler.compile(branchy)
    w = eager.tensor([0.5, -0.25, 0.125], device="cuda")
    for k, sign in enumerate([1, 1, -1, -1, 1]):
        x = eager.tensor(np.full((2, 3), sign * (0.3 + k / 10), np.float32), device="cuda")
        got = cf(x, w)
        compiler.wait()
        want = branchy(x, w)
        assert got.is_cuda
        np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), rtol=1e-6)
    s = cf.stats()
    assert s["traces"] == 2 and s["hits"] == 3
    ex = cf.explain()
    assert all(t["kernels"] for t in ex.traces)          # fused CUDA kernels in each path
    assert "@cuda" in str(ex.traces[0]["graph"]) if "graph" in ex.traces[0] else True


def _train_step(model, opt, xb, yb):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
    return loss


def test_compiled_cuda_training_step_with_backward():
    def make():
        eager.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = eager.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    y = eager.tensor([0, 1, 1, 0])
    losses = {}
    for dev, comp in (("cpu", False), ("cuda", True)):
        model = make().to(dev)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(xb, yb):
            return _train_step(model, opt, xb, yb)
        fn = compiler.compile(step) if comp else step
        out = []
        for _ in range(4):
            out.append(fn(x.to(dev), y.to(dev)).item())
            compiler.wait()
        losses[dev] = out
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=1e-5)


def test_mlp_example_model_trains_on_cuda_like_cpu():
    ex = _example("train_mlp")
    x_np, y_np = ex.two_spirals(n_per_class=4)
    results = {}
    for dev in ("cpu", "cuda"):
        eager.manual_seed(0)
        model = ex.make_model(3).to(dev)
        opt = optim.Adam(model.parameters(), lr=0.01)
        loss_fn = nn.CrossEntropyLoss()
        x, y = eager.tensor(x_np).to(dev), eager.tensor(y_np).to(dev)
        hist = []
        for _ in range(3):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            hist.append(loss.item())
        results[dev] = (hist, ex.accuracy(model, eager.tensor(x_np), eager.tensor(y_np), dev))
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-5)
    assert results["cuda"][1] == results["cpu"][1]


def test_recurrent_cell_example_trains_on_cuda_like_cpu():
    ex = _example("dynamic_graphs")
    seqs = [np.array([0.5, -0.25, 0.75], np.float32), np.array([-0.5, 0.25], np.float32)]
    for cell in (nn.RNNCell, nn.GRUCell):
        results = {}
        for dev in ("cpu", "cuda"):
            eager.manual_seed(0)
            model = ex.SeqRegressor(cell, hidden=3).to(dev)
            opt = optim.Adam(model.parameters(), lr=0.01)
            hist = []
            for s in seqs:              # sequences of different lengths: new graphs
                pred = model(eager.tensor(s, device=dev))
                loss = (pred - float(s.sum())) ** 2
                opt.zero_grad()
                loss.backward()
                opt.step()
                hist.append(loss.item())
            results[dev] = hist
        np.testing.assert_allclose(results["cuda"], results["cpu"], rtol=1e-5,
                                   err_msg=cell.__name__)


def test_a_compiled_split_gradient_on_cuda_replays():
    """``split`` and a sum's backward on CUDA (constant folding met a device array: it
    was wrapped in an object array, and every replay failed over to eager)."""
    w = eager.randn(3, 12, requires_grad=True, device="cuda")

    def step(x):
        q, k, v = (x @ w).split(4, -1)
        loss = ((q * k).sum(-1, keepdim=True) * v).sum()
        return eager.autograd.grad(loss, w)[0]

    cf = compiler.compile(step)
    for i in range(3):
        x = eager.randn(2, 5, 3, device="cuda")
        np.testing.assert_allclose(cf(x).cpu().numpy(), step(x).cpu().numpy(), rtol=1e-5,
                                   atol=1e-6)
        if i == 1:
            compiler.wait()
    s = cf.stats()
    assert s["hits"] == 2 and s["traces"] == 1, s   # (before: no hit, every replay failed)


def test_a_compiled_module_with_a_non_scalar_cuda_output_replays_with_its_gradients():
    """The traced backward of an output that is not a scalar was seeded with
    ``np.ones_like`` of its CUDA array: a 0-d object array, so every such trace failed to
    compile ("Mismatch in shape: grad_output[0] has a shape of ()") and ran eagerly."""
    eager.manual_seed(0)
    lin = nn.Linear(3, 4).to("cuda")
    cf = compiler.compile(lin)
    for i in range(3):
        x = eager.randn(2, 3, device="cuda")
        grads = []
        for f in (cf, lin):
            lin.zero_grad()
            y = f(x)
            (y * y).sum().backward()
            grads.append([y.detach().cpu().numpy()] + [p.grad.cpu().numpy()
                                                       for p in lin.parameters()])
        for got, want in zip(*grads):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if i == 1:
            compiler.wait()
    s = cf.stats()
    assert s["traces"] == 1 and s["hits"] == 2, s


def _optimizer_steps(compiled, make_opt, calls=4, before_call=None):
    eager.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3)).to("cuda")
    opt = make_opt(model.parameters())
    x = eager.randn(6, 5, device="cuda")
    y = eager.tensor([0, 1, 2, 0, 1, 2], device="cuda")

    def step():
        return _train_step(model, opt, x, y)

    f = compiler.compile(step) if compiled else step
    storage = [p._data for p in model.parameters()]
    losses = []
    for i in range(calls):
        if before_call is not None:
            before_call(i)
        losses.append(f().item())
        if i == 1:
            compiler.wait()
    assert all(a is b for a, b in zip([p._data for p in model.parameters()], storage))
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], f


@pytest.mark.parametrize("name", ["sgd", "momentum", "adam"])
def test_compiled_optimizer_updates_on_cuda_are_eagers_and_sgd_writes_into_the_parameters(
        monkeypatch, name):
    """A fused write-back (SGD's ``p.add_(g, alpha=-lr)``) is computed straight into the
    parameter's array where nothing later reads its old contents: the replay copies no
    array afterwards (it launched one copy kernel per parameter); results are eager's bits."""
    make = {"sgd": lambda ps: optim.SGD(ps, lr=0.1),
            "momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
            "adam": lambda ps: optim.Adam(ps, lr=0.01)}[name]
    want_losses, want = _optimizer_steps(False, make)[:2]
    copies = []
    real_copy = program_module.copy_into

    def spy(dst, src):
        copies.append(dst.shape)
        return real_copy(dst, src)
    monkeypatch.setattr(program_module, "copy_into", spy)
    losses, got, f = _optimizer_steps(True, make, before_call=lambda i: copies.clear())
    assert f.stats()["hits"] >= 2                  # (momentum and Adam: a trace with state)
    assert losses == want_losses
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    if name == "sgd":                              # the last call: fused kernels, no copy
        assert copies == [], copies


def test_a_write_back_whose_old_value_is_read_later_is_not_written_early():
    """``a = p * 3; p.add_(u); return a + p.sum()``: the old ``p`` is read after the
    write-back (fusion moves ``p * 3`` into the last kernel), so the update is not computed
    into ``p``'s array before that read."""
    def make():
        return eager.arange(8, dtype=eager.float32, device="cuda")

    def body(p, u):
        a = p * 3
        p.add_(u)
        return a + p.sum()

    pe, pc = make(), make()
    cf = compiler.compile(lambda u: body(pc, u))
    for i in range(4):
        u = eager.full((8,), float(i + 1), device="cuda")
        want = body(pe, u)
        got = cf(u)
        np.testing.assert_array_equal(got.cpu().numpy(), want.cpu().numpy())
        np.testing.assert_array_equal(pc.cpu().numpy(), pe.cpu().numpy())
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] == 3


def test_the_cuda_write_plan_writes_only_where_the_old_contents_are_read_no_more():
    """``numba_cuda._write_plan`` on hand-made fused programs: a trailing update of ``p``
    is computed into ``p``; not when a later kernel reads the old ``p``, nor when a node
    that is not a kernel (it may raise, or be a guard) follows the update."""
    def v(i):
        return Value(i, (8,), np.float32, "cuda")

    p, u, new_p, other = v(1), v(2), v(3), v(4)

    def kernel(ins, out):
        return Node(FusedElementwise, ins, {"graph": SimpleNamespace(outputs=[out])}, out)

    inplace = {new_p.id: p}
    update = kernel([p, u], new_p)
    assert NC._write_plan([update], [new_p], inplace) == {0: p}
    reads_old = kernel([p, new_p], other)
    assert NC._write_plan([update, reads_old], [new_p, other], inplace) == {}
    reads_new = kernel([new_p, u], other)
    assert NC._write_plan([update, reads_new], [new_p, other], inplace) == {0: p}
    for after in (Node(Guard, [new_p], {}, None), Node(Const, [], {}, other)):
        assert NC._write_plan([update, after], [new_p, other], inplace) == {}
