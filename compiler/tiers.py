"""Tiered compilation: a new trace runs at once as generated Python (``backend="python"``
code, no Numba), while its fused Numba program is built on one background thread and
swapped in when ready.

Why: Numba's one-time start-up in a process (its import and target registries, ~0.5 s
here) and each new kernel compile (0.2-0.6 s) would otherwise stall the call that
recorded the trace.  Both tiers compute the same values (kernels use only exact
arithmetic and runtime.cpu.mathlib's <= 2 ULP functions).  :func:`wait` blocks until every
pending build is done (benchmarks and tests call it before measuring kernels).
"""

from __future__ import annotations

import threading
import warnings
from concurrent.futures import Future, ThreadPoolExecutor

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_pending: set = set()


def submit(job, on_error) -> Future:
    """Run ``job()`` on the compile thread; ``on_error(exc)`` if it raises."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dyngraph-compile")
        fut = _executor.submit(_run, job, on_error)
        _pending.add(fut)
    fut.add_done_callback(_pending.discard)
    return fut


def _run(job, on_error):
    try:
        job()
    except Exception as exc:  # the trace keeps running as generated Python
        on_error(exc)


def wait(timeout: float | None = None) -> bool:
    """Block until all background builds are done; False if ``timeout`` ran out first."""
    import concurrent.futures as cf
    with _lock:
        pending = list(_pending)
    if not pending:
        return True
    done, not_done = cf.wait(pending, timeout=timeout)
    return not not_done


def pending() -> int:
    return len(_pending)


def warn(message: str, category) -> None:
    warnings.warn(message, category, stacklevel=2)
