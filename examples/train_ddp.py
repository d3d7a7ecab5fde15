"""Train the main example's MLP data-parallel on several processes with MPI.

The model, data and settings are those of ``train_mlp.py``; the code is PyTorch's DDP
recipe with ``import eager as torch``: ``init_process_group``, the model wrapped in
``DistributedDataParallel`` (rank 0's initial parameters on every rank), and each rank
training on its slice of every batch.  Gradients are averaged over the ranks during
``loss.backward()``, so every rank takes the step of the whole batch, and the losses
printed are those of single-process training (``python examples/train_mlp.py``), up to
float rounding.

    mpiexec -n 2 python examples/train_ddp.py              # 2 ranks, 50 samples each per batch
    mpiexec -n 2 python examples/train_ddp.py --compile    # also with the DDP step compiled
    mpiexec -n 2 python examples/train_ddp.py --quick      # 3 epochs: a few seconds
    python examples/train_ddp.py                           # 1 rank: train_mlp.py's training

With ``--compile`` the model is trained a second time from the same initial weights and
batches with the whole DDP training step (its gradient all-reduce included) passed to
``compiler.compile``; its epochs are not printed again (the losses printed stay those of
single-process training), its timing is, and the two runs are compared on every rank as
the compiler promises (README, "Exactness"): bit for bit (every step's loss and the final
parameters, on all ranks), else -- a kernel computed an ``exp``/``log`` within 3 ulp --
every step of two more epochs replayed with ``check=True`` within the stated bound.

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


def train(args, x, y, compiled: bool, epochs: int, log, check: bool = False):
    """Train this rank's slices from the initial weights of ``args.seed``; returns (the
    model, seconds, the step function, this rank's loss of every step, the final
    parameters as arrays)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    n, bs = len(x), args.batch_size
    local = bs // world
    torch.manual_seed(args.seed)           # the same draws as train_mlp.py
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
    if compiled:
        from compiler import compile
        step = compile(train_step, check=check)
    rng = np.random.default_rng(args.seed + 1)  # the same permutation on every rank
    steps = []
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        perm = torch.tensor(rng.permutation(n))
        xs, ys = x[perm], y[perm]
        first = len(steps)
        for i in range(0, n, bs):
            lo = i + rank * local             # this rank's slice of the batch
            steps.append(step(xs[lo:lo + local], ys[lo:lo + local]).item())
            if check and epoch == 1 and i == 2 * bs:
                from compiler import wait
                wait()   # the checked replays run the fused kernels, not the first tier
        # the mean over the ranks of their mean losses is the loss of the whole batches
        mean = torch.tensor([sum(steps[first:]) / (n // bs)], dtype=torch.float64)
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        if epoch % args.print_every == 0 or epoch == 1 or epoch == epochs:
            log(f"epoch {epoch:4d}  loss {mean.item():.4f}  "
                f"accuracy {accuracy(model, x, y):6.1%}", flush=True)
    seconds = time.perf_counter() - t0
    params = [p.detach().numpy().copy() for p in model.parameters()]
    return model, seconds, step, steps, params


def verdict(steps, params, csteps, cparams, step, checked_run) -> str:
    """``compiler.check.training_verdict`` agreed by all ranks: every rank takes the same
    branch (a rank alone in a checked run would wait for the others' collectives)."""
    from compiler.check import CheckError, inexact_ops
    same = csteps == steps and all(np.array_equal(a, b) for a, b in zip(params, cparams))
    flag = torch.tensor([int(same)])
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    if flag.item():
        return "same losses and parameters as eager, bit for bit (every rank)"
    inexact = inexact_ops(step.explain(wait=False).kernels)   # the same trace on every rank
    if not inexact:
        return ("LOSSES DIFFER FROM EAGER (bit for bit was promised: no kernel computed "
                "anything but eager's operations)")
    try:
        n = checked_run()
        ok = 1
    except CheckError as e:
        print(f"[rank {dist.get_rank()}] {e}", file=sys.stderr)
        ok, n = 0, 0
    flag = torch.tensor([ok])
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    if not flag.item():
        return "COMPILED STEP OUTSIDE THE STATED BOUND (the difference is on stderr)"
    return (f"within the stated bound of eager at each of {n} checked steps (kernels "
            f"compute {', '.join(inexact)}, not eager's bits; every rank)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=100, help="global batch (all ranks)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--quick", action="store_true", help="3 epochs (a few seconds)")
    ap.add_argument("--compile", action="store_true",
                    help="also train with the whole DDP training step compiled and compare")
    ap.add_argument("--print-every", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    epochs = 3 if args.quick else args.epochs

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
    ranks = f"{world} rank{'s' if world > 1 else ''}"

    log(f"two spirals: {n} points, MLP 2-{args.hidden}-{args.hidden}-2, Adam, batch {bs} "
        f"({ranks} x {local}), {epochs} epochs, eager")
    model, seconds, _, steps, params = train(args, x, y, False, epochs, log)
    log(f"final accuracy: {accuracy(model, x, y):.1%} ({seconds:.2f} s training, eager, "
        f"{ranks})")
    if args.compile:
        log("-- the same training with the DDP step compiled (epochs not printed again) --")
        cmodel, cseconds, step, csteps, cparams = train(args, x, y, True, epochs,
                                                        lambda *a, **k: None)
        log(f"final accuracy: {accuracy(cmodel, x, y):.1%} ({cseconds:.2f} s training, "
            f"compiled, {ranks})")
        log(f"timings: eager {seconds:.2f} s, compiled {cseconds:.2f} s "
            f"({seconds / cseconds:.1f}x eager's speed; the first calls record and build "
            "kernels)")

        def checked_run():
            out = train(args, x, y, True, 2, lambda *a, **k: None, check=True)
            return out[2].stats()["hits"]
        result = verdict(steps, params, csteps, cparams, step, checked_run)
        s = step.stats()
        log(f"explain: {s['calls']} calls, {s['hits']} compiled hits, {s['traces']} traces, "
            f"{s['fallbacks']} eager fallbacks; {result}")
        ex = step.explain(wait=False)
        if ex.fallbacks:
            log("fallback reasons:")
            for r in ex.fallbacks:
                log(f"  {r}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
