"""Worker processes of a ``DataLoader`` (``num_workers > 0``), as in PyTorch.

Each worker gets its own index queue; the main process hands out batches of indices
round-robin (``prefetch_factor`` batches per worker in flight) and puts the results back in
sampler order, so the batches come out exactly as with ``num_workers=0``.  A worker seeds
``random``, NumPy's global RNG and eager's default generator from ``base_seed + worker_id``
(``base_seed`` is drawn per epoch from the loader's generator), then runs ``worker_init_fn``.
An exception in a worker is raised again in the main process, with the worker's traceback.
For an ``IterableDataset`` every worker iterates its own copy of the dataset; a worker whose
iterator is exhausted drops out of the round-robin.

Deadlines: ``timeout=`` raises "DataLoader timed out" within ``_STATUS_CHECK_INTERVAL`` of
it (the stuck workers are terminated, not waited for); a worker that died is noticed within
that interval too, and the error names its exit code or the signal that killed it; a
worker ends within that interval of its main process's end (it watches its parent), and a
shutdown gives the workers ``_SHUTDOWN_GRACE`` seconds in all before terminating them.
"""

from __future__ import annotations

import itertools
import os
import queue
import random
import signal
import sys
import time
import traceback
import weakref

import numpy as np

from ...random import manual_seed
from .dataset import IterableDataset

__all__ = ["WorkerInfo", "get_worker_info"]

#: seconds between liveness checks while waiting: the main process notices a dead worker,
#: and a worker notices that the main process is gone, within this
_STATUS_CHECK_INTERVAL = 0.1
#: seconds the workers get to stop by themselves at shutdown before they are terminated
_SHUTDOWN_GRACE = 0.5


class WorkerInfo:
    """What :func:`get_worker_info` returns inside a worker: ``id``, ``num_workers``,
    ``seed`` and ``dataset`` (the worker's copy)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's :class:`WorkerInfo` inside a DataLoader worker, else None."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its traceback."""

    def __init__(self, where: str):
        exc_type, exc, _ = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(*sys.exc_info()))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _IterableDatasetStopIteration:
    def __init__(self, worker_id: int):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch."""


def _worker_loop(fetcher_factory, dataset, index_queue, data_queue, base_seed: int,
                 init_fn, worker_id: int, num_workers: int, parent_pid: int, iterable: bool):
    global _worker_info
    _exit_with_parent(parent_pid)
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_exception = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = fetcher_factory()
    except Exception:
        init_exception = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
    iteration_end = False
    try:
        while True:
            if not index_queue.poll(_STATUS_CHECK_INTERVAL):
                if os.getppid() != parent_pid:   # the main process is gone
                    return
                continue
            r = index_queue.recv()
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if init_exception is None:
                    fetcher = fetcher_factory()   # a fresh iterator of an IterableDataset
                continue
            if r is None:
                data_queue.cancel_join_thread()   # exit now, even if results stay unread
                return
            if iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
    except (KeyboardInterrupt, EOFError):   # EOFError: the main process closed the pipe
        pass


def _exit_with_parent(parent_pid: int) -> None:
    """End this worker within ``_STATUS_CHECK_INTERVAL`` of the main process's end, even
    in the middle of a long ``__getitem__`` (a main process killed, or ended by
    ``os._exit``, runs no shutdown)."""
    import threading

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(_STATUS_CHECK_INTERVAL)
        os._exit(0)
    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class MultiProcessingIter:
    """The iterator of a DataLoader with worker processes."""

    def __init__(self, loader, base_seed: int, fetcher_factory):
        self._loader = loader
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        self._in_order = loader.in_order
        self._timeout = loader.timeout
        self._iterable = isinstance(loader.dataset, IterableDataset)
        ctx = loader.multiprocessing_context
        self._data_queue = ctx.Queue()
        # Indices go down a pipe per worker: send() writes at once (no feeder thread that a
        # garbage collection could finalize before the shutdown message is sent).
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            reader, iq = ctx.Pipe(duplex=False)
            w = ctx.Process(target=_worker_loop,
                            args=(fetcher_factory, loader.dataset, reader, self._data_queue,
                                  base_seed, loader.worker_init_fn, i, self._num_workers,
                                  os.getpid(), self._iterable),
                            daemon=True)
            w.start()
            reader.close()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._grace = [_SHUTDOWN_GRACE]  # 0 after a timeout or a dead worker
        self._finalizer = weakref.finalize(self, _shutdown, self._workers, self._index_queues,
                                           self._data_queue, self._grace)
        self._reset(first_iter=True)

    def _reset(self, first_iter: bool = False):
        self._sampler_iter = iter(self._index_sampler)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.send(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            w = next(self._worker_queue_idx_cycle)
            if self._workers_status[w]:
                break
        else:
            return  # no active worker left
        self._index_queues[w].send((self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        """(idx, data) from the result queue; errors for dead workers (within
        ``_STATUS_CHECK_INTERVAL``, naming the exit code or signal) and for ``timeout``."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            step = _STATUS_CHECK_INTERVAL
            if deadline is not None:
                step = max(0.0, min(step, deadline - time.monotonic()))
            try:
                return self._data_queue.get(timeout=step)
            except queue.Empty:
                dead = [w for i, w in enumerate(self._workers)
                        if self._workers_status[i] and not w.is_alive()]
                if dead:
                    self._grace[0] = 0.0  # the others may be stuck too: no grace
                    self._shutdown_workers()
                    raise RuntimeError(
                        "; ".join(_death(w) for w in dead) + ". This may be caused by the "
                        "dataset or worker_init_fn calling os._exit or sys.exit, a crash in "
                        "native code, or the worker being killed (out of memory?)") from None
                if deadline is not None and time.monotonic() >= deadline:
                    self._grace[0] = 0.0  # stuck workers: terminated at once
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} "
                                       "seconds") from None

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]   # its worker's stream has ended
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx and self._in_order:
                self._task_info[idx] += (data,)     # early: keep until its turn
                continue
            self._task_info.pop(idx, None)
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        self._finalizer()


def _death(w) -> str:
    """How worker process ``w`` ended, as PyTorch words it."""
    code = w.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
            desc = signal.strsignal(-code) or name
        except ValueError:
            name = desc = f"signal {-code}"
        return f"DataLoader worker (pid {w.pid}) is killed by signal: {desc} ({name})"
    return f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}"


def _shutdown(workers, index_queues, data_queue, grace=(_SHUTDOWN_GRACE,)) -> None:
    """Tell every worker to stop, give them ``grace[0]`` seconds together, then
    terminate (and kill) the stragglers and close the pipes.  A ``weakref.finalize`` of
    the iterator: it holds the pipes itself, so a garbage collection that frees the
    iterator cannot close them before the stop messages go."""
    for q in index_queues:
        try:
            q.send(None)
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + grace[0]
    for w in workers:
        w.join(timeout=max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.is_alive():
            w.terminate()
    deadline = time.monotonic() + 0.2
    for w in workers:
        w.join(timeout=max(0.0, deadline - time.monotonic()))
        if w.is_alive():
            w.kill()
            w.join(timeout=0.2)
    for q in index_queues:
        q.close()
    data_queue.cancel_join_thread()
    data_queue.close()
