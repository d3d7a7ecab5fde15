"""MLP train steps: forward, cross-entropy, backward, SGD, on small matrices."""

from __future__ import annotations

import numpy as np

from .. import peers as P
from ..harness import Family, Goal, Workload, with_stats


def mlp_workload(key: str, title: str, sizes: tuple, batch: int, lr: float, quick: bool,
                 headline: str | None = None) -> Workload:
    """One SGD step of ``Linear, ReLU, ..., Linear`` with layer widths ``sizes``."""
    rng = np.random.default_rng(2)
    f32 = np.float32
    x_np = rng.standard_normal((batch, sizes[0]), dtype=f32)
    y_np = rng.integers(0, sizes[-1], batch).astype(np.int64)
    names = [str(2 * i) for i in range(len(sizes) - 1)]   # nn.Sequential indices

    def init() -> dict:
        r = np.random.default_rng(3)
        p = {}
        for name, d_in, d_out in zip(names, sizes[:-1], sizes[1:]):
            b = 1 / np.sqrt(d_in)
            p[f"{name}.weight"] = r.uniform(-b, b, (d_out, d_in)).astype(f32)
            p[f"{name}.bias"] = r.uniform(-b, b, d_out).astype(f32)
        return p

    def numpy_():
        p = init()
        ws = [p[f"{n}.weight"] for n in names]
        bs = [p[f"{n}.bias"] for n in names]
        rows = np.arange(batch)
        lr_, inv_b = f32(lr), f32(1.0 / batch)

        def step():
            acts, pre = [x_np], []
            for i, (w, b) in enumerate(zip(ws, bs)):
                z = acts[-1] @ w.T
                z += b
                pre.append(z)
                if i < len(ws) - 1:
                    acts.append(np.maximum(z, 0))
            z = pre[-1]
            z -= z.max(axis=1, keepdims=True)
            e = np.exp(z)
            s = e.sum(axis=1, keepdims=True)
            loss = -(z[rows, y_np] - np.log(s[:, 0])).mean()
            dz = e / s
            dz[rows, y_np] -= 1
            dz *= inv_b
            for i in range(len(ws) - 1, -1, -1):
                dw = dz.T @ acts[i]
                db = dz.sum(axis=0)
                if i:
                    dz = dz @ ws[i]
                    dz *= pre[i - 1] > 0
                ws[i] -= lr_ * dw          # in place: the next step sees the update
                bs[i] -= lr_ * db
            return loss
        return step

    def _model(lib, nn):
        layers = []
        for d_in, d_out in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(d_in, d_out), nn.ReLU()]
        model = nn.Sequential(*layers[:-1])
        model.load_state_dict({k: lib.tensor(v) for k, v in init().items()})
        return model

    def _step(lib, nn, optim, model, forward=None):
        forward = forward or model
        loss_fn = nn.CrossEntropyLoss()
        opt = optim.SGD(model.parameters(), lr=lr)

        def step(x, y):
            opt.zero_grad()
            loss = loss_fn(forward(x), y)
            loss.backward()
            opt.step()
            return loss
        return step

    def eager_():
        import eager
        from eager import nn, optim
        step = _step(eager, nn, optim, _model(eager, nn))
        x, y = eager.tensor(x_np), eager.tensor(y_np)
        return lambda: step(x, y)

    def compiled_():
        import eager
        from compiler import compile
        from eager import nn, optim
        cstep = compile(_step(eager, nn, optim, _model(eager, nn)), backend="numba")
        x, y = eager.tensor(x_np), eager.tensor(y_np)
        return with_stats(lambda: cstep(x, y), cstep)

    def compiled_fwd_():
        import eager
        from compiler import compile
        from eager import nn, optim
        model = _model(eager, nn)
        cmodel = compile(model, backend="numba")
        step = _step(eager, nn, optim, model, forward=cmodel)
        x, y = eager.tensor(x_np), eager.tensor(y_np)
        return with_stats(lambda: step(x, y), cmodel)

    def torch_():
        torch = P.torch()
        step = _step(torch, torch.nn, torch.optim, _model(torch, torch.nn))
        x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
        return lambda: step(x, y)

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        model = _model(torch, torch.nn)
        step = _step(torch, torch.nn, torch.optim, model, forward=tc(model))
        x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
        return lambda: step(x, y)

    def jax_():
        jax, jnp = P.jax()
        p0 = init()
        params = [(jnp.asarray(p0[f"{n}.weight"]), jnp.asarray(p0[f"{n}.bias"]))
                  for n in names]
        x, y = jnp.asarray(x_np), jnp.asarray(y_np)

        def loss_fn(params, x, y):
            h = x
            for i, (w, b) in enumerate(params):
                h = h @ w.T + b
                if i < len(params) - 1:
                    h = jax.nn.relu(h)
            logp = jax.nn.log_softmax(h, axis=1)
            return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()

        @jax.jit
        def jstep(params, x, y):
            loss, g = jax.value_and_grad(loss_fn)(params, x, y)
            return jax.tree_util.tree_map(lambda a, b: a - lr * b, params, g), loss

        state = {"p": params}

        def step():
            state["p"], loss = jstep(state["p"], x, y)
            return loss.block_until_ready()
        return step

    return Workload(
        key, title,
        [(P.NUMPY, numpy_), (P.EAGER, eager_), (P.COMPILED, compiled_),
         (P.COMPILED_FWD, compiled_fwd_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_), (P.JAX, jax_)],
        rtol=1e-3, atol=1e-5, check_calls=4, stateful=True, headline=headline,
        notes={P.NUMPY: "hand-written forward, cross-entropy, backward, SGD (in place)",
               P.EAGER: "nn.Sequential, CrossEntropyLoss, optim.SGD: zero_grad, forward, "
                        "backward, step",
               P.COMPILED: "the whole step (zero_grad, forward, backward, SGD) compiled",
               P.COMPILED_FWD: "compile(model); loss, backward() and step() outside",
               P.TORCH_COMPILE: "torch.compile(model); loss, backward() and step() outside",
               P.JAX: "jit(value_and_grad + SGD update)"})


