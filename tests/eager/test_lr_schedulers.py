"""eager.optim.lr_scheduler: learning rates (and OneCycleLR's momentum) over 20+ epochs
against torch.optim.lr_scheduler, closed forms (step(epoch)), state dicts and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import eager
from eager import nn

SCHEDULERS = {
    "StepLR": dict(step_size=3, gamma=0.5),
    "MultiStepLR": dict(milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": dict(gamma=0.9),
    "LambdaLR": dict(lr_lambda=lambda e: 1.0 / (1 + e)),
    "MultiplicativeLR": dict(lr_lambda=lambda e: 0.95),
    "ConstantLR": dict(factor=0.25, total_iters=4),
    "LinearLR": dict(start_factor=0.1, end_factor=0.9, total_iters=7),
    "PolynomialLR": dict(total_iters=8, power=2.0),
    "CosineAnnealingLR": dict(T_max=6, eta_min=0.001),
    "OneCycleLR": dict(max_lr=0.5, total_steps=25),
    "OneCycleLR-3phase-linear": dict(max_lr=[0.5, 0.2], epochs=5, steps_per_epoch=5,
                                     three_phase=True, anneal_strategy="linear",
                                     pct_start=0.4),
    "OneCycleLR-adam": dict(max_lr=0.5, total_steps=25, base_momentum=0.8),
}


def _optimizer(lib, adam=False):
    groups = [{"params": [lib.nn.Parameter(lib.zeros(2))]},
              {"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.05}]
    if adam:
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _trajectory(lib, name, epochs=24):
    kw = dict(SCHEDULERS[name])
    opt = _optimizer(lib, adam=name.endswith("adam"))
    sched = getattr(lib.optim.lr_scheduler, name.split("-")[0])(opt, **kw)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch: "lr_scheduler.step() before optimizer.step()"
        for _ in range(epochs):
            g = opt.param_groups
            out.append((sched.get_last_lr(), [x["lr"] for x in g],
                        [x.get("momentum", x.get("betas", (None,))[0]) for x in g]))
            opt.step()
            sched.step()
    return out, sched


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_scheduler_matches_torch(name):
    torch = pytest.importorskip("torch")
    epochs = 24 if name.startswith("OneCycle") else 30
    ours, _ = _trajectory(eager, name, epochs)
    theirs, _ = _trajectory(torch, name, epochs)
    np.testing.assert_allclose(np.array(ours, dtype=float), np.array(theirs, dtype=float),
                               rtol=1e-12, atol=1e-15)


def test_cosine_annealing_values_and_closed_form():
    opt = _optimizer(eager)
    s = eager.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.01)
    lrs = []
    for _ in range(21):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        s.step()
    want = [0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * t / 10)) / 2 for t in range(21)]
    np.testing.assert_allclose(lrs, want, rtol=1e-12)     # and it cycles back after T_max
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        s.step(3)                                           # a jump: the closed form
    assert opt.param_groups[0]["lr"] == pytest.approx(want[3], rel=1e-12)


def test_one_cycle_shape():
    opt = _optimizer(eager)
    s = eager.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.3)
    lrs, moms = [], []
    for _ in range(10):
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        opt.step()
        if len(lrs) < 10:
            s.step()
    assert lrs[0] == pytest.approx(1.0 / 25) and max(lrs) == pytest.approx(1.0)
    assert int(np.argmax(lrs)) == 2 and lrs[-1] == pytest.approx(1.0 / 25 / 1e4)
    assert moms[0] == 0.95 and min(moms) == pytest.approx(0.85) and moms[-1] == pytest.approx(0.95)
    with pytest.raises(ValueError, match="Tried to step 11 times. The specified number of total "
                                         "steps is 10"):
        s.step()
        s.step()


def test_sequential_and_chained_match_torch():
    torch = pytest.importorskip("torch")

    def run(lib, kind):
        opt = _optimizer(lib)
        ls = lib.optim.lr_scheduler
        if kind == "seq":
            s = ls.SequentialLR(opt, [ls.LinearLR(opt, start_factor=0.2, total_iters=4),
                                      ls.CosineAnnealingLR(opt, T_max=8),
                                      ls.StepLR(opt, step_size=2, gamma=0.5)],
                                milestones=[4, 12])
        else:
            s = ls.ChainedScheduler([ls.ConstantLR(opt, factor=0.5, total_iters=3),
                                     ls.ExponentialLR(opt, gamma=0.9)])
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(20):
                out.append([g["lr"] for g in opt.param_groups] + s.get_last_lr())
                opt.step()
                s.step()
        return out

    for kind in ("seq", "chain"):
        np.testing.assert_allclose(run(eager, kind), run(torch, kind), rtol=1e-12)


def test_reduce_lr_on_plateau_matches_torch():
    torch = pytest.importorskip("torch")
    metrics = [1.0, 0.9, 0.95, 0.96, 0.97, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.6, 0.7, 0.8,
               0.9, 1.0, 1.1, 1.2, 1.3]
    configs = [dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2),
               dict(patience=1, threshold=0.05, threshold_mode="abs", min_lr=[0.02, 0.001]),
               dict(patience=0, factor=0.1, min_lr=0.0099, eps=1e-3)]
    for cfg in configs:
        res = []
        for lib in (eager, torch):
            opt = _optimizer(lib)
            s = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **cfg)
            out = []
            for m in metrics:
                opt.step()
                s.step(m)
                out.append([g["lr"] for g in opt.param_groups] + s.get_last_lr())
            res.append(out)
        np.testing.assert_allclose(res[0], res[1], rtol=1e-12, err_msg=str(cfg))


def test_state_dict_resume():
    def make():
        opt = _optimizer(eager)
        ls = eager.optim.lr_scheduler
        return opt, ls.SequentialLR(opt, [ls.LinearLR(opt, start_factor=0.5, total_iters=3),
                                          ls.CosineAnnealingLR(opt, T_max=5)], milestones=[3])

    opt, s = make()
    for _ in range(4):
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and len(sd["_schedulers"]) == 2
    lr_now = opt.param_groups[0]["lr"]
    more = []
    for _ in range(4):
        s.step()
        more.append(opt.param_groups[0]["lr"])
    opt2, s2 = make()
    s2.load_state_dict(sd)
    opt2.param_groups[0]["lr"] = lr_now
    again = []
    for _ in range(4):
        s2.step()
        again.append(opt2.param_groups[0]["lr"])
    assert again == pytest.approx(more, rel=1e-12)
    p = eager.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(eager), mode="max")
    p.step(1.0)
    p2 = eager.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(eager))
    p2.load_state_dict(p.state_dict())
    assert p2.mode == "max" and p2.best == 1.0 and p2._is_better(2.0, p2.best)


ERRORS = [
    lambda ls, opt: ls.CosineAnnealingLR("not an optimizer", T_max=3),
    lambda ls, opt: ls.LinearLR(opt, start_factor=0.0),
    lambda ls, opt: ls.LinearLR(opt, end_factor=1.5),
    lambda ls, opt: ls.ConstantLR(opt, factor=2.0),
    lambda ls, opt: ls.OneCycleLR(opt, max_lr=1.0),
    lambda ls, opt: ls.OneCycleLR(opt, max_lr=1.0, total_steps=0),
    lambda ls, opt: ls.OneCycleLR(opt, max_lr=1.0, epochs=2, steps_per_epoch=0),
    lambda ls, opt: ls.OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=1),
    lambda ls, opt: ls.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="exp"),
    lambda ls, opt: ls.OneCycleLR(opt, max_lr=[1.0], total_steps=5),
    lambda ls, opt: ls.SequentialLR(opt, [], milestones=[]),
    lambda ls, opt: ls.SequentialLR(opt, [ls.StepLR(opt, 2)], milestones=[1]),
    lambda ls, opt: ls.SequentialLR(opt, [ls.ReduceLROnPlateau(opt)], milestones=[]),
    lambda ls, opt: ls.ChainedScheduler([]),
    lambda ls, opt: ls.ReduceLROnPlateau(opt, factor=1.0),
    lambda ls, opt: ls.ReduceLROnPlateau(opt, mode="up"),
    lambda ls, opt: ls.ReduceLROnPlateau(opt, threshold_mode="x"),
    lambda ls, opt: ls.ReduceLROnPlateau(opt, min_lr=[0.1]),
    lambda ls, opt: ls.LambdaLR(opt, [lambda e: 1.0]),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_match_torch(k):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        ERRORS[k](torch.optim.lr_scheduler, _optimizer(torch))
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[k](eager.optim.lr_scheduler, _optimizer(eager))
    assert str(ours.value) == str(theirs.value)


def test_one_cycle_needs_momentum():
    opt = eager.optim.Adagrad([nn.Parameter(eager.zeros(1))])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        eager.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5)
    eager.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5, cycle_momentum=False)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "ConstantLR",
                                  "LinearLR", "PolynomialLR", "CosineAnnealingLR"])
def test_closed_forms_match_torch(name):
    torch = pytest.importorskip("torch")
    res = []
    for lib in (eager, torch):
        opt = _optimizer(lib)
        s = getattr(lib.optim.lr_scheduler, name)(opt, **SCHEDULERS[name])
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (5, 2, 11, 0, 7, 30):
                s.step(epoch)
                out.append([g["lr"] for g in opt.param_groups])
        res.append(out)
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)
