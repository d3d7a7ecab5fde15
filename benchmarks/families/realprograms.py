"""Real programs: small training programs in the style of common public ones
(``benchmarks/realprograms/``), each timed eager and compiled against PyTorch.

Two figures per program:

- **steady state** (workload key ``rp_<program>``): one training step after every trace
  is recorded and every fused kernel is built (``compiler.wait()``, done by
  :func:`benchmarks.timing.compare`'s warm-up), peers sampled in turns, medians;
- **end to end** (``rp_<program>_e2e``): a new process per peer, with a fresh kernel cache
  (and a fresh ``TORCHINDUCTOR_CACHE_DIR``), builds the program and runs steps for a fixed
  budget (30 s; 3 s in ``--quick``), tracing and background builds included; the figure
  is the budget divided by the steps done (seconds per step over the whole run).

Peers: ``eager``; ``compiled`` (the whole step, zero_grad to optimizer step, passed to
``compiler.compile``); ``compiled fwd`` (the model passed to ``compiler.compile`` as
``torch.compile(model)`` users do; backward and step outside); ``torch`` (PyTorch eager)
and ``torch.compile`` (``torch.compile(model)``; full runs only).

Standalone: ``python -m benchmarks.families.realprograms [--quick] [--programs vae gpt]
[--budget S] [--e2e-peers eager compiled] [--no-e2e] [--no-steady]``; in ``python -m
benchmarks`` the programs can be limited with ``$DYNGRAPH_REALPROGRAMS=vae,gpt``.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time

from .. import peers as P
from ..harness import Family, Goal, Workload, err_text, with_stats

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ..realprograms import PROGRAMS  # noqa: E402

FULL_BUDGET, QUICK_BUDGET = 30.0, 3.0
STEADY_PEERS = [P.EAGER, P.COMPILED, P.COMPILED_FWD, P.TORCH, P.TORCH_COMPILE]


def _program(name):
    return importlib.import_module(f"benchmarks.realprograms.{name}")


def _cycling(step, batches):
    state = {"i": 0}

    def run():
        b = batches[state["i"] % len(batches)]
        state["i"] += 1
        return step(*b)
    return run


def workload(name: str, quick: bool) -> Workload:
    mod = _program(name)

    def eager_():
        import eager
        return _cycling(*mod.build(eager, 0))

    def compiled_():
        import eager
        from compiler import compile
        step, batches = mod.build(eager, 0)
        cstep = compile(step, backend="numba")
        return with_stats(_cycling(cstep, batches), cstep)

    def compiled_fwd_():
        import eager
        from compiler import compile
        return _cycling(*mod.build(eager, 0, wrap=lambda m: compile(m, backend="numba")))

    def torch_():
        return _cycling(*mod.build(P.torch(), 0))

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        return _cycling(*mod.build(torch, 0, wrap=tc))

    doc = (mod.__doc__ or name).strip().split("\n\n")[0].replace("\n", " ")
    return Workload(
        f"rp_{name}", f"{name}: one training step (steady state)",
        [(P.EAGER, eager_), (P.COMPILED, compiled_), (P.COMPILED_FWD, compiled_fwd_),
         (P.TORCH, torch_), (P.TORCH_COMPILE, torch_compile_)],
        rtol=2e-3, atol=1e-5, reference=P.EAGER, check_calls=4, stateful=True,
        notes={P.EAGER: doc,
               P.COMPILED: "the whole step compiled (compiler.compile(step))",
               P.COMPILED_FWD: "the model compiled (compiler.compile(model)), as "
                               "torch.compile users do",
               P.TORCH_COMPILE: "torch.compile(model)"})


# ---- end to end: a new process per (program, peer) --------------------------------------

_CHILD = r"""
import os, sys, time, json
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
name, peer, budget = {name!r}, {peer!r}, {budget!r}
import importlib
mod = importlib.import_module("benchmarks.realprograms." + name)
if peer in ("torch", "torch.compile"):
    import torch as lib
    torch = lib
    torch.set_num_threads(1)
else:
    import eager as lib
    import compiler
wrap = None
if peer == "compiled fwd":
    wrap = lambda m: compiler.compile(m, backend="numba")
elif peer == "torch.compile":
    wrap = torch.compile
t_import = time.perf_counter() - t0
step, batches = mod.build(lib, 0, wrap=wrap)
if peer == "compiled":
    step = compiler.compile(step, backend="numba")
t1 = time.perf_counter()
n, first, losses = 0, None, []
while True:
    loss = step(*batches[n % len(batches)])
    n += 1
    now = time.perf_counter() - t1
    if first is None:
        first = now
    if n <= 4:
        losses.append(float(loss))
    if now >= budget:
        break
pending = None
if peer in ("compiled", "compiled fwd"):
    pending = bool(sys.modules["compiler.tiers"].pending())
print(json.dumps({{"steps": n, "elapsed": now, "first": first, "import": t_import,
                  "losses": losses, "builds_pending_at_end": pending}}), flush=True)
