"""Property-based: random training programs, compiled and eager, stay equal step after step
while the training loop changes its Python state between steps.

A program is a small MLP (random widths, activation, optional dropout and layer norm) or a
recurrent cell (RNN, GRU, LSTM) looped over a sequence whose length changes with the batch
(so traces diverge and, past ``max_traces``, each module call is compiled on its own), a loss
(cross-entropy or MSE), an optimizer (SGD with or without momentum, Nesterov and weight
decay, Adam, AdamW, AMSGrad, RMSprop, Adagrad) and a pattern: the whole step compiled
(``zero_grad``, forward, ``backward``, optional gradient clipping, ``step`` in one function)
or the model compiled with ``backward`` and ``step`` outside.  Between steps the plan does
what training loops do: change ``lr``, ``weight_decay`` or ``momentum`` in the param group,
step a scheduler, toggle ``train()``/``eval()``, change the batch size or the sequence
length, skip ``zero_grad`` (gradient accumulation), freeze or unfreeze a parameter, edit
a weight in place under ``no_grad``, or read ``loss.item()``.

Twin worlds (same seed) run eagerly and compiled with the same changes; after every step
the losses, parameters, gradients and optimizer states must be equal (``compiler.wait()``
after the second step, so later steps run the fused kernels).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
import eager as torch
from eager import nn
from eager.nn import functional as F

OPTIMIZERS = ["sgd", "momentum", "nesterov", "sgd_wd", "adam", "adamw", "amsgrad", "rmsprop",
              "adagrad"]
CHANGES = ["none", "lr", "weight_decay", "momentum", "sched", "train_eval", "batch", "length",
           "accumulate", "freeze", "edit", "item"]
RTOL = {"float32": 2e-4, "float64": 1e-9}


def make_optimizer(name, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.1)
    if name == "momentum":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9)
    if name == "nesterov":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True)
    if name == "sgd_wd":
        return torch.optim.SGD(params, lr=0.1, weight_decay=0.01)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-2)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-2, weight_decay=0.05)
    if name == "amsgrad":
        return torch.optim.Adam(params, lr=1e-2, amsgrad=True)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=1e-2, momentum=0.5)
    return torch.optim.Adagrad(params, lr=0.1)


class Recurrent(nn.Module):
    """A cell looped over the time steps of ``x`` (T, B, 3), then a linear head: the trip
    count is data."""

    def __init__(self, kind):
        super().__init__()
        self.cell = {"rnn": nn.RNNCell, "gru": nn.GRUCell, "lstm": nn.LSTMCell}[kind](3, 4)
        self.head = nn.Linear(4, 2)
        self.lstm = kind == "lstm"

    def forward(self, x):
        h = None
        for t in range(x.shape[0]):
            h = self.cell(x[t], h)
        return self.head(h[0] if self.lstm else h)


class World:
    """One side of the twins: model, optimizer, scheduler, data and the loop's flags."""

    def __init__(self, spec):
        torch.manual_seed(spec["seed"])
        dtype = getattr(torch, spec["dtype"])
        self.length = 2 if spec["arch"] != "mlp" else None
        layers, width = [], 3
        for h in spec["widths"]:
            layers.append(nn.Linear(width, h))
            if spec["norm"]:
                layers.append(nn.LayerNorm(h))
            layers.append({"tanh": nn.Tanh, "relu": nn.ReLU, "sigmoid": nn.Sigmoid}[spec["act"]]())
            if spec["dropout"]:
                layers.append(nn.Dropout(0.25))
            width = h
        layers.append(nn.Linear(width, 2))
        self.model = (nn.Sequential(*layers) if spec["arch"] == "mlp"
                      else Recurrent(spec["arch"])).to(dtype)
        self.opt = make_optimizer(spec["opt"], self.model.parameters())
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=2, gamma=0.5)
        self.spec = spec
        self.dtype = dtype
        self.batch = 6
        self.accumulate = False
        self.items = []
        self.record_item = False

    def data(self, i):
        """The batch of step i: the same numbers in both worlds."""
        rng = np.random.default_rng(100 + i)
        shape = (self.batch, 3) if self.length is None else (self.length, self.batch, 3)
        x = torch.tensor(rng.standard_normal(shape), dtype=self.dtype)
        if self.spec["loss"] == "ce":
            y = torch.tensor(rng.integers(0, 2, self.batch))
        else:
            y = torch.tensor(rng.standard_normal((self.batch, 2)), dtype=self.dtype)
        return x, y

    def loss_of(self, out, y):
        if self.spec["loss"] == "ce":
            return F.cross_entropy(out, y)
        return F.mse_loss(out, y)

    def step(self, model, x, y):
        """One training step; ``model`` is the module or its compiled twin."""
        if not self.accumulate:
            self.opt.zero_grad(set_to_none=self.spec["set_to_none"])
        loss = self.loss_of(model(x), y)
        loss.backward()
        if self.spec["clip"]:
            nn.utils.clip_grad_norm_(self.model.parameters(), 0.5)
        self.opt.step()
        return loss

    def change(self, what, i):
        group = self.opt.param_groups[0]
        params = list(self.model.parameters())
        if what == "lr":
            group["lr"] = group["lr"] * (0.5 + 0.25 * (i % 3))
        elif what == "weight_decay" and "weight_decay" in group:
            group["weight_decay"] = 0.01 * (i % 4)
        elif what == "momentum" and group.get("momentum", 0):
            group["momentum"] = 0.5 + 0.1 * (i % 4)
        elif what == "sched":
            self.sched.step()
        elif what == "train_eval":
            self.model.train(not self.model.training)
        elif what == "batch":
            self.batch = 6 + 2 * (i % 3)
        elif what == "length" and self.length is not None:
            self.length = 1 + (i * 7) % 9
        elif what == "accumulate":
            self.accumulate = not self.accumulate
        elif what == "freeze":
            params[0].requires_grad_(not params[0].requires_grad)
        elif what == "edit":
            with torch.no_grad():
                params[-1].mul_(0.5)


