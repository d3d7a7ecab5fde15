"""Train a small CNN on scikit-learn's 8x8 handwritten digits (real data, no download).

PyTorch's code with ``import eager as torch``: ``Conv2d``, ``ReLU``, ``MaxPool2d``,
``Linear`` in an ``nn.Sequential``, ``CrossEntropyLoss``, ``optim.Adam``, batches from
``eager.utils.data.TensorDataset`` and ``DataLoader`` (shuffled by a seeded
``eager.Generator``). The data is ``sklearn.datasets.load_digits`` (1797 images of 8x8
pixels shipped inside scikit-learn: ``pip install -e ".[examples]"``), split 80/20 into
train and test sets; every epoch prints the training loss and the test accuracy.

    python examples/train_cnn.py                 # eager
    python examples/train_cnn.py --compile       # also trained with the step compiled
    python examples/train_cnn.py --quick         # fewer epochs (the tests run this)

With ``--compile`` the model is trained a second time from the same initial weights and
the same batches with the whole training step -- ``zero_grad()``, forward, ``backward()``,
``step()`` -- passed to ``compiler.compile``; both timings are printed and the run is
compared with the eager one as the compiler promises (README, "Exactness"): bit for bit
(every step's loss and the final parameters) where the compiled program computes eager's
operations -- always with ``--backend python`` -- and otherwise, where a Numba kernel
computes ``exp`` with ``runtime.cpu.mathlib`` (within 3 ulp of NumPy, amplified by
training), every step replayed with ``check=True`` for two more epochs, which compares
each compiled step with eager's from the same state within the stated bound. The last,
smaller batch of an epoch is dropped (``drop_last=True``) so that every step has the
same shapes and replays one trace.
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
from eager.utils.data import DataLoader, TensorDataset


def load_data(seed: int = 0):
    """The digits as float32 images ``(N, 1, 8, 8)`` scaled to [0, 1], int64 labels,
    split 80/20 (a seeded permutation): ``(x_train, y_train, x_test, y_test)``."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit('train_cnn.py needs scikit-learn for its data: pip install -e ".[examples]"')
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    perm = np.random.default_rng(seed).permutation(len(x))
    n_train = int(0.8 * len(x))
    tr, te = perm[:n_train], perm[n_train:]
    return (torch.tensor(x[tr]), torch.tensor(y[tr]), torch.tensor(x[te]),
            torch.tensor(y[te]))


def make_model(channels: int = 16) -> nn.Module:
    c = channels
    return nn.Sequential(
        nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),         # 16 x 4 x 4
        nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),     # 32 x 2 x 2
        nn.Flatten(),
        nn.Linear(2 * c * 2 * 2, 10),
    )


def accuracy(model, x, y) -> float:
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def train(data, epochs: int, batch_size: int, lr: float, seed: int, compiled: bool,
          log=print, backend: str = "numba", check: bool = False):
    """Train from the initial weights of ``seed``; returns (per-epoch losses, test
    accuracy, seconds, the step function, every step's loss, the final parameters as
    arrays)."""
    x_tr, y_tr, x_te, y_te = data
    torch.manual_seed(seed)
    model = make_model()
    opt = optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=batch_size, shuffle=True,
                        drop_last=True, generator=torch.Generator().manual_seed(seed))

    def train_step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    step = train_step
    if compiled:
        from compiler import compile
        step = compile(train_step, backend=backend, check=check)
    losses, steps = [], []
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        first = len(steps)
        for k, (xb, yb) in enumerate(loader):
            steps.append(step(xb, yb).item())
            if check and epoch == 1 and k == 2:
                from compiler import wait
                wait()   # the checked replays run the fused kernels, not the first tier
        total = sum(steps[first:]) / len(loader)
        losses.append(total)
        model.eval()
        acc = accuracy(model, x_te, y_te)
        log(f"epoch {epoch:2d}  loss {total:.4f}  test accuracy {acc:6.1%}")
    params = [p.detach().numpy().copy() for p in model.parameters()]
    return losses, acc, time.perf_counter() - t0, step, steps, params


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--quick", action="store_true", help="3 epochs (for the tests)")
    ap.add_argument("--compile", action="store_true",
                    help="also train with the whole training step compiled and compare")
    ap.add_argument("--backend", choices=("numba", "python"), default="numba",
                    help="the compiled tier: fused Numba kernels (default) or the "
                    "generated Python alone")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    epochs = 3 if args.quick else args.epochs

    data = load_data(args.seed)
    print(f"digits: {len(data[0])} train / {len(data[2])} test images of 8x8, CNN "
          f"conv16-pool-conv32-pool-linear, Adam, batch {args.batch_size}, {epochs} epochs")
    losses, acc, secs, _, steps, params = train(data, epochs, args.batch_size, args.lr,
                                                args.seed, False)
    print(f"final test accuracy: {acc:.1%} ({secs:.2f} s training, eager)")
    if args.compile:
        print("-- the same training with the step compiled --")
        _, cacc, csecs, step, csteps, cparams = train(
            data, epochs, args.batch_size, args.lr, args.seed, True, backend=args.backend)
        s = step.stats()
        print(f"final test accuracy: {cacc:.1%} ({csecs:.2f} s training, compiled, "
              f"{secs / csecs:.1f}x eager)")

        def checked_run():
            out = train(data, 2, args.batch_size, args.lr, args.seed, True,
                        log=lambda line: None, backend=args.backend, check=True)
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
