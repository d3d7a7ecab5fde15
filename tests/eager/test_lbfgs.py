"""optim.LBFGS against torch.optim.LBFGS, step for step: fixed steps and the strong-Wolfe
line search, float64 and float32, several parameters, a short history (the history shifts),
several step() calls (state carried across), and the closure's call count.

PyTorch's ``add_(..., alpha=)`` is a fused multiply-add on CPU (one rounding), ours is a
multiply then an add: parameters differ in the last bit now and then, and Rosenbrock's
valley magnifies that over 80 iterations to ~1e-6 (with ``max_iter=1`` the strong-Wolfe
runs are equal bit for bit for 40 steps), hence the tolerances."""

import numpy as np
import pytest

import eager
from eager import nn

torch = pytest.importorskip("torch")


def _rosenbrock(mod, xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def _run_rosenbrock(mod, dtype, steps, **kw):
    p = mod.nn.Parameter(mod.tensor([-1.5, 2.0], dtype=dtype))
    opt = mod.optim.LBFGS([p], **kw)
    calls = [0]

    def closure():
        calls[0] += 1
        opt.zero_grad()
        loss = _rosenbrock(mod, p)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        out.append((float(loss.detach()), p.detach().numpy().copy(), calls[0]))
    st = opt.state[p]
    return out, st["func_evals"], st["n_iter"]


@pytest.mark.parametrize("kw", [{"max_iter": 6}, {"line_search_fn": "strong_wolfe", "max_iter": 6},
                                {"lr": 0.5, "max_iter": 7, "history_size": 3},
                                {"line_search_fn": "strong_wolfe", "history_size": 2,
                                 "max_iter": 4, "max_eval": 30}])
def test_lbfgs_rosenbrock_matches_torch(kw):
    ours = _run_rosenbrock(eager, eager.float64, 3, **kw)
    theirs = _run_rosenbrock(torch, torch.float64, 3, **kw)
    for (l, p, c), (tl, tp, tc) in zip(ours[0], theirs[0]):
        assert c == tc   # the closure ran as often
        np.testing.assert_allclose(l, tl, rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(p, tp, rtol=1e-9, atol=1e-14)
    assert ours[1:] == theirs[1:]   # func_evals, n_iter


def _run_lsq(mod, dtype, steps, **kw):
    rng = np.random.default_rng(3)
    A = mod.tensor(rng.standard_normal((40, 6)), dtype=dtype)
    b = mod.tensor(rng.standard_normal((40, 2)), dtype=dtype)
    W = mod.nn.Parameter(mod.zeros(6, 2, dtype=dtype))
    c = mod.nn.Parameter(mod.ones(2, dtype=dtype))
    opt = mod.optim.LBFGS([W, c], **kw)
    calls = [0]

    def closure():
        calls[0] += 1
        opt.zero_grad()
        loss = ((A @ W + c - b) ** 2).mean() + 0.1 * (W ** 2).sum()
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        out.append((float(loss.detach()), W.detach().numpy().copy(), c.detach().numpy().copy(),
                    calls[0]))
    return out, opt.state[W]["func_evals"], opt.state[W]["n_iter"]


@pytest.mark.parametrize("kw", [{}, {"line_search_fn": "strong_wolfe"},
                                {"lr": 0.3, "max_iter": 7, "history_size": 2},
                                {"line_search_fn": "strong_wolfe", "history_size": 3,
                                 "max_eval": 40, "tolerance_grad": 1e-5}])
@pytest.mark.parametrize("dt", ["float64", "float32"])
def test_lbfgs_least_squares_matches_torch(kw, dt):
    if dt == "float32":
        # before convergence: near the optimum float32's rounding decides when the loss
        # "stops changing" (tolerance_change), and so how many evaluations a step makes
        kw = {**kw, "max_iter": min(kw.get("max_iter", 5), 5)}
    steps = 3 if dt == "float64" else 1
    ours = _run_lsq(eager, getattr(eager, dt), steps, **kw)
    theirs = _run_lsq(torch, getattr(torch, dt), steps, **kw)
    tol = dict(rtol=1e-9, atol=1e-12) if dt == "float64" else dict(rtol=1e-4, atol=1e-6)
    for a, t in zip(ours[0], theirs[0]):
        assert a[3] == t[3]
        for x, y in zip(a[:3], t[:3]):
            np.testing.assert_allclose(x, y, **tol)
    assert ours[1:] == theirs[1:]


def _run_mlp(mod, w, steps, **kw):
    rng = np.random.default_rng(1)
    X = mod.tensor(rng.standard_normal((32, 3)))
    Y = mod.tensor(rng.standard_normal((32, 1)))
    model = mod.nn.Sequential(mod.nn.Linear(3, 8), mod.nn.Tanh(), mod.nn.Linear(8, 1)).double()
    with mod.no_grad():
        for p, v in zip(model.parameters(), w):
            p.copy_(mod.tensor(v))
    opt = mod.optim.LBFGS(model.parameters(), **kw)

    def closure():
        opt.zero_grad()
        loss = mod.nn.functional.mse_loss(model(X), Y)
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return losses, [p.detach().numpy() for p in model.parameters()]


@pytest.mark.parametrize("kw", [{"max_iter": 5}, {"line_search_fn": "strong_wolfe",
                                                  "history_size": 4}])
def test_lbfgs_mlp_matches_torch(kw):
    rng = np.random.default_rng(0)
    w = [rng.standard_normal(s) * 0.5 for s in [(8, 3), (8,), (1, 8), (1,)]]
    ours, ps = _run_mlp(eager, w, 3, **kw)
    theirs, tps = _run_mlp(torch, w, 3, **kw)
    np.testing.assert_allclose(ours, theirs, rtol=1e-8)
    for a, b in zip(ps, tps):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_lbfgs_errors_and_state_dict():
    p = nn.Parameter(eager.ones(3))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        eager.optim.LBFGS([p], lr=-1)
    with pytest.raises(ValueError, match="parameter groups"):
        eager.optim.LBFGS([{"params": [p]}, {"params": [nn.Parameter(eager.ones(2))]}])
    opt = eager.optim.LBFGS([p], line_search_fn="bogus")

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        opt.step(closure)
    assert opt.defaults["max_eval"] == 25
    g = opt.state_dict()["param_groups"][0]
    assert g["history_size"] == 100 and g["line_search_fn"] == "bogus"


def test_lbfgs_already_optimal_returns_loss():
    p = nn.Parameter(eager.zeros(3))
    opt = eager.optim.LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 0.0 and len(calls) == 1
