"""What capturing Python state costs: the ``sys.settrace`` observer of ``@compile``.

    python -m benchmarks.capture                          # this interpreter, this checkout
    python -m benchmarks.capture --pythons /path/py3.11 /path/py3.12 /path/py3.13
    python -m benchmarks.capture --before /tmp/before     # also an older checkout, e.g.
                                  # git worktree add /tmp/before <commit>
    python -m benchmarks.capture --after /tmp/after         # a worktree of HEAD: without
                                  # the working tree's uncommitted changes
    python -m benchmarks.capture --rounds 5 --json out.json

Each (interpreter, checkout) is measured in worker processes (this file run as a script
with ``PYTHONPATH=<checkout>``, from a temporary directory, so that the checkout's
``eager``/``compiler`` are the ones imported); rounds alternate the checkouts
(before, after, before, after, ...).  Inside a worker every comparison is interleaved
(A B C A B C ...); a worker reports medians, the table shows the median over rounds.

Measured:

1. first-trace cost: the first call of a freshly compiled function (the README's tour
   function on 64 floats; the main example's Adam training step, MLP 2-64-64-2, batch
   100) minus the same call run eagerly (the eager step also on a fresh model and
   optimizer); the same first call with the observer switched off
   (``Observer.__enter__`` patched to install no trace function: the difference is what
   ``sys.settrace`` and the observer cost), and the time spent inside the observer's
   trace callbacks (``_on_call``/``_on_event`` wrapped with ``perf_counter``; the wrapper
   adds its own cost) with the number of events;
2. cache hits: a compiled ``x + 1`` on 4 float32 and the compiled training step, per call
   after ``compiler.wait()``, against eager;
3. fallback: a function reading ``len(GLOBAL_LIST)`` of a list that grows every call, per
   call compiled (past ``max_traces``) and eager;
4. the alternatives: per-event cost of ``sys.settrace`` opcode events against
   ``sys.monitoring`` INSTRUCTION events (3.12+) on a pure-Python function of about 2000
   instructions, and the cost of an AutoGraph-style source rewrite of a 50-line function
   (``inspect.getsource`` + ``ast.parse`` + a ``NodeTransformer`` + ``compile`` + ``exec``).
"""

from __future__ import annotations

import argparse
import ast
import gc
import inspect
import json
import linecache
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
perf = time.perf_counter
cpu = time.thread_time  # this thread's CPU time: no time spent preempted


def _median(xs):
    return statistics.median(xs) if xs else float("nan")


def _blocks(fns: dict, rounds: int, inner: dict) -> dict:
    """Time each callable in turns (A B C A B C ...): ``inner[name]`` calls per sample;
    returns name -> list of seconds per call."""
    out = {k: [] for k in fns}
    names = list(fns)
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            fn, n = fns[k], inner[k]
            t0 = perf()
            for _ in range(n):
                fn()
            out[k].append((perf() - t0) / n)
    return out


# -- 1. first-trace cost ---------------------------------------------------------------

def _observer_patches():
    """(observer off, observer timed) context helpers, or (None, None) if there is none."""
    try:
        from compiler.pystate.observer import Observer
    except ImportError:
        return None, None
    orig_enter = Observer.__enter__
    orig_call, orig_event = Observer._on_call, Observer._on_event
    acc = {"s": 0.0, "n": 0}

    class Off:
        def __enter__(self):
            def enter(obs):
                r = orig_enter(obs)
                if obs._installed:  # installed nothing after all: the trace runs unwatched
                    sys.settrace(obs._prev)
                    obs._installed = False
                return r
            Observer.__enter__ = enter

        def __exit__(self, *a):
            Observer.__enter__ = orig_enter

    class Timed:
        def __enter__(self):
            acc["s"], acc["n"] = 0.0, 0

            def on_call(obs, frame, event, arg):
                t0 = perf()
                r = orig_call(obs, frame, event, arg)
                acc["s"] += perf() - t0
                acc["n"] += 1
                return r

            def on_event(obs, frame, event, arg):
                t0 = perf()
                r = orig_event(obs, frame, event, arg)
                acc["s"] += perf() - t0
                acc["n"] += 1
                return r
            Observer._on_call, Observer._on_event = on_call, on_event
            return acc

        def __exit__(self, *a):
            Observer._on_call, Observer._on_event = orig_call, orig_event

    return Off, Timed


