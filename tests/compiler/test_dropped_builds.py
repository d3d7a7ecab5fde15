"""Kernel builds start at a trace's first replay or at compiler.wait(); a trace never
replayed whose key another variant took over (a training step before and after the
optimizer made its state) is not built even by wait(), only at its first replay if
that ever comes."""

from __future__ import annotations

import numpy as np

import compiler
import eager as torch
from eager import nn

MODE = {"scale": True}


def _kernels(cf) -> list:
    return [len(t["kernels"]) for t in cf.explain().traces]


def test_the_first_step_of_an_adam_loop_is_not_built():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(6, 3), torch.tensor([0, 1, 1, 0, 1, 0])

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    cf = compiler.compile(step)
    losses = [cf(x, y).item() for _ in range(3)]
    compiler.wait()
    losses += [cf(x, y).item() for _ in range(3)]
    ex = cf.explain()
    assert [t["hits"] for t in ex.traces] == [0, 4]
    assert [t["unbuilt"] is not None for t in ex.traces] == [True, False]
    k = _kernels(cf)
    assert k[0] == 0 and k[1] > 0, k
    assert "kernels not built: never replayed" in str(ex.full())
    # the same steps eagerly
    torch.manual_seed(0)
    model2 = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    opt2 = torch.optim.Adam(model2.parameters(), lr=0.01)
    want = []
    for _ in range(6):
        opt2.zero_grad()
        loss = nn.functional.cross_entropy(model2(x), y)
        loss.backward()
        opt2.step()
        want.append(loss.item())
    np.testing.assert_allclose(losses, want, rtol=1e-5)


def test_a_trace_never_replayed_is_built_only_by_wait():
    cf = compiler.compile(lambda x: (x * 3.0).exp().sum())
    x = torch.linspace(-1, 1, 40)
    cf(x)
    assert cf.explain(wait=False).traces[0]["unbuilt"].startswith("not replayed yet")
    compiler.wait()
    assert _kernels(cf)[0] > 0
    np.testing.assert_allclose(cf(x).item(), (x * 3.0).exp().sum().item(), rtol=1e-6)


def test_a_dropped_build_is_made_at_its_first_replay():
    def f(x):
        if MODE["scale"]:
            return (x * 2.0).tanh().sum()
        return (x + 1.0).sigmoid().sum()

    cf = compiler.compile(f)
    x = torch.linspace(-1, 1, 50)
    try:
        MODE["scale"] = True
        cf(x)                      # trace 0
        MODE["scale"] = False
        for _ in range(3):
            cf(x)                  # trace 1 takes over the key, then replays
        compiler.wait()
        k = _kernels(cf)
        assert k[0] == 0 and k[1] > 0, k
        MODE["scale"] = True       # trace 0 again: replayed, so now worth building
        got = cf(x)
        compiler.wait()
        assert _kernels(cf)[0] > 0
        assert cf.explain().traces[0]["unbuilt"] is None
        np.testing.assert_allclose(cf(x).item(), f(x).item(), rtol=1e-6)
        np.testing.assert_allclose(got.item(), f(x).item(), rtol=1e-6)
    finally:
        MODE["scale"] = True
