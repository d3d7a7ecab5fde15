"""eager.optim: SGD/Adam/AdamW trajectories against PyTorch (foreach=False), param groups,
state dicts, schedulers, and that steps are in-place tensor ops a tracer can see."""

from __future__ import annotations

import numpy as np
import pytest

import eager
from eager import nn
from eager._state import STATE
from eager.tracing import TracerHooks

RNG = np.random.default_rng(7)
SHAPES = [(3, 4), (4,), (2, 1, 3)]


def init_arrays(dtype):
    return [RNG.standard_normal(s).astype(dtype) for s in SHAPES]


def grad_of(p: np.ndarray, k: int) -> np.ndarray:
    """A deterministic, parameter-dependent 'gradient' (same for both libraries)."""
    return (np.sin(3.0 * p) + 0.1 * p ** 3 - 0.05 * k).astype(p.dtype)


def run_eager(make_opt, arrays, steps, on_step=None, skip=()):
    params = [nn.Parameter(eager.tensor(a)) for a in arrays]
    opt = make_opt(params)
    for k in range(steps):
        opt.zero_grad()
        for i, p in enumerate(params):
            if i not in skip:
                p.grad = eager.tensor(grad_of(p.detach().numpy(), k))
        opt.step()
        if on_step:
            on_step(opt, k)
    return [p.detach().numpy().copy() for p in params], opt


def run_torch(make_opt, arrays, steps, on_step=None, skip=()):
    import torch
    params = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    opt = make_opt(params)
    for k in range(steps):
        opt.zero_grad()
        for i, p in enumerate(params):
            if i not in skip:
                p.grad = torch.tensor(grad_of(p.detach().numpy(), k))
        opt.step()
        if on_step:
            on_step(opt, k)
    return [p.detach().numpy().copy() for p in params], opt


def check_same(ours, theirs, dtype):
    tol = {"rtol": 1e-12, "atol": 1e-13} if dtype == np.float64 else {"rtol": 2e-5, "atol": 2e-6}
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, **tol)


SGD_CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.05, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
    {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "weight_decay": 0.1},
    {"lr": 0.02, "momentum": 0.5, "maximize": True},
]

