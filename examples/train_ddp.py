"""Train the main example's MLP data-parallel on several processes with MPI.

The model, data and settings are those of ``train_mlp.py``; the code is PyTorch's DDP
recipe with ``import eager as torch``: ``init_process_group``, the model wrapped in
``DistributedDataParallel`` (rank 0's initial parameters on every rank), and each rank
training on its slice of every batch.  Gradients are averaged over the ranks during
``loss.backward()``, so every rank takes the step of the whole batch, and the losses
printed are those of single-process training (``python examples/train_mlp.py``), up to
float rounding.

    mpiexec -n 2 python examples/train_ddp.py              # 2 ranks, 50 samples each per batch
    mpiexec -n 2 python examples/train_ddp.py --compile    # the whole DDP step compiled
    python examples/train_ddp.py                           # 1 rank: train_mlp.py's training

``mpiexec`` comes with the ``distributed`` extra (``pip install -e ".[distributed]"``:
mpi4py and the mpich wheel, which puts ``mpiexec`` next to ``python`` in the venv).
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
import eager.distributed as dist
from eager import nn, optim
from eager.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_mlp import accuracy, make_model, two_spirals  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=100, help="global batch (all ranks)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--compile", action="store_true",
                    help="compile the whole training step with compiler.compile")
    ap.add_argument("--print-every", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    log = print if rank == 0 else (lambda *a, **k: None)

    torch.manual_seed(args.seed)  # the same draws as train_mlp.py
    x_np, y_np = two_spirals(seed=args.seed)
    x, y = torch.tensor(x_np), torch.tensor(y_np)
    n, bs = len(x_np), args.batch_size
    if n % bs or bs % world:
        ap.error(f"--batch-size must divide the {n} samples and be divisible by the {world} "
                 "ranks")
    local = bs // world

    model = DDP(make_model(args.hidden))   # rank 0's initial parameters on every rank
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.Adam(model.parameters(), lr=args.lr)

    def train_step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()                    # gradients averaged over the ranks
        opt.step()
        return loss

    step = train_step
    if args.compile:
        from compiler import compile
        step = compile(train_step)

    mode = "compiled" if args.compile else "eager"
    log(f"two spirals: {n} points, MLP 2-{args.hidden}-{args.hidden}-2, Adam, batch {bs} "
        f"({world} rank{'s' if world > 1 else ''} x {local}), {args.epochs} epochs, {mode}")
    rng = np.random.default_rng(args.seed + 1)  # the same permutation on every rank
    t0 = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        perm = torch.tensor(rng.permutation(n))
        xs, ys = x[perm], y[perm]
        total = 0.0
        for i in range(0, n, bs):
            lo = i + rank * local             # this rank's slice of the batch
            total += step(xs[lo:lo + local], ys[lo:lo + local]).item()
        # the mean over the ranks of their mean losses is the loss of the whole batches
        mean = torch.tensor([total / (n // bs)], dtype=torch.float64)
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        if epoch % args.print_every == 0 or epoch == 1 or epoch == args.epochs:
            log(f"epoch {epoch:4d}  loss {mean.item():.4f}  "
                f"accuracy {accuracy(model, x, y):6.1%}", flush=True)
    seconds = time.perf_counter() - t0
    log(f"final accuracy: {accuracy(model, x, y):.1%} ({seconds:.2f} s training, {mode}, "
        f"{world} rank{'s' if world > 1 else ''})")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
