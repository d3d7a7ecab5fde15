"""Compiled graphs on CUDA (fused kernels, branch guards, fallbacks) and the examples'
models trained on CUDA, against the CPU."""

from __future__ import annotations

import importlib.util
import os

import numpy as np

import compiler
import eager
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
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            return loss
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
