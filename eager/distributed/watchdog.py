"""No rank waits forever: a timeout watchdog, and an abort on uncaught exceptions.

An MPI collective blocks until every rank of the group has called it.  When one rank
died or hangs, the others would wait forever (MPI has no timeouts), so:

* :class:`Watchdog` — each blocking wait notes what it waits for and since when
  (:meth:`Watchdog.begin`/:meth:`Watchdog.end`, two attribute writes); a daemon thread
  looks every fraction of the timeout and, past it, prints which collective timed out on
  which rank and aborts the whole job (``MPI_Abort``), as PyTorch's NCCL watchdog takes
  the process down.  The waiting thread cannot be interrupted inside MPI, and the other
  ranks' state is unknown, so aborting is the only safe ending.
* :func:`install_abort_on_uncaught` — an uncaught exception on any rank prints its
  traceback, then aborts every rank at once instead of leaving them to the timeout
  (without it, MPICH's ``mpiexec`` keeps waiting for the ranks still inside a
  collective).
"""

from __future__ import annotations

import datetime
import sys
import threading
import time

#: seconds between printing why and aborting: the launcher forwards a rank's output through
#: a pipe, and an abort that comes first can lose it
ABORT_GRACE_S = 1.0


def report_and_abort(message: str, abort) -> None:
    sys.stderr.write(message)
    sys.stderr.flush()
    time.sleep(ABORT_GRACE_S)
    abort()


def describe(what) -> str:
    """``what`` = (collective name, array or None, op/src or None) as readable text."""
    name, arr, extra = what
    text = name
    if arr is not None:
        text += f" of a {arr.dtype.name}{list(arr.shape)} tensor"
    if isinstance(extra, str):
        text += f" (op {extra.upper()})"
    elif extra is not None:
        text += f" (src {extra})"
    return text


class Watchdog:
    """Aborts the job when this rank has waited for the others longer than ``timeout_s``."""

    def __init__(self, rank: int, timeout_s: float, abort):
        self.rank = rank
        self.timeout_s = timeout_s
        self._abort = abort
        self._what = None
        self._since = None
        self._stop = threading.Event()
        self._interval = min(1.0, max(0.02, timeout_s / 10))
        self._thread = threading.Thread(target=self._run, name="eager.distributed watchdog",
                                        daemon=True)
        self._thread.start()

    def begin(self, what) -> None:
        self._what = what
        self._since = time.monotonic()

    def end(self) -> None:
        self._since = None

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            since, what = self._since, self._what
            if since is None or time.monotonic() - since <= self.timeout_s:
                continue
            if self._since is not since:
                continue  # that wait ended just now
            limit = datetime.timedelta(seconds=self.timeout_s)
            report_and_abort(
                f"[rank {self.rank}] eager.distributed: {describe(what)} timed out: waited "
                f"longer than the process group's timeout ({limit}) for the other ranks. "
                "Some rank failed, hangs, or called a different collective. Aborting every "
                "rank of the job (MPI_Abort) so that none waits forever.\n", self._abort)
            return


def install_abort_on_uncaught(rank: int, size: int, abort) -> None:
    """Make an uncaught exception on this rank abort all ``size`` ranks after its
    traceback is printed.  Undone by :func:`remove_abort_on_uncaught`."""
    previous = sys.excepthook

    def abort_on_uncaught(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        report_and_abort(f"[rank {rank}] eager.distributed: uncaught {exc_type.__name__} on "
                         f"this rank: aborting all {size} ranks (MPI_Abort) so that none "
                         "waits forever for it\n", abort)

    abort_on_uncaught.previous = previous
    sys.excepthook = abort_on_uncaught


def remove_abort_on_uncaught() -> None:
    hook = sys.excepthook
    previous = getattr(hook, "previous", None)
    if previous is not None and hook.__name__ == "abort_on_uncaught":
        sys.excepthook = previous