ADAM_CONFIGS = [
    {"lr": 0.01},
    {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.05},
    {"lr": 0.01, "amsgrad": True},
    {"lr": 0.01, "maximize": True, "weight_decay": 0.01},
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cfg", SGD_CONFIGS)
def test_sgd_matches_torch(cfg, dtype):
    torch = pytest.importorskip("torch")
    arrays = init_arrays(dtype)
    ours, _ = run_eager(lambda p: eager.optim.SGD(p, **cfg), arrays, 8)
    theirs, _ = run_torch(lambda p: torch.optim.SGD(p, foreach=False, **cfg), arrays, 8)
    check_same(ours, theirs, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("cfg", ADAM_CONFIGS)
def test_adam_matches_torch(name, cfg, dtype):
    torch = pytest.importorskip("torch")
    arrays = init_arrays(dtype)
    ours, opt = run_eager(lambda p: getattr(eager.optim, name)(p, **cfg), arrays, 8)
    theirs, topt = run_torch(lambda p: getattr(torch.optim, name)(p, foreach=False, **cfg),
                             arrays, 8)
    check_same(ours, theirs, dtype)
    st = opt.state[opt.param_groups[0]["params"][0]]
    step = st["step"]
    assert isinstance(step, eager.Tensor) and step.shape == () and step.dtype == eager.float32
    assert step.item() == 8.0
    tst = topt.state[topt.param_groups[0]["params"][0]]
    for key in ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if cfg.get("amsgrad") else ()):
        check_same([st[key].numpy()], [tst[key].numpy()], dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_capturable_path_matches_torch(name, dtype):
    """The tensor-step path (used while tracing) follows PyTorch's default path too."""
    torch = pytest.importorskip("torch")
    arrays = init_arrays(dtype)
    cfg = {"lr": 0.01, "weight_decay": 0.02, "amsgrad": True}
    ours, _ = run_eager(lambda p: getattr(eager.optim, name)(p, capturable=True, **cfg),
                        arrays, 6)
    theirs, _ = run_torch(lambda p: getattr(torch.optim, name)(p, foreach=False, **cfg),
                          arrays, 6)
    check_same(ours, theirs, dtype)


def test_lr_change_in_param_groups_takes_effect():
    torch = pytest.importorskip("torch")
    arrays = init_arrays(np.float64)

    def change(opt, k):
        if k == 2:
            for g in opt.param_groups:
                g["lr"] = 0.3
        if k == 4:
            opt.param_groups[0]["momentum"] = 0.5

    ours, _ = run_eager(lambda p: eager.optim.SGD(p, lr=0.01, momentum=0.9), arrays, 7, change)
    theirs, _ = run_torch(lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, foreach=False),
                          arrays, 7, change)
    check_same(ours, theirs, np.float64)
    frozen, _ = run_eager(lambda p: eager.optim.SGD(p, lr=0.01, momentum=0.9), arrays, 7)
    assert not np.allclose(frozen[0], ours[0])


def test_step_lr_scheduler_matches_torch():
    torch = pytest.importorskip("torch")
    arrays = init_arrays(np.float64)
    lrs_e, lrs_t = [], []
    sched = {}

    def step_e(opt, k):
        if "e" not in sched:
            sched["e"] = eager.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        sched["e"].step()
        lrs_e.append(sched["e"].get_last_lr()[0])

    def step_t(opt, k):
        if "t" not in sched:
            sched["t"] = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        sched["t"].step()
        lrs_t.append(sched["t"].get_last_lr()[0])

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about the order of step() calls
        ours, _ = run_eager(lambda p: eager.optim.Adam(p, lr=0.1), arrays, 7, step_e)
        theirs, _ = run_torch(lambda p: torch.optim.Adam(p, lr=0.1, foreach=False), arrays, 7,
                              step_t)
    assert lrs_e == pytest.approx(lrs_t)
    check_same(ours, theirs, np.float64)


def test_step_lr_standalone():
    p = nn.Parameter(eager.zeros(2))
    opt = eager.optim.SGD([p], lr=1.0)
    s = eager.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.1)
    lrs = []
    for _ in range(7):
        lrs.append(opt.param_groups[0]["lr"])
        s.step()
    assert lrs == pytest.approx([1, 1, 1, 0.1, 0.1, 0.1, 0.01])
    sd = s.state_dict()
    assert sd["last_epoch"] == 7 and "optimizer" not in sd


def test_params_without_grad_are_skipped():
    torch = pytest.importorskip("torch")
    arrays = init_arrays(np.float64)
    ours, opt = run_eager(lambda p: eager.optim.Adam(p, lr=0.1), arrays, 3, skip=(1,))
    theirs, _ = run_torch(lambda p: torch.optim.Adam(p, lr=0.1, foreach=False), arrays, 3,
                          skip=(1,))
    check_same(ours, theirs, np.float64)
    np.testing.assert_array_equal(ours[1], arrays[1])
    assert len(opt.state) == 2


@pytest.mark.parametrize("name,kw", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                     ("Adam", {"lr": 0.1, "amsgrad": True}),
                                     ("AdamW", {"lr": 0.1})])
def test_state_dict_resume_is_exact(name, kw):
    arrays = init_arrays(np.float64)
    full, _ = run_eager(lambda p: getattr(eager.optim, name)(p, **kw), arrays, 6)
    half, opt = run_eager(lambda p: getattr(eager.optim, name)(p, **kw), arrays, 3)
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sd["param_groups"][0]["params"] == [0, 1, 2]
    assert sorted(sd["state"]) == [0, 1, 2]
    # a fresh optimizer on fresh parameters with the saved values, then 3 more steps
    params = [nn.Parameter(eager.tensor(a)) for a in half]
    opt2 = getattr(eager.optim, name)(params, **kw)
    opt2.load_state_dict(sd)
    if name != "SGD":
        step = opt2.state[params[0]]["step"]
        assert step.shape == () and step.dtype == eager.float32 and step.item() == 3
        # loaded state is a copy: stepping opt2 leaves sd alone
        before = sd["state"][0]["exp_avg"].numpy().copy()
    for k in range(3, 6):
        opt2.zero_grad()
        for p in params:
            p.grad = eager.tensor(grad_of(p.detach().numpy(), k))
        opt2.step()
    for a, p in zip(full, params):
        np.testing.assert_allclose(p.detach().numpy(), a, rtol=1e-13)
    if name != "SGD":
        np.testing.assert_array_equal(sd["state"][0]["exp_avg"].numpy(), before)


