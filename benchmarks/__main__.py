"""``python -m benchmarks [--quick] [--only NAME ...] [--report [--update-docs]]``: see
benchmarks/README.md."""

from __future__ import annotations

# numpy, torch and numba read their thread-count variables at import: --threads sets them
# before anything heavy is imported, so this module imports the harness inside main().
import argparse
import datetime
import json
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_JSON = os.path.join(ROOT, "benchmarks", "results", "latest.json")
#: where --report writes without --update-docs (benchmarks/results/ is not committed)
REPORT_DIR = os.path.join(ROOT, "benchmarks", "results", "report")
#: the committed report and README: written only with --update-docs
DOCS_DIR = os.path.join(ROOT, "docs")
README = os.path.join(ROOT, "README.md")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS")


def parse(argv):
    from .families import FAMILIES
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time dyngraph (eager and compiled) side by side with NumPy, PyTorch "
                    "and JAX; see benchmarks/README.md.")
    ap.add_argument("--quick", action="store_true",
                    help="short run (about a minute): fewer samples, no torch.compile")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help=f"families ({', '.join(FAMILIES)}) or workload keys to run")
    ap.add_argument("--peers", nargs="+", metavar="PEER",
                    help="run only these peers (e.g. numpy eager compiled)")
    ap.add_argument("--threads", type=int, default=None, metavar="N",
                    help="threads for BLAS/OpenMP/Numba/torch (default: each library's own; "
                         "JAX keeps its own: XLA's single-thread flag slows its dispatch "
                         "tenfold on a busy machine); 1 gives steadier numbers there")
    ap.add_argument("--json", default=DEFAULT_JSON, metavar="PATH",
                    help="write the results here (default benchmarks/results/latest.json); "
                         "'' for none")
    ap.add_argument("--report", action="store_true",
                    help="write the Markdown report, its JSON and the charts under "
                         "benchmarks/results/report/ (not committed); needs matplotlib")
    ap.add_argument("--update-docs", action="store_true",
                    help="with --report (implied): write the committed report instead, "
                         "docs/benchmarks.md, docs/benchmarks.json and docs/img/, and the "
                         "README's 'How fast' block")
    ap.add_argument("--docs", default=None, metavar="DIR",
                    help="where --report writes benchmarks.md, benchmarks.json and img/ "
                         "(default benchmarks/results/report/, with --update-docs docs/)")
    ap.add_argument("--readme", default=None, metavar="PATH",
                    help="a README whose 'How fast' block --report rewrites (default: none, "
                         "with --update-docs README.md); '' for none")
    ap.add_argument("--from-json", metavar="PATH",
                    help="run nothing: report the results of an earlier run "
                         "(e.g. docs/benchmarks.json)")
    args = ap.parse_args(argv)
    if args.update_docs:
        args.report = True
    if args.docs is None:
        args.docs = DOCS_DIR if args.update_docs else REPORT_DIR
    if args.readme is None:
        args.readme = README if args.update_docs else ""
    if not args.update_docs:
        tracked = [p for p, mine in ((args.docs, DOCS_DIR), (args.readme, README))
                   if p and os.path.abspath(p) == os.path.abspath(mine)]
        if tracked:
            ap.error(f"{os.path.relpath(tracked[0])} is committed: rewrite it with "
                     "--update-docs")
    if args.peers:
        from .peers import ALL
        bad = [p for p in args.peers if p not in ALL]
        if bad:
            ap.error(f"unknown peer {bad[0]!r}; peers: {', '.join(ALL)}")
    return ap, args


def main(argv=None) -> int:
    ap, args = parse(argv)
    if args.threads:
        for var in THREAD_VARS:
            os.environ[var] = str(args.threads)
        if "numpy" in sys.modules:
            print("note: --threads given after numpy was imported; BLAS may ignore it",
                  file=sys.stderr)
    if args.report:
        from .charts import pyplot
        try:
            pyplot()
        except ImportError as e:
            print(f"python -m benchmarks --report: {e}", file=sys.stderr)
            return 2

    from . import report
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
    else:
        results = run(ap, args)
        if results is None:
            return 2

    print()
    print(report.format_table(results))
    print()
    print(report.format_goals(results["goals"]))
    print()
    if args.report:
        for path in write_report(results, args.docs, args.readme):
            print(f"wrote {os.path.relpath(path)}")
        if not args.update_docs:
            print(f"the report is {os.path.relpath(os.path.join(args.docs, 'benchmarks.md'))}"
                  "; docs/ and the README are unchanged (--update-docs rewrites them)")
    if args.json and not args.from_json:
        report.write_json(results, args.json)
        print(f"wrote {os.path.relpath(args.json)}")
    if not args.from_json:
        print(f"total {results['meta']['total_seconds']:.1f} s"
              f"{' (--quick)' if args.quick else ''}")
    return 0


