"""Timing of runtime.mathlib inside a fused Numba loop (not a test).

Fused GELU, tanh form, on 1M float32:
    0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x**3)))
computed (a) with np.tanh in an @njit loop (scalar libm call, no SIMD),
(b) with runtime.mathlib.tanh in the same loop, (c) with NumPy ufuncs.
Also reports whether the mathlib loop was vectorized (vector types in the LLVM IR)
and times a few other mathlib functions against their np.* counterparts.

Run:  python benchmarks/bench_mathlib.py [n]
"""

from __future__ import annotations

import os
import re
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from runtime.cpu import mathlib

F = np.float32
C0, C1, HALF, ONE = F(0.7978845608), F(0.044715), F(0.5), F(1.0)


@njit(cache=False)
def gelu_np_tanh(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = HALF * v * (ONE + np.tanh(C0 * (v + C1 * v * v * v)))


@njit(cache=False)
def gelu_mathlib(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = HALF * v * (ONE + mathlib.tanh(C0 * (v + C1 * v * v * v)))


def gelu_numpy(x, out):
    np.multiply(x, x, out=out)
    out *= x
    out *= C1
    out += x
    out *= C0
    np.tanh(out, out=out)
    out += ONE
    out *= x
    out *= HALF


def timeit(fn, *args, reps=30):
    fn(*args)  # compile / warm up
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3  # ms, best of reps


def _unary_loops(f_np, f_ml):
    @njit(cache=False)
    def loop_np(x, out):
        for i in range(x.size):
            out[i] = f_np(x[i])

    @njit(cache=False)
    def loop_ml(x, out):
        for i in range(x.size):
            out[i] = f_ml(x[i])

    return loop_np, loop_ml


def main(n: int = 1 << 20) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32) * F(3.0)
    out = np.empty_like(x)

    t_np = timeit(gelu_np_tanh, x, out)
    ref = out.copy()
    t_ml = timeit(gelu_mathlib, x, out)
    res = out.copy()
    t_numpy = timeit(gelu_numpy, x, out)
    assert res.dtype == np.float32
    # relative to max(|x|, 1): the 1 + tanh cancellation makes pure relative error meaningless
    err = np.max(np.abs(res - ref) / np.maximum(np.abs(x), 1))

    llvm = gelu_mathlib.inspect_llvm(gelu_mathlib.signatures[0])
    vec = sorted({w for w in ("<4 x float>", "<8 x float>", "<16 x float>") if w in llvm})
    if re.search(r"@llvm\.(exp|log|tanh|sin|cos)\.|@tanhf?\(", llvm):
        vec = ["transcendental call left in loop (scalarized)"]
    print(f"fused GELU (tanh form), n={n} float32, best of 30")
    print(f"  njit + np.tanh      : {t_np:7.3f} ms")
    print(
        f"  njit + mathlib.tanh : {t_ml:7.3f} ms   ({t_np / t_ml:5.1f}x faster than np.tanh loop)"
    )
    print(
        f"  NumPy ufuncs        : {t_numpy:7.3f} ms   ({t_numpy / t_ml:5.1f}x slower than mathlib)"
    )
    print(f"  max |diff| / max(|x|, 1), mathlib vs np.tanh loop: {err:.2e}")
    print(f"  vector types in mathlib loop IR: {vec or 'NONE (not vectorized!)'}")

    print(f"\nsingle-function loops, n={n} (ms, float32 | float64)")
    for name in ("exp", "expm1", "log", "log1p", "tanh", "sin", "cos"):
        loop_np, loop_ml = _unary_loops(getattr(np, name), getattr(mathlib, name))
        row = []
        for dt in (np.float32, np.float64):
            xs = np.abs(x).astype(dt) if name in ("log",) else x.astype(dt)
            o = np.empty_like(xs)
            a, b = timeit(loop_np, xs, o, reps=10), timeit(loop_ml, xs, o, reps=10)
            row.append(f"np {a:6.2f} / ml {b:6.2f} ({a / b:4.1f}x)")
        print(f"  {name:6s} " + " | ".join(row))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20)