def test_load_state_dict_errors_and_dtype_cast():
    a = [nn.Parameter(eager.zeros(2)), nn.Parameter(eager.zeros(3))]
    opt = eager.optim.Adam(a)
    for p in a:
        p.grad = eager.ones(*p.shape)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        eager.optim.Adam([nn.Parameter(eager.zeros(2))]).load_state_dict(sd)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        eager.optim.Adam([{"params": [a[0]]}, {"params": [a[1]]}]).load_state_dict(sd)
    b = [nn.Parameter(eager.zeros(2, dtype=eager.float64)),
         nn.Parameter(eager.zeros(3, dtype=eager.float64))]
    opt_b = eager.optim.Adam(b)
    opt_b.load_state_dict(sd)
    assert opt_b.state[b[0]]["exp_avg"].dtype == eager.float64
    assert opt_b.state[b[0]]["step"].dtype == eager.float32  # step is never cast


def test_param_groups_and_add_param_group():
    torch = pytest.importorskip("torch")
    arrays = init_arrays(np.float64)

    def groups(params, lib):
        opt = lib.optim.SGD([{"params": params[:2]}, {"params": [params[2]], "lr": 0.5}],
                            lr=0.05, momentum=0.9, **({} if lib is eager else {"foreach": False}))
        return opt

    ours, opt = run_eager(lambda p: groups(p, eager), arrays, 4)
    theirs, _ = run_torch(lambda p: groups(p, torch), arrays, 4)
    check_same(ours, theirs, np.float64)
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[0]["lr"] == 0.05
    assert opt.param_groups[1]["momentum"] == 0.9
    extra = nn.Parameter(eager.zeros(2))
    opt.add_param_group({"params": extra, "lr": 1.0})
    assert opt.param_groups[2]["params"] == [extra] and opt.param_groups[2]["momentum"] == 0.9
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [extra]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {nn.Parameter(eager.zeros(1))}})
    with pytest.raises(ValueError, match="empty parameter list"):
        eager.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        eager.optim.SGD([eager.ones(2, requires_grad=True) * 2], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov"):
        eager.optim.SGD([extra], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        eager.optim.Adam([extra], lr=-1)


def test_zero_grad_and_closure_and_repr():
    torch = pytest.importorskip("torch")
    p = nn.Parameter(eager.tensor([1.0, 2.0]))
    opt = eager.optim.SGD([p], lr=0.1)
    p.grad = eager.ones(2)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and not p.grad.numpy().any()
    opt.zero_grad()
    assert p.grad is None

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6])
    tp = [torch.nn.Parameter(torch.zeros(2))]
    for name, kw in [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {}), ("AdamW", {})]:
        assert repr(getattr(eager.optim, name)([p], **kw)) == \
            repr(getattr(torch.optim, name)(tp, **kw))


class _Recorder(TracerHooks):
    """A stand-in compiler tracer: records ops, in-place writes and data reads."""

    def __init__(self):
        self.ops, self.inplace, self.branches = [], [], []

    def record(self, op, args, params, out):
        self.ops.append(op.name)

    def on_inplace(self, target, result):
        self.inplace.append(target)

    def on_branch(self, t, value, what):
        self.branches.append(what)


