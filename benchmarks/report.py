"""Results as text: the terminal table, the goals, the JSON file, and shared formatting."""

from __future__ import annotations

import json
import math
import os

from .peers import ALL, COMPILED, EAGER, HEADERS, OTHERS


def fmt_time(s) -> str:
    if s is None or not math.isfinite(s):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs" if s * 1e6 < 100 else f"{s * 1e6:.0f} µs"
    if s < 1.0:
        return f"{s * 1e3:.3g} ms" if s * 1e3 < 100 else f"{s * 1e3:.0f} ms"
    return f"{s:.3g} s"


def fmt_ratio(r) -> str:
    if r is None or not math.isfinite(r):
        return "-"
    return f"{r:.2g}×" if r < 10 else f"{r:.0f}×"


def seconds(cell: dict | None):
    """The median time of a measured, correct cell; else None."""
    if not cell or cell.get("status") != "ok" or cell.get("check", "ok") != "ok":
        return None
    return cell.get("seconds")


def cell_text(c: dict | None) -> str:
    if c is None:
        return ""
    if c["status"] == "skip":
        return "skipped"
    if c["status"] == "error":
        return "ERROR"
    t = fmt_time(c.get("seconds"))
    if c.get("check", "ok") != "ok":
        t += " (!)"
    return t


def columns(results: dict) -> list:
    """Peers that appear in any workload, in :data:`peers.ALL` order."""
    used = {i for w in results["workloads"].values() for i in w["impls"]}
    return [i for i in ALL if i in used]


def best_other(w: dict):
    """``(peer, seconds)`` of the fastest correct peer among NumPy, PyTorch, JAX."""
    got = [(seconds(w["impls"].get(p)), p) for p in OTHERS]
    got = [(s, p) for s, p in got if s]
    return (min(got)[1], min(got)[0]) if got else (None, None)


def speedups(w: dict, peer: str = COMPILED) -> dict:
    """How many times faster ``peer`` is than ours eager and than the best other peer."""
    t = seconds(w["impls"].get(peer))
    e = seconds(w["impls"].get(EAGER))
    best, b = best_other(w)
    return {"vs_eager": e / t if t and e and peer != EAGER else None,
            "vs_best": b / t if t and b else None, "best": best}


def problems(results: dict) -> list:
    """(workload title, peer, text) for each error, wrong result, skip and warning."""
    out = []
    for w in results["workloads"].values():
        for impl, c in w["impls"].items():
            if c["status"] == "error":
                out.append((w["title"], impl, f"error: {c['error']}"))
            elif c["status"] == "skip":
                out.append((w["title"], impl, f"skipped: {c.get('note', '')}"))
            elif c.get("check", "ok") != "ok":
                out.append((w["title"], impl, c["check"]))
            for n in c.get("warnings", []):
                out.append((w["title"], impl, f"warning: {n}"))
    return out


def format_table(results: dict) -> str:
    cols = columns(results)
    rows = [(w["title"], [cell_text(w["impls"].get(i)) for i in cols])
            for w in results["workloads"].values()]
    w0 = max([len("workload")] + [len(r[0]) for r in rows])
    widths = [max(len(HEADERS[c]), *(len(r[1][k]) for r in rows)) for k, c in enumerate(cols)]
    lines = ["  ".join(["workload".ljust(w0)] + [HEADERS[c].rjust(widths[k])
                                                 for k, c in enumerate(cols)]),
             "  ".join(["-" * w0] + ["-" * wd for wd in widths])]
    for title, cells in rows:
        lines.append("  ".join([title.ljust(w0)] + [cells[k].rjust(widths[k])
                                                    for k in range(len(cols))]))
    out = "\n".join(lines)
    skipped = {}
    other = []
    for title, impl, text in problems(results):
        if text.startswith("skipped: "):
            skipped.setdefault((impl, text[len("skipped: "):]), None)
        else:
            other.append(f"  {title} / {impl}: {text}")
    if skipped:
        out += "\n\nskipped: " + "; ".join(f"{impl}: {why}" for impl, why in skipped)
    if other:
        out += "\n" + "\n".join(other)
    return out


def evaluate_goals(results: dict, goals: list) -> list:
    out = []
    for g in goals:
        a, why = _get(results, *g.numerator)
        b, why_b = (1.0, None) if g.denominator is None else _get(results, *g.denominator)
        why = why or why_b
        target = fmt_time(g.target) if g.denominator is None else f"{g.target:g}"
        row = {"figure": g.figure, "goal": f"{g.op} {target}", "value": None,
               "passed": None, "why": why}
        if not why:
            v = a / b
            row.update(value=v, passed=bool(v >= g.target if g.op == ">=" else v <= g.target),
                       value_text=fmt_time(v) if g.denominator is None else f"{v:.2f}")
        out.append(row)
    return out


def _get(results: dict, wl: str, impl: str):
    w = results["workloads"].get(wl)
    if w is None:
        return None, "not run"
    c = w["impls"].get(impl)
    if c is None:
        return None, f"{impl} not run"
    if c["status"] != "ok":
        return None, f"{impl} {'skipped' if c['status'] == 'skip' else 'errored'}"
    if c.get("check", "ok") != "ok":
        return None, f"{impl} gave a wrong result"
    return c["seconds"], None


def goal_result(g: dict) -> tuple:
    """(measured, result) texts of an evaluated goal."""
    if g["passed"] is None:
        return "-", f"n/a ({g['why']})"
    return g["value_text"], "PASS" if g["passed"] else "FAIL"


def format_goals(goals: list) -> str:
    if not goals:
        return "(no goals for the families run)"
    w0 = max(len(g["figure"]) for g in goals)
    w1 = max(len(g["goal"]) for g in goals)
    lines = [f"{'goal'.ljust(w0)}  {'target'.ljust(w1)}  {'measured':>9}  result",
             f"{'-' * w0}  {'-' * w1}  {'-' * 9}  ------"]
    for g in goals:
        val, mark = goal_result(g)
        lines.append(f"{g['figure'].ljust(w0)}  {g['goal'].ljust(w1)}  {val:>9}  {mark}")
    n_pass = sum(g["passed"] is True for g in goals)
    n_fail = sum(g["passed"] is False for g in goals)
    lines.append(f"{n_pass} passed, {n_fail} failed, {len(goals) - n_pass - n_fail} not "
                 "measurable here")
    return "\n".join(lines)


def write_json(results: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1, default=_json_default)
        f.write("\n")
    os.replace(tmp, path)


def _json_default(o):
    try:
        return float(o)
    except (TypeError, ValueError):
        return str(o)
