"""How soon the transformer step's fused kernels are ready in a new process, with a cold
kernel cache and with the on-disk cache of an earlier process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from .. import peers as P
from ..harness import Family, Goal, err_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLD, WARM = "transformer_ready_cold", "transformer_ready_warm"

_CHILD = r"""
import time
t0 = time.perf_counter()
import json, sys
sys.path.insert(0, {root!r})
import eager
import eager.nn.functional as F
from eager import nn, optim
import compiler
from compiler import compile
t_import = time.perf_counter() - t0
from benchmarks.families.transformer import init, setup
step, x, y = setup(eager, nn, F, optim, init())
f = compile(step, backend="numba")
t1 = time.perf_counter()
for _ in range(3):   # records a trace (gradients None), another (gradients set), replays
    f(x, y)
t_calls = time.perf_counter() - t1
compiler.wait()      # every fused-kernel build (or load from the disk cache) done
t_ready = time.perf_counter() - t1
f(x, y)
s = f.stats()
kernels = sum(len(t["kernels"]) for t in f.explain().traces)
print(json.dumps({{"import": t_import, "calls": t_calls, "ready": t_ready,
                  "hits": s["hits"], "traces": s["traces"], "kernels": kernels}}))
"""


def _child(env: dict, timeout: float) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD.format(root=ROOT)], capture_output=True,
                          text=True, env=env, timeout=timeout, cwd=ROOT, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise RuntimeError(f"child process failed: {tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median(runs: list) -> dict:
    return sorted(runs, key=lambda d: d["ready"])[len(runs) // 2]


def _cell(runs: list, what: str) -> dict:
    d = _median(runs)
    check = "ok" if d["hits"] >= 2 and d["kernels"] >= 1 else \
        f"no compiled replay with kernels ({d['hits']} hits, {d['kernels']} kernels)"
    return {"status": "ok", "seconds": d["ready"], "check": check, "runs": len(runs),
            "note": (f"{what}: first call to kernels ready {d['ready']:.3f} s (the three "
                     f"calls {d['calls']:.3f} s; imports {d['import']:.3f} s before); "
                     f"{d['traces']} traces, {d['kernels']} kernels"),
            "detail": runs}


def run(quick: bool, peers, log) -> dict:
    out = {COLD: {"title": "transformer step: kernels ready, cold cache (new process)",
                  "headline": None, "reference": None, "impls": {}},
           WARM: {"title": "transformer step: kernels ready from the disk cache (new process)",
                  "headline": None, "reference": None, "impls": {}}}
    if peers is not None and P.COMPILED not in peers:
        return out
    base = dict(os.environ)
    base["PYTHONPATH"] = ROOT + os.pathsep + base.get("PYTHONPATH", "")
    n = 3 if quick else 5
    try:
        cold, warm = [], []
        for i in range(1 if quick else 3):
            with tempfile.TemporaryDirectory(prefix="dyngraph-bench-cache-") as cache:
                env = dict(base, DYNGRAPH_CACHE_DIR=cache)
                cold.append(_child(env, 300))
                if i == 0:
                    warm = [_child(env, 300) for _ in range(n)]
        out[COLD]["impls"][P.COMPILED] = _cell(cold, "fresh cache directory")
        out[WARM]["impls"][P.COMPILED] = _cell(warm, "cache filled by a cold run")
    except Exception as e:  # noqa: BLE001
        for k in out:
            out[k]["impls"][P.COMPILED] = {"status": "error", "error": err_text(e)}
    log(f"  {P.COMPILED}: done")
    return out


FAMILY = Family(
    "transformer_ready", "transformer step: kernels ready",
    "A new Python process builds the `transformer` family's model and optimizer, compiles "
    "its whole train step and calls it three times (a trace with no gradients yet, a "
    "trace with them, a replay), then waits for every fused kernel built in the "
    "background (`compiler.wait()`). The figure is the time from the first call to "
    "kernels ready (imports and model construction excluded, reported in the note): with "
    "a fresh kernel cache (median of 1 process in --quick, 3 otherwise), and with the "
    "cache an earlier process filled on disk (median of 3 or 5).",
    goals=[Goal("transformer step: kernels ready in a new process, cold cache", "<=", 2.0,
                (COLD, P.COMPILED)),
           Goal("transformer step: kernels ready in a new process, from the disk cache",
                "<=", 0.3, (WARM, P.COMPILED))],
    run=run, keys=(COLD, WARM))
