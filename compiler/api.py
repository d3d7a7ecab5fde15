"""``compile()``: the front end that traces, caches behind guards, replays, and falls back.

A call computes its key (one dict lookup) and replays a compiled path when one matches;
otherwise it runs the function eagerly with a tracer active (so the result is always
eager's), compiles what was recorded, and stores it.  Anything the compiler cannot
replay makes the call — or, for reads that leave the graph, the function — run eagerly,
and ``explain()`` says why.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import threading
import time
import warnings

from eager import autograd
from eager import random as _random
from eager._state import STATE
from eager.factories import ones_like
from eager.func.batching import ACTIVE as _VMAPS
from eager.nn.module import STRUCTURE_EPOCH, Module
from eager.tensor import Tensor
from runtime.cpu import compile_worker

from . import log, tiers
from .capture import GradOf, GraphBreak, Tracer
from .check import checked_replay, snapshot
from .codegen import build_in_worker, compile_graph
from .dynamic import DynamicScalars, deep_plain, unsym_state
from .explain import Explanation
from .guards import Preconditions, describe_key_change, flatten, memory_pattern
from .ir import Graph, Guard, check_graph, graph_device
from .passes import optimize
from .program import FREED, BackwardFails, BackwardProgram, Path, Variant
from .pystate.effects import SetGradMode, graph_scalars
from .pystate.guards import GuardSet
from .pystate.observer import Observer
from .pystate.symbolic import is_sym
from .refs import ArgTensor, GradTensor, HeldTensor
from .regions import ModuleCall, Regions
from .split import Split, line_in

_EAGER = "eager"  # cache value: this key runs eagerly
#: replays of a key that raise where eager does not, before the key runs eagerly for good
REPLAY_STRIKES = 3
#: past max_traces, a key whose guards failed this many calls in a row checks its traces'
#: guards again only at the calls numbered by a power of two, then every BACKOFF_MAX calls
BACKOFF_AFTER = 4
BACKOFF_MAX = 1024
_ALL: list = []   # weak registry for compiler.reset()
#: a call under a function transform: vmap's tensors hold batched storage, which traces and
#: keys do not know; such a call runs the Python function eagerly (grad, vjp, jacrev and
#: hessian work through autograd and replay as usual)
_UNDER_VMAP = ("called inside eager.func.vmap: runs the function eagerly on the batched "
               "tensors (vmap(compile(f)) computes vmap(f))")


class GraphBreakError(RuntimeError):
    """Raised with ``fullgraph=True`` where the function would fall back to eager."""


class CompileWarning(UserWarning):
    pass


class CompiledFunction:
    """A function (or module) wrapped by :func:`compile`."""

    def __init__(self, fn, *, fullgraph=False, max_traces=8, backend="numba", check=None,
                 dynamic=None, mode=None):
        backend = BACKENDS.get(backend, backend) if isinstance(backend, str) else backend
        if backend not in ("numba", "python", "eager"):
            raise ValueError(f"compile: unknown backend {backend!r}; expected one of "
                             f"{', '.join(map(repr, BACKENDS))}")
        if mode not in MODES:
            raise RuntimeError(f"compile: unknown mode {mode!r}; expected one of "
                               f"{', '.join(map(repr, MODES))}")
        self.fn = fn
        self.dynamic = dynamic
        self.mode = mode
        self.fullgraph = fullgraph
        self.max_traces = int(max_traces)
        self.backend = backend
        self.check = os.environ.get("DYNGRAPH_CHECK", "") not in ("", "0") if check is None \
            else bool(check)
        functools.update_wrapper(self, fn, updated=())
        if not hasattr(self, "__name__"):  # functools.partial, callable objects
            self.__name__ = getattr(type(fn), "__name__", "function")
        try:
            self._argnames = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            self._argnames = []
        import weakref
        _ALL.append(weakref.ref(self))
        self._options = dict(fullgraph=fullgraph, max_traces=max_traces, backend=backend,
                             check=check, dynamic=dynamic, mode=mode)
        self._instance = False   # a per-instance cache of a compiled method: see __get__
        self._per_instance = None
        # threads: traces, misses and cache changes run holding this lock (_locked);
        # replays of recorded traces do not take it
        self._lock = threading.RLock()
        self._epoch = 0  # bumped after each of those: a call that waited looks again
        self.reset()

    # -- bookkeeping -------------------------------------------------------------------
    def reset(self) -> None:
        """Forget every trace and counter."""
        self._cache: dict = {}
        self._always_eager: str | None = None  # why every call runs the body eagerly
        self._breaks: list[str] = []   # the graph breaks behind it, each naming its line
        self._split = None  # compiler.split.Split: the function cut at a break's line
        self._floats_read: dict = {}  # where -> values a float read into Python took
        self._piece_of = None  # the Split this function is a compiled piece of
        self._last_key = None
        self._warned_limit = False
        self._n_traces = 0
        self._stats = {"calls": 0, "hits": 0, "traces": 0, "fallbacks": 0, "misses": 0,
                       "guard_failures": 0, "compile_seconds": 0.0}
        self._fallback_reasons: list[str] = []
        self._dyn = DynamicScalars(self.dynamic)
        self._regions = None
        self._first_use = None  # perf_counter() of the first trace (see tiers.worth_loading)
        self._unbuilt: list = []  # paths whose kernel build waits for a replay or wait()
        self._records: list = []  # (key, variant, path) for explain()
        self._diagnosed: set = set()  # keys whose failed guard past max_traces was described
        self._strikes: dict = {}  # key -> replays that raised where eager did not
        self._backoff: dict = {}  # key -> calls in a row past max_traces whose guards failed
        self._streak = 0  # calls in a row past max_traces that ran eagerly (any key)

    def stats(self) -> dict:
        """Counters: calls, hits (served by compiled code), traces, fallbacks (eager calls,
        and calls of a function split at a graph break: each compiled piece has counters
        of its own, ``explain().pieces``), misses, guard_failures, compile_seconds."""
        return dict(self._stats)

    def explain(self, wait: bool = True, verbose: bool = False) -> Explanation:
        """A readable report of traces, guards, kernels and fallbacks: printed, a short
        summary, or with ``verbose=True`` the full dump (guards, graphs and kernel source
        of every trace; also ``.full()``).  ``wait``: first finish the kernel builds still
        running in the background and load them (else the report shows the kernels loaded
        so far, and a short program never pays for loading Numba)."""
        if wait:
            _wait_all()
        out = Explanation(self)
        out.verbose = bool(verbose)
        return out

    def _submit_builds(self) -> None:
        """At :func:`wait`: start the builds still waiting for a replay, except those of
        traces never replayed whose key a later variant took over (an optimizer's first
        step); those stay for their first replay."""
        keep = []
        for path in self._unbuilt:
            later = path.build_later
            if later is None:
                continue
            if path.superseded and path.hits == 0:
                keep.append(path)
                continue
            path.build_later = None
            later()
        self._unbuilt = keep

    def _fallback(self, reason: str, count: bool = True) -> None:
        if self.fullgraph:  # torch.compile(fullgraph=True): no fallback to eager, ever
            raise GraphBreakError(f"{self.__name__}: {reason}")
        if count:
            self._stats["fallbacks"] += 1
        if reason not in self._fallback_reasons:
            self._fallback_reasons.append(reason)
            log.fallbacks.info("%s: %s", self.__name__, reason)

    # -- as a method -------------------------------------------------------------------
    def __get__(self, obj, objtype=None):
        """``@compile`` on a method (``nn.Module.forward`` included): each instance gets a
        cache of its own (a :class:`CompiledFunction` of the same function with the
        instance as argument 0, keyed as :data:`~compiler.guards.SELF`), so instances do
        not share ``max_traces`` and a trace never holds the instance through its key.
        What the function reads through ``self`` is guarded by the observer as for any
        argument."""
        if obj is None:
            return self
        per = self._per_instance
        if per is None:
            import weakref
            per = self._per_instance = weakref.WeakKeyDictionary()
        try:
            cf = per.get(obj)
            if cf is None:
                cf = CompiledFunction(self.fn, **self._options)
                cf._instance = True
                per[obj] = cf
        except TypeError:  # not weakly referenceable or unhashable: one cache, keyed on it
            cf = self
        return BoundCompiled(cf, obj)

    # -- the call --------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        st = self._stats
        st["calls"] += 1
        if STATE.tracer is not None:  # called from inside another trace: inline it
            return self.fn(*args, **kwargs)
        if _VMAPS:  # inside eager.func.vmap: its batched tensors run the function eagerly
            self._fallback(_UNDER_VMAP)
            return self.fn(*args, **kwargs)
        if self._split is not None:  # a graph break: compiled pieces around its line
            st["fallbacks"] += 1  # (in part eager; the pieces count their own hits)
            return self._split(args, kwargs)
        if self._always_eager is not None:  # a graph break: Module calls still compiled
            self._fallback(self._always_eager)
            return self._run_broken(args, kwargs)
        if self._streak >= BACKOFF_AFTER and self._skip_lookup():
            st["fallbacks"] += 1  # past max_traces, calls keep missing: eager at its speed
            return self._regions.run(self.fn, args, kwargs)
        epoch = self._epoch
        tensors, key = flatten(args, kwargs, self._dyn.args, self._instance)
        entry = self._cache.get(key)
        if entry is None:
            return self._locked(epoch, args, kwargs, self._miss, key, tensors, args, kwargs)
        if entry is _EAGER:
            self._fallback("this key's trace could not be compiled")
            return self.fn(*args, **kwargs)
        if self._backoff and key in self._backoff and self._back_off(key):
            return self._trace(key, tensors, args, kwargs, None, "")  # eager, guards unread
        diverged = None
        for k, variant in enumerate(entry):
            pre = variant.pre
            if pre.empty or pre.holds(tensors, args, kwargs):
                if k:  # the variant that matched goes first: one precondition check next time
                    self._to_front(key, entry, variant)
                if variant.last.build_later is not None:  # its first replay: kernels
                    self._start_build(variant.last)   # loaded now if on disk, else built
                if self.check:
                    rng, before = _random.snapshot(), snapshot(tensors, pre)
                try:
                    path, outs = variant.run(tensors, args, kwargs)
                except Exception as e:  # nothing visible happened yet: eager is safe
                    return self._replay_failed(key, e, args, kwargs)
                if path is None:  # a branch this variant has not seen: maybe another has
                    diverged = diverged or (variant, outs)
                    continue
                st["hits"] += 1
                path.hits += 1
                if self._backoff:
                    self._backoff.pop(key, None)
                self._streak = 0
                if path.build_later is not None:  # its kernel build waited for a replay
                    self._start_build(path)
                if self.check:
                    return checked_replay(self, path, outs, tensors, args, kwargs, before, rng)
                return path.finish(outs, tensors, args=args, kwargs=kwargs)
        if diverged is not None:
            st["guard_failures"] += 1
            return self._locked(epoch, args, kwargs, self._diverged, key, diverged[0],
                                diverged[1], tensors, args, kwargs)
        if self._n_traces >= self.max_traces and self._warned_limit:
            return self._past_limit(key, entry, tensors, args, kwargs)
        return self._locked(epoch, args, kwargs, self._recompile, key, entry, tensors, args,
                            kwargs)

    def _start_build(self, path: Path) -> None:
        """Start the kernel build of ``path`` waiting for a replay (once per path: one
        thread submits it)."""
        with self._lock:
            later, path.build_later = path.build_later, None
        if later is not None:
            later()

    def _recompile(self, key, entry, tensors, args, kwargs):
        """The guards of every trace of the key failed: record one more."""
        reason = entry[0].pre.failure(tensors, args, kwargs)
        marked = [g for g in entry[0].pre.failing_guards(args, kwargs)
                  if self._dyn.mark_from_guard(g)]
        if marked:
            reason += " (from now on an input of the trace)"
        log.recompiles.info("%s: recompiling: %s", self.__name__, reason)
        return self._trace(key, tensors, args, kwargs, None, reason)

    def _past_limit(self, key, entry, tensors, args, kwargs):
        """Past ``max_traces``, a key whose guards failed runs the body eagerly (regions).
        Which guard failed is put in words once per key, or on every call only while the
        ``recompiles`` log is on: building it evaluates every guard again, which made such
        calls many times slower than eager (a list that grows, read by ``len``)."""
        self._count_failure(key)
        if key in self._diagnosed and not log.recompiles.isEnabledFor(logging.INFO):
            return self._trace(key, tensors, args, kwargs, None, "")
        if len(self._diagnosed) < 256:
            self._diagnosed.add(key)
        reason = entry[0].pre.failure(tensors, args, kwargs) or "a guard failed"
        log.recompiles.info("%s: guards failed: %s", self.__name__, reason)
        return self._trace(key, tensors, args, kwargs, None, reason)

    def _skip_lookup(self) -> bool:
        """Whether this call runs eagerly without even building its key: past
        ``max_traces``, the last :data:`BACKOFF_AFTER` or more calls all ran eagerly (a
        list argument that grows makes a new key at every call, and building a key
        that long costs more than the eager call).  The key is looked up again at the
        calls numbered by a power of two, then every :data:`BACKOFF_MAX` calls; a hit
        resets the count."""
        n = self._streak = self._streak + 1
        return not (n & (n - 1) == 0 or n % BACKOFF_MAX == 0)

    def _count_failure(self, key) -> None:
        """One more call past ``max_traces`` whose traces' guards all failed."""
        self._streak += 1
        b = self._backoff
        if len(b) >= 4096 and key not in b:
            b.clear()
        b[key] = b.get(key, 0) + 1

    def _back_off(self, key) -> bool:
        """Whether this call of a key whose guards keep failing past ``max_traces`` skips
        checking them (and runs eagerly at once): checking every trace's guards (a list
        that grows compared item by item, for each trace) costs more than the eager call.
        They are checked again at the calls numbered by a power of two, then every
        :data:`BACKOFF_MAX` calls; a hit resets the count."""
        n = self._backoff[key]
        if n < BACKOFF_AFTER:
            return False
        n = self._backoff[key] = n + 1
        if n & (n - 1) == 0 or n % BACKOFF_MAX == 0:
            return False
        return True

    def _replay_failed(self, key, exc, args, kwargs):
        """A replay raised before anything visible happened: run the call eagerly.  If eager
        raises too, the input was bad (an index out of bounds), not the trace: eager's error
        is raised and the key keeps replaying.  If eager succeeds, that is a strike against
        the key; the next calls replay again, and only after :data:`REPLAY_STRIKES` strikes
        does the key run eagerly for good (one bad call no longer made a key eager forever)."""
        if self.fullgraph or getattr(exc, "after_writes", False):
            raise exc
        what = f"{type(exc).__name__}: {exc}"
        try:
            result = self.fn(*args, **kwargs)
        except BaseException as err:
            self._fallback(f"replay error ({what}); eager raised too: the error is the "
                           "input's, the key keeps replaying")
            if err.__context__ is exc:  # eager's own error, not "during handling of ..."
                err.__suppress_context__ = True
            raise
        strikes = self._strikes[key] = self._strikes.get(key, 0) + 1
        if strikes >= REPLAY_STRIKES:
            with self._lock:  # not while another thread adds a trace to this key
                self._cache[key] = _EAGER
            warnings.warn(f"{self.__name__}: replaying a compiled trace failed ({what}) where "
                          f"eager did not, {strikes} times; this key runs eagerly from now on",
                          CompileWarning, stacklevel=3)
        elif strikes == 1:
            warnings.warn(f"{self.__name__}: replaying a compiled trace failed ({what}) where "
                          f"eager did not; that call ran eagerly (the key replays again, and "
                          f"runs eagerly for good after {REPLAY_STRIKES} such failures)",
                          CompileWarning, stacklevel=3)
        self._fallback(f"replay error: {what}")
        return result

    def _miss(self, key, tensors, args, kwargs):
        self._stats["misses"] += 1
        self._dyn.args = set(self._dyn.args)  # marked in a copy: flatten may read it
        if self._last_key is None and self._dyn.mark_all(args):  # dynamic=True
            tensors, key = flatten(args, kwargs, self._dyn.args, self._instance)
        if self._n_traces >= self.max_traces and self._warned_limit:
            self._streak += 1
            return self._trace(key, tensors, args, kwargs, None, "")  # eager, at its speed
        reason = "first call" if self._last_key is None else \
            describe_key_change(self._last_key, key, self._argnames)
        if self._piece_of is not None and self._last_key is not None:
            try:
                self._piece_of.cut_at_use(self, self._last_key, key, args)  # (next calls)
            except Exception as e:  # never an error to the user: no cut
                log.fallbacks.info("%s: cutting failed: %s: %s", self.__name__,
                                   type(e).__name__, e)
        if self._last_key is not None:
            if self._dyn.mark_args(self._last_key, key):  # a number argument changed
                reason += " (from now on an input of the trace)"
                tensors, key = flatten(args, kwargs, self._dyn.args, self._instance)
                entry = self._cache.get(key)
                if entry is not None:  # already traced with it dynamic
                    self._stats["misses"] -= 1
                    self._stats["calls"] -= 1
                    return self(*args, **kwargs)
            log.recompiles.info("%s: recompiling: %s", self.__name__, reason)
        return self._trace(key, tensors, args, kwargs, None, reason)

    def _diverged(self, key, variant, failed, tensors, args, kwargs):
        path, index, seen = failed
        where, kind, expected = path.guards[index]
        if kind == "text":  # a number formatted into text took another value: a break
            why = [f"a number computed by the graph formatted into text at {where} (was "
                   f"{expected!r}, now {seen!r})"]
            if self._cut_at(where, why):  # that statement runs eagerly from now on
                self._warn_split()
                return self._trace(key, tensors, args, kwargs, variant, why[0])
            self._graph_break(why)
            self._fallback(self._always_eager)
            warnings.warn(f"{self.__name__}: {self._always_eager}", CompileWarning,
                          stacklevel=4)
            return self._run_broken(args, kwargs)
        reason = f"branch at {where}: {kind}() was {expected!r}, now {seen!r}"
        if kind in ("item", "float") and type(seen) is float:
            # a float read out of the graph into Python (a list of losses) that took a
            # third value: that statement runs eagerly from now on (the next calls).
            # (Two values alternating, a flag, keep a trace each; an int is often a size
            # that repeats: a trace per value, as before.)
            seen_here = self._floats_read.setdefault(where, {expected})
            if len(seen_here) < 8:
                seen_here.add(seen)
            if len(seen_here) >= 3:
                self._cut_at(where, [f"{kind}() feeds Python at {where}"])
        log.guards.info("%s: %s; not traced yet, running eagerly", self.__name__, reason)
        if self._n_traces >= self.max_traces and self._warned_limit:
            self._count_failure(key)  # a branch that keeps going elsewhere: back off
        return self._trace(key, tensors, args, kwargs, variant, reason)

    # -- tracing ---------------------------------------------------------------------------
    def _trace(self, key, tensors, args, kwargs, variant, reason):
        self._last_key = key
        if self._n_traces >= self.max_traces:
            if self.fullgraph:
                raise GraphBreakError(f"{self.__name__}: max_traces={self.max_traces} reached "
                                      f"({reason or 'a new key'}); fullgraph=True allows no "
                                      "fallback to eager")
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(f"{self.__name__}: reached max_traces={self.max_traces}; new "
                              f"keys run the function eagerly with each nn.Module it calls "
                              f"compiled on its own. The guard that keeps changing: {reason}",
                              CompileWarning, stacklevel=3)
            if reason:
                self._fallback(f"max_traces={self.max_traces} reached ({reason}): the body "
                               "runs eagerly, each Module call is a compiled region")
            else:  # counted; its reason was recorded at this key's first fallback
                self._stats["fallbacks"] += 1
            if self._regions is None:
                self._regions = Regions(self._region)
            return self._regions.run(self.fn, args, kwargs)
        tracer = Tracer(self.fullgraph)
        tracer.root_code = getattr(self.fn, "__code__", None)
        for t in tensors:
            tracer.add_input(t)
        traced_args, restore = self._dyn.inject(tracer, args, kwargs)
        observer = Observer(self.fn, traced_args, kwargs)
        tracer.observer = observer
        grad_mode = STATE.grad_enabled
        STATE.tracer = tracer
        try:
            with observer:
                raw = self.fn(*traced_args, **kwargs)
            if STATE.grad_enabled != grad_mode:  # set_grad_enabled(...) left as it was set
                observer.effects.append(SetGradMode(STATE.grad_enabled))
        except GraphBreak as e:
            raise GraphBreakError(f"{self.__name__}: graph break: {e}") from None
        finally:
            STATE.tracer = None
            restore()
            unsym_state(observer.effects)  # (also when the call raised)
        result = deep_plain(raw) if tracer.has_syms else raw
        try:
            return self._keep(key, tracer, observer, tensors, raw, result, variant, reason)
        finally:  # (the compiled backward is derived from them first)
            tracer.unsym_nodes()

    def _keep(self, key, tracer, observer, tensors, raw, result, variant, reason):
        """Compile the trace just recorded, or say why this key or the function runs
        eagerly; returns the traced call's result."""
        self._stats["traces"] += 1
        self._stats["fallbacks"] += 1  # this call ran eagerly
        self._n_traces += 1
        if observer.unsure:
            if observer.this_call_only:  # (a buffer registered lazily): trace the next call
                self._fallback(f"this call could not be traced: {observer.unsure[0]}")
                return result
            self._run_eagerly(observer.unsure, observer.unsure_line)
            return result
        if tracer.half and not (tracer.breaks or tracer.unsupported):
            # float16/bfloat16 (autocast, .half()): eager computes them in float32 and rounds;
            # compiled code does not yet, so this key (only this one) runs as eager does
            self._cache[key] = _EAGER
            self._fallback("float16/bfloat16 tensors: this key runs eagerly", count=False)
            return result
        if tracer.unsupported and key[3] and not tracer.breaks:
            # arguments sharing memory, written in place: this key runs as eager does
            self._cache[key] = _EAGER
            self._fallback("arguments share memory and the function writes through one of "
                           "them: " + "; ".join(tracer.unsupported), count=False)
            return result
        if tracer.breaks or tracer.unsupported:
            self._graph_break(tracer.breaks + tracer.unsupported, tracer.break_line)
            return result
        t0 = time.perf_counter()
        try:
            path, pre = self._build(tracer, tensors, raw, observer)
        except GraphBreak as e:
            if self.fullgraph:
                raise GraphBreakError(f"{self.__name__}: graph break: {e}") from None
            self._graph_break(str(e).split("; "))
            return result
        except Exception as e:  # never an exception to the user: this key stays eager
            if self.fullgraph:
                raise
            warnings.warn(f"{self.__name__}: compiling the trace failed ({type(e).__name__}: "
                          f"{e}); this key runs eagerly", CompileWarning, stacklevel=3)
            self._cache[key] = _EAGER
            self._fallback(f"compile error: {type(e).__name__}: {e}", count=False)
            return result
        finally:
            self._stats["compile_seconds"] += time.perf_counter() - t0
        if variant is None or not pre.same_as(variant.pre):
            variant = Variant(pre)
            entry = self._cache.setdefault(key, [])
            for earlier in entry:  # their preconditions failed: often for good (state an
                for q in earlier.paths:  # optimizer makes at its first step), see _upgrade
                    q.superseded = True
            entry.append(variant)
        variant.add(path)
        self._records.append((key, variant, path, reason))
        log.graph.info("%s: trace %d (%s)\n%s", self.__name__, self._n_traces, reason,
                       path.graph)
        return result

    def _graph_break(self, reasons: list, line: int | None = None) -> bool:
        """The function cannot be traced whole (each reason names its line).  From now
        on it runs split at ``line`` (the line of its own body where the first break
        happened; :mod:`compiler.split`): compiled pieces before and after that
        statement, the statement eager.  A function that cannot be split there runs its
        body eagerly with Module calls compiled (:meth:`_run_broken`)."""
        self._breaks = list(reasons)
        if self._split_at(line, reasons):
            return True
        self._always_eager = ("runs eagerly on every call, each nn.Module it calls compiled "
                              "on its own (graph break: " + "; ".join(reasons) + ")")
        self._fallback(self._always_eager, count=False)  # (this call was counted)
        return False

    def _run_broken(self, args, kwargs):
        """A call of a function that cannot be traced whole (a graph break): its body runs
        eagerly, and each ``nn.Module`` it calls is a compiled region of its own (traced,
        guarded and replayed like any compiled function; its outputs hang in eager's
        autograd graph), so the model still runs compiled around the line that broke."""
        if self._regions is None:
            self._regions = Regions(self._region)
        return self._regions.run(self.fn, args, kwargs)

    def _warn_split(self, stacklevel: int = 5) -> None:
        """Warn that this function (or the one it is a piece of) now runs split."""
        whole = self._piece_of.owner if self._piece_of is not None else self
        split = whole._split
        warnings.warn(f"{whole.__name__}: graph break ({split.reasons[-1]}): runs in "
                      f"pieces, " + "; ".join(split.describe()), CompileWarning,
                      stacklevel=stacklevel)

    def _cut_at(self, where: str, reasons: list) -> bool:
        """:meth:`_split_at` the line ``where`` names (``file:line in name``) when that is a
        line of this function's body."""
        return self._split_at(line_in(self.fn, where), reasons)

    def _split_at(self, line: int | None, reasons: list) -> bool:
        """Split this function at ``line`` of its body (:mod:`compiler.split`), or cut
        the function this is a piece of there once more.  True when it did; a split
        that raises is logged, never an error to the user."""
        if line is None or self.fullgraph:
            return False
        whole = self._piece_of.owner if self._piece_of is not None else self
        try:
            if self._piece_of is not None:
                done = self._piece_of.cut(line, reasons)
            else:
                split = Split.make(self, line, list(reasons))
                if split is not None:
                    self._split, self._breaks = split, list(reasons)
                done = split is not None
        except Exception as e:  # noqa: BLE001 - the call goes on uncut
            log.fallbacks.info("%s: splitting at line %s failed: %s: %s", self.__name__,
                               line, type(e).__name__, e)
            return False
        if done:
            log.fallbacks.info("%s: graph break at line %d (%s): %s", whole.__name__, line,
                               "; ".join(reasons), "; ".join(whole._split.describe()))
        return done

    def _regions_run(self, fn, args, kwargs):
        """``fn(*args, **kwargs)`` eagerly, each Module it calls a compiled region."""
        if self._regions is None:
            self._regions = Regions(self._region)
        return self._regions.run(fn, args, kwargs)

    def _piece(self, fn, instance: bool) -> "CompiledFunction":
        """A compiled function for one piece of this function split at a graph break
        (:class:`~compiler.split.Split` sets its ``_piece_of``)."""
        cf = CompiledFunction(fn, **self._options)
        cf._instance = instance
        return cf

    def _region(self, fn) -> "CompiledFunction":
        """A compiled function for one Module call of a body running eagerly."""
        return CompiledFunction(fn, fullgraph=False, max_traces=self.max_traces,
                                backend=self.backend, check=self.check)

    def _run_eagerly(self, reasons: list, line: int | None = None) -> None:
        """Code the observer cannot follow safely (``reasons``): a graph break, warned."""
        if self._graph_break(reasons, line):
            self._warn_split(stacklevel=5)
            return
        warnings.warn(f"{self.__name__}: {self._always_eager}", CompileWarning, stacklevel=4)

    def _build(self, tracer: Tracer, tensors, result, observer):
        """A recorded call as a :class:`Path` (its forward program, backward programs,
        write-backs and effects) and its :class:`Preconditions`."""
        outs: list[Tensor] = []
        spec = _spec(result, tensors, outs, tracer)
        out_vals = [tracer.value_of(t) for t in outs]
        if tracer.unsupported:
            raise GraphBreak("; ".join(tracer.unsupported))
        slots, same = _graph_inputs(tensors)
        diff_sources, diff_tensors = _differentiable(tracer, tensors, slots)
        bw_specs = [_output_backward(tracer, t, diff_tensors) for t in outs]
        if tracer.unsupported:
            raise GraphBreak("; ".join(tracer.unsupported))

        def ref(t):  # an argument of this call, or an object the trace holds on to
            if isinstance(t, GradOf):
                return GradTensor(ref(t.leaf))
            for i, a in enumerate(tensors):
                if a is t:
                    return ArgTensor(i)
            return HeldTensor(t)

        fwd_outputs, wb, wb_specs, gw = _state_outputs(tracer, out_vals, diff_tensors, ref)
        for gs in graph_scalars(observer.effects):  # numbers the effects store
            gs.k = len(fwd_outputs)
            fwd_outputs.append(gs.graph_value(tracer))
        saved_index = _saved_values(bw_specs + wb_specs, fwd_outputs)

        graph = tracer.graph(fwd_outputs)
        check_graph(graph)
        graph = optimize(graph)
        inputs_of = {id(t): v for t, v in tracer.lifted}
        for i in slots:
            inputs_of[id(tensors[i])] = tracer.inputs[i]
        inplace = {fwd_outputs[k].id: inputs_of[id(r.resolve(tensors))]
                   for r, k in wb if id(r.resolve(tensors)) in inputs_of}
        # tier 1 at once (generated Python); the numba tier is built in the background
        first_tier = "python" if self.backend == "numba" else self.backend
        program = compile_graph(graph, first_tier, inplace)
        fwd_for_bw = Graph(tracer.graph([]).inputs, tracer.nodes, [])
        backwards, wb_backwards = (
            [self._backward_program(b, saved_index, first_tier, fwd_for_bw) for b in specs]
            for specs in (bw_specs, wb_specs))
        guard_nodes = [n for n in tracer.nodes if n.op is Guard]
        pre = Preconditions([(t, tracer.entry_rg[id(t)]) for t, _ in tracer.lifted],
                            [ref(lf) for lf, _ in tracer.grad_inputs],
                            [ref(lf) for lf in tracer.grad_none], tracer.py_guards, same,
                            GuardSet(observer.guards, STRUCTURE_EPOCH),
                            memory_pattern(list(tensors) + [t for t, _ in tracer.lifted])
                            if tracer.writebacks and tracer.lifted else None)
        path = Path(graph=graph, program=program,
                    outcomes=tuple(n.params["expected"] for n in guard_nodes),
                    input_slots=slots, lifted=[t for t, _ in tracer.lifted],
                    grad_inputs=[ref(lf) for lf, _ in tracer.grad_inputs], out_spec=spec,
                    n_outputs=len(outs), writebacks=wb, wb_backwards=wb_backwards,
                    grad_writes=gw,
                    saved_slots=sorted(saved_index.values()), backwards=backwards,
                    diff_sources=diff_sources, has_random=tracer.has_random,
                    effects=list(observer.effects),
                    view_outputs=[t._base is not None and t._base.requires_grad for t in outs],
                    scalar_inputs=[(src, v.dtype) for src, v, _ in tracer.sym_inputs],
                    guards=[(n.params["where"], n.params["kind"], n.params["expected"])
                            for n in guard_nodes])
        if self.backend == "numba":
            # built at the first replay (or compiler.wait()): a trace recorded once and
            # never met again, or taken over by a later variant of its key, costs no build
            if self._first_use is None:  # (max-autotune: no wait before loading kernels)
                self._first_use = time.perf_counter() - (
                    tiers.FIRST_LOAD_AFTER if self.mode in _AUTOTUNE else 0.0)
            path.build_later = functools.partial(self._upgrade, path, graph, inplace)
            self._unbuilt.append(path)
        return path, pre

    def _backward_program(self, spec_b, saved_index: dict, first_tier: str, fwd_for_bw):
        """The :class:`BackwardProgram` of one output's recorded backward (compiled at the
        first backward through it, often never), or the marker ``spec_b`` is."""
        if spec_b is None or spec_b is FREED or isinstance(spec_b, BackwardFails):
            return spec_b
        bgraph, targets = spec_b
        check_graph(bgraph)
        saved_slots = [saved_index[v.id] for v in bgraph.inputs[1:]]

        def make():
            try:
                return compile_graph(optimize(bgraph), first_tier)
            except Exception as exc:  # noqa: BLE001 - the user's backward still runs
                warnings.warn(f"{self.__name__}: compiling a backward failed "
                              f"({type(exc).__name__}: {exc}); it runs through eager's "
                              "ops", CompileWarning, stacklevel=2)
                self._fallback_reasons.append(
                    f"backward not compiled: {type(exc).__name__}: {exc}")
                return None
        return BackwardProgram(bgraph, make, saved_slots, targets, fwd_for_bw)

    def _upgrade(self, path: Path, graph: Graph, inplace: dict, native="first") -> None:
        """Build the fused Numba programs of a path in the background and swap them in;
        or, when an earlier process built or loaded them (:func:`tiers.warm`: they are in
        the disk cache), load them now, before the replay that asked for them.  The first
        build leaves a long whole-trace native function for a second one, made once the
        fused kernels run (``native``: :func:`compiler.codegen.compile_graph`'s)."""
        name = self.__name__
        stats = self._stats
        bws = [b for b in path.backwards + path.wb_backwards
               if isinstance(b, BackwardProgram)]
        bw_graphs = [b.graph for b in bws]
        cpu = graph_device(graph) == "cpu"

        def swap_in(t0, bw_optimized, how, native):
            fwd = compile_graph(graph, "numba", inplace, native)
            built = [(b, compile_graph(g, "numba", None, native))
                     for b, g in zip(bws, bw_optimized)]
            path.program = fwd
            for b, p in built:
                b.program = p
            if path.python_replays is None:
                path.python_replays = path.hits
            stats["compile_seconds"] += time.perf_counter() - t0
            log.kernels.info("%s: fused kernels %s (%d)", name, how, len(fwd.kernels))
            programs = [fwd] + [p for _, p in built]
            if any(p.native_later for p in programs):  # the second build
                self._upgrade(path, graph, inplace, native=True)
            return programs

        def on_error(exc):
            tiers.warn(f"{name}: building fused kernels failed ({type(exc).__name__}: {exc}); "
                       "this trace keeps running as generated Python", CompileWarning)
            self._fallback_reasons.append(f"kernels not built: {type(exc).__name__}: {exc}")

        found = tiers.warm(graph, inplace, bw_graphs) if cpu else None
        if found is not None and (found is True or native == "first"):
            try:  # nothing to compile: no worker, no FIRST_LOAD_AFTER
                swap_in(time.perf_counter(), [optimize(g) for g in bw_graphs],
                        "loaded from the disk cache", found)
            except Exception as exc:  # noqa: BLE001 - as a background build's error
                on_error(exc)
            return

        first_use = self._first_use
        graphs = []

        def request():  # what the worker builds
            return build_in_worker, ([(graph, inplace)] + [(optimize(g), None)
                                                          for g in bw_graphs],
                                     (graph, inplace, bw_graphs), native)
        # a program that ends before sending it hands it to the worker to build after the
        # program (the next run loads it from the disk cache: compile_worker's doc)
        token = compile_worker.unsent(request) if cpu else None

        def prepare():  # compiled in another process; loaded below when worth it
            tiers.hold(first_use)
            fn, args = request()
            graphs.extend(args[0])
            if cpu:
                compile_worker.call(fn, *args)
                compile_worker.sent(token)   # (a build cut short by the exit is handed over)

        def ready():
            return tiers.worth_loading(first_use, path.hits, not compile_worker.loaded)

        def job():
            programs = swap_in(time.perf_counter(), [g for g, _ in graphs[1:]], "ready",
                               native)
            if cpu:  # in the disk cache now: a new process loads them at its first replay
                tiers.mark_warm(graph, inplace, bw_graphs, programs, native)

        tiers.submit(job, on_error, prepare, ready)

    # -- threads -----------------------------------------------------------------------
    def _locked(self, epoch, args, kwargs, slow, *slow_args):
        """``slow(*slow_args)`` (a miss, a divergence, a recompile: a trace, a change of
        the cache) holding the lock, so that threads meeting the same new key trace it
        once.  If another thread changed the cache since this call read ``epoch`` (before
        its lookup), the call looks again instead (and usually replays what that thread
        recorded).  Past ``max_traces`` the body runs eagerly (regions) without the lock:
        there is no trace to wait for."""
        if self._regions is not None and self._n_traces >= self.max_traces:
            return slow(*slow_args)
        with self._lock:
            if self._epoch != epoch:
                self._stats["calls"] -= 1
                return self(*args, **kwargs)
            try:
                return slow(*slow_args)
            finally:
                self._epoch += 1

    def _to_front(self, key, entry, variant) -> None:
        """Put ``variant`` first in its key's list, as a new list (other threads may be
        iterating this one); skipped while another thread holds the lock (tracing)."""
        if self._lock.acquire(blocking=False):
            try:
                if self._cache.get(key) is entry:
                    self._cache[key] = [variant] + [v for v in entry if v is not variant]
            finally:
                self._lock.release()