def tour_fn():
    import eager as torch

    def f(x):
        h = torch.tanh(x * 1.01 + 0.1)
        if h.sum() > 0:
            return h * 2
        return -h
    return f


def train_setup(seed=0):
    """A fresh model, loss and Adam of examples/train_mlp.py, its train_step and a batch."""
    import numpy as np

    import eager as torch
    from eager import nn, optim
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 2))
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.Adam(model.parameters(), lr=0.01)

    def train_step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss
    rng = np.random.default_rng(seed)
    xb = torch.tensor(rng.uniform(-1, 1, (100, 2)).astype(np.float32))
    yb = torch.tensor(rng.integers(0, 2, 100).astype(np.int64))
    return train_step, (xb, yb)


def first_calls(reps: int) -> dict:
    import eager as torch
    from compiler import compile
    Off, Timed = _observer_patches()
    x = torch.randn(64)
    cases = {"tour": lambda: (tour_fn(), (x,)), "step": lambda: train_setup()}
    res = {}
    for name, make in cases.items():
        t = {"eager": [], "compiled": [], "observer_off": [], "timed": [], "inside": [],
             "events": [], "cpu_eager": [], "cpu_compiled": [], "cpu_observer_off": [],
             "cpu_timed": []}
        variants = ["eager", "compiled", "observer_off", "timed"]
        for r in range(reps + 2):  # the first two: warm-up, dropped
            order = variants[r % 4:] + variants[:r % 4]
            for v in order:
                fn, args = make()
                if v != "eager":
                    fn = compile(fn)
                ctx = Off() if (v == "observer_off" and Off) else \
                    Timed() if (v == "timed" and Timed) else None
                acc = ctx.__enter__() if ctx is not None else None
                gc.collect()
                try:
                    c0, t0 = cpu(), perf()
                    fn(*args)
                    dt, dc = perf() - t0, cpu() - c0
                finally:
                    if ctx is not None:
                        ctx.__exit__()
                if r >= 2:
                    t[v].append(dt)
                    t["cpu_" + v].append(dc)
                    if v == "timed":
                        t["inside"].append(acc["s"] if acc else 0.0)
                        t["events"].append(acc["n"] if acc else 0)
                del fn
        eager = _median(t["eager"])
        res[name] = {
            "eager": eager,
            "compiled": _median(t["compiled"]),
            "observer_off": _median(t["observer_off"]),
            "cost": _median(t["compiled"]) - eager,
            "observer": _median(t["compiled"]) - _median(t["observer_off"]),
            "inside": _median(t["inside"]),
            "events": _median(t["events"]),
            "min_compiled": min(t["compiled"]), "min_eager": min(t["eager"]),
            "min_off": min(t["observer_off"]),
        }
        for v in ("eager", "compiled", "observer_off"):
            res[name]["cpu_" + v] = _median(t["cpu_" + v])
        res[name]["cpu_cost"] = res[name]["cpu_compiled"] - res[name]["cpu_eager"]
        res[name]["cpu_observer"] = res[name]["cpu_compiled"] - res[name]["cpu_observer_off"]
        res[name]["min_cost"] = res[name]["min_compiled"] - res[name]["min_eager"]
        res[name]["min_observer"] = res[name]["min_compiled"] - res[name]["min_off"]
    return res


# -- 2. cache hits ---------------------------------------------------------------------

