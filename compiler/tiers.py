"""Tiered compilation: a new trace runs at once as generated Python (``backend="python"``
code, no Numba), while its fused Numba program is built on one background thread and
swapped in when ready.  A trace's build is submitted at its first replay or at
``compiler.wait()`` (``compiler.api``): a trace never met again costs no build.

Why: Numba's one-time start-up in a process (its import and target registries, ~0.5 s
here) and each new kernel compile (0.2-0.6 s; 1-3 s for a whole-trace function) would
otherwise stall the call that recorded the trace.  The compiles themselves run in a
separate process (:mod:`runtime.cpu.compile_worker`): this thread waits for it without
the interpreter lock, then loads the kernels from Numba's disk cache, so the program
keeps its speed meanwhile; it starts a build only once the function has run
:data:`FIRST_LOAD_AFTER` seconds (:func:`hold`).  The thread is a daemon: a program
that ends before its kernels are built does not wait for them; the worker builds them
after it (``compile_worker``'s doc, "At exit"), for the next run.  Both tiers compute the
same values (kernels use only exact arithmetic and runtime.cpu.mathlib's <= 2 ULP
functions).  :func:`wait` blocks until every pending build is done (benchmarks and tests
call it before measuring kernels).

A trace with a long whole-trace native function gets two builds: its fused kernels
first, the function (tens of seconds from a cold cache) once they run
(:mod:`compiler.codegen.native_cpu`, ``FIRST_LINES``); :func:`wait` waits for both.

A trace whose kernels an earlier process built or loaded (:func:`warm`: a note in the
cache directory, keyed by the trace's graphs, naming the cache files, which all still
exist) skips all of that: its kernels are loaded on the program's thread at its first
replay, before that replay runs, with no :data:`FIRST_LOAD_AFTER` hold and no compile
worker.  Loading from the cache costs far less than the first load of a process did:
:mod:`runtime.cache` loads machine code without Numba's typing and lowering registries
(about half of that first load), and a graph refused whole-trace native code before is
not lowered and written out again only to be refused (the note of
:mod:`compiler.codegen.numba_cpu`).
"""

from __future__ import annotations

import queue
import threading
import time
import warnings
from concurrent.futures import Future

from runtime.cache import files_present, module_files, note_key, read_note, write_note

from .source_tag import SOURCE_TAG

_lock = threading.Lock()
_pending: set = set()
_jobs: queue.SimpleQueue = queue.SimpleQueue()
_thread: threading.Thread | None = None
_hurry = threading.Event()

#: seconds a trace runs as generated Python before its kernels are loaded, when that is
#: the first Numba load of the process: it takes ~1 s of interpreter time (Numba's import
#: and target set-up) from the program.  A program shorter than this never pays it; a
#: longer one pays it after running this long (the ski-rental rule: at most twice the
#: cost of the best choice made in hindsight).  :func:`wait` skips the delay.
FIRST_LOAD_AFTER = 1.0


def submit(job, on_error, prepare=None, ready=None) -> Future:
    """Run ``prepare()`` (the part that needs no interpreter time: compiling in the worker
    process) on the compile thread, then ``job()`` once ``ready()`` (or at once without
    it, or after :func:`wait`); ``on_error(exc)`` if either raises.  Preparations run in
    order; a job that is not ready yet waits without holding up later preparations."""
    global _thread
    fut: Future = Future()
    with _lock:
        _pending.add(fut)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_loop, name="dyngraph-compile", daemon=True)
            _thread.start()
    _jobs.put((fut, job, on_error, prepare, ready))
    return fut


def _finish(fut, fn, on_error) -> None:
    try:
        if fn is not None:
            fn()
    except Exception as exc:  # the trace keeps running as generated Python
        on_error(exc)
    finally:
        with _lock:
            _pending.discard(fut)
        fut.set_result(None)


def _loop():
    deferred = []
    while True:
        try:
            item = _jobs.get(timeout=0.05) if deferred else _jobs.get()
        except queue.Empty:
            item = None
        if item is not None:
            fut, job, on_error, prepare, ready = item
            try:
                if prepare is not None:
                    prepare()
            except Exception as exc:
                _finish(fut, lambda e=exc: on_error(e), lambda e: None)
                continue
            deferred.append((fut, job, on_error, ready))
        for entry in list(deferred):
            fut, job, on_error, ready = entry
            if ready is None or _hurry.is_set() or ready():
                deferred.remove(entry)
                _finish(fut, job, on_error)


