"""GELU's erf form on 1M float32: ours eager, ours compiled (fused kernel, after
``compiler.wait()``) and PyTorch eager (when importable), timed in one process, each
library on ``--threads`` threads (default 1: Numba's, OpenMP's and torch's).

    .venv/bin/python benchmarks/bench_erf.py            # ours only
    .venv-parity/bin/python benchmarks/bench_erf.py     # with PyTorch (torch CPU)

Prints the median and the minimum of ``--reps`` timed calls for each, and their ratios
to PyTorch eager.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timeit(fn, reps: int) -> tuple:
    """(median, min) seconds of ``reps`` calls of ``fn`` (after 3 warm-up calls)."""
    for _ in range(3):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.min(ts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1 << 20)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(args.threads)   # Numba reads it at import, which comes next

    import compiler
    import eager
    from eager.nn import functional as F

    x_np = np.random.default_rng(0).standard_normal(args.n, dtype=np.float32) * np.float32(3)
    x = eager.from_numpy(x_np)
    res = {}
    with eager.no_grad():
        res["ours eager"] = timeit(lambda: F.gelu(x), args.reps)

        def gelu(t):
            return F.gelu(t)
        cf = compiler.compile(gelu, backend="numba")
        cf(x)
        cf(x)
        compiler.wait()
        res["ours compiled"] = timeit(lambda: cf(x), args.reps)
        same = np.array_equal(cf(x).numpy(), F.gelu(x).numpy())
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            xt = torch.from_numpy(x_np)
            torch.set_num_threads(args.threads)
            with torch.no_grad():
                res["torch eager"] = timeit(lambda: torch.nn.functional.gelu(xt), args.reps)
    ref = next((v for k, v in res.items() if k.startswith("torch")), None)
    print(f"GELU erf form, {args.n} float32, {args.reps} calls each, {args.threads} "
          f"thread{'s' * (args.threads > 1)}: median (min), ratios to torch eager")
    for k, v in res.items():
        ratio = f"  {v[0] / ref[0]:5.2f}x ({v[1] / ref[1]:5.2f}x)" if ref else ""
        print(f"  {k:28s} {v[0] * 1e3:8.3f} ms ({v[1] * 1e3:6.3f}){ratio}")
    print(f"  compiled == eager bit for bit: {same}")


if __name__ == "__main__":
    main()
