"""What a family, a workload and a goal are, and how one workload is run.

A *family* (one module under ``benchmarks/families/``, one chart in the report) builds
its *workloads*.  A workload is a set of *peers* (see :mod:`.peers`): for each, a factory
that builds the inputs or the model and returns a zero-argument callable doing one unit
of work (one GELU, one train step, ...) and returning its result.  A factory raises
:class:`~.peers.Skip` when its peer is not available here; any other exception becomes
an error in that peer's cell and the run goes on.

Before timing, every peer is called ``check_calls`` times (a compiled function traces on
its first call and replays on the next ones) and its results are compared with the
``reference`` peer's (train steps: the losses of every step, from the same initial
weights), so a fast wrong answer is flagged ``(!)``.  Then :func:`.timing.compare` times
all peers of the workload side by side.
"""

from __future__ import annotations

import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from . import timing
from .peers import COMPILED, COMPILED_FWD, NUMPY, TORCH_COMPILE, Skip

CHECK_CALLS = 2  # calls before timing whose results are checked (the 2nd replays a trace)


@dataclass
class Workload:
    key: str                             # unique; --only accepts it
    title: str                           # what one call does, short
    impls: list                          # [(peer name, factory)]
    rtol: float = 1e-4
    atol: float = 1e-5
    reference: str = NUMPY               # the peer the others' results are checked against
    check_calls: int = CHECK_CALLS
    stateful: bool = False               # each call changes state: compare every call
    notes: dict = field(default_factory=dict)   # peer -> how it does the work
    headline: str | None = None          # its row label in the README's headline table


@dataclass
class Goal:
    """``numerator / denominator  op  target``; each side is ``(workload key, peer)``; no
    denominator: an absolute time in seconds."""
    figure: str
    op: str                              # ">=" or "<="
    target: float
    numerator: tuple
    denominator: tuple | None = None


@dataclass
class Family:
    name: str                            # --only NAME; the chart is docs/img/NAME.png
    title: str
    about: str                           # one paragraph for the report
    workloads: Callable[[bool], list] = None   # quick -> [Workload]
    goals: list = field(default_factory=list)
    # a family that is not "time callables side by side" (first_call: new processes)
    # runs itself: (quick, peers or None, log) -> {workload key: workload result}
    run: Callable | None = None
    # the workload keys such a run returns (goals name them); () means just the family name
    keys: tuple = ()


def err_text(e: BaseException) -> str:
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
            return f"wrong result: max abs error {err:.3g}{where}"
    return "ok"


def run_workload(w: Workload, budget: timing.Budget, log, peers=None) -> dict:
    """Check and time every peer of ``w`` (those in ``peers`` when given); the result
    is JSON-ready: ``{"title", "headline", "reference", "impls": {peer: cell}}``."""
    replaying = (COMPILED, COMPILED_FWD, TORCH_COMPILE)
    cells: dict = {}
    fns: dict = {}
    outs: dict = {}
    for impl, factory in w.impls:
        if peers is not None and impl not in peers:
            continue
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
                cells[impl] = {"status": "error", "error": err_text(e),
                               "traceback": traceback.format_exc(limit=-6)}
                log(f"  {impl}: ERROR {err_text(e)}")
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
        cells[impl] = {"status": "error", "error": err_text(e)}
        log(f"  {impl}: ERROR {err_text(e)}")

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
    return {"title": w.title, "headline": w.headline, "reference": w.reference,
            "impls": {i: cells[i] for i, _ in w.impls if i in cells}}


def with_stats(run, compiled):
    """Let the harness read a compiled function's counters (hits, fallbacks)."""
    run.stats = compiled.stats
    return run
