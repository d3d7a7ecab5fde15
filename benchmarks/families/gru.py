"""A GRU cell looped over variable-length sequences (``examples/dynamic_graphs.py``)."""

from __future__ import annotations

import numpy as np

from .. import peers as P
from ..harness import Family, Workload, with_stats

HIDDEN = 24
LENGTHS = (3, 6, 9, 12)   # one call: one SGD step on each of these sequences
LR = 0.01


def gru_workload(quick: bool) -> Workload:
    rng = np.random.default_rng(4)
    f32 = np.float32
    seqs = [rng.uniform(-1, 1, n).astype(f32) for n in LENGTHS]
    targets = [f32(s.sum() / 4) for s in seqs]

    def init() -> dict:
        r = np.random.default_rng(5)
        b = 1 / np.sqrt(HIDDEN)
        u = lambda *shape: r.uniform(-b, b, shape).astype(f32)
        return {"cell.weight_ih": u(3 * HIDDEN, 1), "cell.weight_hh": u(3 * HIDDEN, HIDDEN),
                "cell.bias_ih": u(3 * HIDDEN), "cell.bias_hh": u(3 * HIDDEN),
                "head.weight": u(1, HIDDEN), "head.bias": u(1)}

    def _setup(lib, nn, optim):
        class SeqRegressor(nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = nn.GRUCell(1, HIDDEN)
                self.head = nn.Linear(HIDDEN, 1)

            def forward(self, seq):
                h = None
                for t in range(seq.shape[0]):        # as many steps as the sequence has
                    h = self.cell(seq[t:t + 1][None], h)
                return self.head(h)[0, 0]

        model = SeqRegressor()
        model.load_state_dict({k: lib.tensor(v) for k, v in init().items()})
        opt = optim.SGD(model.parameters(), lr=LR)

        def step(seq, y):
            loss = (model(seq) - y) ** 2
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()
        data = [(lib.tensor(s), lib.tensor(y)) for s, y in zip(seqs, targets)]
        return step, data

    def _epoch(step, data):
        def run():
            return np.array([float(step(s, y)) for s, y in data])
        return run

    def eager_():
        import eager
        from eager import nn, optim
        return _epoch(*_setup(eager, nn, optim))

    def compiled_():
        import eager
        from compiler import compile
        from eager import nn, optim
        step, data = _setup(eager, nn, optim)
        cstep = compile(step, backend="numba")
        return with_stats(_epoch(cstep, data), cstep)

    def torch_():
        torch = P.torch()
        return _epoch(*_setup(torch, torch.nn, torch.optim))

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        step, data = _setup(torch, torch.nn, torch.optim)
        return _epoch(tc(step), data)

    def jax_():
        jax, jnp = P.jax()
        params = {k: jnp.asarray(v) for k, v in init().items()}

        def loss_fn(p, seq, y):
            def cell(h, x_t):
                gi = x_t[None, None] * p["cell.weight_ih"].T + p["cell.bias_ih"]
                gh = h @ p["cell.weight_hh"].T + p["cell.bias_hh"]
                i_r, i_z, i_n = jnp.split(gi, 3, axis=1)
                h_r, h_z, h_n = jnp.split(gh, 3, axis=1)
                r = jax.nn.sigmoid(i_r + h_r)
                z = jax.nn.sigmoid(i_z + h_z)
                n = jnp.tanh(i_n + r * h_n)
                return (1 - z) * n + z * h, None
            h, _ = jax.lax.scan(cell, jnp.zeros((1, HIDDEN), jnp.float32), seq)
            pred = (h @ p["head.weight"].T + p["head.bias"])[0, 0]
            return (pred - y) ** 2

        @jax.jit
        def jstep(p, seq, y):   # traced once per sequence length
            loss, g = jax.value_and_grad(loss_fn)(p, seq, y)
            return jax.tree_util.tree_map(lambda a, b: a - LR * b, p, g), loss

        state = {"p": params}
        data = [(jnp.asarray(s), jnp.asarray(y)) for s, y in zip(seqs, targets)]

        def step(seq, y):
            state["p"], loss = jstep(state["p"], seq, y)
            return loss.block_until_ready()
        return _epoch(step, data)

    return Workload(
        "gru", f"GRUCell(1, {HIDDEN}), 4 SGD steps on sequences of length "
               f"{', '.join(map(str, LENGTHS))}",
        [(P.EAGER, eager_), (P.COMPILED, compiled_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_), (P.JAX, jax_)],
        rtol=1e-4, atol=1e-6, reference=P.EAGER, check_calls=3,
        stateful=True,
        notes={P.EAGER: "a Python loop over the sequence: the graph is as long as it is",
               P.COMPILED: "the whole step compiled: one trace per sequence length",
               P.TORCH_COMPILE: "torch.compile(step): one graph per sequence length",
               P.JAX: "jit(value_and_grad + SGD), the loop a lax.scan: one compilation per "
                      "sequence length"})


FAMILY = Family(
    "gru", "variable-length GRU loop",
    "The recurrent part of `examples/dynamic_graphs.py`: a `GRUCell` stepped over a "
    "sequence by a Python loop, a linear head, squared error, backward, SGD. One call is "
    "four train steps, one on each of four sequences of lengths 3, 6, 9 and 12, so "
    "compilers see four shapes (four traces). No hand-written NumPy peer: the losses "
    "are checked against ours eager.",
    lambda quick: [gru_workload(quick)])