def cache_hits(samples: int) -> dict:
    import compiler
    import eager as torch
    from compiler import compile
    x = torch.randn(4)

    def add1(x):
        return x + 1
    c_add = compile(add1)
    step_c, args_c = train_setup(1)
    step_e, args_e = train_setup(1)
    c_step = compile(step_c)
    for _ in range(3):
        c_add(x)
        c_step(*args_c)
    compiler.wait()
    for _ in range(3):
        c_add(x)
        c_step(*args_c)
    compiler.wait()
    t = _blocks({"add_compiled": lambda: c_add(x), "add_eager": lambda: add1(x)},
                samples, {"add_compiled": 2000, "add_eager": 2000})
    t2 = _blocks({"step_compiled": lambda: c_step(*args_c),
                  "step_eager": lambda: step_e(*args_e)},
                 samples, {"step_compiled": 40, "step_eager": 10})
    t.update(t2)
    out = {k: _median(v) for k, v in t.items()}
    out["add_ratio"] = _median([a / b for a, b in zip(t["add_compiled"], t["add_eager"])])
    out["step_ratio"] = _median([a / b for a, b in zip(t["step_compiled"],
                                                        t["step_eager"])])
    out["add_stats"] = c_add.stats()["hits"], c_add.stats()["calls"]
    out["step_stats"] = c_step.stats()["hits"], c_step.stats()["calls"]
    return out


# -- 3. a guard that keeps failing -------------------------------------------------------

GROWING: list = []


def reads_len(x):
    import eager as torch
    return (torch.tanh(x @ x) * len(GROWING)).sum()


def fallback(samples: int) -> dict:
    import eager as torch
    from compiler import compile
    x = torch.randn(16, 16)
    cf = compile(reads_len)  # max_traces=8 (the default)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def compiled():
            GROWING.append(0)
            cf(x)

        def eager():
            GROWING.append(0)
            reads_len(x)
        for _ in range(64):  # well past max_traces
            compiled()
        t = _blocks({"compiled": compiled, "eager": eager}, samples,
                    {"compiled": 50, "eager": 50})
    s = cf.stats()
    return {"compiled": _median(t["compiled"]), "eager": _median(t["eager"]),
            "ratio": _median([a / b for a, b in zip(t["compiled"], t["eager"])]),
            "traces": s["traces"], "hits": s["hits"]}


# -- 4a. sys.settrace opcode events against sys.monitoring INSTRUCTION events ---------------

def workload(n=100):
    """Pure Python, about 20 instructions per iteration."""
    acc = 0
    xs = [1, 2, 3]
    for i in range(n):
        a = xs[i % 3] * i
        if a & 1:
            acc += a
        else:
            acc -= 1
    return acc


def trace_events(samples: int) -> dict:
    code = workload.__code__
    counter = [0]

    def local_count(frame, event, arg):
        counter[0] += event == "opcode"
        return local_count

    def glob_count(frame, event, arg):
        if frame.f_code is code:
            frame.f_trace = local_count  # (3.13: f_trace before f_trace_opcodes)
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return local_count
        return None

    def local_nop(frame, event, arg):
        return local_nop

    def glob_nop(frame, event, arg):
        if frame.f_code is code:
            frame.f_trace = local_nop  # (3.13: f_trace before f_trace_opcodes)
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return local_nop
        return None

    def local_lasti(frame, event, arg):
        frame.f_lasti  # noqa: B018  (the observer reads at least the offset of each event)
        return local_lasti

    def glob_lasti(frame, event, arg):
        if frame.f_code is code:
            frame.f_trace = local_lasti
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return local_lasti
        return None

    for _ in range(2):  # (3.12 delivers opcode events from the 2nd settrace run on)
        counter[0] = 0
        sys.settrace(glob_count)
        workload()
        sys.settrace(None)
    n_trace = counter[0]

    def with_trace(glob):
        def run():
            sys.settrace(glob)
            workload()
            sys.settrace(None)
        return run

    fns = {"plain": workload, "settrace": with_trace(glob_nop),
           "settrace_lasti": with_trace(glob_lasti)}
    out = {"settrace_events": n_trace}
    mon = getattr(sys, "monitoring", None)
    tool = None
    if mon is not None:
        for tid in (5, 4, 3, 2, 1, 0):
            if mon.get_tool(tid) is None:
                tool = tid
                break
    if tool is not None:
        # sys.monitoring gets a copy of the code: on 3.13.0, clearing another tool's local
        # INSTRUCTION events on a code object also silences settrace's opcode events there
        mcode = code.replace(co_name="workload_monitored")
        mwork = types.FunctionType(mcode, workload.__globals__, "workload_monitored",
                                   workload.__defaults__)
        mon.use_tool_id(tool, "benchmarks.capture")
        E = mon.events
        mcount = [0]
        DISABLE = mon.DISABLE

        def cb_count(code_, offset):
            mcount[0] += 1

        mon.register_callback(tool, E.INSTRUCTION, cb_count)
        mon.set_local_events(tool, mcode, E.INSTRUCTION)
        mwork()
        mon.set_local_events(tool, mcode, 0)
        out["monitoring_events"] = mcount[0]

        def cb_nop(code_, offset):
            return None

        getframe = sys._getframe

        def cb_frame(code_, offset):
            getframe(1).f_lasti  # noqa: B018  (the observer needs the frame: its stack)

        def with_mon(cb):
            def run():
                mon.register_callback(tool, E.INSTRUCTION, cb)
                mon.set_local_events(tool, mcode, E.INSTRUCTION)
                mwork()
                mon.set_local_events(tool, mcode, 0)
            return run
        fns["monitoring"] = with_mon(cb_nop)
        fns["monitoring_frame"] = with_mon(cb_frame)
        del DISABLE
    try:
        t = _blocks(fns, samples, {k: 20 for k in fns})
    finally:
        if tool is not None:
            mon.register_callback(tool, mon.events.INSTRUCTION, None)
            mon.free_tool_id(tool)
    counter[0] = 0
    sys.settrace(glob_count)
    workload()
    sys.settrace(None)
    if counter[0] != n_trace:
        raise RuntimeError(f"settrace opcode events went from {n_trace} to {counter[0]}")
    plain = _median(t["plain"])
    out["plain"] = plain
    for k in fns:
        if k == "plain":
            continue
        n = out["monitoring_events"] if k.startswith("monitoring") else n_trace
        out[k] = _median(t[k])
        out[k + "_per_event"] = (out[k] - plain) / n if n else float("nan")
    if "monitoring" in out:
        out["settrace_over_monitoring"] = out["settrace_per_event"] / out["monitoring_per_event"]
    return out


