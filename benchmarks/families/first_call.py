"""First-call latency: a new Python process imports the library and calls a compiled GELU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from .. import peers as P
from ..harness import Family, Goal, err_text
from .gelu import C0, C1

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "first_call"

_OURS = r"""
import time
t0 = time.perf_counter()
import json, sys
sys.path.insert(0, {root!r})
import eager as torch
from compiler import compile
t_import = time.perf_counter() - t0
x = torch.randn(1 << 20)
def gelu(x):
    return 0.5 * x * (1.0 + torch.tanh({c0!r} * (x + {c1!r} * x * x * x)))
f = compile(gelu, backend="numba")
t1 = time.perf_counter()
f(x)              # traces (runs eagerly) and builds or loads the kernels
t_first = time.perf_counter() - t1
t2 = time.perf_counter()
f(x)              # the first call that runs compiled code (generated Python until the
t_second = time.perf_counter() - t2  # fused kernels, built in the background, are ready)
import compiler
compiler.wait()
t_ready = time.perf_counter() - t0
s = f.stats()
print(json.dumps({{"import": t_import, "first": t_first, "second": t_second,
                  "kernels_ready": t_ready,
                  "hits": s["hits"], "compile_seconds": s["compile_seconds"]}}))
"""

_TORCH = r"""
import time
t0 = time.perf_counter()
import json
import torch
t_import = time.perf_counter() - t0
x = torch.randn(1 << 20)
def gelu(x):
    return 0.5 * x * (1.0 + torch.tanh({c0!r} * (x + {c1!r} * x * x * x)))
f = torch.compile(gelu)
t1 = time.perf_counter()
f(x)
t_first = time.perf_counter() - t1
t2 = time.perf_counter()
f(x)
t_second = time.perf_counter() - t2
print(json.dumps({{"import": t_import, "first": t_first, "second": t_second}}))
"""

_JAX = r"""
import time
t0 = time.perf_counter()
import json
import jax, jax.numpy as jnp
t_import = time.perf_counter() - t0
x = jnp.asarray(jax.random.normal(jax.random.key(0), (1 << 20,), jnp.float32))
x.block_until_ready()
def gelu(x):
    return 0.5 * x * (1.0 + jnp.tanh({c0!r} * (x + {c1!r} * x * x * x)))
f = jax.jit(gelu)
t1 = time.perf_counter()
f(x).block_until_ready()
t_first = time.perf_counter() - t1
t2 = time.perf_counter()
f(x).block_until_ready()
t_second = time.perf_counter() - t2
print(json.dumps({{"import": t_import, "first": t_first, "second": t_second}}))
"""


def _child(src: str, env: dict, timeout: float) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise RuntimeError(f"child process failed: {tail}")
    d = json.loads(proc.stdout.strip().splitlines()[-1])
    d["wall"] = wall
    # the figure: imports + the call that traces/compiles + the first compiled call
    d["total"] = d["import"] + d["first"] + d["second"]
    return d


def _measure(src: str, env: dict, runs: int, timeout: float) -> dict:
    """One cold run (fills the cache given in ``env``), then ``runs`` warm ones: median."""
    cold = _child(src, env, timeout)
    warm = sorted((_child(src, env, timeout) for _ in range(runs)), key=lambda d: d["total"])
    med = warm[len(warm) // 2]
    return {"seconds": med["total"], "cold": cold["total"], "warm": med,
            "cold_detail": cold, "runs": runs}


def _cell(r: dict, note_extra: str = "") -> dict:
    w = r["warm"]
    return {"status": "ok", "seconds": r["seconds"], "cold_seconds": r["cold"],
            "check": r.get("check", "ok"), "runs": r["runs"],
            "note": (f"imports {w['import']:.3f} s + first call {w['first']:.3f} s + second "
                     f"call {w['second'] * 1e3:.2f} ms; cold cache {r['cold']:.2f} s"
                     + note_extra),
            "detail": r}


def run(quick: bool, peers, log) -> dict:
    runs = 3 if quick else 5
    base = dict(os.environ)
    base["PYTHONPATH"] = ROOT + os.pathsep + base.get("PYTHONPATH", "")
    src = {"c0": C0, "c1": C1}
    cells: dict = {}

    def want(peer):
        return peers is None or peer in peers

    if want(P.COMPILED):
        try:
            with tempfile.TemporaryDirectory(prefix="dyngraph-bench-cache-") as cache:
                r = _measure(_OURS.format(root=ROOT, **src),
                             dict(base, DYNGRAPH_CACHE_DIR=cache), runs, 300)
            if r["warm"]["hits"] < 1:
                r["check"] = "second call did not replay a compiled trace"
            cells[P.COMPILED] = _cell(r, "; kernels ready after "
                                         f"{r['warm']['kernels_ready']:.2f} s")
        except Exception as e:  # noqa: BLE001
            cells[P.COMPILED] = {"status": "error", "error": err_text(e)}
        log(f"  {P.COMPILED}: done")
    if want(P.TORCH_COMPILE):
        try:
            P.torch_compile(quick)
            with tempfile.TemporaryDirectory(prefix="inductor-bench-cache-") as cache:
                r = _measure(_TORCH.format(**src), dict(base, TORCHINDUCTOR_CACHE_DIR=cache),
                             1, 600)
            cells[P.TORCH_COMPILE] = _cell(r)
        except P.Skip as e:
            cells[P.TORCH_COMPILE] = {"status": "skip", "note": str(e)}
        except Exception as e:  # noqa: BLE001
            cells[P.TORCH_COMPILE] = {"status": "error", "error": err_text(e)}
        log(f"  {P.TORCH_COMPILE}: done")
    if want(P.JAX):
        try:
            P.jax()
            r = _measure(_JAX.format(**src), base, 1 if quick else 3, 300)
            cells[P.JAX] = _cell(r, " (JAX's default: no persistent compilation cache)")
        except P.Skip as e:
            cells[P.JAX] = {"status": "skip", "note": str(e)}
        except Exception as e:  # noqa: BLE001
            cells[P.JAX] = {"status": "error", "error": err_text(e)}
        log(f"  {P.JAX}: done")
    return {KEY: {"title": "GELU 1M: imports + first two calls in a new process",
                  "headline": "first call in a new process (imports + compile, GELU 1M)",
                  "reference": None, "impls": cells}}


FAMILY = Family(
    "first_call", "first-call latency",
    "A new Python process imports the library, compiles the tanh-form GELU and calls it "
    "twice on 1M floats (the first call traces and builds or loads kernels, the second "
    "is the first to run compiled code). The figure is imports + both calls, with a warm "
    "on-disk cache (after one cold run into a fresh cache directory); the median of 3 "
    "(quick) or 5 processes for ours.",
    goals=[Goal("first call in a new process with a warm disk cache (GELU)", "<=", 0.5,
                (KEY, P.COMPILED))],
    run=run)
