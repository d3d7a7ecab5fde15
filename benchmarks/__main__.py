"""``python -m benchmarks [--quick] [--json PATH] [--png PATH] [--only KEY ...]``"""

from __future__ import annotations

# numpy, torch and numba read their thread-count variables at import: --threads sets them
# before anything heavy is imported, so this module imports them inside functions.
import argparse
import datetime
import os
import platform
import sys
import time
import traceback
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_JSON = os.path.join(ROOT, "benchmarks", "results", "latest.json")
DEFAULT_PNG = os.path.join(ROOT, "benchmarks", "results", "latest.png")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS", "XLA_FLAGS")


def _err(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0] if msg else ''}"[:300]


def _to_numpy(r):
    import numpy as np
    if r is None:
        return None
    if isinstance(r, np.ndarray):
        return r.copy()
    if hasattr(r, "detach"):
        r = r.detach()
    if hasattr(r, "numpy"):
        return np.array(r.numpy(), copy=True)
    return np.array(r, copy=True)


def _check(outs, ref, rtol, atol) -> str:
    import numpy as np
    if ref is None or any(o is None for o in outs) or any(r is None for r in ref):
        return "ok"
    for k, (o, r) in enumerate(zip(outs, ref)):
        where = f" (call {k + 1})" if len(outs) > 1 else ""
        if o.shape != r.shape:
            return f"wrong result: shape {o.shape} != {r.shape}{where}"
        if not np.allclose(o, r, rtol=rtol, atol=atol, equal_nan=True):
            err = float(np.max(np.abs(o.astype(np.float64) - r)))
            return f"wrong result: max abs error {err:.3g} vs NumPy{where}"
    return "ok"