def state_of(w):
    """Everything a step may change: parameters, gradients, optimizer state, lr."""
    out = {}
    for k, p in enumerate(w.model.parameters()):
        out[f"param{k}"] = p.detach().numpy().copy()
        out[f"grad{k}"] = None if p.grad is None else p.grad.numpy().copy()
        for name, v in w.opt.state.get(p, {}).items():
            out[f"state{k}.{name}"] = v.numpy().copy() if isinstance(v, torch.Tensor) else v
    out["lr"] = w.opt.param_groups[0]["lr"]
    out["items"] = list(w.items)
    return out


def assert_same_state(got, want, rtol, what):
    assert got.keys() == want.keys(), (what, sorted(got.keys() ^ want.keys()))
    for k in want:
        a, b = got[k], want[k]
        if isinstance(b, np.ndarray):
            assert isinstance(a, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, \
                (what, k)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=f"{what}: {k}")
        elif isinstance(b, list):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=f"{what}: {k}")
        else:
            assert type(a) is type(b) and a == b, (what, k, a, b)


specs = st.fixed_dictionaries({
    "seed": st.integers(0, 2**16),
    "dtype": st.sampled_from(["float32", "float64"]),
    "arch": st.sampled_from(["mlp", "mlp", "rnn", "gru", "lstm"]),
    "widths": st.lists(st.sampled_from([4, 5]), min_size=1, max_size=2),
    "act": st.sampled_from(["tanh", "relu", "sigmoid"]),
    "norm": st.booleans(),
    "dropout": st.booleans(),
    "loss": st.sampled_from(["ce", "mse"]),
    "opt": st.sampled_from(OPTIMIZERS),
    "clip": st.booleans(),
    "set_to_none": st.booleans(),
    "pattern": st.sampled_from(["whole", "model"]),
    "backend": st.sampled_from(["python", "numba"]),
})


def run_twins(spec, changes):
    we, wc = World(spec), World(spec)

    def make_step(w, model):
        def step(x, y):
            loss = w.step(model, x, y)
            if w.record_item:
                w.items.append(loss.item())
            return loss
        return step

    eager_step = make_step(we, we.model)
    if spec["pattern"] == "whole":
        compiled_step = compiler.compile(make_step(wc, wc.model), backend=spec["backend"],
                                         max_traces=3)
    else:
        compiled_step = make_step(wc, compiler.compile(wc.model, backend=spec["backend"],
                                                       max_traces=3))
    rtol = RTOL[spec["dtype"]]
    for i, what in enumerate(changes):
        for w in (we, wc):
            w.change(what, i)
            w.record_item = what == "item"
        # dropout draws from the global generator: both worlds draw the same masks
        torch.manual_seed(1000 + i)
        want = eager_step(*we.data(i))
        torch.manual_seed(1000 + i)
        got = compiled_step(*wc.data(i))
        where = f"step {i} after {what!r}, changes {changes}"
        np.testing.assert_allclose(got.item(), want.item(), rtol=rtol, atol=rtol, err_msg=where)
        assert_same_state(state_of(wc), state_of(we), rtol, where)
        if i == 1:
            compiler.wait()
    return compiled_step


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs, changes=st.lists(st.sampled_from(CHANGES), min_size=3, max_size=8))
def test_training_programs_match_eager_step_after_step(spec, changes):
    run_twins(spec, changes)


def test_a_plain_training_loop_stays_compiled():
    """The fuzzer's baseline must exercise compiled code, not only eager fallbacks: with no
    changes, every step after the second replays (Adam creates its state in the first step,
    so the second is a new trace, as under ``torch.compile``)."""
    spec = dict(seed=0, dtype="float32", arch="mlp", widths=[4], act="tanh", norm=False,
                dropout=False, loss="ce", opt="adam", clip=False, set_to_none=True, pattern="whole",
                backend="numba")
    cf = run_twins(spec, ["none"] * 6)
    stats = cf.stats()
    assert (stats["traces"], stats["hits"]) == (2, 4), stats


def test_a_variable_length_training_loop_runs_compiled_regions():
    """A GRU over sequences whose length changes every step: past ``max_traces`` the whole-step
    traces give way to compiled regions (the model's, then, once its own traces keep
    diverging, the cell's inside it, which ``explain()`` lists), and the steps stay equal
    to eager's."""
    spec = dict(seed=1, dtype="float32", arch="gru", widths=[4], act="tanh", norm=False,
                dropout=False, loss="ce", opt="adam", clip=True, set_to_none=True,
                pattern="whole", backend="numba")
    cf = run_twins(spec, ["length"] * 10)
    regions = dict(cf.explain().regions)
    assert regions["Recurrent/GRUCell"]["hits"] >= 5, regions
