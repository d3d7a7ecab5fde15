"""A data-dependent branch under ``compile``: traced both ways, replayed behind guards.

``bool(h.sum() > 0)`` asks a traced tensor for a value, so the trace records a branch
guard (the IR value and the outcome it had).  The first input takes one side; when a
later input takes the other side, replay stops at the guard, the call runs eagerly and
the new path is recorded; from then on both sides replay.  Results always equal eager's.

    python examples/branches.py [--quick] [--compile]

``--compile`` then times the compiled function against ``f`` run eagerly on the same
inputs (after ``compiler.wait()``: the fused kernels are built) and compares the results
as the compiler promises (README, "Exactness"): bit for bit where its kernels compute
eager's operations, else within 3 ulp (a kernel's ``tanh`` is ``runtime.cpu.mathlib``'s,
not NumPy's), with the largest difference printed in ulp.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

try:
    import eager as torch
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import eager as torch
from compiler import compile, wait
from compiler.check import inexact_ops


def f(x):
    h = torch.tanh(x * 1.01 + 0.1)
    if h.sum() > 0:          # data-dependent: a branch guard in the trace
        return h * 2
    return -h


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer calls")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--compile", action="store_true",
                    help="also time the compiled function against eager and compare")
    args = ap.parse_args(argv)
    calls = 20 if args.quick else args.calls

    cf = compile(f)
    torch.manual_seed(0)
    pos = torch.rand(64) + 0.5            # h.sum() > 0: first branch
    neg = -torch.rand(64) - 0.5           # h.sum() < 0: second branch
    print("call 1 (positive input): traced, runs eagerly")
    cf(pos)
    print("call 2 (positive input): replayed")
    cf(pos)
    print("call 3 (negative input): the guard sees a new outcome -> eager + new path")
    cf(neg)
    print(f"calls 4..{calls}: random inputs, both paths replayed")
    sides = {True: 0, False: 0}
    for i in range(3, calls):
        x = torch.randn(64) + (1.0 if i % 2 else -1.0)
        got, want = cf(x), f(x)
        if not np.allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6):
            print(f"MISMATCH at call {i + 1}")
            return 1
        sides[bool(torch.tanh(x * 1.01 + 0.1).sum() > 0)] += 1
    print(f"results equal eager on every call ({sides[True]} took the `if`, "
          f"{sides[False]} the fall-through)")
    print()
    print(cf.explain())
    s = cf.stats()
    print()
    print(f"summary: {s['calls']} calls, {s['hits']} hits, {s['traces']} traces, "
          f"{s['guard_failures']} guard failures, {s['fallbacks']} eager fallbacks")
    if args.compile:
        return timed(cf, calls)
    return 0


def timed(cf, calls: int) -> int:
    """Eager ``f`` and the compiled ``cf`` on the same inputs: both timings, and the
    results compared as promised."""
    print()
    print(f"-- timing: f eager and compiled on {calls} inputs (both branches) --")
    wait()                                 # kernels built: time what replays run
    xs = [torch.randn(64) + (1.0 if i % 2 else -1.0) for i in range(calls)]
    for x in xs[:2]:
        cf(x)                              # warm: the loaded kernels' first calls
    t0 = time.perf_counter()
    want = [f(x) for x in xs]
    t_eager = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = [cf(x) for x in xs]
    t_comp = time.perf_counter() - t0
    print(f"eager {t_eager / calls * 1e6:.1f} us per call, compiled "
          f"{t_comp / calls * 1e6:.1f} us per call ({t_eager / t_comp:.1f}x eager's speed)")
    got = np.stack([g.numpy() for g in got])
    want = np.stack([w.numpy() for w in want])
    inexact = inexact_ops(cf.explain(wait=False).kernels)
    if np.array_equal(got, want):
        print(f"compared: same results as eager on all {calls} calls, bit for bit")
        return 0
    ulp = float((np.abs(got - want) / np.spacing(np.abs(want))).max())
    if not inexact:
        print(f"compared: RESULTS DIFFER FROM EAGER ({ulp:.0f} ulp; bit for bit was "
              "promised: no kernel computed anything but eager's operations)")
        return 1
    if ulp <= 3:
        print(f"compared: within the stated bound of eager on all {calls} calls (at most "
              f"{ulp:.0f} ulp; its kernels compute {', '.join(inexact)}, within 3 ulp)")
        return 0
    print(f"compared: OUTSIDE THE STATED BOUND: {ulp:.0f} ulp from eager")
    return 1


if __name__ == "__main__":
    sys.exit(main())
