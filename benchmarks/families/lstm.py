"""The LSTM of ``examples/lstm_sequences.py``: one Adam step on a packed batch."""

from __future__ import annotations

import numpy as np

from .. import peers as P
from ..harness import Family, Goal, Workload, with_stats

BATCH, HIDDEN, CLASSES, LR = 32, 32, 3, 0.02


def lstm_workload(quick: bool) -> Workload:
    rng = np.random.default_rng(9)
    f32 = np.float32
    lengths = [int(n) for n in rng.integers(6, 25, BATCH)]
    seqs = [rng.standard_normal((n, 1)).astype(f32) for n in lengths]
    y_np = rng.integers(0, CLASSES, BATCH).astype(np.int64)

    def init() -> dict:
        r = np.random.default_rng(10)
        b = 1 / np.sqrt(HIDDEN)
        u = lambda *shape: r.uniform(-b, b, shape).astype(f32)
        return {"lstm.weight_ih_l0": u(4 * HIDDEN, 1), "lstm.weight_hh_l0": u(4 * HIDDEN, HIDDEN),
                "lstm.bias_ih_l0": u(4 * HIDDEN), "lstm.bias_hh_l0": u(4 * HIDDEN),
                "head.weight": u(CLASSES, HIDDEN), "head.bias": u(CLASSES)}

    def _setup(lib, nn, optim):
        rnn = nn.utils.rnn

        class SequenceClassifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(1, HIDDEN, batch_first=True)
                self.head = nn.Linear(HIDDEN, CLASSES)

            def forward(self, x, lengths):
                packed = rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                  enforce_sorted=False)
                _, (h_n, _) = self.lstm(packed)
                return self.head(h_n[-1])

        model = SequenceClassifier()
        model.load_state_dict({k: lib.tensor(v) for k, v in init().items()})
        opt = optim.Adam(model.parameters(), lr=LR)
        loss_fn = nn.CrossEntropyLoss()

        def step(x, lengths, y):
            opt.zero_grad()
            loss = loss_fn(model(x, lengths), y)
            loss.backward()
            opt.step()
            return loss.detach()
        x = rnn.pad_sequence([lib.tensor(s) for s in seqs], batch_first=True)
        return step, x, lib.tensor(y_np)

    def eager_():
        import eager
        from eager import nn, optim
        step, x, y = _setup(eager, nn, optim)
        return lambda: step(x, lengths, y)

    def compiled_():
        import eager
        from compiler import compile
        from eager import nn, optim
        step, x, y = _setup(eager, nn, optim)
        cstep = compile(step, backend="numba")
        return with_stats(lambda: cstep(x, lengths, y), cstep)

    def torch_():
        torch = P.torch()
        step, x, y = _setup(torch, torch.nn, torch.optim)
        return lambda: step(x, lengths, y)

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        step, x, y = _setup(torch, torch.nn, torch.optim)
        cstep = tc(step)
        return lambda: cstep(x, lengths, y)

    return Workload(
        "lstm", f"LSTM(1, {HIDDEN}) + Linear on {BATCH} packed sequences of 6..24 steps, "
                "Adam step",
        [(P.EAGER, eager_), (P.COMPILED, compiled_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_)],
        rtol=1e-4, atol=1e-6, reference=P.EAGER, check_calls=4, stateful=True,
        notes={P.EAGER: "pack_padded_sequence (lengths a Python list, enforce_sorted=False), "
                        "nn.LSTM, Linear on h_n, CrossEntropyLoss, optim.Adam",
               P.COMPILED: "the whole step compiled (one trace: the batch never changes)",
               P.TORCH_COMPILE: "torch.compile(step): the whole step"})


FAMILY = Family(
    "lstm", "LSTM train step",
    "The model of `examples/lstm_sequences.py`: a batch of 32 sequences of 6 to 24 steps "
    f"padded with `pad_sequence` and packed with `pack_padded_sequence`, `nn.LSTM(1, "
    f"{HIDDEN}, batch_first=True)`, a `Linear` on `h_n`, cross-entropy over {CLASSES} "
    "classes. One call is one Adam step (zero_grad, forward, backward, step) on that fixed "
    "batch. Every peer starts from the same weights; the losses of its first four steps "
    "are checked against ours eager.",
    lambda quick: [lstm_workload(quick)],
    goals=[
        Goal("LSTM step: ours compiled / torch.compile", "<=", 1.0,
             ("lstm", P.COMPILED), ("lstm", P.TORCH_COMPILE)),
        Goal("LSTM step: our eager / PyTorch eager", "<=", 1.0,
             ("lstm", P.EAGER), ("lstm", P.TORCH)),
    ])