def _graph_inputs(tensors) -> tuple:
    """(slots, same): the indices of the call's distinct tensors (the graph's argument
    inputs, lifted tensors and .grad reads follow them), and (first, later) index pairs of
    a tensor passed twice."""
    slots, same = [], []
    first = {}
    for i, t in enumerate(tensors):
        j = first.setdefault(id(t), i)
        if j == i:
            slots.append(i)
        else:
            same.append((j, i))
    return slots, same


def _differentiable(tracer: Tracer, tensors, slots) -> tuple:
    """(references, tensors) of the arguments and lifted tensors that required grad on
    entry: the tensors the compiled backward programs give gradients to."""
    sources, diff = [], []
    rg = tracer.entry_rg
    for i in slots:
        if rg[id(tensors[i])]:
            sources.append(ArgTensor(i))
            diff.append(tensors[i])
    for t, _ in tracer.lifted:
        if rg[id(t)]:
            sources.append(HeldTensor(t))
            diff.append(t)
    return sources, diff


def _state_outputs(tracer: Tracer, out_vals: list, diff_tensors: list, ref) -> tuple:
    """(forward outputs, write-backs, their backward specs, .grad writes): the values a
    replay writes into tensors it did not make follow the function's outputs; each
    write-back and .grad write is (reference, output index or None)."""
    rg = tracer.entry_rg
    writebacks = list(tracer.writebacks.values())
    fwd_outputs = list(out_vals)
    wb, wb_specs = [], []  # a tensor written in place that now hangs in the graph (x.add_(w))
    for t, _ in writebacks:
        if isinstance(t, GradOf):
            wb_specs.append(None)
        else:
            if t.requires_grad and t.grad_fn is not None and rg.get(id(t)):
                raise GraphBreak("an in-place write to an input that requires grad")
            wb_specs.append(_output_backward(tracer, t, diff_tensors))
    for t, v in writebacks:
        wb.append((ref(t), len(fwd_outputs)))
        fwd_outputs.append(v)
    gw = []
    for leaf, v in tracer.grad_writes():
        if v is None:
            gw.append((ref(leaf), None))
        else:
            gw.append((ref(leaf), len(fwd_outputs)))
            fwd_outputs.append(v)
    return fwd_outputs, wb, wb_specs, gw


