"""Charts (matplotlib, the ``bench`` extra): one per family, and the headline chart.

A family's chart has one panel per workload: a bar per peer, time per call on a log
scale, the time written at the end of each bar and, on ours compiled, how many times
faster it is than ours eager and than the best other peer.  The headline chart shows,
for each headline workload, each peer's time divided by ours compiled.
"""

from __future__ import annotations

import os
import textwrap

from . import report as R
from .peers import (
    ALL,
    COMPILED,
    COMPILED_FWD,
    COPY,
    EAGER,
    HEADERS,
    JAX,
    NUMBA,
    NUMPY,
    TORCH,
    TORCH_COMPILE,
)

COLORS = {NUMPY: "#4c72b0", EAGER: "#dd8452", COMPILED: "#c44e52", COMPILED_FWD: "#e89a9c",
          TORCH: "#55a868", TORCH_COMPILE: "#8172b3", JAX: "#937860", COPY: "#8c8c8c",
          NUMBA: "#bcbcbc"}
DPI = 100


def pyplot():
    """matplotlib.pyplot with the file-only backend, or ImportError saying how to get it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError('the charts need matplotlib: pip install -e ".[bench]"') from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def caption(meta: dict) -> str:
    v = meta.get("versions", {})
    libs = ", ".join(f"{k} {v[k]}" for k in ("numpy", "numba", "torch", "jax") if v.get(k))
    return (f"{meta.get('cpu', '?')}, {meta.get('cores', '?')} cores; Python "
            f"{v.get('python', '?')}, {libs}; {meta.get('date', '?')[:10]}"
            f"{' (--quick)' if meta.get('quick') else ''}. Medians of samples taken in "
            "turns in one process.")


def _times(r: float, than: str) -> str:
    return (f"{R.fmt_ratio(r)} faster than {than}" if r >= 1 else
            f"{R.fmt_ratio(1 / r)} slower than {than}")


def _bar_label(w: dict, impl: str, t: float) -> str:
    text = f" {R.fmt_time(t)}"
    if impl in (COMPILED, COMPILED_FWD):
        s = R.speedups(w, impl)
        parts = []
        if s["vs_eager"]:
            parts.append(_times(s["vs_eager"], "ours eager"))
        if s["vs_best"]:
            parts.append(_times(s["vs_best"], f"the best peer ({HEADERS[s['best']]})"))
        if parts:
            text += ": " + ", ".join(parts)
    return text


def family_chart(results: dict, family: str, path: str) -> None:
    plt = pyplot()
    fam = results["families"][family]
    panels = [(k, results["workloads"][k]) for k in fam["workloads"]
              if any(R.seconds(c) for c in results["workloads"][k]["impls"].values())]
    if not panels:
        return
    heights = [0.5 + 0.3 * sum(1 for c in w["impls"].values() if R.seconds(c))
               for _, w in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, sum(heights) + 0.9),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (_, w) in zip(axes[:, 0], panels):
        bars = [(i, R.seconds(w["impls"].get(i))) for i in ALL if R.seconds(w["impls"].get(i))]
        y = list(range(len(bars)))[::-1]
        ax.barh(y, [t for _, t in bars], color=[COLORS[i] for i, _ in bars], height=0.7)
        ax.set_xscale("log")
        ax.set_yticks(y, [HEADERS[i] for i, _ in bars], fontsize=8)
        lo, hi = min(t for _, t in bars), max(t for _, t in bars)
        ax.set_xlim(lo / 3, hi * 150)
        for yi, (impl, t) in zip(y, bars):
            ax.text(t, yi, _bar_label(w, impl, t), va="center", fontsize=7)
        ax.set_title(w["title"], fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=7)
        ax.xaxis.set_major_formatter(_time_formatter())
        ax.grid(axis="x", which="major", lw=0.4, alpha=0.5)
    axes[-1, 0].set_xlabel("time per call (log scale; lower is better)", fontsize=8)
    fig.suptitle(fam["title"], fontsize=10, x=0.01, ha="left")
    fig.text(0.01, 0.005, caption(results["meta"]), fontsize=6.5, ha="left", va="bottom",
             wrap=True)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    _save(fig, path)


def headline_chart(results: dict, path: str) -> None:
    """Each peer's time / ours compiled for the headline workloads (log scale)."""
    plt = pyplot()
    rows = []
    for w in results["workloads"].values():
        ours = R.seconds(w["impls"].get(COMPILED))
        if not w.get("headline") or not ours:
            continue
        vals = [(i, R.seconds(w["impls"].get(i)) / ours) for i in
                (NUMPY, EAGER, TORCH, TORCH_COMPILE, JAX) if R.seconds(w["impls"].get(i))]
        if vals:
            rows.append((w["headline"], vals))
    if not rows:
        return
    n = sum(len(v) for _, v in rows) + len(rows)
    fig, ax = plt.subplots(figsize=(8, 0.2 * n + 1.3))
    y, ticks, labels, ratios = 0, [], [], []
    for title, vals in rows:
        ticks.append(y - (len(vals) - 1) / 2)
        labels.append(textwrap.fill(title, 30))
        for impl, r in vals:
            ax.barh(y, r - 1, left=1, color=COLORS[impl], height=0.8, label=HEADERS[impl])
            ax.text(r, y, f" {R.fmt_ratio(r)} " if r >= 1 else f"{R.fmt_ratio(r)} ",
                    va="center", ha="left" if r >= 1 else "right", fontsize=7)
            ratios.append(r)
            y -= 1
        y -= 1
    ax.axvline(1, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlim(min(min(ratios), 1) / 3, max(max(ratios), 1) * 3)
    ax.set_yticks(ticks, labels, fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    from matplotlib.ticker import FuncFormatter
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.grid(axis="x", which="major", lw=0.4, alpha=0.5)
    ax.set_xlabel("peer's time / ours compiled, log scale: right of 1× ours compiled is "
                  "faster, left of it the peer is", fontsize=8)
    handles, names = ax.get_legend_handles_labels()
    uniq = dict(zip(names, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title("How fast: ours compiled against NumPy, our eager mode, PyTorch and JAX",
                 fontsize=10, loc="left")
    fig.text(0.01, 0.005, caption(results["meta"]), fontsize=6.5, ha="left", va="bottom",
             wrap=True)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    _save(fig, path)


def _time_formatter():
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda v, _: R.fmt_time(v))


def _save(fig, path: str) -> None:
    import matplotlib.pyplot as plt
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