# -- 4b. an AutoGraph-style source rewrite ---------------------------------------------------

def sample_50_lines(x, w, steps, flag):
    """A 50-line model-like function: loops, branches, calls (rewritten, never run)."""
    total = 0
    hidden = []
    for i in range(steps):
        h = x * w + i
        if flag and i % 2 == 0:
            h = h * 2
        elif i % 3 == 0:
            h = h - 1
        else:
            h = h + 1
        hidden.append(h)
        total = total + h
    j = 0
    while j < steps:
        if hidden[j] > total:
            total = total - hidden[j]
            break
        j += 1
    scale = 1.0
    for h in hidden:
        if h < 0:
            scale = scale * 0.5
        elif h > 10:
            scale = scale * 2.0
    out = []
    for k, h in enumerate(hidden):
        v = h * scale
        if k > 0:
            v = v + out[k - 1]
        out.append(v)
    if len(out) > 3:
        res = sum(out[-3:])
    else:
        res = sum(out)
    try:
        ratio = res / total
    except ZeroDivisionError:
        ratio = 0.0
    with_bias = [o + ratio for o in out]
    if ratio > 1:
        with_bias.reverse()
    best = max(with_bias) if with_bias else 0
    worst = min(with_bias) if with_bias else 0
    spread = best - worst
    if spread > 100:
        spread = 100
    mean = sum(with_bias) / max(len(with_bias), 1)
    return res, ratio, spread, mean


class _AutoGraphLike(ast.NodeTransformer):
    """Control flow and calls through converter hooks, as AutoGraph does: ``if``/``while``
    tests through ``ag__.cond``, loop iterables through ``ag__.iter``, every call through
    ``ag__.call``."""

    def _hook(self, name, *args):
        return ast.Call(ast.Attribute(ast.Name("ag__", ast.Load()), name, ast.Load()),
                        list(args), [])

    def visit_If(self, node):
        self.generic_visit(node)
        node.test = self._hook("cond", node.test)
        return node

    def visit_While(self, node):
        self.generic_visit(node)
        node.test = self._hook("cond", node.test)
        return node

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter = self._hook("iter", node.iter)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        return ast.Call(ast.Attribute(ast.Name("ag__", ast.Load()), "call", ast.Load()),
                        [node.func, ast.Tuple(node.args, ast.Load())], node.keywords)