def _saved_values(specs: list, fwd_outputs: list) -> dict:
    """Value id -> forward output index of every forward value a recorded backward reads
    (appended to ``fwd_outputs``: a replay keeps them for the backward)."""
    saved_index = {}
    for spec_b in specs:
        if spec_b is None or spec_b is FREED or isinstance(spec_b, BackwardFails):
            continue
        for v in spec_b[0].inputs[1:]:
            if v.id not in saved_index:
                saved_index[v.id] = len(fwd_outputs)
                fwd_outputs.append(v)
    return saved_index


def _output_backward(tracer: Tracer, t: Tensor, diff_tensors: list):
    """What a replayed output needs for autograd: None (no graph), FREED (a backward inside
    the function freed its graph, so a second backward must raise, as in eager), a
    :class:`BackwardFails` (eager's backward raises: the user's code wrote a saved value in
    place), or the recorded backward graph."""
    if not (t.requires_grad and t.grad_fn is not None):
        return None
    if not diff_tensors:
        return FREED if tracer.has_backward else None
    try:
        return _trace_backward(tracer, t, diff_tensors)
    except RuntimeError as e:
        if tracer.has_backward and "second time" in str(e):
            return FREED
        if "modified by an inplace operation" in str(e) or "second time" in str(e):
            return BackwardFails(str(e))  # the user's error, raised where eager raises it
        raise


