"""Fused elementwise kernels: GELU (tanh form) written with eager ops, no grad.

    0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x**3)))

For 1M and 32M float32 elements, times (median and best of several calls):
NumPy ufunc composition, our eager mode, our compiled function (backend "numba": one
fused kernel, prange above 32k elements, output buffer reused when the previous result
is no longer referenced), and a plain copy of the input (``np.copyto`` into a
preallocated array: the memory-bandwidth floor; ``x.copy()`` with a fresh output is
shown too).  Prints times and the ratios of BENCHMARKS.md:

    NumPy / compiled   (goal >= 4 at 1M, >= 10 at 32M)
    compiled / copy    (goal <= 1.5 at 32M)

Run:  python benchmarks/bench_fusion.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import eager
from compiler import compile as dg_compile


def gelu_eager(x):
    return 0.5 * x * (1 + eager.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def gelu_numpy(x):
    """The same expression with NumPy ufuncs, as written (``x ** 3``)."""
    return 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x ** 3)))


def gelu_numpy_cube(x):
    """The same with ``x * x * x``: NumPy 2.4's float32 ``x ** 3`` calls powf per element
    (~50-100 ns each here), so this is the fair (fast) NumPy baseline."""
    return 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715)
                                                                * (x * x * x))))


def timeit(fn, reps: int, warmup: int = 2):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3, min(ts) * 1e3


def run(n: int, reps: int) -> dict:
    rng = np.random.default_rng(0)
    xa = rng.standard_normal(n, dtype=np.float32)
    x = eager.tensor(xa)
    f = dg_compile(gelu_eager, backend="numba")
    t0 = time.perf_counter()
    with eager.no_grad():
        f(x)        # trace (runs eagerly)
        y = f(x)    # first replay
    first = time.perf_counter() - t0
    ref = gelu_numpy_cube(xa)
    err = np.max(np.abs(y._data - ref) / (np.abs(ref) + 1e-3))
    del y
    dst = np.empty_like(xa)
    res = {}
    res["numpy x**3"] = timeit(lambda: gelu_numpy(xa), max(3, reps // 4))
    res["numpy x*x*x"] = timeit(lambda: gelu_numpy_cube(xa), reps)
    with eager.no_grad():
        res["our eager"] = timeit(lambda: gelu_eager(x), max(3, reps // 4))
        res["compiled"] = timeit(lambda: f(x), reps)
    res["copyto"] = timeit(lambda: np.copyto(dst, xa), reps)
    res["copy (fresh)"] = timeit(lambda: xa.copy(), reps)
    st = f.stats()
    assert st["hits"] >= reps, st
    from runtime.cpu.launch import Adaptive
    glb = f._records[0][2].program.fn.__globals__
    launch = [v for k, v in glb.items() if k.startswith("K") and isinstance(v, Adaptive)]
    print(f"\nGELU, {n:,} float32 (trace + compile + first replay {first:.2f} s, "
          f"max rel. err vs NumPy {err:.1e})")
    for k, (med, best) in res.items():
        print(f"  {k:14s} median {med:9.3f} ms   best {best:9.3f} ms")
    for a in launch:
        print(f"  kernel variant in use: {a.variant} (recent serial {a.est[0] * 1e3:.3f} ms, "
              f"prange {a.est[1] * 1e3:.3f} ms)")
    m = {k: v[0] for k, v in res.items()}
    print(f"  NumPy (x*x*x) / compiled {m['numpy x*x*x'] / m['compiled']:7.2f}")
    print(f"  NumPy (x**3) / compiled  {m['numpy x**3'] / m['compiled']:7.2f}")
    print(f"  our eager / compiled     {m['our eager'] / m['compiled']:7.2f}")
    print(f"  compiled / copyto        {m['compiled'] / m['copyto']:7.2f}")
    print(f"  compiled / copy (fresh)  {m['compiled'] / m['copy (fresh)']:7.2f}")
    return m


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    reps = 5 if args.quick else 20
    run(1 << 20, reps * 4)
    run(32 << 20, reps)


if __name__ == "__main__":
    main()
