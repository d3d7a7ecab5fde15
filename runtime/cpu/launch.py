"""How a CPU program calls a kernel that has a serial and a ``prange`` variant."""

from __future__ import annotations

import time


class Adaptive:
    """Call a kernel's serial or prange variant, whichever has lately been faster.

    A prange launch wins on an idle machine (GELU 1M float32: 0.4 ms against 0.76 ms
    serial), but when other processes hold the cores its threads wait for time slices
    (medians of 8 ms measured for the same call).  Each call is timed (the first call of
    each variant, which starts threads or touches cold code, is not); the estimate of
    the variant used is an exponential average; the other variant is tried again after
    ``retry`` calls, and ``retry`` doubles (up to 1024) each time it is still slower, so
    exploring costs little either way.  Used for kernels of at least
    :data:`.loops.PARALLEL_MIN` elements only (a timed Python call costs ~0.5 us).
    """

    __slots__ = ("__weakref__", "countdown", "cur", "est", "fns", "retry", "runs")

    def __init__(self, serial, parallel):
        self.fns = (serial, parallel)
        self.est = [0.0, 0.0]   # seconds per call (exponential average)
        self.runs = [0, 0]      # calls of each; the first one (warm-up) is not timed
        self.cur = 1            # start parallel; the serial variant is tried next
        self.retry = 1
        self.countdown = 2

    def __call__(self, *args):
        cur = self.cur
        k = cur
        self.countdown -= 1
        if self.countdown <= 0:          # try the other variant once
            k = 1 - cur
        t0 = time.perf_counter()
        self.fns[k](*args)
        dt = time.perf_counter() - t0
        runs, est = self.runs, self.est
        runs[k] += 1
        if runs[k] == 2:
            est[k] = dt
        elif runs[k] > 2:
            est[k] += (dt - est[k]) * 0.25
        if k != cur:
            if runs[k] > 1 and runs[cur] > 1:
                if est[k] < est[cur]:    # the other one is faster now
                    self.cur = k
                    self.retry = 1
                else:
                    self.retry = min(self.retry * 2, 1024)
            self.countdown = self.retry + 1

    @property
    def variant(self) -> str:
        return ("serial", "parallel")[self.cur]