class _Ag:
    cond = staticmethod(bool)
    iter = staticmethod(iter)

    @staticmethod
    def call(f, args, **kw):
        return f(*args, **kw)


def ast_rewrite(samples: int) -> dict:
    fn = sample_50_lines
    stages = {"getsource_cold": [], "getsource": [], "parse": [], "transform": [],
              "compile_exec": [], "total_cold": []}
    for _ in range(samples):
        # CPU time of this thread (a busy machine preempts a wall-clock interval of a few
        # ms more often than not), the collector off (collections of the whole heap)
        gc.collect()
        gc.disable()
        linecache.clearcache()
        t0 = cpu()
        src = inspect.getsource(fn)
        t1 = cpu()
        src = inspect.getsource(fn)
        t2 = cpu()
        tree = ast.parse(src)
        t3 = cpu()
        tree = ast.fix_missing_locations(_AutoGraphLike().visit(tree))
        t4 = cpu()
        ns = {"ag__": _Ag}
        exec(compile(tree, inspect.getsourcefile(fn), "exec"), ns)
        t5 = cpu()
        gc.enable()
        for k, dt in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            stages[k].append(dt)
        stages["total_cold"].append((t1 - t0) + (t5 - t2))
    new = ns[fn.__name__]
    assert new(1.5, 0.5, 6, True) == fn(1.5, 0.5, 6, True)
    out = {k: _median(v) for k, v in stages.items()}
    out["lines"] = len(inspect.getsource(fn).splitlines())
    t = _blocks({"orig": lambda: fn(1.5, 0.5, 6, True), "conv": lambda: new(1.5, 0.5, 6, True)},
                samples, {"orig": 200, "conv": 200})
    out["run_orig"], out["run_converted"] = _median(t["orig"]), _median(t["conv"])
    return out


# -- worker and driver -----------------------------------------------------------------

def worker(quick: bool, alternatives: bool) -> dict:
    import compiler
    warnings.simplefilter("ignore")
    reps = 5 if quick else 21
    res = {"python": sys.version.split()[0], "compiler": os.path.dirname(compiler.__file__)}
    try:
        from compiler.pystate import peek
        res["observer_supported"] = bool(peek.SUPPORTED)
    except Exception:  # noqa: BLE001
        res["observer_supported"] = None
    res["first"] = first_calls(reps)
    res["hit"] = cache_hits(7 if quick else 21)
    res["fallback"] = fallback(7 if quick else 21)
    if alternatives:
        res["events"] = trace_events(7 if quick else 31)
        res["ast"] = ast_rewrite(7 if quick else 31)
    compiler.wait()
    return res


def run_worker(python: str, code_root: str, label: str, quick: bool, alternatives: bool):
    env = dict(os.environ)
    env["PYTHONPATH"] = code_root
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = "1"
    ver = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    cache = os.path.join(tempfile.gettempdir(), f"dyngraph-capture-cache-{os.getuid()}",
                         f"{label}-{ver}")
    os.makedirs(cache, mode=0o700, exist_ok=True)
    os.chmod(os.path.dirname(cache), 0o700)
    os.chmod(cache, 0o700)
    env["DYNGRAPH_CACHE_DIR"] = cache
    cmd = [python, os.path.abspath(__file__), "--worker"] + (["--quick"] if quick else []) \
        + (["--alternatives"] if alternatives else [])
    with tempfile.TemporaryDirectory() as cwd:  # not the checkout: PYTHONPATH decides
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"{python} {label} failed:\n{p.stderr[-3000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    if not os.path.samefile(os.path.dirname(res["compiler"]), code_root):
        raise RuntimeError(f"{label}: imported {res['compiler']}, not {code_root}")
    return ver, res


def _get(d, path):
    for k in path.split("."):
        d = d[k]
    return d


