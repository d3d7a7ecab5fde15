"""eager.optim.NAdam, RAdam and Adamax against PyTorch (foreach=False): trajectories and state
step for step under each option, constructor signatures, defaults and errors, state dicts
(saved by one library, loaded by the other), the tensor-step path (capturable, and what a
tracer records) equal to the default one, and compiled train steps equal to eager.

PyTorch's CPU kernels fuse multiply-adds in ``lerp``, ``addcmul`` and ``add(alpha=)``, NumPy
rounds twice: trajectories agree to the last bits only (many configurations bit for bit),
hence ``check_same``'s tolerances."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import eager
from eager import nn
from eager._state import STATE
from tests.eager.test_optim import (
    _Recorder,
    check_same,
    grad_of,
    init_arrays,
    run_eager,
    run_torch,
)

torch = pytest.importorskip("torch")

STEPS = 12   # RAdam's rho_t passes 5 at step 6 with the default beta2

CONFIGS = {
    "NAdam": [
        {},
        {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1},
        {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
        {"lr": 0.02, "momentum_decay": 0.1, "maximize": True, "weight_decay": 0.01},
        {"lr": 0.01, "betas": (0.3, 0.9), "maximize": True, "decoupled_weight_decay": True,
         "weight_decay": 0.05},   # lerp weight above 0.5
    ],
    "RAdam": [
        {},
        {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1},
        {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
        {"lr": 0.02, "maximize": True, "weight_decay": 0.01},
        {"lr": 0.01, "betas": (0.9, 0.6)},   # rho_inf = 4: never rectified
        {"lr": 0.01, "betas": (0.3, 0.9), "maximize": True, "decoupled_weight_decay": True,
         "weight_decay": 0.05},
    ],
    "Adamax": [
        {},
        {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-3, "weight_decay": 0.1},
        {"lr": 0.02, "maximize": True, "weight_decay": 0.01},
        {"lr": 0.01, "betas": (0.3, 0.5)},
    ],
}
CASES = [(name, cfg) for name, cfgs in CONFIGS.items() for cfg in cfgs]
STATE_KEYS = {"NAdam": {"step", "mu_product", "exp_avg", "exp_avg_sq"},
              "RAdam": {"step", "exp_avg", "exp_avg_sq"},
              "Adamax": {"step", "exp_avg", "exp_inf"}}


def _ours(name, **kw):
    return lambda p: getattr(eager.optim, name)(p, **kw)


def _theirs(name, **kw):
    return lambda p: getattr(torch.optim, name)(p, foreach=False, **kw)


def _check_state(opt, topt, name, dtype, steps):
    for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        st, tst = opt.state[p], topt.state[tp]
        assert set(st) == set(tst) == STATE_KEYS[name]
        for key in st:
            assert st[key].shape == tuple(tst[key].shape)
            assert str(st[key].dtype).split(".")[-1] == str(tst[key].dtype).split(".")[-1]
        assert st["step"].item() == steps
        for key in set(st) - {"step"}:
            check_same([st[key].numpy()], [tst[key].numpy()], dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,cfg", CASES)
def test_matches_torch_step_by_step(name, cfg, dtype):
    arrays = init_arrays(dtype)
    traj, ttraj = [], []
    ours, opt = run_eager(_ours(name, **cfg), arrays, STEPS,
                          on_step=lambda o, k: traj.append(
                              [p.detach().numpy().copy() for p in o.param_groups[0]["params"]]))
    theirs, topt = run_torch(_theirs(name, **cfg), arrays, STEPS,
                             on_step=lambda o, k: ttraj.append(
                                 [p.detach().numpy().copy()
                                  for p in o.param_groups[0]["params"]]))
    for a, b in zip(traj, ttraj):
        check_same(a, b, dtype)
    check_same(ours, theirs, dtype)
    _check_state(opt, topt, name, dtype, STEPS)


@pytest.mark.parametrize("name,cfg", CASES)
def test_tensor_step_path_equals_the_float_path_bitwise(name, cfg):
    """capturable=True keeps the step count a tensor (as a traced step does): the same
    IEEE operations as the Python-float path, so the same bits."""
    for dtype in (np.float64, np.float32):
        arrays = init_arrays(dtype)
        ours, opt = run_eager(_ours(name, **cfg), arrays, STEPS)
        capt, copt = run_eager(_ours(name, capturable=True, **cfg), arrays, STEPS)
        for a, b in zip(ours, capt):
            np.testing.assert_array_equal(a, b)
        for p, q in zip(opt.param_groups[0]["params"], copt.param_groups[0]["params"]):
            for key, value in opt.state[p].items():
                np.testing.assert_array_equal(value.numpy(), copt.state[q][key].numpy())


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax"])
def test_signature_defaults_and_repr_match_torch(name):
    ours, theirs = getattr(eager.optim, name), getattr(torch.optim, name)
    sig = inspect.signature(ours.__init__).parameters
    tsig = inspect.signature(theirs.__init__).parameters
    assert list(sig) == list(tsig)
    for k in sig:
        assert sig[k].kind == tsig[k].kind, k
        assert sig[k].default == tsig[k].default, k
    opt = ours([nn.Parameter(eager.zeros(2))])
    topt = theirs([torch.nn.Parameter(torch.zeros(2))])
    assert {k: v for k, v in opt.param_groups[0].items() if k != "params"} == \
        {k: v for k, v in topt.param_groups[0].items() if k != "params"}
    assert repr(opt) == repr(topt)


ERRORS = [(name, kw) for name in ("NAdam", "RAdam", "Adamax")
          for kw in ({"lr": -1.0}, {"eps": -1.0}, {"betas": (1.0, 0.9)},
                     {"betas": (0.9, -0.1)}, {"weight_decay": -1.0})] + \
    [("NAdam", {"momentum_decay": -1.0})]


@pytest.mark.parametrize("name,kw", ERRORS)
def test_errors_match_torch(name, kw):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kw)
    with pytest.raises(ValueError) as ours:
        getattr(eager.optim, name)([nn.Parameter(eager.zeros(2))], **kw)
    assert str(ours.value) == str(theirs.value)


def _to_torch(sd):
    return {"param_groups": sd["param_groups"],
            "state": {i: {k: torch.tensor(v.numpy()) for k, v in st.items()}
                      for i, st in sd["state"].items()}}


def _to_numpy(sd):
    return {"param_groups": sd["param_groups"],
            "state": {i: {k: v.numpy().copy() for k, v in st.items()}
                      for i, st in sd["state"].items()}}


def _continue(opt, params, mod, start, steps):
    for k in range(start, start + steps):
        opt.zero_grad()
        for p in params:
            p.grad = mod.tensor(grad_of(p.detach().numpy(), k))
        opt.step()
    return [p.detach().numpy().copy() for p in params]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,cfg", [("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
                                      ("RAdam", {"lr": 0.01, "decoupled_weight_decay": True,
                                                 "weight_decay": 0.1}),
                                      ("Adamax", {"lr": 0.01, "maximize": True})])
def test_state_dict_round_trip_matches_torch(name, cfg, dtype):
    """Save after 4 steps and resume for 4 more: our state dict has torch's layout, each
    library loads the other's, and a resumed run follows torch's resumed run.  (Loading
    casts every state tensor but ``step`` to the parameter's dtype, as PyTorch does: a
    float64 parameter's NAdam ``mu_product`` becomes float64.)"""
    arrays = init_arrays(dtype)
    half, opt = run_eager(_ours(name, foreach=False, **cfg), arrays, 4)
    thalf, topt = run_torch(_theirs(name, **cfg), arrays, 4)
    sd, tsd = opt.state_dict(), topt.state_dict()
    # copies now: PyTorch's load_state_dict keeps (and later steps) the tensors it is given
    sd_for_torch, tsd_for_us = _to_torch(sd), _to_numpy(tsd)
    assert sd["param_groups"] == tsd["param_groups"]
    assert set(sd["state"]) == set(tsd["state"]) == {0, 1, 2}
    for i in sd["state"]:
        assert list(sd["state"][i]) == list(tsd["state"][i])

    # ours -> ours and torch -> torch
    params = [nn.Parameter(eager.tensor(a)) for a in half]
    opt2 = getattr(eager.optim, name)(params, foreach=False, **cfg)
    opt2.load_state_dict(sd)
    tparams = [torch.nn.Parameter(torch.tensor(a)) for a in thalf]
    topt2 = getattr(torch.optim, name)(tparams, foreach=False, **cfg)
    topt2.load_state_dict(tsd)
    for p, tp in zip(params, tparams):
        for key, v in opt2.state[p].items():
            assert str(v.dtype).split(".")[-1] == \
                str(topt2.state[tp][key].dtype).split(".")[-1], key
    ours = _continue(opt2, params, eager, 4, 4)
    theirs = _continue(topt2, tparams, torch, 4, 4)
    check_same(ours, theirs, dtype)
    if dtype == np.float32 or name != "NAdam":   # nothing changed dtype: exact resume
        full, _ = run_eager(_ours(name, **cfg), arrays, 8)
        for a, b in zip(ours, full):
            np.testing.assert_array_equal(a, b)

    # torch's state dict loaded by us, ours loaded by torch
    params = [nn.Parameter(eager.tensor(a)) for a in thalf]
    opt3 = getattr(eager.optim, name)(params, foreach=False, **cfg)
    opt3.load_state_dict(tsd_for_us)
    check_same(_continue(opt3, params, eager, 4, 4), theirs, dtype)
    tparams = [torch.nn.Parameter(torch.tensor(a)) for a in half]
    topt3 = getattr(torch.optim, name)(tparams, foreach=False, **cfg)
    topt3.load_state_dict(sd_for_torch)
    check_same(_continue(topt3, tparams, torch, 4, 4), ours, dtype)


@pytest.mark.parametrize("name,kw", [("NAdam", {"lr": 0.1, "weight_decay": 0.01}),
                                     ("RAdam", {"lr": 0.1}),
                                     ("Adamax", {"lr": 0.1})])
def test_step_is_inplace_tensor_ops_under_a_tracer(name, kw):
    """Under a tracer no value is read back into Python (the step count, mu_product and
    RAdam's branch stay tensors), every update is an in-place op the tracer sees, and the
    result equals eager's."""
    arrays = init_arrays(np.float64)
    ref, ref_opt = run_eager(_ours(name, **kw), arrays, 8)
    params = [nn.Parameter(eager.tensor(a)) for a in arrays]
    opt = getattr(eager.optim, name)(params, **kw)
    rec = _Recorder()
    for k in range(8):
        opt.zero_grad()
        for p in params:
            p.grad = eager.tensor(grad_of(p.detach().numpy(), k))
        STATE.tracer = rec
        try:
            opt.step()
        finally:
            STATE.tracer = None
    assert rec.branches == []
    st = opt.state[params[0]]
    for t in params + [st[k] for k in STATE_KEYS[name]]:
        assert any(x is t for x in rec.inplace)
    for a, p in zip(ref, params):
        np.testing.assert_array_equal(p.detach().numpy(), a)


@pytest.mark.parametrize("name,kw", [("NAdam", {"lr": 0.05, "weight_decay": 0.01}),
                                     ("RAdam", {"lr": 0.05, "decoupled_weight_decay": True,
                                                "weight_decay": 0.1}),
                                     ("Adamax", {"lr": 0.05, "weight_decay": 0.01})])
def test_compiled_train_step_equals_eager_bitwise(name, kw):
    """A compiled train step (generated-Python tier) replays with the step count as an
    input: the same bits as eager at every step, RAdam's switch to the rectified update
    (step 6) included."""
    from compiler import compile
    rng = np.random.default_rng(0)
    data = [(eager.tensor(rng.standard_normal((6, 3)).astype(np.float32)),
             eager.tensor(rng.standard_normal((6, 1)).astype(np.float32))) for _ in range(3)]

    def run(compiled):
        eager.manual_seed(1)
        model = nn.Linear(3, 1)
        opt = getattr(eager.optim, name)(model.parameters(), **kw)

        def step(x, y):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        fn = compile(step, backend="python") if compiled else step
        out = []
        for k in range(10):
            loss = fn(*data[k % 3])
            out.append((loss.item(), [p.detach().numpy().copy() for p in model.parameters()]))
        return out, fn

    eager_run, _ = run(False)
    compiled_run, fn = run(True)
    for (le, pe), (lc, pc) in zip(eager_run, compiled_run):
        assert le == lc
        for a, b in zip(pe, pc):
            np.testing.assert_array_equal(a, b)
    s = fn.stats()
    assert s["hits"] > s["traces"], s