def run_workload(w, budget, log) -> dict:
    from . import timing
    from .workloads import COMPILED, TORCH_COMPILE, Skip
    replaying = (COMPILED, TORCH_COMPILE)
    cells: dict = {}
    fns: dict = {}
    outs: dict = {}
    for impl, factory in w.impls:
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                fn = factory()
                # stateless: one call is enough, except for compilers (trace, then replay)
                n = w.check_calls if w.stateful or impl in replaying else 1
                res = [_to_numpy(fn()) for _ in range(n)]
                if not w.stateful:
                    res = res[-1:]
            except Skip as e:
                cells[impl] = {"status": "skip", "note": str(e)}
                continue
            except Exception as e:  # noqa: BLE001
                cells[impl] = {"status": "error", "error": _err(e),
                               "traceback": traceback.format_exc(limit=-6)}
                log(f"  {impl}: ERROR {_err(e)}")
                continue
        fns[impl] = fn
        outs[impl] = res
        cells[impl] = {"status": "ok", "setup_seconds": time.perf_counter() - t0,
                       "warnings": sorted({f"{c.category.__name__}: {c.message}"[:300]
                                           for c in caught
                                           if not issubclass(c.category, DeprecationWarning)})}
        if w.notes.get(impl):
            cells[impl]["note"] = w.notes[impl]
    ref = outs.get(w.reference)
    for impl, res in outs.items():
        cells[impl]["check"] = "ok" if impl == w.reference else \
            _check(res, ref, w.rtol, w.atol)

    def on_error(impl, e):
        cells[impl] = {"status": "error", "error": _err(e)}
        log(f"  {impl}: ERROR {_err(e)}")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        timings = timing.compare(fns, budget, on_error)
    for impl, t in timings.items():
        if isinstance(t, timing.Timing):
            cells[impl].update(seconds=t.median, samples=len(t.samples), inner=t.inner,
                               iqr_rel=round(t.spread, 4))
            stats = getattr(fns[impl], "stats", None)
            if stats is not None:
                cells[impl]["compiler_stats"] = stats()
    # keep the impl order of the workload
    return {"title": w.title, "impls": {i: cells[i] for i, _ in w.impls if i in cells}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks",
                                 description="dyngraph benchmarks (BENCHMARKS.md workloads)")
    ap.add_argument("--quick", action="store_true",
                    help="short run (< 60 s): fewer samples, no torch.compile")
    ap.add_argument("--json", default=DEFAULT_JSON, metavar="PATH",
                    help="write results here (default benchmarks/results/latest.json)")
    ap.add_argument("--png", default=DEFAULT_PNG, metavar="PATH",
                    help="bar chart (default benchmarks/results/latest.png); '' for none")
    ap.add_argument("--only", nargs="*", metavar="KEY",
                    help="run only these workloads: gelu_1m gelu_32m chain mlp cache_hit "
                         "first_call")
    ap.add_argument("--threads", type=int, default=None, metavar="N",
                    help="threads for BLAS/OpenMP/Numba/torch (default: each library's "
                         "own default); 1 gives steadier numbers on a busy machine")
    args = ap.parse_args(argv)
    if args.threads:
        for var in THREAD_VARS[:-1]:
            os.environ[var] = str(args.threads)
        if "numpy" in sys.modules:
            print("note: --threads given after numpy was imported; BLAS may ignore it",
                  file=sys.stderr)

    from . import report, timing
    from .workloads import COMPILED, all_workloads

    if args.threads:
        try:
            import torch
            torch.set_num_threads(args.threads)
        except ImportError:
            pass  # no torch: nothing to configure

    t_start = time.perf_counter()
    budget = timing.QUICK if args.quick else timing.FULL

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    results = {"meta": _meta(args.quick), "workloads": {}}
    load = results["meta"]["load_average_at_start"]
    cores = os.cpu_count() or 1
    if load and load[0] > 0.5:
        log(f"note: load average {load[0]:.2f} on {cores} cores before starting: other "
            "processes compete for the CPU, absolute times (and multi-threaded peers) suffer")
    for w in all_workloads(args.quick):
        if args.only and w.key not in args.only:
            continue
        t0 = time.perf_counter()
        log(f"[{time.perf_counter() - t_start:5.1f} s] {w.key}: {w.title}")
        try:
            results["workloads"][w.key] = run_workload(w, budget, log)
        except Exception as e:  # noqa: BLE001 -- the harness itself must not stop the run
            results["workloads"][w.key] = {"title": w.title, "impls": {
                COMPILED: {"status": "error", "error": f"harness: {_err(e)}"}}}
        results["workloads"][w.key]["seconds"] = time.perf_counter() - t0

    if not args.only or report.FIRST_CALL in args.only:
        log(f"[{time.perf_counter() - t_start:5.1f} s] first_call: new processes")
        t0 = time.perf_counter()
        results["workloads"][report.FIRST_CALL] = _first_call_cells(args.quick)
        # first-call processes inherit the environment, so --threads applies there too
        results["workloads"][report.FIRST_CALL]["seconds"] = time.perf_counter() - t0

    results["goals"] = report.evaluate_goals(results)
    results["meta"]["total_seconds"] = time.perf_counter() - t_start

    print()
    if load and load[0] > 0.5:
        print(f"(machine busy: load average {load[0]:.2f} on {cores} cores at start)")
    print(report.format_table(results))
    print()
    print(report.format_goals(results["goals"]))
    print()
    if args.json:
        report.write_json(results, args.json)
        print(f"wrote {os.path.relpath(args.json)}")
    if args.png:
        why = report.write_png(results, args.png)
        print(why or f"wrote {os.path.relpath(args.png)}")
    print(f"total {time.perf_counter() - t_start:.1f} s"
          f"{' (--quick)' if args.quick else ''}")
    return 0


def _first_call_cells(quick: bool) -> dict:
    from .workloads import COMPILED, Skip, first_call
    cells = {}
    try:
        got = first_call(quick)
    except Exception as e:  # noqa: BLE001
        got = {COMPILED: e}
    for impl, r in got.items():
        if isinstance(r, Skip):
            cells[impl] = {"status": "skip", "note": str(r)}
        elif isinstance(r, BaseException):
            cells[impl] = {"status": "error", "error": _err(r)}
        else:
            w = r["warm"]
            cells[impl] = {"status": "ok", "seconds": r["seconds"], "cold_seconds": r["cold"],
                           "check": r.get("check", "ok"), "runs": r["runs"],
                           "note": (f"warm cache: imports {w['import']:.3f} s + first call "
                                    f"{w['first']:.3f} s + second (compiled) call "
                                    f"{w['second'] * 1e3:.2f} ms; process wall "
                                    f"{w['wall']:.2f} s; cold cache {r['cold']:.2f} s"),
                           "detail": r}
    return {"title": "first GELU call, new process, warm cache",
            "impls": cells}


def _meta(quick: bool) -> dict:
    from .workloads import versions
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"), "quick": quick,
            "load_average_at_start": load,
            "cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "versions": versions(), "goals_from": "/work/shared/BENCHMARKS.md",
            "threads": {v: os.environ.get(v) for v in THREAD_VARS}}


if __name__ == "__main__":
    sys.exit(main())
