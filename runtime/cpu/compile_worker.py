"""A process that compiles generated kernel modules so that the program does not have to.

Why: Numba compiles while holding the interpreter lock.  Built on a background thread
of the training process, a kernel (0.2-0.6 s) or a whole-trace function (1-3 s) takes
that time away from the training loop, which then runs slower than eager while its
compiled code is being made.  Built here instead, in another process, the compile uses
another core; the program's thread only waits on a pipe (without the lock) and then
loads the result from Numba's on-disk cache (``cache=True``), in milliseconds.

Client: :func:`compile` (used by the CPU code generators for every kernel).  Falls back to
compiling in the calling process when the disk cache is off, the module has no file,
or the worker cannot be started or fails (then the in-process compile reports the
error as before).  The worker starts on first use and is killed at exit (an unfinished
compile is lost, never waited for).

Protocol: length-prefixed pickled ``(function, args)`` requests on stdin (a module-level
function: the compiler sends its whole build, see :func:`call`); ``("ok", None)`` or
``("error", text)`` replies on stdout.

Deadlines: a reply that takes longer than :data:`TIMEOUT_S` (``DYNGRAPH_COMPILE_TIMEOUT``,
seconds) means a hung worker: it is killed, the caller compiles in-process, and the next
request starts a new worker; the lock that serializes requests is never waited for longer
than that either.  A worker never starts a worker of its own (it compiles in-process), and
it exits within :data:`PARENT_POLL_S` of its program's end, even when the program was
killed or skipped its ``atexit`` handlers.

Trust: the worker does not put the cache directory on ``sys.path``; it loads a generated
module by its path, and only when the file's bytes have the sha256 that the program
recorded when it loaded them (:func:`runtime.cache._import_file`).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time

from ..cache import _import_file, cache_dir

_lock = threading.Lock()
_proc: subprocess.Popen | None = None
_proc_dir: str | None = None
loaded = False  # whether a kernel has been loaded into this process (Numba is set up)
_broken = False  # set when the worker cannot start: no retries in this process

#: set in a worker's environment: a worker (and anything it starts) starts no worker
IN_WORKER_ENV = "DYNGRAPH_IN_COMPILE_WORKER"
#: seconds a request may take before the worker counts as hung (killed, then replaced)
TIMEOUT_S = float(os.environ.get("DYNGRAPH_COMPILE_TIMEOUT", "300"))
#: how often a worker checks that its program is still alive
PARENT_POLL_S = 0.2


def _in_worker() -> bool:
    return os.environ.get(IN_WORKER_ENV) == "1"


def _send(stream, obj) -> None:
    data = pickle.dumps(obj)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _recv(stream):
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the compile worker exited")
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(n))


class WorkerTimeout(OSError):
    """The worker did not reply within its deadline."""


def _read_exactly(fd: int, n: int, deadline: float) -> bytes:
    chunks, got = [], 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise WorkerTimeout(f"no reply from the compile worker within {TIMEOUT_S} s")
        chunk = os.read(fd, n - got)
        if not chunk:
            raise EOFError("the compile worker exited")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send_until(fd: int, data: bytes, deadline: float) -> None:
    """Write ``data`` to the raw pipe ``fd``; WorkerTimeout past ``deadline`` (a hung
    worker that stopped reading would otherwise block a request larger than the pipe)."""
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([], [fd], [], left)[1]:
            raise WorkerTimeout(f"the compile worker took no request within {TIMEOUT_S} s")
        # a writable pipe has room for PIPE_BUF bytes, not more: a larger write to this
        # blocking fd waits for all of it, forever if the worker stopped reading
        view = view[os.write(fd, view[:select.PIPE_BUF]):]


def _recv_until(fd: int, deadline: float):
    """A reply read from the raw pipe ``fd`` (unbuffered: ``select`` sees every byte),
    or WorkerTimeout past ``deadline`` (``time.monotonic()``)."""
    (n,) = struct.unpack("<Q", _read_exactly(fd, 8, deadline))
    return pickle.loads(_read_exactly(fd, n, deadline))


# -- client --------------------------------------------------------------------------------

def _start(directory: str) -> subprocess.Popen:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env["DYNGRAPH_CACHE_DIR"] = directory
    env[IN_WORKER_ENV] = "1"
    return subprocess.Popen([sys.executable, "-m", "runtime.cpu.compile_worker", directory,
                             str(os.getpid())],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)


def _stop() -> None:
    global _proc
    p, _proc = _proc, None
    if p is not None and p.poll() is None:
        p.kill()
        p.wait()


atexit.register(_stop)


def _forget_after_fork() -> None:
    """(In a forked child, e.g. a DataLoader worker.) The parent's worker and lock are not
    this process's: start afresh (a lock held by another thread at the fork would never
    be released here)."""
    global _proc, _proc_dir, _lock
    _proc, _proc_dir, _lock = None, None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def start() -> None:
    """Start the worker now (its start-up, ~0.5 s, then overlaps other work); a no-op
    without a disk cache or when it runs already."""
    global _proc, _proc_dir, _broken
    if _broken or _in_worker():
        return
    try:
        d = cache_dir()
    except OSError:
        return
    if d is None:
        return
    if not _lock.acquire(timeout=TIMEOUT_S):
        return
    try:
        if _proc is None or _proc.poll() is not None or _proc_dir != str(d):
            _stop()
            try:
                _proc, _proc_dir = _start(str(d)), str(d)
            except OSError:
                _broken = True
    finally:
        _lock.release()


def call(fn, *args) -> bool:
    """Run ``fn(*args)`` (both picklable: a module-level function) in the worker and wait
    for it, without the interpreter lock; False when that could not be done or it raised
    there (the caller then does the work itself, which reports any error).  A call that
    succeeded once is remembered in the cache directory (``built/``) and not sent again:
    its results are in the cache (if they were evicted since, the caller rebuilds them)."""
    global _proc, _proc_dir, _broken
    if _broken or _in_worker():  # a worker compiles in-process: no nested worker
        return False
    try:
        d = cache_dir()
    except OSError:
        return False
    if d is None:
        return False
    try:
        data = pickle.dumps((fn, args))
    except (pickle.PickleError, AttributeError, TypeError):
        return False  # e.g. an op class defined inside a function
    done = d / "built" / (hashlib.sha256(data).hexdigest()[:32] + ".done")
    if done.exists():  # built before (by a worker of this or an earlier process)
        return True
    deadline = time.monotonic() + TIMEOUT_S
    if not _lock.acquire(timeout=TIMEOUT_S):  # one request at a time
        return False
    try:
        if _proc is None or _proc.poll() is not None or _proc_dir != str(d):
            _stop()
            try:
                _proc, _proc_dir = _start(str(d)), str(d)
            except OSError:
                _broken = True
                return False
        try:
            _send_until(_proc.stdin.fileno(), struct.pack("<Q", len(data)) + data, deadline)
            status, _text = _recv_until(_proc.stdout.fileno(), deadline)
        except (OSError, EOFError, ValueError, pickle.PickleError):
            _stop()  # a dead or hung worker (killed): a new one starts next time
            return False
    finally:
        _lock.release()
    if status == "ok":
        with contextlib.suppress(OSError):
            done.parent.mkdir(exist_ok=True)
            done.touch()
    return status == "ok"


def _compile_function(path: str, modname: str, name: str, sig, digest: str) -> None:
    """(In the worker.) Compile ``modname.name`` of the file ``path`` for ``sig``; the
    file is loaded only if its bytes have the sha256 ``digest``."""
    from pathlib import Path

    mod = sys.modules.get(modname)
    if mod is None or getattr(mod, "__dg_sha256__", None) != digest:
        mod = _import_file(modname, Path(path), None, digest)
    getattr(mod, name).compile(sig)


def compile(dispatcher, sig) -> None:
    """``dispatcher.compile(sig)``, with the compile itself done in the worker when it can
    (this call then loads Numba's cache)."""
    global loaded
    if dispatcher._can_compile and not _has(dispatcher, sig) \
            and not _on_disk(dispatcher, sig):
        module = sys.modules.get(dispatcher.py_func.__module__)
        path = getattr(module, "__file__", None)
        digest = getattr(module, "__dg_sha256__", None)  # loaded by runtime.cache
        if path and digest and os.path.exists(path):
            call(_compile_function, path, module.__name__, dispatcher.py_func.__name__, sig,
                 digest)
    dispatcher.compile(sig)
    loaded = True


def _has(dispatcher, sig) -> bool:
    from numba.core import sigutils
    args, _ = sigutils.normalize_signature(sig)
    return tuple(args) in dispatcher.overloads


def _on_disk(dispatcher, sig) -> bool:
    """Whether Numba's disk cache holds ``sig`` already (then loading it here is quicker
    than asking the worker)."""
    try:
        cache = dispatcher._cache
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # no cache (in-memory module), or another Numba: ask the worker
        return False


# -- worker --------------------------------------------------------------------------------

def _exit_with_parent(parent: int) -> None:
    """(In the worker.) End this process within PARENT_POLL_S of its program's end, even
    in the middle of a compile (a program killed, or ended by ``os._exit``)."""
    def watch():
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(PARENT_POLL_S)
    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _serve(directory: str, parent: int | None = None) -> None:
    global _broken
    _broken = True  # no worker of its own (nor has the importable copy of this module:
    os.environ[IN_WORKER_ENV] = "1"  # this one runs as __main__)
    if parent is not None:
        _exit_with_parent(parent)
    if hasattr(os, "nice"):  # the program's own threads (BLAS) come first on a busy machine
        try:
            os.nice(10)
        except OSError:
            pass
    # The cache directory is NOT put on sys.path: a file planted there (numba.py) would
    # be imported. Generated modules are loaded by their path (runtime.cache).
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write into the reply stream
    while True:
        try:
            fn, args = _recv(stdin)
        except EOFError:
            return
        try:
            fn(*args)
            reply = ("ok", None)
        except Exception as e:  # the program does it in-process and reports it
            reply = ("error", f"{type(e).__name__}: {e}")
        _send(stdout, reply)


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