def run(ap, args) -> dict | None:
    from . import report, timing
    from .families import FAMILIES, load
    from .harness import err_text, run_workload
    from .peers import COMPILED

    if args.threads:
        try:
            import torch
            torch.set_num_threads(args.threads)
        except ImportError:
            pass  # no torch: nothing to configure

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    families = [load(n) for n in FAMILIES]
    built = {}       # family name -> [Workload] (custom-run families: None)
    wanted = set(args.only or ())
    by_family = wanted & set(FAMILIES)
    for fam in families:
        if fam.run is None and (not wanted or fam.name in by_family or wanted - by_family):
            built[fam.name] = fam.workloads(args.quick)
    keys = {w.key for ws in built.values() for w in ws}
    unknown = wanted - set(FAMILIES) - keys
    if unknown:
        ap.error(f"--only: no family or workload {sorted(unknown)[0]!r}; families: "
                 f"{', '.join(FAMILIES)}; workloads: {', '.join(sorted(keys))}")

    t_start = time.perf_counter()
    budget = timing.QUICK if args.quick else timing.FULL
    peers = set(args.peers) if args.peers else None
    results = {"meta": _meta(args), "families": {}, "workloads": {}, "goals": []}
    load_avg = results["meta"]["load_average_at_start"]
    if load_avg and load_avg[0] > 0.5:
        log(f"note: load average {load_avg[0]:.2f} on {os.cpu_count()} cores before "
            "starting: other processes compete for the CPU; ratios (taken side by side) "
            "hold up better than absolute times")
    goals = []
    for fam in families:
        selected = not wanted or fam.name in wanted
        if fam.run is not None:
            if not selected:
                continue
            log(f"[{time.perf_counter() - t_start:6.1f} s] {fam.name}: new processes")
            t0 = time.perf_counter()
            try:
                got = fam.run(args.quick, peers, log)
            except Exception as e:  # noqa: BLE001 -- the run goes on
                got = {fam.name: {"title": fam.title, "headline": None, "reference": None,
                                  "impls": {COMPILED: {"status": "error",
                                                       "error": f"harness: {err_text(e)}"}}}}
            for w in got.values():
                w["seconds"] = time.perf_counter() - t0
        else:
            ws = [w for w in built.get(fam.name, []) if selected or w.key in wanted]
            if not ws:
                continue
            got = {}
            for w in ws:
                log(f"[{time.perf_counter() - t_start:6.1f} s] {w.key}: {w.title}")
                t0 = time.perf_counter()
                try:
                    got[w.key] = run_workload(w, budget, log, peers)
                except Exception as e:  # noqa: BLE001 -- the harness must not stop the run
                    got[w.key] = {"title": w.title, "headline": w.headline,
                                  "reference": w.reference,
                                  "impls": {COMPILED: {"status": "error",
                                                       "error": f"harness: {err_text(e)}"}}}
                got[w.key]["seconds"] = time.perf_counter() - t0
        for w in got.values():
            w["family"] = fam.name
        results["workloads"].update(got)
        results["families"][fam.name] = {"title": fam.title, "about": fam.about,
                                         "workloads": list(got)}
        goals += fam.goals
    results["goals"] = report.evaluate_goals(results, goals)
    results["meta"]["total_seconds"] = time.perf_counter() - t_start
    return results


def write_report(results: dict, docs: str, readme: str) -> list:
    """docs/benchmarks.md, docs/benchmarks.json, docs/img/*.png and the README block."""
    from . import charts, markdown, report
    img = os.path.join(docs, "img")
    written = []
    for name in results["families"]:
        path = os.path.join(img, f"{name}.png")
        charts.family_chart(results, name, path)
        if os.path.exists(path):
            results["families"][name]["chart"] = f"{name}.png"
            written.append(path)
    headline = os.path.join(img, "headline.png")
    charts.headline_chart(results, headline)
    written.append(headline)
    md = os.path.join(docs, "benchmarks.md")
    os.makedirs(docs, exist_ok=True)
    with open(md, "w") as f:
        f.write(markdown.report(results, "img"))
    report.write_json(results, os.path.join(docs, "benchmarks.json"))
    written += [md, os.path.join(docs, "benchmarks.json")]
    if readme:
        base = os.path.dirname(os.path.abspath(readme))
        block = markdown.readme_block(results, os.path.relpath(headline, base),
                                      os.path.relpath(md, base))
        markdown.update_readme(readme, block)
        written.append(readme)
    return written


def _meta(args) -> dict:
    from .peers import versions
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
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "quick": args.quick, "load_average_at_start": load, "cpu": cpu,
            "cores": os.cpu_count(), "platform": platform.platform(terse=True),
            "versions": versions(),
            "command": "python -m benchmarks" + _args_text(args),
            "threads": {v: os.environ.get(v) for v in THREAD_VARS}}


def _args_text(args) -> str:
    out = ""
    if args.quick:
        out += " --quick"
    if args.only:
        out += " --only " + " ".join(args.only)
    if args.peers:
        out += " --peers " + " ".join(args.peers)
    if args.threads:
        out += f" --threads {args.threads}"
    if args.report:
        out += " --report"
    if args.update_docs:
        out += " --update-docs"
    return out


if __name__ == "__main__":
    sys.exit(main())