def hold(first_use: float) -> None:
    """Block the compile thread, without the interpreter lock, until the function has run
    :data:`FIRST_LOAD_AFTER` seconds since ``first_use`` (or :func:`wait` is called).
    Preparing a build is Python work on this thread (optimizing and pickling graphs): it
    would take the interpreter lock from the program whenever the program releases it
    (a multi-threaded BLAS call), a switch interval (5 ms) at a time.  A program shorter
    than this never pays for it, as it never pays for loading Numba."""
    remaining = first_use + FIRST_LOAD_AFTER - time.perf_counter()
    if remaining > 0:
        _hurry.wait(remaining)


def worth_loading(first_use: float, hits: int, first_load: bool) -> bool:
    """Whether a trace's kernels are worth loading into this process now: it has been
    replayed at least once (a trace recorded once and never met again is never loaded),
    and, for the first load of the process, the function has run for
    :data:`FIRST_LOAD_AFTER` seconds since ``first_use`` (``time.perf_counter()``)."""
    return hits > 0 and (not first_load or
                         time.perf_counter() - first_use >= FIRST_LOAD_AFTER)


#: notes (:func:`runtime.cache.read_note`) of traces whose kernels are all in the disk
#: cache: written when a process has built or loaded them, read by the next process
_WARM = "loaded"


def _warm_key(graph, inplace, bw_graphs) -> str | None:
    """The trace's part of its notes' keys (one pickle of its graphs); a build's note is
    ``key-<native>`` (:func:`_build_key`)."""
    return note_key((_WARM, SOURCE_TAG, graph, inplace, list(bw_graphs)))


def _build_key(key: str | None, native) -> str | None:
    return None if key is None else f"{key}-{native}"


def warm(graph, inplace, bw_graphs):
    """Which build of a trace's kernels (forward ``graph`` with its write-backs
    ``inplace``, and its backward graphs) an earlier process built or loaded, every file
    of it still there: ``True`` (the last build), ``"first"`` (the first one; a
    whole-trace function is still to build: ``compile_graph``'s ``native``), or None.
    Such a trace loads its kernels at its
    first replay, without :data:`FIRST_LOAD_AFTER` or the compile worker: there is
    nothing to compile, and loading them from the cache costs a fraction of Numba's
    first load of a process (no typing or lowering registries: :mod:`runtime.cache`).
    Checking costs a pickle of the graphs (~8 ms for the transformer step's 500 nodes)
    and a ``stat`` per file; it imports no Numba."""
    key = _warm_key(graph, inplace, bw_graphs)
    for native in (True, "first"):
        text = read_note(_WARM, _build_key(key, native))
        if text is not None and files_present([f for f in text.splitlines() if f]):
            return native
    return None


def mark_warm(graph, inplace, bw_graphs, programs, native=True) -> None:
    """Note that the kernels of ``programs`` (built from these graphs with ``native``) are
    in the disk cache, with the files they are loaded from (:func:`warm`)."""
    try:
        names = sorted({name.split(".", 1)[0] for p in programs for name, _ in p.kernels})
        files = module_files(names)
        if files is not None:
            write_note(_WARM, _build_key(_warm_key(graph, inplace, bw_graphs), native),
                       "\n".join(files))
    except Exception as exc:  # noqa: BLE001 - only the next process's start is slower
        warnings.warn(f"dyngraph: could not note the kernels in the disk cache: {exc}",
                      RuntimeWarning, stacklevel=2)


def wait(timeout: float | None = None) -> bool:
    """Block until all background builds are done (and those they started); False if
    ``timeout`` (seconds) ran out
    first, or if the builds were abandoned: the compile thread died (then they never
    finish; the traces keep running as generated Python).  A build waiting for a hung
    compile worker ends within the worker's deadline
    (:data:`runtime.cpu.compile_worker.TIMEOUT_S`).  From the first call on, builds load
    their kernels as soon as they are made."""
    import concurrent.futures as cf
    _hurry.set()
    with _lock:
        pending = list(_pending)
    if not pending:
        return True
    deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
    while True:
        left = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
        _, not_done = cf.wait(pending, timeout=max(0.0, left))
        if not not_done:
            with _lock:  # (a build may start another: a whole-trace function's)
                not_done = set(_pending)
            if not not_done:
                return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        thread = _thread
        if thread is None or not thread.is_alive():  # abandoned: nothing will finish them
            with _lock:
                _pending.difference_update(not_done)
            return False
        pending = list(not_done)


def pending() -> int:
    return len(_pending)


def warn(message: str, category) -> None:
    warnings.warn(message, category, stacklevel=2)
