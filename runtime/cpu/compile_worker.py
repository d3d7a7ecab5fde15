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
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import pickle
import struct
import subprocess
import sys
import threading

_lock = threading.Lock()
_proc: subprocess.Popen | None = None
_proc_dir: str | None = None
loaded = False  # whether a kernel has been loaded into this process (Numba is set up)
_broken = False  # set when the worker cannot start: no retries in this process


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


# -- client --------------------------------------------------------------------------------

def _start(directory: str) -> subprocess.Popen:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env["DYNGRAPH_CACHE_DIR"] = directory
    return subprocess.Popen([sys.executable, "-m", "runtime.cpu.compile_worker", directory],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)


def _stop() -> None:
    global _proc
    p, _proc = _proc, None
    if p is not None and p.poll() is None:
        p.kill()
        p.wait()


atexit.register(_stop)


def start() -> None:
    """Start the worker now (its start-up, ~0.5 s, then overlaps other work); a no-op
    without a disk cache or when it runs already."""
    global _proc, _proc_dir, _broken
    from ..cache import cache_dir
    try:
        d = cache_dir()
    except OSError:
        return
    if d is None or _broken:
        return
    with _lock:
        if _proc is None or _proc.poll() is not None or _proc_dir != str(d):
            _stop()
            try:
                _proc, _proc_dir = _start(str(d)), str(d)
            except OSError:
                _broken = True


def call(fn, *args) -> bool:
    """Run ``fn(*args)`` (both picklable: a module-level function) in the worker and wait
    for it, without the interpreter lock; False when that could not be done or it raised
    there (the caller then does the work itself, which reports any error).  A call that
    succeeded once is remembered in the cache directory (``built/``) and not sent again:
    its results are in the cache (if they were evicted since, the caller rebuilds them)."""
    global _proc, _proc_dir, _broken
    from ..cache import cache_dir
    try:
        d = cache_dir()
    except OSError:
        return False
    if _broken or d is None:
        return False
    try:
        data = pickle.dumps((fn, args))
    except (pickle.PickleError, AttributeError, TypeError):
        return False  # e.g. an op class defined inside a function
    done = d / "built" / (hashlib.sha256(data).hexdigest()[:32] + ".done")
    if done.exists():  # built before (by a worker of this or an earlier process)
        return True
    with _lock:  # one request at a time
        if _proc is None or _proc.poll() is not None or _proc_dir != str(d):
            _stop()
            try:
                _proc, _proc_dir = _start(str(d)), str(d)
            except OSError:
                _broken = True
                return False
        try:
            _proc.stdin.write(struct.pack("<Q", len(data)) + data)
            _proc.stdin.flush()
            status, _text = _recv(_proc.stdout)
        except (OSError, EOFError, pickle.PickleError):
            _stop()  # a dead worker: restarted next time
            return False
    if status == "ok":
        with contextlib.suppress(OSError):
            done.parent.mkdir(exist_ok=True)
            done.touch()
    return status == "ok"


def _compile_function(path: str, modname: str, name: str, sig) -> None:
    """(In the worker.) Compile ``modname.name`` of the file ``path`` for ``sig``."""
    import importlib.util
    mod = sys.modules.get(modname)
    if mod is None:
        spec = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        spec.loader.exec_module(mod)
    getattr(mod, name).compile(sig)


def compile(dispatcher, sig) -> None:
    """``dispatcher.compile(sig)``, with the compile itself done in the worker when it can
    (this call then loads Numba's cache)."""
    global loaded
    if dispatcher._can_compile and not _has(dispatcher, sig) \
            and not _on_disk(dispatcher, sig):
        module = sys.modules.get(dispatcher.py_func.__module__)
        path = getattr(module, "__file__", None)
        if path and os.path.exists(path):
            call(_compile_function, path, module.__name__, dispatcher.py_func.__name__, sig)
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

def _serve(directory: str) -> None:
    global _broken
    _broken = True  # no worker of its own
    if hasattr(os, "nice"):  # the program's own threads (BLAS) come first on a busy machine
        try:
            os.nice(10)
        except OSError:
            pass
    sys.path.insert(0, directory)  # generated modules import one another by name
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
    _serve(sys.argv[1])
