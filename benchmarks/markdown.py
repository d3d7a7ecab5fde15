"""The report as Markdown: ``docs/benchmarks.md`` and the README's "How fast" block.

Everything here is rendered from a results dict (as written to JSON): no figure is typed
by hand.  The README block sits between :data:`START` and :data:`END`; the rest of the
README is left as it is.
"""

from __future__ import annotations

from . import report as R
from .charts import caption
from .peers import COMPILED, EAGER, HEADERS, JAX, NUMPY, OURS, TORCH, TORCH_COMPILE

START = "<!-- benchmarks:start (written by python -m benchmarks --update-docs) -->"
END = "<!-- benchmarks:end -->"
COMMAND = 'pip install -e ".[bench]" && python -m benchmarks --report'
HEADLINE_PEERS = (NUMPY, TORCH, TORCH_COMPILE, JAX)


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def headline_table(results: dict) -> str:
    head = (["workload", "ours compiled", "ours eager"]
            + [f"vs {HEADERS[p]}" for p in HEADLINE_PEERS])
    lines = [_row(head), _row(["---"] + ["--:"] * (len(head) - 1))]
    for w in results["workloads"].values():
        if not w.get("headline"):
            continue
        ours = R.seconds(w["impls"].get(COMPILED))
        ratios = []
        for p in HEADLINE_PEERS:
            t = R.seconds(w["impls"].get(p))
            ratios.append(R.fmt_ratio(t / ours) if t and ours else _missing(w, p))
        lines.append(_row([w["headline"], R.fmt_time(ours) if ours else _missing(w, COMPILED),
                           R.fmt_time(R.seconds(w["impls"].get(EAGER))) if
                           R.seconds(w["impls"].get(EAGER)) else "—"] + ratios))
    return "\n".join(lines)


def _missing(w: dict, peer: str) -> str:
    c = w["impls"].get(peer)
    if c is None:
        return "—"
    if c["status"] == "skip":
        return "not run"
    if c["status"] == "error":
        return "error"
    return "wrong result" if c.get("check", "ok") != "ok" else "—"


def _ratio_note() -> str:
    return ("Ratios are the peer's time divided by ours compiled: above 1, ours compiled is "
            "that many times faster; below 1, the peer is faster.")


def _meta_lines(meta: dict) -> list:
    v = meta.get("versions", {})
    load = meta.get("load_average_at_start")
    threads = {k: t for k, t in (meta.get("threads") or {}).items() if t}
    return [
        f"- date: {meta.get('date', '?')}" + (" (`--quick` run)" if meta.get("quick") else ""),
        f"- machine: {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores, "
        f"{meta.get('platform', '?')}",
        "- versions: " + ", ".join(f"{k} {v[k]}" for k in
                                   ("python", "numpy", "numba", "torch", "jax", "matplotlib")
                                   if v.get(k)),
        "- not installed: " + (", ".join(k for k in ("torch", "jax") if not v.get(k))
                               or "none"),
        f"- load average at start: {', '.join(f'{x:.2f}' for x in load) if load else '?'} "
        f"(other processes were {'busy' if load and load[0] > 0.5 else 'quiet'})",
        f"- threads: {threads if threads else 'each library’s default'}",
        f"- command: `{meta.get('command', 'python -m benchmarks --report')}`, "
        f"{meta.get('total_seconds', 0):.0f} s",
    ]


def readme_block(results: dict, chart: str, report_md: str) -> str:
    """The "How fast" section for the README; paths relative to the README."""
    meta = results["meta"]
    return "\n".join([
        START,
        "## How fast",
        "",
        headline_table(results),
        "",
        _ratio_note() + " Our eager mode is shown as time per call. Measured on "
        f"{meta.get('cpu', '?')} ({meta.get('cores', '?')} cores{_load_text(meta)}), "
        f"{meta.get('date', '?')[:10]}, all peers side by side in one process (medians); "
        f"the machine, versions, method and every workload are in "
        f"[{report_md}]({report_md}).",
        "",
        f"![ours compiled against each peer]({chart})",
        "",
        "To measure on your machine (PyTorch and JAX are optional peers: "
        "`pip install torch`, `pip install jax jaxlib`; without them their columns say "
        "*not run*):",
        "",
        "```bash",
        COMMAND,
        "```",
        END,
    ])


