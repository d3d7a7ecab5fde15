"""Graph breaks: a function that cannot be traced whole (``.numpy()`` feeding NumPy, code
the observer cannot follow) is split at that line (compiled pieces around it; see
tests/compiler/test_split.py), or, where it cannot be split, runs its body eagerly with
each ``nn.Module`` call a compiled region; results, gradients and side effects equal
eager's, and ``explain()`` names each break and its line."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
import warnings

import numpy as np
import pytest

import compiler
import eager
from eager import nn


def _models(seed=0):
    eager.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))  # (exact ops: bit equality)


def _step_printing(model, printed):
    def step(x):
        h = model(x)
        top = h.detach().numpy().max()       # data into NumPy: a graph break
        print("h", h, "top", top)
        loss = (h * h).sum()
        loss.backward()
        printed.append(float(loss.item()))
        return loss.detach()
    return step


def _run(fn, xs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore", compiler.CompileWarning)
        res = [fn(x) for x in xs]
    return res, out.getvalue()


def _inputs(n, rows=(4, 4, 6, 4, 6, 6, 4)):
    rng = np.random.default_rng(1)
    return [eager.tensor(rng.standard_normal((rows[i % len(rows)], 3)).astype(np.float32))
            for i in range(n)]


def test_numpy_read_breaks_the_graph_and_modules_stay_compiled():
    m_eager, m_comp = _models(), _models()
    pe, pc = [], []
    xs = _inputs(7)
    ref, out_e = _run(_step_printing(m_eager, pe), xs)
    # the generated-Python tier: bit for bit (kernels sum float32 in float64: README
    # "Exactness"; test_numpy_between_module_calls runs them)
    cf = compiler.compile(_step_printing(m_comp, pc), backend="python")
    got, out_c = _run(cf, xs[:3])
    compiler.wait()
    got2, out_c2 = _run(cf, xs[3:])
    got += got2
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # every call printed what eager printed; the grad_fn of a region's output is the
    # compiled backward's, as under torch.compile
    assert out_e.count("grad_fn=<LinearBackward0>") == len(xs)
    assert re.sub(r"grad_fn=<\w+>", "", out_e) == re.sub(r"grad_fn=<\w+>", "", out_c + out_c2)
    assert pe == pc
    for p, q in zip(m_eager.parameters(), m_comp.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    ex = cf.explain()
    assert ex.graph_breaks  # the .numpy() line first, then the lines cut after it
    assert "test_graph_breaks.py" in ex.graph_breaks[0] and "step" in ex.graph_breaks[0]
    assert "graph break" in str(ex)
    # split at the break (compiler.split): the model call before it is a compiled piece,
    # the line itself runs eagerly
    (lines0, first), (lines1, broken) = ex.pieces[:2]
    assert broken is None and first is not None
    assert first.stats["calls"] == 6 and first.stats["hits"] >= 3  # (call 0 traced the step)
    src, at = inspect.getsourcelines(_step_printing)
    line = at + next(i for i, s in enumerate(src) if ".numpy()" in s)
    lo, _, hi = lines1.split()[1].partition("-")
    assert int(lo) <= line <= int(hi or lo)


def test_numpy_between_module_calls():
    """Actor-critic's pattern: the model's output read into NumPy, NumPy picks the next
    input, the model is called again; the losses and gradients equal eager's (within the
    kernels' float64 sums: the default backend)."""
    def build():
        eager.manual_seed(3)
        policy = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

        def step(state):
            losses = []
            for _ in range(3):
                logp = eager.log_softmax(policy(state), dim=-1)
                p = logp[:, 1].detach().exp().numpy()
                action = (p > 0.5).astype(np.int64)
                losses.append(logp.gather(1, eager.tensor(action).unsqueeze(1)).sum())
                state = eager.tensor(np.maximum(state.numpy() + action[:, None], 0)
                                     .astype(np.float32))
            loss = -eager.stack(losses).sum()
            loss.backward()
            return loss.detach()
        return policy, step

    (pe, se), (pc, sc) = build(), build()
    cf = compiler.compile(sc)
    rng = np.random.default_rng(0)
    xs = [eager.tensor(rng.standard_normal((5, 4)).astype(np.float32)) for _ in range(6)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", compiler.CompileWarning)
        for i, x in enumerate(xs):
            a, b = se(x), cf(x)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
            if i == 2:
                compiler.wait()
    for p, q in zip(pe.parameters(), pc.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)
    ex = cf.explain()
    assert ex.graph_breaks and all("test_graph_breaks.py" in b for b in ex.graph_breaks)
    # the loop holding the break runs eagerly, its policy calls compiled regions; the
    # loss after it is a compiled piece
    (name, st), = ex.regions
    assert st["hits"] > 0
    assert any(p is not None and p.stats["hits"] > 0 for _, p in ex.pieces)


def test_fullgraph_still_refuses_a_break():
    model = _models()
    cf = compiler.compile(_step_printing(model, []), fullgraph=True)
    with pytest.raises(compiler.GraphBreakError, match="test_graph_breaks.py"), \
            contextlib.redirect_stdout(io.StringIO()):
        cf(_inputs(1)[0])


def test_a_function_without_a_break_reports_none():
    model = _models()
    cf = compiler.compile(lambda x: model(x).sum())
    cf(_inputs(1)[0])
    cf(_inputs(1)[0])
    ex = cf.explain()
    assert ex.graph_breaks == [] and ex.regions == []
    assert "graph break" not in str(ex)


def test_a_step_walking_model_parameters_is_one_graph():
    """clip_grad_norm_(model.parameters()) inside the step: Module.parameters' walk
    (generators, a set of ids) is Python state the trace follows, not a break."""
    def make():
        eager.manual_seed(0)
        inner = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        model = nn.Sequential(nn.Linear(3, 4), inner, nn.Sequential(inner, nn.Linear(4, 1)))
        opt = eager.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            total = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            return loss.detach(), total
        return model, step

    (m_e, step_e), (m_c, step_c) = make(), make()
    cf = compiler.compile(step_c, fullgraph=True)
    for k, x in enumerate(_inputs(5)):
        if k == 2:
            compiler.wait()
        got, want = cf(x), step_e(x)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)
    for a, b in zip(m_c.parameters(), m_e.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5)
    assert cf.explain().graph_breaks == []
