"""eager.optim.RMSprop and Adagrad: 20-step trajectories and state against PyTorch
(foreach=False), defaults, errors, state_dict resume, and compiled train steps."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager
from eager import nn
from tests.eager.test_optim import check_same, init_arrays, run_eager, run_torch

RMSPROP_CONFIGS = [
    {},
    {"lr": 0.01, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.1},
    {"lr": 0.005, "momentum": 0.9},
    {"lr": 0.01, "centered": True},
    {"lr": 0.01, "centered": True, "momentum": 0.5, "maximize": True, "weight_decay": 0.01},
    # lerp weight above 0.5.  (PyTorch's CPU kernels fuse multiply-adds, NumPy does not: a
    # centered variance that cancels turns that ulp into 1e-3 in float32 or 1e-11 in
    # float64 with a tiny lr; so this one in float64, with a larger lr.)
    {"lr": 0.1, "alpha": 0.3, "centered": True, "float64_only": True},
]

ADAGRAD_CONFIGS = [
    {},
    {"lr": 0.1, "lr_decay": 0.1},
    {"lr": 0.05, "weight_decay": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6},
    {"lr": 0.05, "maximize": True, "lr_decay": 0.01},
]

STEPS = 20


@pytest.mark.parametrize("cfg,dtype", [(c, d) for c in RMSPROP_CONFIGS
                                       for d in (np.float64, np.float32)
                                       if d == np.float64 or not c.get("float64_only")])
def test_rmsprop_matches_torch(cfg, dtype):
    torch = pytest.importorskip("torch")
    cfg = {k: v for k, v in cfg.items() if k != "float64_only"}
    arrays = init_arrays(dtype)
    ours, opt = run_eager(lambda p: eager.optim.RMSprop(p, **cfg), arrays, STEPS)
    theirs, topt = run_torch(lambda p: torch.optim.RMSprop(p, foreach=False, **cfg), arrays,
                             STEPS)
    check_same(ours, theirs, dtype)
    st = opt.state[opt.param_groups[0]["params"][0]]
    tst = topt.state[topt.param_groups[0]["params"][0]]
    assert set(st) == set(tst)
    assert st["step"].dtype == eager.float32 and st["step"].item() == STEPS
    # float32 state: 20 steps of PyTorch's fused multiply-adds vs NumPy's two roundings
    tol = dict(rtol=1e-12, atol=1e-13) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-6)
    for key in set(st) - {"step"}:
        np.testing.assert_allclose(st[key].numpy(), tst[key].numpy(), **tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cfg", ADAGRAD_CONFIGS)
def test_adagrad_matches_torch(cfg, dtype):
    torch = pytest.importorskip("torch")
    arrays = init_arrays(dtype)
    ours, opt = run_eager(lambda p: eager.optim.Adagrad(p, **cfg), arrays, STEPS)
    theirs, topt = run_torch(lambda p: torch.optim.Adagrad(p, foreach=False, **cfg), arrays,
                             STEPS)
    check_same(ours, theirs, dtype)
    st = opt.state[opt.param_groups[0]["params"][0]]
    tst = topt.state[topt.param_groups[0]["params"][0]]
    assert set(st) == set(tst) == {"step", "sum"}
    check_same([st["sum"].numpy()], [tst["sum"].numpy()], dtype)


def test_defaults_and_param_groups_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("RMSprop", "Adagrad"):
        ours = getattr(eager.optim, name)([nn.Parameter(eager.zeros(2))])
        theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))])
        g, tg = ours.param_groups[0], theirs.param_groups[0]
        assert {k: v for k, v in g.items() if k != "params"} == \
            {k: v for k, v in tg.items() if k != "params"}


def test_adagrad_state_exists_before_the_first_step():
    p = nn.Parameter(eager.ones(3))
    opt = eager.optim.Adagrad([p], initial_accumulator_value=0.25)
    assert opt.state[p]["step"].item() == 0.0
    np.testing.assert_array_equal(opt.state[p]["sum"].numpy(), [0.25] * 3)


ERRORS = [
    ("RMSprop", {"lr": -1.0}), ("RMSprop", {"eps": -1.0}), ("RMSprop", {"momentum": -0.1}),
    ("RMSprop", {"weight_decay": -1.0}), ("RMSprop", {"alpha": -0.5}),
    ("Adagrad", {"lr": -1.0}), ("Adagrad", {"lr_decay": -1.0}),
    ("Adagrad", {"weight_decay": -1.0}), ("Adagrad", {"initial_accumulator_value": -1.0}),
    ("Adagrad", {"eps": -1.0}),
]


@pytest.mark.parametrize("name,kw", ERRORS)
def test_errors_match_torch(name, kw):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kw)
    with pytest.raises(ValueError) as ours:
        getattr(eager.optim, name)([nn.Parameter(eager.zeros(2))], **kw)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name,kw", [("RMSprop", {"lr": 0.01, "momentum": 0.5,
                                                  "centered": True}),
                                     ("Adagrad", {"lr": 0.1, "lr_decay": 0.05})])
def test_state_dict_resume_is_exact(name, kw):
    arrays = init_arrays(np.float64)
    full, _ = run_eager(lambda p: getattr(eager.optim, name)(p, **kw), arrays, 6)
    half, opt = run_eager(lambda p: getattr(eager.optim, name)(p, **kw), arrays, 3)
    sd = opt.state_dict()
    params = [nn.Parameter(eager.tensor(a)) for a in half]
    opt2 = getattr(eager.optim, name)(params, **kw)
    opt2.load_state_dict(sd)
    from tests.eager.test_optim import grad_of
    for k in range(3, 6):
        opt2.zero_grad()
        for p in params:
            p.grad = eager.tensor(grad_of(p.detach().numpy(), k))
        opt2.step()
    for a, b in zip(params, full):
        np.testing.assert_array_equal(a.detach().numpy(), b)


@pytest.mark.parametrize("name,kw", [("RMSprop", {"lr": 0.01, "momentum": 0.5,
                                                  "centered": True, "weight_decay": 0.01}),
                                     ("Adagrad", {"lr": 0.1, "lr_decay": 0.05})])
def test_compiled_train_step_equals_eager(name, kw):
    rng = np.random.default_rng(0)
    data = [(eager.tensor(rng.standard_normal((6, 3))), eager.tensor(rng.standard_normal((6, 1))))
            for _ in range(6)]

    def make():
        eager.manual_seed(1)
        model = nn.Linear(3, 1).double()
        opt = getattr(eager.optim, name)(model.parameters(), **kw)

        def step(x, y):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return model, step

    m_e, step_e = make()
    m_c, step_c = make()
    cstep = compiler.compile(step_c)
    for k, (x, y) in enumerate(data):
        le, lc = step_e(x, y), cstep(x, y)
        if k == 1:
            compiler.wait()
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-12)
    for a, b in zip(m_c.parameters(), m_e.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    assert cstep.stats()["hits"] >= 3