os._exit(0)
"""


def e2e_child(name: str, peer: str, budget: float, timeout: float | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory(prefix="dyngraph-rp-") as cache:
        env["DYNGRAPH_CACHE_DIR"] = os.path.join(cache, "dyngraph")
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
        code = _CHILD.format(root=ROOT, name=name, peer=peer, budget=budget)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, cwd=ROOT, check=False,
                              timeout=timeout or budget * 4 + 300)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise RuntimeError(f"child process failed: {tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def e2e_peers(quick: bool, peers=None) -> list:
    out = [P.EAGER, P.COMPILED, P.COMPILED_FWD, P.TORCH] + ([] if quick else [P.TORCH_COMPILE])
    if peers is not None:
        out = [p for p in out if p in peers]
    return out


def _torch_importable() -> bool:
    try:
        P.torch()
        return True
    except P.Skip:
        return False


def run_e2e(name: str, quick: bool, peers, log, budget: float | None = None) -> dict:
    budget = budget or (QUICK_BUDGET if quick else FULL_BUDGET)
    cells = {}
    has_torch = _torch_importable()
    for peer in e2e_peers(quick, peers):
        if peer in (P.TORCH, P.TORCH_COMPILE) and not has_torch:
            cells[peer] = {"status": "skip", "note": "torch not importable; pip install torch"}
            continue
        try:
            d = e2e_child(name, peer, budget)
        except Exception as e:  # noqa: BLE001 -- reported in the cell
            cells[peer] = {"status": "error", "error": err_text(e)}
            log(f"  {name} e2e {peer}: ERROR {err_text(e)}")
            continue
        cells[peer] = {"status": "ok", "seconds": d["elapsed"] / d["steps"], "check": "ok",
                       "note": (f"{d['steps']} steps in {d['elapsed']:.2f} s (first step "
                                f"{d['first']:.3f} s; imports {d['import']:.2f} s before)"
                                + ("; kernel builds still pending at the end"
                                   if d["builds_pending_at_end"] else "")),
                       "detail": d}
        log(f"  {name} e2e {peer}: {d['steps']} steps in {d['elapsed']:.1f} s")
    ref = cells.get(P.EAGER, {}).get("detail", {}).get("losses")
    for peer, c in cells.items():
        got = c.get("detail", {}).get("losses")
        if ref and got and peer != P.EAGER:
            k = min(len(ref), len(got))
            if any(abs(a - b) > 2e-3 * abs(b) + 1e-5 for a, b in zip(got[:k], ref[:k])):
                c["check"] = f"wrong result: losses {got[:k]} != eager's {ref[:k]}"
    return {"title": f"{name}: end to end over {budget:g} s (new process, cold caches)",
            "headline": None, "reference": P.EAGER, "impls": cells}


def selected(programs=None) -> list:
    if programs is None:
        env = os.environ.get("DYNGRAPH_REALPROGRAMS", "")
        programs = [p for p in env.replace(",", " ").split() if p] or None
    if programs is None:
        return list(PROGRAMS)
    bad = [p for p in programs if p not in PROGRAMS]
    if bad:
        raise KeyError(f"no real program {bad[0]!r}; programs: {', '.join(PROGRAMS)}")
    return list(programs)


def run_programs(quick: bool, peers, log, programs=None, budget=None, steady=True,
                 e2e=True) -> dict:
    from ..harness import run_workload
    from ..timing import FULL, QUICK
    out = {}
    for name in selected(programs):
        if steady:
            log(f"  {name}: steady state")
            t0 = time.perf_counter()
            try:
                out[f"rp_{name}"] = run_workload(workload(name, quick),
                                                 QUICK if quick else FULL, log, peers)
            except Exception as e:  # noqa: BLE001
                out[f"rp_{name}"] = {"title": name, "headline": None, "reference": P.EAGER,
                                     "impls": {P.COMPILED: {"status": "error",
                                                            "error": err_text(e)}}}
            out[f"rp_{name}"]["seconds"] = time.perf_counter() - t0
        if e2e:
            log(f"  {name}: end to end")
            out[f"rp_{name}_e2e"] = run_e2e(name, quick, peers, log, budget)
    return out


def run(quick: bool, peers, log) -> dict:
    return run_programs(quick, peers, log)


def _goals() -> list:
    out = []
    for n in PROGRAMS:
        k, e = f"rp_{n}", f"rp_{n}_e2e"
        out += [Goal(f"{n} steady step: our eager / ours compiled", ">=", 2.0,
                     (k, P.EAGER), (k, P.COMPILED)),
                Goal(f"{n} steady step: ours compiled / torch.compile", "<=", 1.0,
                     (k, P.COMPILED), (k, P.TORCH_COMPILE)),
                Goal(f"{n} end to end: our eager / ours compiled (per step)", ">=", 1.5,
                     (e, P.EAGER), (e, P.COMPILED))]
    return out


FAMILY = Family(
    "realprograms", "real programs: training steps, steady state and end to end",
    "Eight small training programs of our own in the style of common public ones "
    "(`benchmarks/realprograms/`: a VAE, a minGPT-like GPT, makemore's char MLP, a tiny "
    "ViT, a seq2seq GRU with attention, actor-critic on a NumPy cart-pole, the digits CNN, "
    "the packed LSTM), each written once against a `torch`-like module, so the same code "
    "runs on ours and on PyTorch. Steady state: one step after every trace and kernel is "
    "ready; end to end: a new process per peer with cold caches, steps over a fixed budget "
    "(30 s, 3 s in --quick) including tracing and builds, as seconds per step.",
    goals=_goals(), run=run,
    keys=tuple(k for n in PROGRAMS for k in (f"rp_{n}", f"rp_{n}_e2e")))


# ---- standalone table ---------------------------------------------------------------------

def _sec(cell):
    if not cell or cell.get("status") != "ok" or cell.get("check", "ok") != "ok":
        return None
    return cell.get("seconds")


def _fmt(s):
    if s is None:
        return "—"
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def _ratio(a, b):
    return "—" if a is None or b is None else f"{a / b:.2f}×"


def table(results: dict) -> str:
    """Markdown: per program, steady and end-to-end times and the ratios of ours compiled
    (whole step) and ours compiled fwd against our eager, PyTorch eager and torch.compile
    (peer's time / ours: above 1, ours is faster)."""
    peers = [P.EAGER, P.COMPILED, P.COMPILED_FWD, P.TORCH, P.TORCH_COMPILE]
    head = ("| program | figure | " + " | ".join(P.HEADERS[p] for p in peers)
            + " | eager/compiled | eager/compiled fwd | torch/compiled | "
              "torch.compile/compiled | torch.compile/compiled fwd |")
    lines = [head, "|" + " --- |" * 2 + " --: |" * (len(peers) + 5)]
    for key, w in results.items():
        fig = "end to end" if key.endswith("_e2e") else "steady"
        name = key[3:-4] if key.endswith("_e2e") else key[3:]
        s = {p: _sec(w["impls"].get(p)) for p in peers}
        cells = []
        for p in peers:
            c = w["impls"].get(p)
            if c is None or c.get("status") == "skip":
                cells.append("not run")
            elif c.get("status") == "error":
                cells.append("ERROR")
            elif c.get("check", "ok") != "ok":
                cells.append(_fmt(c.get("seconds")) + " (!)")
            else:
                cells.append(_fmt(s[p]))
        c, f = s[P.COMPILED], s[P.COMPILED_FWD]
        ratios = [_ratio(s[P.EAGER], c), _ratio(s[P.EAGER], f), _ratio(s[P.TORCH], c),
                  _ratio(s[P.TORCH_COMPILE], c), _ratio(s[P.TORCH_COMPILE], f)]
        lines.append(f"| {name} | {fig} | " + " | ".join(cells + ratios) + " |")
    return "\n".join(lines)


def problems(results: dict) -> list:
    out = []
    for key, w in results.items():
        for p, c in w["impls"].items():
            if c.get("status") == "error":
                out.append(f"{key} {p}: {c.get('error')}")
            elif c.get("check", "ok") != "ok":
                out.append(f"{key} {p}: {c['check']}")
            elif c.get("status") == "skip":
                out.append(f"{key} {p}: not run ({c.get('note')})")
    return out


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m benchmarks.families.realprograms",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"short samples, {QUICK_BUDGET:g} s end to end, no torch.compile")
    ap.add_argument("--programs", nargs="+", metavar="NAME",
                    help=f"programs to run ({', '.join(PROGRAMS)})")
    ap.add_argument("--budget", type=float, default=None,
                    help=f"end-to-end seconds per peer (default {FULL_BUDGET:g}, "
                         f"--quick {QUICK_BUDGET:g})")
    ap.add_argument("--peers", nargs="+", metavar="PEER", help="only these peers")
    ap.add_argument("--no-e2e", action="store_true", help="steady state only")
    ap.add_argument("--no-steady", action="store_true", help="end to end only")
    ap.add_argument("--json", default="", metavar="PATH", help="write the results here")
    args = ap.parse_args(argv)
    # one thread per library (as `python -m benchmarks --threads 1`): multi-threaded BLAS on
    # a busy machine makes small matmuls tens of times slower; the children inherit this
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if "numpy" in sys.modules:
        print("note: numpy imported before the thread settings: set OPENBLAS_NUM_THREADS=1 "
              "in the environment for steady numbers", file=sys.stderr)
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    res = run_programs(args.quick, set(args.peers) if args.peers else None, log,
                       programs=args.programs, budget=args.budget,
                       steady=not args.no_steady, e2e=not args.no_e2e)
    print(table(res))
    for line in problems(res):
        print(f"- {line}")
    print(f"total {time.perf_counter() - t0:.1f} s; load average at start {load}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"load_average_at_start": load, "results": res}, fh, indent=1,
                      default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
