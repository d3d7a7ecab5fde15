"""A data-dependent branch under ``compile``: traced both ways, replayed behind guards.

``bool(h.sum() > 0)`` asks a traced tensor for a value, so the trace records a branch
guard (the IR value and the outcome it had).  The first input takes one side; when a
later input takes the other side, replay stops at the guard, the call runs eagerly and
the new path is recorded; from then on both sides replay.  Results always equal eager's.

    python examples/branches.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

try:
    import eager as torch
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import eager as torch
from compiler import compile


def f(x):
    h = torch.tanh(x * 1.01 + 0.1)
    if h.sum() > 0:          # data-dependent: a branch guard in the trace
        return h * 2
    return -h


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer calls")
    ap.add_argument("--calls", type=int, default=200)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