def _trace_backward(tracer: Tracer, out: Tensor, diff_tensors: list):
    """Record the eager backward of ``out`` w.r.t. ``diff_tensors`` as a backward graph.

    Returns (graph, targets): graph inputs are [grad of out] + forward values it reads;
    outputs are the gradients of the diff tensors that receive one (indices in targets).
    """
    start = len(tracer.nodes)
    n_lifted = len(tracer.lifted)
    g = ones_like(out)   # on out's device (np.ones_like of a CUDA array made a 0-d object array)
    gv = tracer.new_value(g._data)
    tracer.bind(g._data, gv)
    tracer.phase = "backward"
    STATE.tracer = tracer
    try:
        grads = autograd.grad([out], diff_tensors, grad_outputs=[g], retain_graph=True,
                              allow_unused=True, _partial=True)
    finally:  # what this recorded is the backward graph, never part of the forward
        STATE.tracer = None
        tracer.phase = "forward"
        nodes = tracer.nodes[start:]
        del tracer.nodes[start:]
    if len(tracer.lifted) != n_lifted:
        tracer.on_unsupported("the backward read tensors the forward did not")
    defined = {gv.id}
    saved = []
    seen = set()
    for n in nodes:
        for v in n.values():
            if v.id not in defined and v.id not in seen:
                seen.add(v.id)
                saved.append(v)
        if n.out is not None:
            defined.add(n.out.id)
    outputs, targets = [], []
    for k, gr in enumerate(grads):
        if gr is None:
            continue
        v = tracer.value_of(gr)
        if v.id not in defined and v.id not in seen:
            seen.add(v.id)
            saved.append(v)
        outputs.append(v)
        targets.append(k)
    return Graph([gv] + saved, nodes, outputs), targets


