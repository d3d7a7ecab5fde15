"""The CNN of ``examples/train_cnn.py``: one Adam train step on a batch of 8x8 images."""

from __future__ import annotations

import numpy as np

from .. import peers as P
from ..harness import Family, Goal, Workload, with_stats

BATCH, C, LR = 32, 16, 0.005


def cnn_workload(quick: bool) -> Workload:
    rng = np.random.default_rng(6)
    f32 = np.float32
    x_np = rng.uniform(0, 1, (BATCH, 1, 8, 8)).astype(f32)
    y_np = rng.integers(0, 10, BATCH).astype(np.int64)
    shapes = {"0": (C, 1, 3, 3), "3": (2 * C, C, 3, 3), "7": (10, 2 * C * 2 * 2)}

    def init() -> dict:
        r = np.random.default_rng(7)
        p = {}
        for name, shape in shapes.items():
            b = 1 / np.sqrt(np.prod(shape[1:]))
            p[f"{name}.weight"] = r.uniform(-b, b, shape).astype(f32)
            p[f"{name}.bias"] = r.uniform(-b, b, shape[0]).astype(f32)
        return p

    def _setup(lib, nn, optim):
        model = nn.Sequential(
            nn.Conv2d(1, C, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(C, 2 * C, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(2 * C * 2 * 2, 10))
        model.load_state_dict({k: lib.tensor(v) for k, v in init().items()})
        opt = optim.Adam(model.parameters(), lr=LR)
        loss_fn = nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()
        return step, lib.tensor(x_np), lib.tensor(y_np)

    def eager_():
        import eager
        from eager import nn, optim
        step, x, y = _setup(eager, nn, optim)
        return lambda: step(x, y)

    def compiled_():
        import eager
        from compiler import compile
        from eager import nn, optim
        step, x, y = _setup(eager, nn, optim)
        cstep = compile(step, backend="numba")
        return with_stats(lambda: cstep(x, y), cstep)

    def torch_():
        torch = P.torch()
        step, x, y = _setup(torch, torch.nn, torch.optim)
        return lambda: step(x, y)

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        step, x, y = _setup(torch, torch.nn, torch.optim)
        cstep = tc(step)
        return lambda: cstep(x, y)

    return Workload(
        "cnn", f"CNN conv{C}-pool-conv{2 * C}-pool-linear, batch {BATCH}x1x8x8, Adam step",
        [(P.EAGER, eager_), (P.COMPILED, compiled_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_)],
        rtol=1e-4, atol=1e-6, reference=P.EAGER, check_calls=4, stateful=True,
        notes={P.EAGER: "nn.Sequential of Conv2d, ReLU, MaxPool2d, Flatten, Linear; "
                        "CrossEntropyLoss, optim.Adam: zero_grad, forward, backward, step",
               P.COMPILED: "the whole step (zero_grad, forward, backward, Adam) compiled",
               P.TORCH_COMPILE: "torch.compile(step): the whole step"})


FAMILY = Family(
    "cnn", "CNN train step",
    "The model of `examples/train_cnn.py`: `Conv2d(1, 16, 3, padding=1)`, ReLU, "
    "`MaxPool2d(2)`, `Conv2d(16, 32, 3, padding=1)`, ReLU, `MaxPool2d(2)`, `Flatten`, "
    "`Linear(128, 10)`; one call is one Adam step (zero_grad, forward, cross-entropy, "
    "backward, step) on a fixed batch of 32 random 8x8 images. Every peer starts from the "
    "same weights; the losses of its first four steps are checked against ours eager.",
    lambda quick: [cnn_workload(quick)],
    goals=[
        Goal("CNN step: ours compiled / torch.compile", "<=", 1.0,
             ("cnn", P.COMPILED), ("cnn", P.TORCH_COMPILE)),
        Goal("CNN step: our eager / PyTorch eager", "<=", 1.0,
             ("cnn", P.EAGER), ("cnn", P.TORCH)),
    ])
