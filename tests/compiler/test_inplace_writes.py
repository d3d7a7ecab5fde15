"""Write-backs computed straight into the arrays they replace (``compiler.codegen.inplace``)
by the generated Python tier, and the cheap forms of the guards a training step checks at
every call (lifted tensors still holding their traced arrays, an optimizer's signature):
replays equal eager, and every change those guards stand for still retraces."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import eager as torch
from compiler import CompileWarning, compile
from eager import nn, optim


def _replayed(cf):
    """The program of the trace that replayed (an optimizer's first step has its own)."""
    progs = [p.program for entry in cf._cache.values() if isinstance(entry, list)
             for v in entry for p in v.paths if p.hits]
    assert len(progs) == 1
    return progs[0]


def _adam_step(seed=0, **kw):
    """A training step.  Compiled, Adam takes PyTorch's capturable formulas (as under
    ``torch.compile``); the eager twin is made capturable to compute the same roundings."""
    kw.setdefault("capturable", True)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = optim.Adam(model.parameters(), lr=0.01, **kw)
    loss_fn = nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, model, opt


def _data(n=6, seed=0):
    rng = np.random.default_rng(seed)
    return (torch.tensor(rng.standard_normal((n, 3)).astype(np.float32)),
            torch.tensor(rng.integers(0, 2, n)))


def _same_state(ma, mb, oa, ob):
    for p, q in zip(ma.parameters(), mb.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
    for p, q in zip(ma.parameters(), mb.parameters()):
        for key, v in oa.state[p].items():
            assert np.array_equal(np.asarray(v.numpy() if hasattr(v, "numpy") else v),
                                  np.asarray(ob.state[q][key].numpy()
                                             if hasattr(ob.state[q][key], "numpy")
                                             else ob.state[q][key])), key


def test_adam_updates_are_computed_into_parameters_and_state():
    step_c, mc, oc = _adam_step()
    step_e, me, oe = _adam_step()
    cf = compile(step_c, backend="python")
    arrays = [p._data for p in mc.parameters()]
    x, y = _data()
    for _ in range(5):
        lc, le = cf(x, y), step_e(x, y)
        assert np.array_equal(lc.detach().numpy(), le.detach().numpy())
        _same_state(mc, me, oc, oe)
    assert cf.stats()["hits"] == 3
    assert all(p._data is a for p, a in zip(mc.parameters(), arrays))
    replayed = _replayed(cf)
    assert replayed.writes_inputs
    # 4 parameters, each with exp_avg, exp_avg_sq and itself through a ufunc's out=,
    # and its 0-d step count stored in place
    assert len(re.findall(r"= u\d+\(.*, out=v", replayed.source)) == 12
    assert replayed.source.count("[()] = ") == 4


def _write_then_index(p, x, idx):
    p.mul_(2)           # the write-back
    return x[idx]       # may raise after it: eager has already doubled p


def _index_then_write(p, x, idx):
    v = x[idx]          # may raise before any write: eager leaves p as it was
    p.mul_(2)
    return v


@pytest.mark.parametrize("fn, in_place", [(_write_then_index, False),
                                          (_index_then_write, True)])
def test_an_error_in_a_replay_leaves_what_eager_leaves(fn, in_place):
    """A node that can raise after a write-back keeps the write out of the input (the
    call reruns eagerly from unchanged inputs); a raise before the first write falls back
    to eager too."""
    cf = compile(fn, backend="python")
    x = torch.arange(4.0)
    p_c, p_e = torch.ones(3), torch.ones(3)
    good = torch.tensor([1, 3])
    for _ in range(3):
        assert np.array_equal(cf(p_c, x, good).numpy(), fn(p_e, x, good).numpy())
    prog = _replayed(cf)
    assert prog.writes_inputs is in_place
    assert ("out=" in prog.source) is in_place
    bad = torch.tensor([1, 9])
    with pytest.raises(IndexError) as want:
        fn(p_e, x, bad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        with pytest.raises(IndexError) as got:
            cf(p_c, x, bad)
    assert str(got.value) == str(want.value)
    assert np.array_equal(p_c.numpy(), p_e.numpy())


def test_a_written_input_also_returned_is_not_overwritten_early():
    def f(p, u):
        old = p * 1.0
        p.add_(u)
        return old, p + 1

    cf = compile(f, backend="python")
    pc, pe = torch.zeros(3), torch.zeros(3)
    u = torch.ones(3)
    for _ in range(4):
        (a, b), (c, d) = cf(pc, u), f(pe, u)
        assert np.array_equal(a.numpy(), c.numpy()) and np.array_equal(b.numpy(), d.numpy())
        assert np.array_equal(pc.numpy(), pe.numpy())


# -- the guards' fast forms -----------------------------------------------------------------

def test_a_lifted_tensor_given_a_new_array_replays_against_it():
    w = torch.ones(3)

    def f(x):
        return x * w

    cf = compile(f, backend="python")
    x = torch.arange(3.0)
    for _ in range(3):
        cf(x)
    w.data = torch.full((3,), 2.0)          # same shape and dtype: the trace still fits
    assert np.array_equal(cf(x).numpy(), (x * w).numpy())
    w.data = torch.ones(4)                  # another shape: a new trace
    x4 = torch.arange(4.0)
    assert np.array_equal(cf(x4).numpy(), (x4 * w).numpy())
    assert cf.stats()["traces"] == 2


def test_a_trace_does_not_keep_an_array_its_tensor_let_go_of():
    import gc
    import weakref

    w = torch.ones(1000)

    def f(x):
        return x * w

    cf = compile(f, backend="python")
    x = torch.ones(1000)
    for _ in range(3):
        cf(x)
    old = weakref.ref(w._data)
    w.data = torch.zeros(1000)
    gc.collect()
    assert old() is None
    assert np.array_equal(cf(x).numpy(), np.zeros(1000, np.float32))


def test_an_argument_viewing_a_lifted_tensor_written_in_place_retraces():
    w = torch.zeros(4)

    def f(x):
        x.add_(1)
        return x * w

    cf = compile(f, backend="python")
    for _ in range(3):
        cf(torch.zeros(4))
    we = torch.zeros(4)
    want = (lambda x: (x.add_(1), x * we)[1])(we[:])
    got = cf(w[:])                          # x shares w's memory: eager's result is 1s
    assert np.array_equal(got.numpy(), want.numpy())
    assert np.array_equal(w.numpy(), we.numpy())
    assert cf.stats()["traces"] == 2


@pytest.mark.parametrize("change", ["betas", "state_tensor", "new_state_key", "new_group",
                                    "load_state_dict"])
def test_optimizer_changes_retrace_and_equal_eager(change):
    step_c, mc, oc = _adam_step()
    step_e, me, oe = _adam_step()
    cf = compile(step_c, backend="python")
    x, y = _data()
    for _ in range(4):
        cf(x, y), step_e(x, y)
    traces = cf.stats()["traces"]
    for m, o in ((mc, oc), (me, oe)):
        p = next(iter(m.parameters()))
        if change == "betas":
            o.param_groups[0]["betas"] = (0.5, 0.9)
        elif change == "state_tensor":
            o.state[p]["exp_avg"] = torch.full_like(p, 0.1)
        elif change == "new_state_key":
            for q in m.parameters():
                o.state[q]["max_exp_avg_sq"] = torch.zeros_like(q)
            o.param_groups[0]["amsgrad"] = True
        elif change == "new_group":
            extra = nn.Parameter(torch.ones(2))
            extra.grad = None
            o.add_param_group({"params": [extra]})
        else:
            o.load_state_dict(o.state_dict())
    for _ in range(3):
        lc, le = cf(x, y), step_e(x, y)
        assert np.array_equal(lc.detach().numpy(), le.detach().numpy())
        _same_state(mc, me, oc, oe)
    assert cf.stats()["traces"] == traces + 1
