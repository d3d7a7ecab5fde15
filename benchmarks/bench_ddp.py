"""DDP: the MLP 784-256-10 SGD train step, data-parallel over MPI ranks.

Every rank trains on ``--batch`` samples per step (64: the ``mlp`` workload's batch; the
global batch grows with the ranks), one BLAS/Numba thread per rank (one core each).
Per number of ranks, rank 0 prints:

* the step time and throughput (samples per second, all ranks together) of the step
  without DDP on the local batch, and of the DDP step, eager and compiled (the whole
  step — zero_grad, forward, backward with the bucketed all-reduces, SGD — in one
  ``compiler.compile``d function);
* the all-reduce time per step: one blocking averaging all-reduce of the gradients'
  size (203,530 float32, 814 KB) alone, and the DDP step's time over the step without
  DDP (what communication and bucketing cost the step).

Run:

    mpiexec -n 2 python -m benchmarks.bench_ddp      # one job: its rows
    python -m benchmarks.bench_ddp                   # 1 rank (no mpiexec)
    python -m benchmarks.bench_ddp --compare 1 2     # a job per rank count, one table

Step times are medians of samples of several steps; ranks are kept in step by the
all-reduces themselves (and a barrier before each sample).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
D_IN, D_H, D_OUT = 784, 256, 10


def _median_steps(steps: dict, steps_per_sample: int, samples: int, barrier) -> dict:
    """Median seconds per call of each of ``steps`` (name -> function), sampled in turns
    (A B C A B C ...) so that a busy phase of the machine hits them all alike."""
    times: dict = {name: [] for name in steps}
    for _ in range(samples):
        for name, step in steps.items():
            barrier()
            t0 = time.perf_counter()
            for _ in range(steps_per_sample):
                step()
            times[name].append((time.perf_counter() - t0) / steps_per_sample)
    return {name: statistics.median(ts) for name, ts in times.items()}


def measure(batch: int, quick: bool) -> list[dict]:
    """Rows for this job (every rank measures; rank 0's numbers are returned)."""
    import numpy as np

    import compiler
    import eager
    import eager.distributed as dist
    from eager import nn, optim
    from eager.nn.parallel import DistributedDataParallel as DDP

    if not dist.is_initialized():
        dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(rank)
    x = eager.tensor(rng.standard_normal((batch, D_IN), dtype=np.float32))
    y = eager.tensor(rng.integers(0, D_OUT, batch))
    steps, samples = (5, 5) if quick else (20, 15)

    def build(wrap: bool, compiled: bool):
        eager.manual_seed(0)
        model = nn.Sequential(nn.Linear(D_IN, D_H), nn.ReLU(), nn.Linear(D_H, D_OUT))
        net = DDP(model) if wrap else model
        opt = optim.SGD(net.parameters(), lr=0.01)
        loss_fn = nn.CrossEntropyLoss()

        def step(xb, yb):
            opt.zero_grad()
            loss = loss_fn(net(xb), yb)
            loss.backward()
            opt.step()
            return loss

        f = compiler.compile(step) if compiled else step
        for _ in range(3):  # trace, replay, kernels built
            f(x, y)
            compiler.wait()
        return lambda: f(x, y)

    n_grad = D_H * D_IN + D_H + D_OUT * D_H + D_OUT
    flat = eager.zeros(n_grad)
    steps_by_name = {"allreduce": lambda: dist.all_reduce(flat, op=dist.ReduceOp.AVG)}
    for compiled in (False, True):
        mode = "compiled" if compiled else "eager"
        steps_by_name[f"{mode}, no DDP (local batch)"] = build(False, compiled)
        steps_by_name[f"{mode} DDP"] = build(True, compiled)
    t = _median_steps(steps_by_name, steps, samples, dist.barrier)
    rows = []
    for mode in ("eager", "compiled"):
        local, ddp = t[f"{mode}, no DDP (local batch)"], t[f"{mode} DDP"]
        for impl, wrapped in ((f"{mode}, no DDP (local batch)", False), (f"{mode} DDP", True)):
            rows.append({"impl": impl, "ranks": world, "batch_per_rank": batch,
                         "step_ms": t[impl] * 1e3, "samples_per_s": world * batch / t[impl],
                         "allreduce_ms": t["allreduce"] * 1e3,
                         "ddp_over_local_ms": (ddp - local) * 1e3 if wrapped else None})
    return rows


def print_rows(rows: list[dict], out=sys.stdout) -> None:
    print(f"{'ddp: MLP 784-256-10 SGD step':<34} {'ranks':>5} {'batch/rank':>10} "
          f"{'step ms':>8} {'samples/s':>10} {'allreduce ms':>12} {'DDP - local ms':>14}",
          file=out)
    for r in rows:
        extra = "" if r["ddp_over_local_ms"] is None else f"{r['ddp_over_local_ms']:14.3f}"
        print(f"  {r['impl']:<32} {r['ranks']:>5} {r['batch_per_rank']:>10} "
              f"{r['step_ms']:8.3f} {r['samples_per_s']:10.0f} {r['allreduce_ms']:12.3f} "
              f"{extra}", file=out)


def _mpiexec() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    path = here if os.path.exists(here) else shutil.which("mpiexec")
    if path is None:
        raise RuntimeError("mpiexec not found: pip install -e '.[distributed]'")
    return path


def compare(ranks=(1, 2), batch: int = 64, quick: bool = False) -> list[dict]:
    """Run one job per rank count (``mpiexec -n k``) and return all their rows."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "HYDRA_"))}
    env.update({v: "1" for v in THREAD_VARS})
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    rows = []
    for k in ranks:
        cmd = [_mpiexec(), "-n", str(k), sys.executable, "-m", "benchmarks.bench_ddp",
               "--batch", str(batch), "--json-rows"] + (["--quick"] if quick else [])
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env,
                           timeout=600, check=False)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
        rows += json.loads(p.stdout.strip().splitlines()[-1])
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64, help="samples per rank per step")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--compare", type=int, nargs="*", metavar="RANKS",
                    help="run a job per rank count (default 1 2) and print one table")
    ap.add_argument("--json-rows", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.compare is not None:
        print_rows(compare(tuple(args.compare) or (1, 2), args.batch, args.quick))
        return 0
    for v in THREAD_VARS:  # one core per rank, before numpy and numba start
        os.environ.setdefault(v, "1")
    rows = measure(args.batch, args.quick)
    import eager.distributed as dist
    if dist.get_rank() == 0:
        if args.json_rows:
            print(json.dumps(rows))
        else:
            print_rows(rows)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