ROWS = [  # (label, path, unit)
    ("1. tour: first call compiled", "first.tour.compiled", "ms"),
    ("1. tour: same call eager", "first.tour.eager", "ms"),
    ("1. tour: first-trace cost (compiled - eager)", "first.tour.cost", "ms"),
    ("1. tour: first call, observer off", "first.tour.observer_off", "ms"),
    ("1. tour: observer (compiled - observer off)", "first.tour.observer", "ms"),
    ("1. tour: minimum first call compiled", "first.tour.min_compiled", "ms"),
    ("1. tour: minimum eager call", "first.tour.min_eager", "ms"),
    ("1. tour: minimum first call, observer off", "first.tour.min_off", "ms"),
    ("1. tour: first-trace cost from minimums", "first.tour.min_cost", "ms"),
    ("1. tour: observer from minimums", "first.tour.min_observer", "ms"),
    ("1. tour: CPU time, first call compiled", "first.tour.cpu_compiled", "ms"),
    ("1. tour: CPU time, eager call", "first.tour.cpu_eager", "ms"),
    ("1. tour: CPU time, first-trace cost", "first.tour.cpu_cost", "ms"),
    ("1. tour: CPU time, observer (compiled - off)", "first.tour.cpu_observer", "ms"),
    ("1. tour: inside trace callbacks", "first.tour.inside", "ms"),
    ("1. tour: trace callback events", "first.tour.events", "n"),
    ("1. step: first call compiled", "first.step.compiled", "ms"),
    ("1. step: same call eager", "first.step.eager", "ms"),
    ("1. step: first-trace cost (compiled - eager)", "first.step.cost", "ms"),
    ("1. step: first call, observer off", "first.step.observer_off", "ms"),
    ("1. step: observer (compiled - observer off)", "first.step.observer", "ms"),
    ("1. step: minimum first call compiled", "first.step.min_compiled", "ms"),
    ("1. step: minimum eager call", "first.step.min_eager", "ms"),
    ("1. step: minimum first call, observer off", "first.step.min_off", "ms"),
    ("1. step: first-trace cost from minimums", "first.step.min_cost", "ms"),
    ("1. step: observer from minimums", "first.step.min_observer", "ms"),
    ("1. step: CPU time, first call compiled", "first.step.cpu_compiled", "ms"),
    ("1. step: CPU time, eager call", "first.step.cpu_eager", "ms"),
    ("1. step: CPU time, first-trace cost", "first.step.cpu_cost", "ms"),
    ("1. step: CPU time, observer (compiled - off)", "first.step.cpu_observer", "ms"),
    ("1. step: inside trace callbacks", "first.step.inside", "ms"),
    ("1. step: trace callback events", "first.step.events", "n"),
    ("2. x+1 on 4 floats: compiled hit per call", "hit.add_compiled", "us"),
    ("2. x+1 on 4 floats: eager per call", "hit.add_eager", "us"),
    ("2. x+1: compiled / eager", "hit.add_ratio", "x"),
    ("2. step: compiled hit per call (after wait)", "hit.step_compiled", "us"),
    ("2. step: eager per call", "hit.step_eager", "us"),
    ("2. step: compiled / eager", "hit.step_ratio", "x"),
    ("3. growing len(global): compiled per call", "fallback.compiled", "us"),
    ("3. growing len(global): eager per call", "fallback.eager", "us"),
    ("3. growing len(global): compiled / eager", "fallback.ratio", "x"),
]
ALT_ROWS = [
    ("4a. workload (~2000 instr), untraced", "events.plain", "us"),
    ("4a. settrace opcode events per run", "events.settrace_events", "n"),
    ("4a. monitoring INSTRUCTION events per run", "events.monitoring_events", "n"),
    ("4a. settrace, no-op callback: per event", "events.settrace_per_event", "ns"),
    ("4a. settrace, reads f_lasti: per event", "events.settrace_lasti_per_event", "ns"),
    ("4a. monitoring, no-op callback: per event", "events.monitoring_per_event", "ns"),
    ("4a. monitoring, _getframe(1).f_lasti: per event", "events.monitoring_frame_per_event",
     "ns"),
    ("4a. settrace / monitoring (no-op, per event)", "events.settrace_over_monitoring", "x"),
    ("4b. AST rewrite of a 50-line function, CPU time: getsource (cold linecache)",
     "ast.getsource_cold", "ms"),
    ("4b. getsource (warm)", "ast.getsource", "ms"),
    ("4b. ast.parse", "ast.parse", "ms"),
    ("4b. transform (NodeTransformer)", "ast.transform", "ms"),
    ("4b. compile + exec", "ast.compile_exec", "ms"),
    ("4b. total (cold getsource)", "ast.total_cold", "ms"),
    ("4b. run: original / converted (per call)", None, "us"),
]
SCALE = {"ms": 1e3, "us": 1e6, "ns": 1e9, "x": 1, "n": 1}