def _spec(obj, tensors, outs, tracer):
    """Structure of the result with tensors replaced by output slots."""
    if is_sym(obj):  # a dynamic Python number: computed by the graph
        outs.append(obj._t)
        return ("scalar", len(outs) - 1, float if isinstance(obj, float) else int)
    if isinstance(obj, Tensor):
        for i, t in enumerate(tensors):
            if t is obj:  # eager returns the argument itself (written back in place)
                return ("arg", i)
        if id(obj._data) not in tracer.vals or any(t is obj for t, _ in tracer.lifted):
            return ("const", obj)  # a closure/global tensor: return that very object
        for i, t in enumerate(outs):
            if t is obj:
                return ("out", i)
        outs.append(obj)
        return ("out", len(outs) - 1)
    t = type(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple (not t is tuple)
        return ("namedtuple", t, [_spec(o, tensors, outs, tracer) for o in obj])
    if t is tuple:
        return ("tuple", [_spec(o, tensors, outs, tracer) for o in obj])
    if t is list:
        return ("list", [_spec(o, tensors, outs, tracer) for o in obj])
    if t is dict:
        return ("dict", [(k, _spec(v, tensors, outs, tracer)) for k, v in obj.items()])
    return ("const", obj)


#: backend names compile() accepts: torch.compile's mapped onto ours, and ours
BACKENDS = {
    "inductor": "numba",   # torch's default: fused native kernels (ours: Numba)
    "aot_eager": "eager",  # traced forward and backward graphs run through eager's ops
    "eager": "eager",      # (torch: the captured graph run by eager PyTorch; ours the same)
    "numba": "numba",      # ours: generated Python at once, fused Numba kernels when built
    "python": "python",    # ours: generated Python only (no Numba)
}
#: torch.compile's modes.  None/"default"/"reduce-overhead": the tiered default (a replay
#: is already one call per fused group or one native call; there are no CUDA graphs to
#: capture); "max-autotune"/"max-autotune-no-cudagraphs": fused kernels are built and
#: loaded as soon as a trace is replayed, without the 1 s wait (tiers.FIRST_LOAD_AFTER)
#: that spares short programs Numba's one-time load.
MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_AUTOTUNE = ("max-autotune", "max-autotune-no-cudagraphs")
_OPTIONS = ("max_traces", "check")  # keys of options= that mean something here


def compile(fn=None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend="numba", mode: str | None = None, options: dict | None = None,
            disable: bool = False, max_traces: int = 8, check: bool | None = None):
    """Compile a function or a Module: ``@compile``, ``@compile(...)``, ``compile(fn)``;
    ``torch.compile``'s signature.

    The first call of each new key runs eagerly while recording a trace; later calls with
    the same guards replay it: as generated Python at once, then as fused Numba kernels
    (``backend="python"``: the generated Python only).  Results are eager's bits (README,
    "Exactness") on the generated Python and in kernels of arithmetic, casts, ``sqrt``,
    ``pow``, ``erf`` and BLAS products; a kernel's ``exp``/``expm1``/``log``/``log1p``/
    ``tanh``/``sigmoid``/``softplus``/``sin``/``cos`` (``runtime.cpu.mathlib``) is within
    3 ulp of NumPy's, and a sum in a kernel accumulates in float64 (NumPy: pairwise in
    float32); ``compiler.check.inexact_ops(f.explain().kernels)`` names them.

    A line the trace cannot compile (a graph break: ``.numpy()``, ``repr(t)``, code the
    observer cannot follow) splits the function there (:mod:`compiler.split`): the
    top-level statements before and after it run as compiled pieces, the statement
    holding it eagerly with each ``nn.Module`` call compiled.

    - ``fullgraph=True``: raise :class:`GraphBreakError` where the function would fall
      back to eager (a graph break, code the observer cannot follow, ``max_traces``
      reached, a replay that raised, a key that must run eagerly).
    - ``dynamic``: ``None`` (default) makes a number argument or a number read from
      state dynamic (a trace input) once it changes between calls; ``True`` makes number
      arguments dynamic from the first trace; ``False`` never (every value is a guard).
      Tensor sizes are always static: a new shape records a new trace.
    - ``backend``: ``"inductor"`` (-> ``"numba"``), ``"aot_eager"``/``"eager"`` (->
      ``"eager"``), or ours: ``"numba"`` (default), ``"python"``, ``"eager"``.
    - ``mode``: see :data:`MODES`; ``"max-autotune"`` loads fused kernels without delay.
    - ``options``: a dict; ``max_traces`` and ``check`` are read from it, other keys
      (inductor's settings) are accepted and ignored.  Not together with ``mode``.
    - ``disable=True``: return ``fn`` itself (no compilation).
    - ``max_traces`` (ours): traces per function before its body runs eagerly with each
      Module call compiled on its own; ``check=True`` (default: ``$DYNGRAPH_CHECK``) also
      runs eager beside every replay and raises :class:`CheckError` at the first difference
      beyond that contract: any bit where the program's kernels promise eager's bits, else
      more than a few ulp plus a relative 1e-5 of the array's largest value.
    """
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be specified, not both")
    if options is not None:
        if not isinstance(options, dict):
            raise TypeError(f"compile: options must be a dict, not {type(options).__name__}")
        max_traces = options.get("max_traces", max_traces)
        check = options.get("check", check)
    if callable(backend) and not isinstance(backend, str):
        raise NotImplementedError("compile: a custom backend callable is not supported; "
                                  f"use one of {', '.join(map(repr, BACKENDS))}")
    kw = dict(fullgraph=fullgraph, max_traces=max_traces, backend=backend, check=check,
              dynamic=dynamic, mode=mode)
    if fn is None:
        return lambda f: f if disable else compile(f, **kw)
    if disable:
        return fn
    if _is_module(fn):
        return CompiledModule(fn, **kw)
    return CompiledFunction(fn, **kw)


def disable(fn=None, recursive: bool = True):
    """``torch.compiler.disable``: ``fn`` is never compiled.  Called from a compiled
    function while it records a trace, it makes that function run eagerly (as a graph
    break does, and ``fullgraph=True`` raises); a replay never calls it (so it must not
    be reached on a recorded path).  ``recursive`` is accepted (functions it calls are
    not compiled either)."""
    if fn is None:
        return lambda f: disable(f, recursive)

    @functools.wraps(fn)
    def run_eagerly(*args, **kwargs):
        tracer = STATE.tracer
        if tracer is not None:
            name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
            tracer.on_unsupported(f"a call of {name}, which compiler.disable() excludes")
        return fn(*args, **kwargs)

    run_eagerly._dyngraph_disabled = True
    return run_eagerly


def is_compiling() -> bool:
    """``torch.compiler.is_compiling``: True while a compiled function records a trace
    (what the function does then is what its replays do), False when it runs eagerly."""
    return STATE.tracer is not None


def _is_module(obj) -> bool:
    return isinstance(obj, Module)


class BoundCompiled:
    """A compiled method bound to an instance: ``obj.method(...)`` calls the instance's
    compiled function with ``obj`` first; ``stats()``, ``explain()`` and ``reset()`` are
    that cache's."""

    __slots__ = ("_compiled", "__self__")

    def __init__(self, compiled: CompiledFunction, obj):
        self._compiled = compiled
        self.__self__ = obj

    def __call__(self, *args, **kwargs):
        return self._compiled(self.__self__, *args, **kwargs)

    @property
    def __func__(self):
        return self._compiled.fn

    @property
    def __name__(self):
        return self._compiled.__name__

    def __getattr__(self, name):
        return getattr(self._compiled, name)

    def __repr__(self) -> str:
        return f"<compiled bound method {self._compiled.__name__} of {self.__self__!r}>"


class CompiledModule:
    """A compiled module: a call runs ``module.__call__``'s semantics compiled — forward
    pre-hooks, ``forward`` and forward hooks of the module itself (as ``torch.compile(m)``
    does, since it calls ``m(x)``); hooks registered or removed later take effect (the
    hook dicts are Module structure, guarded by ``STRUCTURE_EPOCH``).  Attributes and
    parameters are the module's."""

    def __init__(self, module, **kw):
        object.__setattr__(self, "_module", module)
        cf = CompiledFunction(ModuleCall(module), **kw)
        try:
            cf._argnames = list(inspect.signature(module.forward).parameters)
        except (TypeError, ValueError):
            pass
        object.__setattr__(self, "_compiled", cf)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        if name in ("stats", "explain", "reset"):
            return getattr(self._compiled, name)
        return getattr(self._module, name)

    def __setattr__(self, name, value):
        setattr(self._module, name, value)

    def __repr__(self) -> str:
        return f"compile({self._module!r})"


def explain(fn, *args, verbose: bool = False, **kwargs) -> Explanation:
    """Compile ``fn`` (if needed), call it on the arguments twice, and explain (the
    summary; ``verbose=True``: the full dump)."""
    cf = fn if isinstance(fn, (CompiledFunction, CompiledModule)) else compile(fn)
    cf(*args, **kwargs)
    cf(*args, **kwargs)
    return cf.explain(verbose=verbose)


def wait(timeout: float | None = None) -> bool:
    """Start the fused-kernel builds of every trace that may run again and block until
    every build running in the background is done."""
    return _wait_all(timeout)


def _wait_all(timeout: float | None = None) -> bool:
    for ref in list(_ALL):
        cf = ref()
        if cf is not None:
            with cf._lock:  # (a replay in another thread may submit one meanwhile)
                cf._submit_builds()
    return tiers.wait(timeout)


def reset() -> None:
    """Forget the traces of every compiled function."""
    for ref in list(_ALL):
        cf = ref()
        if cf is None:
            _ALL.remove(ref)
        else:
            cf.reset()
