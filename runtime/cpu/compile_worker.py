"""A process that compiles generated kernel modules so that the program does not have to.

Why: Numba compiles while holding the interpreter lock.  Built on a background thread
of the training process, a kernel (0.2-0.6 s) or a whole-trace function (1-3 s) takes
that time away from the training loop, which then runs slower than eager while its
compiled code is being made.  Built here instead, in another process, the compile uses
another core; the program's thread only waits on a pipe (without the lock) and then
loads the result from Numba's on-disk cache (``cache=True``), in milliseconds.

Client: :func:`compile` (used by the CPU code generators for every kernel) and
:func:`compile_all` (a program's kernels: in the worker, compiled side by side in forked
processes, :func:`_fan_out`; from the program, sent as one request).  Falls back to
compiling in the calling process when the disk cache is off, the module has no file,
or the worker cannot be started or fails (then the in-process compile reports the
error as before).  The worker starts on first use.

At exit: builds the program asked for (:func:`unsent`) but had not sent yet, because it
ended first (a short script: builds wait :data:`compiler.tiers.FIRST_LOAD_AFTER`), are
handed to the worker, which goes on building them after the program has ended, for at
most :data:`FINISH_S` seconds, one such worker per cache directory: the next run of the
program then finds its kernels in the disk cache and loads them at its first replay.
The program does not wait for it.  Without such builds the worker is killed at exit (an
unfinished compile is lost, never waited for).

Protocol: length-prefixed pickled ``(function, args)`` requests on stdin (a module-level
function: the compiler sends its whole build, see :func:`call`); ``("ok", None)`` or
``("error", text)`` replies on stdout.

Deadlines: a reply that takes longer than :data:`TIMEOUT_S` (``DYNGRAPH_COMPILE_TIMEOUT``,
seconds) means a hung worker: it is killed, the caller compiles in-process, and the next
request starts a new worker; the lock that serializes requests is never waited for longer
than that either.  A worker never starts a worker of its own (it compiles in-process), and
it exits within :data:`PARENT_POLL_S` of its program's end, even when the program was
killed or skipped its ``atexit`` handlers, unless the program handed it builds to finish.

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
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

from ..cache import _import_file, _read_own, cache_dir

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
#: seconds a worker goes on building, after its program ended, what the program handed it
FINISH_S = 120.0
#: builds asked for and not sent yet (token -> a function giving ``(fn, args)``), handed
#: to the worker at exit
_unsent: dict = {}
_send_lock = threading.Lock()  # held while a request is written (not while it runs)


def _in_worker() -> bool:
    return os.environ.get(IN_WORKER_ENV) == "1"


def _send(stream, obj) -> None:
    data = pickle.dumps(obj)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


class WorkerTimeout(OSError):
    """The worker did not reply within its deadline."""


def _read_exactly(fd: int, n: int, deadline: float | None = None) -> bytes:
    """``n`` bytes from the raw pipe ``fd``: EOFError at its end, WorkerTimeout past
    ``deadline`` (``time.monotonic()``; None: wait)."""
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerTimeout(f"no reply from the compile worker within {TIMEOUT_S} s")
        chunk = os.read(fd, n - got)
        if not chunk:
            raise EOFError("the other end of the pipe was closed")
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


def unsent(request) -> object:
    """Note a build the program will send (``request()`` gives its ``(fn, args)`` for
    :func:`call`): if the program ends before :func:`sent`, it is handed to the worker at
    exit (module doc).  Returns the token for :func:`sent`."""
    token = object()
    _unsent[token] = request
    return token


def sent(token) -> None:
    """The build of ``token`` was made (or is not wanted any more)."""
    _unsent.pop(token, None)


def _done_path(directory, data: bytes):
    return Path(directory) / "built" / (hashlib.sha256(data).hexdigest()[:32] + ".done")


def _mark_done(done: Path) -> None:
    """Remember a request that succeeded (:func:`call`, :func:`_finish`)."""
    with contextlib.suppress(OSError):
        done.parent.mkdir(exist_ok=True)
        done.touch()


def _finisher_lock(directory: str):
    """An open file holding the cache directory's finisher lock, None where locks are not
    available, False when another process holds it."""
    try:
        import fcntl
    except ImportError:  # (Windows: no lock, each worker finishes its own)
        return None
    try:
        f = open(os.path.join(directory, "finishing.lock"), "a")  # noqa: SIM115 (kept open)
    except OSError:
        return False
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return False
    return f


def _hand_over() -> bool:
    """(At exit.) Send the unsent builds to the worker (started if need be) to finish after
    this program; True when it took them (then it is left running)."""
    global _proc, _proc_dir
    requests = list(_unsent.values())
    _unsent.clear()
    d = _worker_dir() if requests else None
    if d is None:
        return False
    calls = []
    for request in requests:
        try:
            fn, args = request()
            data = pickle.dumps((fn, args))
        except Exception:  # noqa: BLE001 - not picklable (an op class made in a function)
            continue
        if not _done_path(d, data).exists():
            calls.append(data)
    if not calls:
        return False
    lock = _finisher_lock(str(d))
    if lock is False:  # another worker is finishing builds for this cache already
        return False
    if lock is not None:
        lock.close()  # (the worker takes it)
    try:  # a file, not the pipe: a worker still starting would not read a large request
        handed = d / "built" / f"handed-{os.getpid()}-{time.time_ns()}.pickle"
        handed.parent.mkdir(exist_ok=True)
        blob = pickle.dumps(calls)
        handed.write_bytes(blob)
    except OSError:
        return False
    msg = pickle.dumps((_finish, (str(handed), hashlib.sha256(blob).hexdigest(), str(d),
                                  FINISH_S)))
    mine = _lock.acquire(timeout=0.2)  # else the compile thread is in a call: a worker runs
    try:
        if mine and (_proc is None or _proc.poll() is not None or _proc_dir != str(d)):
            _stop()
            _proc, _proc_dir = _start(str(d)), str(d)
        proc = _proc
        if proc is None or not _send_lock.acquire(timeout=1.0):
            raise OSError("no worker to hand the builds to")
        try:
            _send_until(proc.stdin.fileno(), struct.pack("<Q", len(msg)) + msg,
                        time.monotonic() + 5.0)
        finally:
            _send_lock.release()
        proc.stdin.close()  # the worker reads EOF after the builds, then exits
        _proc = None        # left running: not killed below
        proc.returncode = 0  # (not waited for: no "still running" ResourceWarning)
        return True
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            handed.unlink()
        return False
    finally:
        if mine:
            _lock.release()


def _at_exit() -> None:
    try:
        _hand_over()
    finally:
        _stop()


atexit.register(_at_exit)


def _forget_after_fork() -> None:
    """(In a forked child, e.g. a DataLoader worker.) The parent's worker and lock are not
    this process's: start afresh (a lock held by another thread at the fork would never
    be released here)."""
    global _proc, _proc_dir, _lock, _send_lock
    _proc, _proc_dir, _lock, _send_lock = None, None, threading.Lock(), threading.Lock()
    _unsent.clear()   # the parent's builds: its own exit hands them over


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def _worker_dir():
    """The cache directory a worker builds into; None without a disk cache, in a worker
    (it compiles in-process: no nested worker), or when no worker can start here."""
    if _broken or _in_worker():
        return None
    try:
        return cache_dir()
    except OSError:
        return None


def start() -> None:
    """Start the worker now (its start-up, ~0.5 s, then overlaps other work); a no-op
    without a disk cache or when it runs already."""
    global _proc, _proc_dir, _broken
    d = _worker_dir()
    if d is None or not _lock.acquire(timeout=TIMEOUT_S):
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
    d = _worker_dir()
    if d is None:
        return False
    try:
        data = pickle.dumps((fn, args))
    except (pickle.PickleError, AttributeError, TypeError):
        return False  # e.g. an op class defined inside a function
    done = _done_path(d, data)
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
            with _send_lock:
                _send_until(_proc.stdin.fileno(), struct.pack("<Q", len(data)) + data,
                            deadline)
            status, _text = _recv_until(_proc.stdout.fileno(), deadline)
        except (OSError, EOFError, ValueError, pickle.PickleError):
            _stop()  # a dead or hung worker (killed): a new one starts next time
            return False
    finally:
        _lock.release()
    if status == "ok":
        _mark_done(done)
    return status == "ok"


def _compile_function(path: str, modname: str, name: str, sig, digest: str) -> None:
    """(In the worker.) Compile ``modname.name`` of the file ``path`` for ``sig``; the
    file is loaded only if its bytes have the sha256 ``digest``."""
    _compile_functions([(path, modname, name, sig, digest)])


def _compile_functions(requests) -> None:
    """(In the worker.) :func:`_compile_function` of each request, side by side."""
    jobs = []
    for path, modname, name, sig, digest in requests:
        mod = sys.modules.get(modname)
        if mod is None or getattr(mod, "__dg_sha256__", None) != digest:
            mod = _import_file(modname, Path(path), None, digest)
        jobs.append((getattr(mod, name), sig))
    compile_all(jobs)


def _missing(dispatcher, sig) -> bool:
    """Whether ``dispatcher`` is neither compiled for ``sig`` nor in the disk cache."""
    return dispatcher._can_compile and not _has(dispatcher, sig) \
        and not _on_disk(dispatcher, sig)


def _request(dispatcher, sig):
    """The worker's request for compiling ``dispatcher`` for ``sig``; None when it is
    compiled or in the disk cache already, or has no file the worker could load."""
    if not _missing(dispatcher, sig):
        return None
    module = sys.modules.get(dispatcher.py_func.__module__)
    path = getattr(module, "__file__", None)
    digest = getattr(module, "__dg_sha256__", None)  # loaded by runtime.cache
    if path and digest and os.path.exists(path):
        return (path, module.__name__, dispatcher.py_func.__name__, sig, digest)
    return None


def compile(dispatcher, sig) -> None:
    """``dispatcher.compile(sig)``, with the compile itself done in the worker when it can
    (this call then loads Numba's cache)."""
    global loaded
    request = _request(dispatcher, sig)
    if request is not None:
        call(_compile_function, *request)
    dispatcher.compile(sig)
    loaded = True


def compile_all(jobs) -> None:
    """:func:`compile` each ``(dispatcher, sig)`` of ``jobs`` (a program's kernels).  In a
    worker the ones not built yet are first spread over forked processes
    (:func:`_fan_out`): Numba compiles one function at a time under its lock, ~0.1-1 s
    each, and a trace's kernels are many and independent."""
    global loaded
    jobs = list({(id(d), sig): (d, sig) for d, sig in jobs}.values())  # (once each)
    if _in_worker():
        _fan_out(jobs)
    else:  # one request: the worker spreads it
        requests = [r for r in (_request(d, sig) for d, sig in jobs) if r is not None]
        if requests:
            call(_compile_functions, requests)
    for dispatcher, sig in jobs:  # (loads from the disk cache what the worker built)
        dispatcher.compile(sig)
    loaded = True


def _jobs() -> int:
    """How many processes compile side by side in a worker: ``DYNGRAPH_COMPILE_JOBS``, else
    the cores this process may run on, at most 8."""
    try:
        return max(1, int(os.environ["DYNGRAPH_COMPILE_JOBS"]))
    except (KeyError, ValueError):
        pass
    try:
        return min(8, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return min(8, os.cpu_count() or 1)


def _fan_out(jobs) -> None:
    """(In a worker.) Compile the ``jobs`` not compiled nor in Numba's disk cache yet in
    :func:`_jobs` processes: this one and children forked from it (Numba and LLVM set up
    already, so a child starts in milliseconds), each compiling whole dispatchers (one
    function's index file has one writer) into the disk cache; returns when all are done.
    The caller then loads the children's from the disk cache, and compiles here whatever
    a child did not leave there (a child's error, or a lost write), reporting any error
    itself.  Linux only (fork)."""
    todo: dict = {}
    for dispatcher, sig in jobs:
        if _missing(dispatcher, sig):
            todo.setdefault(id(dispatcher), (dispatcher, []))[1].append(sig)
    n = min(_jobs(), len(todo))
    if n < 2 or not sys.platform.startswith("linux"):
        return
    shares: list = [[] for _ in range(n)]
    load = [0] * n
    for group in sorted(todo.values(), key=_cost, reverse=True):  # longest first, each
        k = load.index(min(load))                                  # to the least loaded
        shares[k].append(group)
        load[k] += _cost(group)
    children = [pid for pid in map(_fork_compile, shares[1:]) if pid]
    _compile_share(shares[0])
    _reap(children, time.monotonic() + TIMEOUT_S / 2)


def _reap(children: list, deadline: float) -> None:
    """Wait for the forked ``children``; any still running at ``deadline`` (a hung compile)
    is killed, and the caller compiles its share."""
    while children:
        for pid in list(children):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                children.remove(pid)
        if children and time.monotonic() > deadline:
            for pid in children:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
            return
        if children:
            time.sleep(0.005)


def _cost(group) -> int:
    """A dispatcher's compile time, roughly: its bytecode's length per signature."""
    dispatcher, sigs = group
    return len(sigs) * len(dispatcher.py_func.__code__.co_code)


def _compile_share(share) -> None:
    """Compile each of ``share``'s functions for its signatures; one that fails is left to
    the caller (which raises its error), the others are compiled."""
    for dispatcher, sigs in share:
        for sig in sigs:
            with contextlib.suppress(Exception):
                dispatcher.compile(sig)


def _fork_compile(share) -> int:
    """A forked child compiling ``share`` (its pid; 0 when fork failed).  The child ends
    with its parent (``PR_SET_PDEATHSIG``: a worker killed at the program's exit leaves no
    compiles running), never writes to the reply pipe, and leaves by ``os._exit``."""
    parent = os.getpid()
    with warnings.catch_warnings():  # (3.12+ warns of fork in a process with threads:
        warnings.simplefilter("ignore", DeprecationWarning)  # the child uses none)
        try:
            pid = os.fork()
        except OSError:
            return 0
    if pid:
        return pid
    code = 1
    try:
        with contextlib.suppress(Exception):
            import ctypes
            ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        if os.getppid() == parent:
            _compile_share(share)
            code = 0
    finally:
        os._exit(code)


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

def _waiting(fd: int) -> int:
    """Bytes written to the pipe ``fd`` and not read yet (0 where that cannot be told)."""
    try:
        import fcntl
        import termios
        buf = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
        return struct.unpack("i", buf)[0]
    except (ImportError, OSError, AttributeError):
        return 0


#: (in the worker) what its loop does: "idle" (reading a request's first bytes),
#: "reading" (its rest), "request" (running a program's request), "finish" (:func:`_finish`)
_doing = "idle"


def _exit_with_parent(parent: int, fd: int) -> None:
    """(In the worker.) End this process within PARENT_POLL_S of its program's end, even
    in the middle of a request's compile (a program killed, or ended by ``os._exit``),
    unless the program left a request on the pipe ``fd`` (builds to finish:
    :func:`_finish`), which the loop reads unbuffered: bytes not read yet are on the pipe."""
    def watch():
        while True:
            # (in this order: the program wrote all it sends before it ended, and the loop
            # says it is reading before it takes a request's last bytes from the pipe)
            if os.getppid() != parent and not _waiting(fd) and _doing in ("idle", "request"):
                os._exit(0)
            time.sleep(PARENT_POLL_S)
    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _read_request(fd: int):
    """The next ``(fn, args)`` on the pipe ``fd``, read without a buffer (what is not read
    is still on the pipe for :func:`_waiting`); EOFError at its end."""
    global _doing
    (n,) = struct.unpack("<Q", _read_exactly(fd, 8))
    _doing = "reading"
    return pickle.loads(_read_exactly(fd, n))


def _finish(path: str, digest: str, directory: str, seconds: float) -> None:
    """(In the worker, sent by its program at exit.) Run the builds listed in the file
    ``path`` (pickled ``(fn, args)`` each; read only if its bytes have the sha256
    ``digest``) that are not done yet, for at most ``seconds``; nothing when another process
    is finishing builds for this cache directory."""
    data = _read_own(Path(path))
    with contextlib.suppress(OSError):
        os.unlink(path)
    if data is None or hashlib.sha256(data).hexdigest() != digest:
        return
    calls = pickle.loads(data)
    lock = _finisher_lock(directory)
    if lock is False:
        return
    threading.Timer(seconds, os._exit, (0,)).start()  # (notes and caches are written
    try:                                              # atomically: a kill loses a build)
        for request in calls:
            done = _done_path(directory, request)
            if done.exists():
                continue
            fn, args = pickle.loads(request)
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - the next run builds it again
                continue
            _mark_done(done)
    finally:
        if lock is not None:
            lock.close()
    os._exit(0)


def _serve(directory: str, parent: int | None = None) -> None:
    global _broken, _doing
    _broken = True  # no worker of its own (nor has the importable copy of this module:
    os.environ[IN_WORKER_ENV] = "1"  # this one runs as __main__)
    if parent is not None:
        _exit_with_parent(parent, sys.stdin.fileno())
    if hasattr(os, "nice"):  # the program's own threads (BLAS) come first on a busy machine
        try:
            os.nice(10)
        except OSError:
            pass
    # The cache directory is NOT put on sys.path: a file planted there (numba.py) would
    # be imported. Generated modules are loaded by their path (runtime.cache).
    stdin, stdout = sys.stdin.fileno(), sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write into the reply stream
    while True:
        try:
            fn, args = _read_request(stdin)
        except EOFError:
            return
        # (this file runs as __main__: the request names the importable module's _finish)
        _doing = "finish" if getattr(fn, "__name__", None) == _finish.__name__ else "request"
        try:
            fn(*args)
            reply = ("ok", None)
        except Exception as e:  # the program does it in-process and reports it
            reply = ("error", f"{type(e).__name__}: {e}")
        finally:
            _doing = "idle"
        try:
            _send(stdout, reply)
        except OSError:  # the program has ended: builds it handed over may follow
            continue


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