def workloads(quick: bool) -> list:
    return [
        mlp_workload("example", "main example: MLP 2-64-64-2, batch 100, SGD step",
                     (2, 64, 64, 2), 100, 0.1, quick,
                     headline="main example's train step (MLP 2-64-64-2, batch 100)"),
        mlp_workload("mlp", "MLP 784-256-10, batch 64, SGD step", (784, 256, 10), 64, 0.01,
                     quick),
    ]


FAMILY = Family(
    "mlp", "MLP train steps",
    "One SGD train step (forward, cross-entropy, backward, update) of a ReLU MLP: the "
    "model of the main example (`examples/train_mlp.py`: 2-64-64-2, batch 100) and a "
    "wider 784-256-10 with batch 64. Every peer starts from the same weights; the losses "
    "of their first steps are checked against NumPy's. Ours compiled is the whole step "
    "in one compiled function; ours compiled fwd compiles the model and runs "
    "`backward()`/`step()` outside, like torch.compile here.",
    workloads,
    goals=[
        Goal("main example step: our eager / ours compiled (whole step)", ">=", 3.0,
             ("example", P.EAGER), ("example", P.COMPILED)),
        Goal("main example step: JAX jit / ours compiled", ">=", 1.5,
             ("example", P.JAX), ("example", P.COMPILED)),
        Goal("main example step: hand-written NumPy / ours compiled", ">=", 1.0,
             ("example", P.NUMPY), ("example", P.COMPILED)),
        Goal("main example step: our eager / ours compiled fwd (backward outside)", ">=",
             2.0, ("example", P.EAGER), ("example", P.COMPILED_FWD)),
        Goal("MLP 784 step compiled whole: ours / hand-written NumPy", "<=", 1.1,
             ("mlp", P.COMPILED), ("mlp", P.NUMPY)),
        Goal("MLP 784 step, our eager / hand-written NumPy", "<=", 1.6, ("mlp", P.EAGER),
             ("mlp", P.NUMPY)),
    ])
