"""Train a small MLP classifier on two interleaved spirals — dyngraph's main example.

The code is PyTorch's, with ``import eager as torch``: an ``nn.Sequential`` of
``Linear``/``ReLU`` layers, ``CrossEntropyLoss`` and ``optim.Adam`` (or ``--sgd``), trained
with mini-batches on synthetic data generated with NumPy (seeded, so every run prints the
same numbers).

    python examples/train_mlp.py                 # eager: the graph is built as the code runs
    python examples/train_mlp.py --compile       # also trained with the step compiled
    python examples/train_mlp.py --quick         # 3 epochs: a few seconds
    python examples/train_mlp.py --epochs 5 --hidden 32 --sgd
    python examples/train_mlp.py --device cuda   # on the GPU (pip install -e ".[cuda]")

With ``--compile`` the model is trained a second time from the same initial weights and
batches with the training step — ``zero_grad()``, forward, ``loss.backward()``,
``optimizer.step()`` — one function passed to ``compiler.compile``: the first call runs
eagerly while recording a trace, later calls replay it. Both timings are printed, and
the run is compared with the eager one as the compiler promises (README, "Exactness";
``compiler.check.training_verdict``): bit for bit where the compiled program computes
eager's operations, else (a kernel's ``exp``/``log`` within 3 ulp, amplified by training)
every step replayed with ``check=True`` for two more epochs within the stated bound.
``explain()`` at the end says what was traced and how often it was reused.
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


def two_spirals(n_per_class: int = 500, turns: float = 1.5, noise: float = 0.25,
                seed: int = 0):
    """Two interleaved spirals in the plane, classes 0 and 1, scaled to about [-1, 1]."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for c in (0, 1):
        r = np.sqrt(rng.uniform(0.0, 1.0, n_per_class)) * turns * 2 * np.pi
        angle = r + c * np.pi
        pts = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)
        pts += rng.normal(0.0, noise, pts.shape)
        xs.append(pts)
        ys.append(np.full(n_per_class, c))
    x = np.concatenate(xs) / (turns * 2 * np.pi)
    y = np.concatenate(ys)
    perm = rng.permutation(len(x))
    return x[perm].astype(np.float32), y[perm].astype(np.int64)


def make_model(hidden: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(2, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, 2),
    )


def accuracy(model, x, y, device="cpu") -> float:
    with torch.no_grad():
        pred = model(x.to(device)).cpu().argmax(dim=1)
    return (pred == y).float().mean().item()


def train(args, x, y, compiled: bool, epochs: int, log=print, check: bool = False):
    """Train from the initial weights of ``args.seed``; returns (final accuracy, seconds,
    the step function, every step's loss, the final parameters as arrays)."""
    torch.manual_seed(args.seed)
    n, bs, device = len(x), args.batch_size, args.device
    model = make_model(args.hidden).to(device)
    loss_fn = nn.CrossEntropyLoss()
    if args.sgd:
        opt = optim.SGD(model.parameters(), lr=args.lr or 0.3, momentum=0.9)
    else:
        opt = optim.Adam(model.parameters(), lr=args.lr or 0.01)

    def train_step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    step = train_step
    if compiled:
        from compiler import compile
        step = compile(train_step, check=check)
    rng = np.random.default_rng(args.seed + 1)
    steps = []
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        perm = torch.tensor(rng.permutation(n))
        xs, ys = x[perm], y[perm]
        first = len(steps)
        for i in range(0, n, bs):
            steps.append(step(xs[i:i + bs].to(device), ys[i:i + bs].to(device)).item())
            if check and epoch == 1 and i == 2 * bs:
                from compiler import wait
                wait()   # the checked replays run the fused kernels, not the first tier
        if epoch % args.print_every == 0 or epoch == 1 or epoch == epochs:
            log(f"epoch {epoch:4d}  loss {sum(steps[first:]) / (n // bs):.4f}  "
                f"accuracy {accuracy(model, x, y, device):6.1%}", flush=True)
    seconds = time.perf_counter() - t0
    params = [p.detach().cpu().numpy().copy() for p in model.parameters()]
    return accuracy(model, x, y, device), seconds, step, steps, params


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=None, help="default 0.01 (Adam), 0.3 (SGD)")
    ap.add_argument("--sgd", action="store_true", help="SGD with momentum instead of Adam")
    ap.add_argument("--quick", action="store_true", help="3 epochs (a few seconds)")
    ap.add_argument("--compile", action="store_true",
                    help="also train with the whole training step compiled and compare")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--print-every", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    epochs = 3 if args.quick else args.epochs

    torch.manual_seed(args.seed)
    x_np, y_np = two_spirals(seed=args.seed)
    x, y = torch.tensor(x_np), torch.tensor(y_np)
    n = len(x_np)
    bs = args.batch_size
    if n % bs:
        ap.error(f"--batch-size must divide the {n} samples (equal batch shapes let a "
                 "compiled step reuse its trace)")

    print(f"two spirals: {n} points, MLP 2-{args.hidden}-{args.hidden}-2, "
          f"{'SGD' if args.sgd else 'Adam'}, batch {bs}, {epochs} epochs, eager, "
          f"{args.device}")
    acc, seconds, _, steps, params = train(args, x, y, False, epochs)
    print(f"final accuracy: {acc:.1%} ({seconds:.2f} s training, eager)")

    if args.compile:
        print("-- the same training with the step compiled --")
        cacc, cseconds, step, csteps, cparams = train(args, x, y, True, epochs)
        print(f"final accuracy: {cacc:.1%} ({cseconds:.2f} s training, compiled)")
        print(f"timings: eager {seconds:.2f} s, compiled {cseconds:.2f} s "
              f"({seconds / cseconds:.1f}x eager's speed; the first calls record and "
              "build kernels)")

        def checked_run():
            out = train(args, x, y, True, 2, log=lambda *a, **k: None, check=True)
            return out[2].stats()["hits"]
        from compiler.check import training_verdict
        result = training_verdict(steps, params, csteps, cparams, step, checked_run)
        s = step.stats()
        print(f"explain: {s['calls']} calls, {s['hits']} compiled hits, {s['traces']} traces, "
              f"{s['fallbacks']} eager fallbacks; {result}")
        ex = step.explain(wait=False)  # the report so far: never waits for kernel builds
        print(f"  {s['compile_seconds']:.3f} s compiling")
        for i, t in enumerate(ex.traces):
            print(f"  trace {i}: recorded because: {t['reason']}; {t['hits']} hits, "
                  f"{len(t['kernels'])} kernels, {len(t['guards'])} guards")
        if ex.fallbacks:
            print("fallback reasons:")
            for r in ex.fallbacks:
                print(f"  {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