def _load_text(meta: dict) -> str:
    load = meta.get("load_average_at_start")
    threads = {t for t in (meta.get("threads") or {}).values() if t}
    text = f", load average {load[0]:.1f} at the start" if load else ""
    return text + (f", {threads.pop()} thread per library" if len(threads) == 1 else "")


def update_readme(path: str, block: str) -> None:
    """Replace the block between the markers; raise ValueError if they are missing."""
    with open(path) as f:
        text = f.read()
    a, b = text.find(START), text.find(END)
    if a < 0 or b < a:
        raise ValueError(f"{path}: no '{START}' ... '{END}' block to replace")
    text = text[:a] + block + text[b + len(END):]
    with open(path, "w") as f:
        f.write(text)


def report(results: dict, img_dir_rel: str) -> str:
    """docs/benchmarks.md; ``img_dir_rel``: the charts' folder relative to it."""
    meta = results["meta"]
    out = [
        "# Benchmarks",
        "",
        "Written by `python -m benchmarks --report` from the run described below; do not "
        "edit by hand. What each workload does, the peers and the goals are described "
        "in [benchmarks/README.md](../benchmarks/README.md).",
        "",
        "## The run",
        "",
        *_meta_lines(meta),
        "",
        "Every peer of a workload is built, checked against the reference peer's result, "
        "warmed up, and then sampled in turns (A B C A B C ...) in this one process; each "
        "sample is a loop of calls lasting at least "
        f"{'0.5' if meta.get('quick') else '2'} ms, and the figure is the median sample. "
        "Ratios between peers of one workload are therefore taken under the same "
        "conditions even on a busy machine; absolute times move from run to run.",
        "",
        "## Headline",
        "",
        headline_table(results),
        "",
        _ratio_note(),
        "",
        f"![headline]({img_dir_rel}/headline.png)",
        "",
        "In the tables below, *time / ours compiled* above 1 means ours compiled is faster "
        "than that peer; *speedup over ours eager* above 1 means the peer is faster than "
        "our eager mode; *spread* is half the interquartile range of the samples, "
        "relative to the median; *(!)* marks a result that did not match the reference.",
        "",
    ]
    for name, fam in results["families"].items():
        out += [f"## {fam['title']}", "", fam["about"], ""]
        if fam.get("chart"):
            out += [f"![{fam['title']}]({img_dir_rel}/{fam['chart']})", ""]
        for key in fam["workloads"]:
            out += _workload_table(results["workloads"][key])
    goals = results.get("goals", [])
    if goals:
        out += ["## Goals", "",
                "The targets of [benchmarks/README.md](../benchmarks/README.md), evaluated on "
                "this run.", "",
                _row(["figure", "target", "measured", "result"]),
                _row(["---", "---", "--:", "---"])]
        for g in goals:
            val, mark = R.goal_result(g)
            out.append(_row([g["figure"], g["goal"], val, mark]))
        out.append("")
    probs = R.problems(results)
    if probs:
        out += ["## Not measured, errors and warnings", ""]
        out += [f"- {title} / {HEADERS.get(impl, impl)}: {text}" for title, impl, text in probs]
        out.append("")
    out += [f"*{caption(meta)}*", ""]
    return "\n".join(out)


def _workload_table(w: dict) -> list:
    eager = R.seconds(w["impls"].get(EAGER))
    ours = R.seconds(w["impls"].get(COMPILED))
    lines = [f"**{w['title']}**", "",
             _row(["peer", "time per call", "time / ours compiled", "speedup over ours eager",
                   "spread", "how"]),
             _row(["---", "--:", "--:", "--:", "--:", "---"])]
    for impl, c in w["impls"].items():
        name = HEADERS.get(impl, impl)
        t = R.seconds(c)
        if t is None:
            text = "not run" if c["status"] == "skip" else R.cell_text(c)
            lines.append(_row([name, text, "", "", "",
                               c.get("note") or c.get("error") or c.get("check", "")]))
            continue
        spread = f"±{c['iqr_rel'] * 50:.0f}%" if c.get("iqr_rel") is not None else ""
        lines.append(_row([f"**{name}**" if impl in OURS else name, R.fmt_time(t),
                           R.fmt_ratio(t / ours) if ours and impl != COMPILED else "",
                           R.fmt_ratio(eager / t) if eager and impl != EAGER else "",
                           spread, c.get("note", "")]))
    return lines + [""]