def _fmt(v, unit):
    if v is None or v != v:
        return "—"
    if unit == "n":
        return f"{v:.0f}"
    if unit == "x":
        return f"{v:.2f}x"
    v *= SCALE[unit]
    return f"{v:.3g} {unit}" if abs(v) < 100 else f"{v:.0f} {unit}"


def table(results: dict, labels: list[str]) -> str:
    """results[ver][label] = list of worker dicts."""
    vers = sorted(results)
    head = "| measurement | " + " | ".join(
        f"{v} {lab}" for v in vers for lab in labels) + (
        " | " + " | ".join(f"{v} after/before" for v in vers) if len(labels) == 2 else "") + " |"
    lines = [head, "|" + "---|" + "--:|" * (head.count("|") - 2)]

    def med(ver, lab, path):  # (a row of minimums: the minimum over the workers)
        agg = min if ".min_" in path else _median
        try:
            return agg([_get(r, path) for r in results[ver].get(lab, [])])
        except (KeyError, TypeError):
            return None
    for name, path, unit in ROWS:
        cells = [_fmt(med(v, lab, path), unit) for v in vers for lab in labels]
        if len(labels) == 2:
            for v in vers:
                b, a = med(v, labels[0], path), med(v, labels[1], path)
                ok = unit not in ("n",) and b and a is not None and b == b and a == a \
                    and b > 0 and a >= 0
                cells.append(f"{a / b:.2f}" if ok else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    alt_lab = labels[-1]
    alt = ["| measurement | " + " | ".join(vers) + " |", "|---|" + "--:|" * len(vers)]
    for name, path, unit in ALT_ROWS:
        if path is None:
            cells = []
            for v in vers:
                o, c = med(v, alt_lab, "ast.run_orig"), med(v, alt_lab, "ast.run_converted")
                cells.append(f"{_fmt(o, unit)} / {_fmt(c, unit)}" if o else "—")
        else:
            cells = [_fmt(med(v, alt_lab, path), unit) for v in vers]
        alt.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\nAlternatives (the " + alt_lab + " workers):\n\n" + \
        "\n".join(alt)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pythons", nargs="+", default=[sys.executable])
    ap.add_argument("--before", metavar="CHECKOUT",
                    help="an older checkout to measure too (e.g. a git worktree)")
    ap.add_argument("--after", metavar="CHECKOUT", default=ROOT,
                    help="the checkout measured as 'after' (default: this one, working tree "
                         "included; a git worktree of a commit measures that commit alone)")
    ap.add_argument("--rounds", type=int, default=3, help="worker processes per cell")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="", help="write every worker's results here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--alternatives", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.quick, args.alternatives)))
        return 0
    codes = ([("before", os.path.abspath(args.before))] if args.before else []) + \
        [("after", os.path.abspath(args.after))]
    labels = [c[0] for c in codes]
    results: dict = {}
    load = os.getloadavg()[0]
    for r in range(args.rounds):
        for py in args.pythons:
            for label, root in (codes if r % 2 == 0 else codes[::-1]):
                t0 = perf()
                ver, res = run_worker(py, root, label, args.quick, label == "after")
                results.setdefault(ver, {}).setdefault(label, []).append(res)
                print(f"round {r + 1}/{args.rounds}: {ver} {label} "
                      f"(observer supported: {res['observer_supported']}) "
                      f"{perf() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"Capture cost: medians over {args.rounds} worker processes per cell (rows of "
          "minimums: the minimum over them) "
          f"(load average {load:.2f} at the start, {os.cpu_count()} CPUs)\n")
    print(table(results, labels))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
