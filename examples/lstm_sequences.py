"""Classify variable-length noisy sine waves by frequency with an ``nn.LSTM``.

PyTorch's code with ``import eager as torch``: each sequence is a noisy sine wave of 6
to 24 samples with one of three frequencies (the class) and a random phase and
amplitude. A batch of sequences of different lengths is padded with
``nn.utils.rnn.pad_sequence`` and packed with ``pack_padded_sequence`` (so the LSTM
stops at each sequence's own length and ``h_n`` is its state at its last real step);
a linear head on ``h_n`` gives the class scores; ``CrossEntropyLoss`` and ``optim.Adam``.
Every epoch prints the training loss and the accuracy on held-out sequences.

    python examples/lstm_sequences.py              # eager
    python examples/lstm_sequences.py --compile    # also trained with the step compiled
    python examples/lstm_sequences.py --quick      # fewer sequences and epochs (tests)

The batches are made once (their order is shuffled every epoch). With ``--compile`` the
model is trained a second time from the same initial weights with the whole training
step passed to ``compiler.compile``: a batch's list of lengths is part of the trace's
key, so each batch is traced once in the first epoch and replayed in the later ones;
both timings are printed and the run is compared with the eager one as the compiler
promises (README, "Exactness"): bit for bit (every step's loss and the final parameters)
where the compiled program computes eager's operations -- always with
``--backend python`` -- and otherwise, where its Numba kernels compute ``exp``,
``sigmoid`` or ``tanh`` with ``runtime.cpu.mathlib`` (within 3 ulp of NumPy, amplified by
training), every step replayed with ``check=True`` for two more epochs, which compares
each compiled step with eager's from the same state within the stated bound.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

try:
    import eager as torch
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import eager as torch
from eager import nn, optim
from eager.nn.utils.rnn import pack_padded_sequence, pad_sequence

FREQS = (0.15, 0.3, 0.6)   # radians per sample: the three classes


def make_sequences(n: int, seed: int):
    """``n`` noisy sine waves of 6..24 samples as ``(length, 1)`` float32 arrays, and
    their classes (which of :data:`FREQS`)."""
    rng = np.random.default_rng(seed)
    seqs, labels = [], []
    for _ in range(n):
        c = int(rng.integers(0, len(FREQS)))
        t = np.arange(int(rng.integers(6, 25)))
        wave = rng.uniform(0.5, 1.5) * np.sin(FREQS[c] * t + rng.uniform(0, 2 * np.pi))
        wave += rng.normal(0.0, 0.1, len(t))
        seqs.append(wave.astype(np.float32)[:, None])
        labels.append(c)
    return seqs, labels


def make_batches(seqs, labels, batch_size: int):
    """Padded batches ``(x (batch, longest, 1), lengths as a list, labels)``."""
    out = []
    for i in range(0, len(seqs), batch_size):
        chunk = seqs[i:i + batch_size]
        x = pad_sequence([torch.tensor(s) for s in chunk], batch_first=True)
        out.append((x, [len(s) for s in chunk], torch.tensor(labels[i:i + batch_size])))
    return out


class SequenceClassifier(nn.Module):
    def __init__(self, hidden: int = 32, classes: int = len(FREQS)):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.lstm(packed)       # h_n: each sequence's state at its length
        return self.head(h_n[-1])


def accuracy(model, batches) -> float:
    with torch.no_grad():
        correct = sum((model(x, lengths).argmax(dim=1) == y).sum().item()
                      for x, lengths, y in batches)
    return correct / sum(len(y) for _, _, y in batches)


def train(train_batches, test_batches, epochs: int, lr: float, hidden: int, seed: int,
          compiled: bool, log=print, backend: str = "numba", check: bool = False):
    """Returns (per-epoch losses, test accuracy, seconds, the step function, every step's
    loss, the final parameters as arrays)."""
    torch.manual_seed(seed)
    model = SequenceClassifier(hidden)
    opt = optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()

    def train_step(x, lengths, y):
        opt.zero_grad()
        loss = loss_fn(model(x, lengths), y)
        loss.backward()
        opt.step()
        return loss

    step = train_step
    if compiled:
        from compiler import compile
        # one trace per batch (its lengths are part of the key), plus the first call's
        step = compile(train_step, max_traces=len(train_batches) + 2, backend=backend,
                       check=check)
    rng = np.random.default_rng(seed)
    losses, steps = [], []
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        total = 0.0
        for i in rng.permutation(len(train_batches)):
            steps.append(step(*train_batches[i]).item())
            total += steps[-1]
        losses.append(total / len(train_batches))
        if check and epoch == 1:
            from compiler import wait
            wait()   # the checked replays run the fused kernels, not the first tier
        acc = accuracy(model, test_batches)
        log(f"epoch {epoch:2d}  loss {losses[-1]:.4f}  test accuracy {acc:6.1%}")
    params = [p.detach().numpy().copy() for p in model.parameters()]
    return losses, acc, time.perf_counter() - t0, step, steps, params


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, default=512, help="training sequences")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--quick", action="store_true",
                    help="256 sequences, 8 epochs (for the tests)")
    ap.add_argument("--compile", action="store_true",
                    help="also train with the whole training step compiled and compare")
    ap.add_argument("--backend", choices=("numba", "python"), default="numba",
                    help="the compiled tier: fused Numba kernels (default) or the "
                    "generated Python alone")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.quick:
        args.train, args.epochs = 256, 8

    seqs, labels = make_sequences(args.train, args.seed)
    test_seqs, test_labels = make_sequences(256, args.seed + 1)
    train_batches = make_batches(seqs, labels, args.batch_size)
    test_batches = make_batches(test_seqs, test_labels, 128)
    print(f"noisy sine waves of 6..24 samples, 3 frequencies: {len(seqs)} train "
          f"({len(train_batches)} padded batches), {len(test_seqs)} test; LSTM(1, "
          f"{args.hidden}) + Linear, Adam, {args.epochs} epochs")
    losses, acc, secs, _, steps, params = train(train_batches, test_batches, args.epochs,
                                                args.lr, args.hidden, args.seed, False)
    print(f"final test accuracy: {acc:.1%} ({secs:.2f} s training, eager)")
    if args.compile:
        print("-- the same training with the step compiled --")
        _, cacc, csecs, step, csteps, cparams = train(
            train_batches, test_batches, args.epochs, args.lr, args.hidden, args.seed, True,
            backend=args.backend)
        s = step.stats()
        print(f"final test accuracy: {cacc:.1%} ({csecs:.2f} s training, compiled, "
              f"{secs / csecs:.1f}x eager)")

        def checked_run():
            out = train(train_batches, test_batches, 3, args.lr, args.hidden, args.seed,
                        True, log=lambda line: None, backend=args.backend, check=True)
            return out[3].stats()["hits"]
        from compiler.check import training_verdict
        result = training_verdict(steps, params, csteps, cparams, step,
                                  checked_run)
        print(f"explain: {s['calls']} calls, {s['hits']} compiled hits, {s['traces']} "
              f"traces, {s['fallbacks']} eager fallbacks; {result}")
        ex = step.explain(wait=False)
        if ex.fallbacks:
            print("fallback reasons:")
            for r in ex.fallbacks:
                print(f"  {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
