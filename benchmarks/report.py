"""The report: a table of times, the goal ratios of BENCHMARKS.md, JSON and a PNG chart."""

from __future__ import annotations

import json
import math
import os

from .workloads import COMPILED, COPY, EAGER, IMPLS, JAX, NUMBA, NUMPY, TORCH, TORCH_COMPILE

FIRST_CALL = "first_call"

HEADERS = {NUMPY: "NumPy", EAGER: "ours eager", COMPILED: "ours compiled", TORCH: "torch",
           TORCH_COMPILE: "torch.compile", JAX: "JAX jit", COPY: "copy (limit)",
           NUMBA: "Numba fused"}

# (figure, op, goal, numerator (workload, impl), denominator (workload, impl) or None,
#  unit of an absolute goal)
GOALS = [
    ("GELU 1M: NumPy eager / compiled", ">=", 4, ("gelu_1m", NUMPY), ("gelu_1m", COMPILED)),
    ("GELU 32M: NumPy eager / compiled", ">=", 10, ("gelu_32m", NUMPY),
     ("gelu_32m", COMPILED)),
    ("GELU 32M: compiled / plain copy of the input", "<=", 1.5, ("gelu_32m", COMPILED),
     ("gelu_32m", COPY)),
    ("GELU 1M: torch.compile / compiled", ">=", 2, ("gelu_1m", TORCH_COMPILE),
     ("gelu_1m", COMPILED)),
    ("small chain fwd+bwd: our eager / our compiled", ">=", 8, ("chain", EAGER),
     ("chain", COMPILED)),
    ("small chain fwd+bwd: JAX jit / our compiled", ">=", 1, ("chain", JAX),
     ("chain", COMPILED)),
    ("small chain fwd+bwd: torch eager / our eager", ">=", 1, ("chain", TORCH),
     ("chain", EAGER)),
    ("MLP train step compiled whole: ours / hand-written NumPy", "<=", 1.1,
     ("mlp", COMPILED), ("mlp", NUMPY)),
    ("MLP train step, our eager / hand-written NumPy", "<=", 1.6, ("mlp", EAGER),
     ("mlp", NUMPY)),
    ("cache-hit call of a compiled 1-op function on 4 elements", "<=", 3e-6,
     ("cache_hit", COMPILED), None),
    ("first call in a new process with a warm disk cache (GELU)", "<=", 0.5,
     (FIRST_CALL, COMPILED), None),
]


def fmt_time(s) -> str:
    if s is None or not math.isfinite(s):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs" if s * 1e6 < 100 else f"{s * 1e6:.0f} µs"
    if s < 1.0:
        return f"{s * 1e3:.3g} ms" if s * 1e3 < 100 else f"{s * 1e3:.0f} ms"
    return f"{s:.3g} s"


def cell_text(c: dict | None) -> str:
    if c is None:
        return ""
    st = c["status"]
    if st == "skip":
        return "skipped"
    if st == "error":
        return "ERROR"
    t = fmt_time(c.get("seconds"))
    if c.get("check", "ok") not in ("ok", None):
        t += " (!)"
    return t


def columns(results: dict) -> list:
    """Impl columns that appear in any workload (in IMPLS order)."""
    used = {i for w in results["workloads"].values() for i in w["impls"]}
    return [i for i in IMPLS if i in used]


def format_table(results: dict) -> str:
    cols = columns(results)
    rows = []
    for key, w in results["workloads"].items():
        rows.append((w["title"], [cell_text(w["impls"].get(i)) for i in cols], key))
    w0 = max([len("workload")] + [len(r[0]) for r in rows])
    widths = [max(len(HEADERS[c]), *(len(r[1][k]) for r in rows)) for k, c in enumerate(cols)]
    sep = "  "
    lines = [sep.join(["workload".ljust(w0)] + [HEADERS[c].rjust(widths[k])
                                                 for k, c in enumerate(cols)])]
    lines.append(sep.join(["-" * w0] + ["-" * wd for wd in widths]))
    for title, cells, key in rows:
        lines.append(sep.join([title.ljust(w0)] + [cells[k].rjust(widths[k])
                                                   for k in range(len(cols))]))
        w = results["workloads"][key]
        for impl in cols:  # errors and wrong results are printed in their row
            c = w["impls"].get(impl)
            if c is None:
                continue
            if c["status"] == "error":
                lines.append(f"{'':{w0}}    ! {impl}: {c['error']}")
            elif c.get("check", "ok") not in ("ok", None):
                lines.append(f"{'':{w0}}    ! {impl}: {c['check']}")
    # skipped peers: say why once per reason
    reasons: dict = {}
    for w in results["workloads"].values():
        for impl, c in w["impls"].items():
            if c["status"] == "skip":
                reasons.setdefault((impl, c.get("note", "")), None)
    out = "\n".join(lines)
    if reasons:
        out += "\n\nskipped: " + "; ".join(f"{impl}: {why}" for impl, why in reasons)
    notes = []
    for key, w in results["workloads"].items():
        for impl, c in w["impls"].items():
            for n in c.get("warnings", []):
                notes.append(f"{w['title']} / {impl}: {n}")
    if notes:
        out += "\nwarnings:\n" + "\n".join("  " + n for n in notes)
    return out


