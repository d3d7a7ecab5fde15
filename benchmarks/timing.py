"""Timing: warm up, calibrate an inner loop, then sample peers round-robin and take medians.

Peers of one workload are sampled in turns (A, B, C, A, B, C, ...) so that a slow phase
of the machine (another process, thermal, frequency) hits them all alike and their
ratios stay meaningful even when absolute times drift.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from dataclasses import dataclass, field

_now = time.perf_counter


@dataclass
class Timing:
    median: float            # seconds per call
    samples: list = field(default_factory=list)   # seconds per call, one per sample
    inner: int = 1           # calls per sample

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median."""
        s = sorted(self.samples)
        if len(s) < 4 or self.median <= 0:
            return 0.0
        q1, q3 = s[len(s) // 4], s[(3 * len(s)) // 4]
        return (q3 - q1) / self.median


@dataclass
class Budget:
    warmup_calls: int = 3          # at least this many calls before timing
    warmup_seconds: float = 0.05   # and at least this long
    sample_seconds: float = 1e-3   # an inner loop lasts at least this long
    min_samples: int = 5
    max_samples: int = 25
    seconds_per_impl: float = 0.5  # stop adding samples past this (after min_samples)
    slow_call: float = 0.1         # calls slower than this need only min_samples_slow
    min_samples_slow: int = 3


# the harness calls each peer a few times to check its result before timing: warm already
QUICK = Budget(warmup_calls=1, warmup_seconds=0.02, sample_seconds=5e-4, min_samples=5,
               max_samples=11, seconds_per_impl=0.25, min_samples_slow=3)
FULL = Budget(warmup_calls=5, warmup_seconds=0.2, sample_seconds=2e-3, min_samples=9,
              max_samples=41, seconds_per_impl=2.0, min_samples_slow=5)


def _warm(fn, budget: Budget) -> float:
    """Call ``fn`` until warm; return the time of the last call."""
    t_end = _now() + budget.warmup_seconds
    n = 0
    last = 0.0
    while n < budget.warmup_calls or _now() < t_end:
        t0 = _now()
        fn()
        last = _now() - t0
        n += 1
        if last > budget.warmup_seconds and n >= budget.warmup_calls:
            break
    tiers = sys.modules.get("compiler.tiers")
    if tiers is not None and tiers.pending():  # fused kernels still being built: time those
        tiers.wait()
        for _ in range(2):
            t0 = _now()
            fn()
            last = _now() - t0
    return last


def _calibrate(fn, target: float) -> float:
    """Seconds per call, from loops of 1, 10, 100, ... calls until one lasts a fifth of
    ``target`` (a single call right after other work can be far slower than the loop)."""
    n = 1
    while True:
        per_call = _sample(fn, n)
        if per_call * n >= target / 5 or n >= 1_000_000:
            return per_call
        n *= 10


def _sample(fn, inner: int) -> float:
    if inner == 1:
        t0 = _now()
        fn()
        return _now() - t0
    r = range(inner)
    t0 = _now()
    for _ in r:
        fn()
    return (_now() - t0) / inner


def compare(fns: dict, budget: Budget, on_error=None) -> dict:
    """Time each zero-argument callable of ``fns`` (name -> fn), peers interleaved.

    Returns name -> :class:`Timing` or the exception that the callable raised (also
    passed to ``on_error(name, exc)`` when given); one failing peer does not stop others.
    """
    out: dict = {}
    inner: dict = {}
    per_call: dict = {}
    gc.collect()
    for name, fn in fns.items():
        try:
            t = _warm(fn, budget)
            if t < 0.05:  # the last warmup call may have been preempted: measure a loop
                t = _calibrate(fn, budget.sample_seconds)
        except Exception as e:  # noqa: BLE001 -- reported in the table
            out[name] = e
            if on_error:
                on_error(name, e)
            continue
        per_call[name] = max(t, 1e-8)
        inner[name] = max(1, int(budget.sample_seconds / per_call[name]))
    live = [n for n in fns if n not in out]
    samples = {n: [] for n in live}
    spent = {n: 0.0 for n in live}
    need = {n: budget.min_samples_slow if per_call[n] > budget.slow_call else
            budget.min_samples for n in live}
    for r in range(budget.max_samples):
        active = [n for n in live if n not in out and (
            r < need[n] or spent[n] < budget.seconds_per_impl)]
        if not active:
            break
        for n in active:
            try:
                s = _sample(fns[n], inner[n])
            except Exception as e:  # noqa: BLE001
                out[n] = e
                if on_error:
                    on_error(n, e)
                continue
            samples[n].append(s)
            spent[n] += s * inner[n]
    for n in live:
        if n not in out:
            out[n] = Timing(statistics.median(samples[n]), samples[n], inner[n])
    return out