@pytest.mark.parametrize("name,kw", [("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
                                     ("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1})])
def test_step_is_inplace_tensor_ops_under_a_tracer(name, kw):
    """Under a tracer, every parameter/state update is an in-place op the tracer sees, and
    Adam never reads the step count as a Python number (it stays a tensor)."""
    arrays = init_arrays(np.float64)
    ref, _ = run_eager(lambda p: getattr(eager.optim, name)(p, **kw), arrays, 3)
    params = [nn.Parameter(eager.tensor(a)) for a in arrays]
    opt = getattr(eager.optim, name)(params, **kw)
    rec = _Recorder()
    for k in range(3):
        opt.zero_grad()
        for p in params:
            p.grad = eager.tensor(grad_of(p.detach().numpy(), k))
        STATE.tracer = rec
        try:
            opt.step()
        finally:
            STATE.tracer = None
    assert rec.branches == []
    assert all(any(t is p for t in rec.inplace) for p in params)
    if name != "SGD":
        st = opt.state[params[0]]
        assert any(t is st["step"] for t in rec.inplace)
        assert any(t is st["exp_avg"] for t in rec.inplace)
    for a, p in zip(ref, params):
        np.testing.assert_allclose(p.detach().numpy(), a, rtol=1e-12)


def test_adam_float32_state_and_no_grad_graph():
    p = nn.Parameter(eager.randn(3))
    opt = eager.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert p.grad_fn is None and p.requires_grad and p.is_leaf
    st = opt.state[p]
    assert st["exp_avg"].dtype == eager.float32 and not st["exp_avg"].requires_grad


@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("weight_decay,amsgrad,maximize",
                         [(0, False, False), (0.1, False, True), (0.1, True, False),
                          (0, True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_numpy_path_equals_the_tensor_path_bitwise(cls, weight_decay, amsgrad, maximize,
                                                        dtype, monkeypatch):
    """Adam's step on plain NumPy arrays (the eager fast path) computes exactly what its
    tensor code computes, and bumps the same version counters."""
    import eager.optim.adam as adam_mod

    def run():
        rng = np.random.default_rng(0)
        ps = [eager.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
              for s in [(3, 4), (5,)]]
        opt = getattr(eager.optim, cls)(ps, lr=0.01, weight_decay=weight_decay,
                                         amsgrad=amsgrad, maximize=maximize)
        for _ in range(4):
            for p in ps:
                p.grad = eager.tensor(rng.standard_normal(p.shape).astype(dtype))
            opt.step()
        st = [opt.state[p][k]._data.copy() for p in ps for k in sorted(opt.state[p])]
        return [p._data.copy() for p in ps] + st, [p._version[0] for p in ps]

    real, taken = adam_mod._numpy_step, []
    monkeypatch.setattr(adam_mod, "_numpy_step", lambda *a: taken.append(real(*a)) or taken[-1])
    fast, fast_versions = run()
    assert taken and all(taken)          # the NumPy path ran for every parameter
    monkeypatch.setattr(adam_mod, "_numpy_step", lambda *a, **k: False)
    slow, slow_versions = run()
    assert fast_versions == slow_versions
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("momentum,dampening,nesterov,weight_decay,maximize",
                         [(0, 0, False, 0, False), (0.9, 0, False, 0, False),
                          (0.9, 0, True, 0.01, False), (0.5, 0.3, False, 0.1, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd_numpy_path_equals_the_tensor_path_bitwise(momentum, dampening, nesterov,
                                                       weight_decay, maximize, dtype,
                                                       monkeypatch):
    """SGD's step on plain NumPy arrays computes exactly what its tensor code computes
    and bumps the same version counters (parameters and momentum buffers)."""
    import eager.optim.sgd as sgd_mod

    def run():
        rng = np.random.default_rng(1)
        ps = [eager.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
              for s in [(3, 4), (5,)]]
        opt = eager.optim.SGD(ps, lr=0.05, momentum=momentum, dampening=dampening,
                              nesterov=nesterov, weight_decay=weight_decay,
                              maximize=maximize)
        for _ in range(4):
            for p in ps:
                p.grad = eager.tensor(rng.standard_normal(p.shape).astype(dtype))
            opt.step()
        bufs = [opt.state[p]["momentum_buffer"] for p in ps] if momentum else []
        return ([p._data.copy() for p in ps] + [b._data.copy() for b in bufs],
                [p._version[0] for p in ps] + [b._version[0] for b in bufs])

    real, taken = sgd_mod._numpy_step, []
    monkeypatch.setattr(sgd_mod, "_numpy_step", lambda *a: taken.append(real(*a)) or taken[-1])
    fast, fast_versions = run()
    assert sum(taken) >= 6          # every step after the first momentum step
    monkeypatch.setattr(sgd_mod, "_numpy_step", lambda *a, **k: False)
    slow, slow_versions = run()
    assert fast_versions == slow_versions
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