def _get(results: dict, wl: str, impl: str):
    w = results["workloads"].get(wl)
    if w is None:
        return None, "not run"
    c = w["impls"].get(impl)
    if c is None:
        return None, f"{impl} not run"
    if c["status"] == "skip":
        return None, f"{impl} skipped"
    if c["status"] == "error":
        return None, f"{impl} errored"
    if c.get("check", "ok") not in ("ok", None):
        return None, f"{impl} gave a wrong result"
    return c["seconds"], None


def evaluate_goals(results: dict) -> list:
    out = []
    for figure, op, goal, num, den in GOALS:
        a, why = _get(results, *num)
        b, why_b = (1.0, None) if den is None else _get(results, *den)
        why = why or why_b
        if why:
            out.append({"figure": figure, "goal": f"{op} {_goal_text(goal, den)}",
                        "value": None, "passed": None, "why": why})
            continue
        v = a / b
        ok = v >= goal if op == ">=" else v <= goal
        out.append({"figure": figure, "goal": f"{op} {_goal_text(goal, den)}", "value": v,
                    "passed": bool(ok), "why": None,
                    "value_text": fmt_time(v) if den is None else f"{v:.2f}"})
    return out


def _goal_text(goal, den) -> str:
    return fmt_time(goal) if den is None else f"{goal:g}"


def format_goals(goals: list) -> str:
    w0 = max(len(g["figure"]) for g in goals)
    w1 = max(len(g["goal"]) for g in goals)
    head = f"{'goal (BENCHMARKS.md)'.ljust(w0)}  {'target'.ljust(w1)}  {'measured':>9}  result"
    lines = [head]
    lines.append(f"{'-' * w0}  {'-' * w1}  {'-' * 9}  ------")
    n_pass = n_fail = 0
    for g in goals:
        if g["passed"] is None:
            mark, val = f"n/a ({g['why']})", "-"
        elif g["passed"]:
            mark, val = "PASS", g["value_text"]
            n_pass += 1
        else:
            mark, val = "FAIL", g["value_text"]
            n_fail += 1
        lines.append(f"{g['figure'].ljust(w0)}  {g['goal'].ljust(w1)}  {val:>9}  {mark}")
    lines.append(f"{n_pass} passed, {n_fail} failed, {len(goals) - n_pass - n_fail} not "
                 "measurable here")
    return "\n".join(lines)


def write_json(results: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=2, default=_json_default)
        f.write("\n")
    os.replace(tmp, path)


def _json_default(o):
    try:
        return float(o)
    except (TypeError, ValueError):
        return str(o)


_COLORS = {NUMPY: "#4c72b0", EAGER: "#dd8452", COMPILED: "#c44e52", TORCH: "#55a868",
           TORCH_COMPILE: "#8172b3", JAX: "#937860", COPY: "#8c8c8c", NUMBA: "#da8bc3"}


def write_png(results: dict, path: str) -> str | None:
    """Bar chart, one panel per workload.  Returns None, or why no chart was written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        return f"matplotlib not importable ({type(e).__name__}); no chart"
    panels = [(k, w) for k, w in results["workloads"].items()
              if any(c["status"] == "ok" for c in w["impls"].values())]
    if not panels:
        return "nothing measured; no chart"
    ncols = 3
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.4 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (key, w) in zip(axes.flat, panels):
        names, vals, colors, labels = [], [], [], []
        for impl in IMPLS:
            c = w["impls"].get(impl)
            if c is None or c["status"] != "ok":
                continue
            names.append(HEADERS[impl])
            vals.append(c["seconds"])
            colors.append(_COLORS[impl])
            labels.append(fmt_time(c["seconds"]) +
                          (" (!)" if c.get("check", "ok") not in ("ok", None) else ""))
        scale, unit = _unit(max(vals))
        y = list(range(len(names)))[::-1]
        ax.barh(y, [v * scale for v in vals], color=colors)
        ax.set_yticks(y, names, fontsize=8)
        for yi, v, lab in zip(y, vals, labels):
            ax.text(v * scale, yi, " " + lab, va="center", fontsize=7)
        ax.set_xlim(0, max(vals) * scale * 1.35)
        ax.set_xlabel(unit, fontsize=8)
        ax.set_title(w["title"], fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    meta = results.get("meta", {})
    fig.suptitle(f"dyngraph benchmarks ({'quick' if meta.get('quick') else 'full'} run, "
                 f"{meta.get('cpu', '')}, lower is better)", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def _unit(v: float):
    if v < 1e-3:
        return 1e6, "µs"
    if v < 1.0:
        return 1e3, "ms"
    return 1.0, "s"
