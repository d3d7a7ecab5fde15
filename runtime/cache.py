"""Kernel cache: turns generated Python/Numba source text into live modules.

What is cached
    The compiler emits the source of a small Python module that defines one or
    more Numba functions (``@numba.njit(cache=True)`` etc. written in the text).
    :func:`load_module` maps that source to an imported module object. Entries
    are content addressed: the key is a sha256 of the source plus the Numba,
    NumPy and Python versions (so an upgrade never picks up stale code),
    truncated to 20 hex digits; the module is named ``f"{prefix}_{key}"``.

Where
    1. In memory: a dict keyed by the source string itself, so a hit is a dict
       lookup (pass the same ``str`` object to avoid re-hashing long sources).
    2. On disk: ``cache_dir()/<name>.py``. ``cache_dir()`` is
       ``$DYNGRAPH_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/dyngraph`` or
       ``~/.cache/dyngraph`` (re-read on every miss, overridable with
       :func:`set_cache_dir`). Next to the source, Numba keeps its own cache
       (``__pycache__/<name>.<func>-<line>.pyXY.nbi`` index and ``.nbc`` data;
       under ``$NUMBA_CACHE_DIR`` if that is set), so a later process that imports
       the same file loads machine code instead of recompiling.
       ``DYNGRAPH_CACHE_DIR=off`` (or ``set_cache_dir("off")``) disables the disk
       cache: the source is executed in a fresh in-memory module with every
       ``cache=...`` keyword of Numba decorators forced to ``False`` (Numba
       raises ``RuntimeError: cannot cache function ...: no locator available``
       at decoration time for code that has no file).

Why the module is put in ``sys.modules`` before it is executed
    When Numba rebuilds a compile result from its disk cache it resolves the
    function's module with ``importlib.import_module(func.__module__)``. A
    module imported from an arbitrary path is not importable by name, so the
    lookup falls back to Numba's ``<dynamic>`` dummy module and the first call
    fails with ``ModuleNotFoundError: No module named '<dynamic>'``. The module
    therefore stays registered under its name for as long as it is cached; it
    is removed again if executing it fails.

Trust
    The cache holds code that this process runs, so nothing in it is run unless this
    library wrote it:

    * the directory must belong to the user and not be writable by group or others
      (as ssh and pip demand of theirs); otherwise it is refused with a warning that
      names the fix, and kernels are cached in memory only. The default directory is
      created with mode 0700.
    * a module is loaded by explicit path (never by putting the directory on
      ``sys.path``) from source bytes that equal the source it was asked for (its
      name is the hash of that source); the bytes are compiled here, so a ``.pyc``
      planted next to it (even one whose header matches the source's mtime and
      size) is never read, and none is written.
    * Numba's index (``.nbi``) and data (``.nbc``) files are pickles, and unpickling
      runs code: for the modules loaded here, every such file Numba writes gets a
      ``<file>.sha256`` record of its content, and a file is unpickled only when it
      matches its record and belongs to the user; else it is deleted and Numba
      recompiles (counted in ``cache_stats()["numba_repairs"]``).

Robustness
    Files are written atomically (temp file in the same directory +
    ``os.replace``), so concurrent writers in several processes cannot leave a
    torn file; a source file whose content differs from the expected source
    (truncated/corrupt) is rewritten. If executing the module fails, the
    entry's files (source, its ``.pyc``, Numba's index/data files) are deleted
    and the entry is rebuilt once; a second failure re-raises the original
    exception. Numba loads its disk cache lazily, at the first call of each
    signature, so a corrupt ``.nbi``/``.nbc`` file normally surfaces only then:
    every Numba dispatcher in a loaded module therefore gets a guarded cache
    loader that, on any error, resets that function's Numba index and lets
    Numba recompile (counted in ``cache_stats()["numba_repairs"]``).
    Misses are serialized by a process-wide lock.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import io
import logging
import os
import pickle
import sys
import tempfile
import threading
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "cache_dir",
    "cache_stats",
    "clear_memory_cache",
    "files_present",
    "load_function",
    "load_module",
    "module_files",
    "note_key",
    "read_note",
    "set_cache_dir",
    "write_note",
]

_log = logging.getLogger(__name__)

_ENV_VAR = "DYNGRAPH_CACHE_DIR"
_OFF = "off"
_KEY_HEX_CHARS = 20

# prefix -> {source: module}. Only mutated under _lock; read lock-free.
_memory: dict[str, dict[str, types.ModuleType]] = {}
_lock = threading.RLock()
_override: str | None = None  # set by set_cache_dir()
_version_tag: str | None = None

_STAT_NAMES = ("memory_hits", "disk_loads", "builds", "rebuilds", "numba_repairs")
_stats: dict[str, int] = dict.fromkeys(_STAT_NAMES, 0)

# Numba decorators whose ``cache=`` keyword is forced to False in "off" mode.
_NUMBA_DECORATORS = frozenset(
    {"jit", "njit", "vectorize", "guvectorize", "cfunc", "generated_jit", "stencil"}
)


# --------------------------------------------------------------------------- location


def set_cache_dir(path: str | os.PathLike[str] | None) -> None:
    """Override the cache directory for this process.

    ``path`` may be a directory, ``"off"`` (memory only) or ``None`` to go back
    to the environment (``$DYNGRAPH_CACHE_DIR`` / XDG default). Already-loaded
    modules stay in the memory cache; see :func:`clear_memory_cache`.
    """
    global _override
    _override = None if path is None else os.fspath(path)


def cache_dir() -> Path | None:
    """The on-disk cache directory (created on demand), or ``None`` if disabled.

    Resolution order: :func:`set_cache_dir` override, ``$DYNGRAPH_CACHE_DIR``,
    ``$XDG_CACHE_HOME/dyngraph``, ``~/.cache/dyngraph``. The value ``"off"``
    (case-insensitive) disables the disk cache. Re-evaluated on every call.
    """
    raw = _override if _override is not None else os.environ.get(_ENV_VAR)
    default = not raw
    if raw:
        if raw.strip().lower() == _OFF:
            return None
        d = Path(raw).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
        d = base / "dyngraph"
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    return d if _trusted_dir(d, default) else None


_refused: set[str] = set()  # directories warned about already


def _trusted_dir(d: Path, default: bool) -> bool:
    """Whether ``d`` belongs to this user and nobody else can write into it (warns once
    per directory, naming the fix, when not). The default directory is kept at 0700."""
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: ACLs, not modes
        return True
    st = d.stat()
    uid = os.getuid()
    if st.st_uid == uid and default and st.st_mode & 0o077:
        with contextlib.suppress(OSError):
            os.chmod(d, 0o700)
            st = d.stat()
    problems = []
    if st.st_uid != uid:
        problems.append(f"it belongs to uid {st.st_uid}, not to you (uid {uid})")
    if st.st_mode & 0o022:
        problems.append(f"group or others may write into it (mode {st.st_mode & 0o777:o})")
    if not problems:
        return True
    key = str(d)
    if key not in _refused:
        _refused.add(key)
        fix = f"chmod go-w {d}" if st.st_uid == uid else f"chown {uid} {d} && chmod 700 {d}"
        warnings.warn(
            f"dyngraph: not using the kernel cache directory {d}: "
            f"{' and '.join(problems)}, so code planted there would run in this process. "
            f"Fix: {fix}, or point {_ENV_VAR} at a directory of your own (mode 700). "
            "Kernels are cached in memory only meanwhile.", RuntimeWarning, stacklevel=3)
    return False


# --------------------------------------------------------------------------- public API


def load_module(source: str, *, prefix: str = "dg") -> types.ModuleType:
    """Return the module defined by ``source``, executing/importing it at most once.

    Memory hit: one dict lookup. Miss: import ``cache_dir()/<prefix>_<key>.py``
    (written atomically if missing or stale), or exec in memory when the disk
    cache is off. Raises whatever executing the source raises (after one
    rebuild attempt for on-disk entries).
    """
    try:
        mod = _memory[prefix][source]
    except KeyError:
        return _load_slow(source, prefix)
    _stats["memory_hits"] += 1
    return mod


def load_function(source: str, name: str, *, prefix: str = "dg") -> Callable[..., Any]:
    """``getattr(load_module(source, prefix=prefix), name)``."""
    return getattr(load_module(source, prefix=prefix), name)


def cache_stats() -> dict[str, int]:
    """Counters since the last :func:`clear_memory_cache`.

    ``memory_hits``: served from the in-memory dict; ``disk_loads``: imported
    from an existing, intact source file; ``builds``: source file written
    (missing/corrupt) or, in "off" mode, source executed in memory;
    ``rebuilds``: entries purged and rebuilt after executing them failed;
    ``numba_repairs``: corrupt Numba index/data files discarded at call time.
    ``memory_hits`` is updated without the lock and may undercount under
    heavy thread contention.
    """
    return dict(_stats)


def clear_memory_cache() -> None:
    """Forget all in-memory modules (also dropping them from ``sys.modules``)
    and reset :func:`cache_stats`. Disk entries are kept."""
    with _lock:
        for mods in _memory.values():
            for mod in mods.values():
                if sys.modules.get(mod.__name__) is mod:
                    del sys.modules[mod.__name__]
        _memory.clear()
        for k in _STAT_NAMES:
            _stats[k] = 0


# --------------------------------------------------------------------------- notes


def note_key(obj: Any) -> str | None:
    """A key for what was decided or built from ``obj`` (a graph, or a tuple of them):
    the sha256 of its pickle and of the versions in module names (:func:`_module_name`),
    or None when it cannot be pickled (an op class defined inside a function).  The
    pickle is made without its memo, so it does not depend on which equal objects are
    one object (an attribute name and an equal dict key are, until a pickle round trip):
    a graph and its copy in the compile worker get the same key."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=4)
    pickler.fast = True  # no memo: each object written out in full where it occurs
    try:
        pickler.dump(obj)
    except (pickle.PickleError, AttributeError, TypeError, ValueError, RecursionError):
        return None
    h = hashlib.sha256(_get_version_tag().encode())
    h.update(b"\0")
    h.update(buf.getbuffer())
    return h.hexdigest()[:32]


def read_note(kind: str, key: str | None) -> str | None:
    """The text of the note ``kind/key`` in the cache directory, or None (no note, no
    disk cache, not this user's file).  Notes only steer choices that are right either
    way (which program to build, whether to load it at once): nothing in one is run."""
    if key is None:
        return None
    try:
        d = cache_dir()
    except OSError:
        return None
    if d is None:
        return None
    data = _read_own(d / kind / key)
    return None if data is None else data.decode("utf-8", errors="replace")


def write_note(kind: str, key: str | None, text: str = "") -> None:
    """Write the note ``kind/key`` (atomically; silently nothing without a disk cache)."""
    if key is None:
        return
    try:
        d = cache_dir()
        if d is None:
            return
        (d / kind).mkdir(mode=0o700, exist_ok=True)
        _atomic_write(d / kind / key, text.encode("utf-8"))
    except OSError as exc:
        _log.debug("cannot write the note %s/%s: %s", kind, key, exc)


def module_files(names: Any) -> list[str] | None:
    """The files a new process reads from the disk cache to load the modules ``names``
    (loaded here, on disk) and the signatures compiled for them: each module's source and
    the index files of its functions compiled on their own; None when a module is not a
    disk cache entry."""
    out = []
    for name in names:
        mod = sys.modules.get(name)
        path = getattr(mod, "__file__", None)
        if path is None or not os.path.exists(path):
            return None
        out.append(path)
        for obj in vars(mod).values():
            index = getattr(getattr(getattr(obj, "_cache", None), "_cache_file", None),
                            "_index_path", None)
            if isinstance(index, str) and os.path.exists(index):  # (a function compiled
                out.append(index)                                 # only inside another: none)
    return out


def files_present(paths: Any) -> bool:
    """Whether every file named in ``paths`` (from :func:`module_files`) exists: a quick
    check, without Numba, that loading them will not compile (an evicted file makes the
    load compile in-process instead: slower, and right)."""
    return all(os.path.exists(p) for p in paths)


# --------------------------------------------------------------------------- internals


def _get_version_tag() -> str:
    global _version_tag
    if _version_tag is None:
        import numba
        import numpy

        helpers = _helpers_digest()
        _refresh_helper_caches(helpers)
        _version_tag = (
            f"numba={numba.__version__};numpy={numpy.__version__};"
            f"python={sys.implementation.cache_tag}:{'.'.join(map(str, sys.version_info[:3]))}"
            f";helpers={helpers}"
        )
    return _version_tag


#: runtime modules whose njit functions generated code calls: Numba caches a caller with
#: its callees compiled in, and does not notice when a callee's source changes
_HELPERS = ("cpu/mathlib.py", "cpu/erf.py", "cpu/blas.py", "cpu/scan.py", "cpu/window.py")


def _helpers_digest() -> str:
    h = hashlib.sha256()
    here = Path(__file__).parent
    for rel in _HELPERS:
        h.update((here / rel).read_bytes())
    return h.hexdigest()[:16]


def _helper_cache_dir(path: Path) -> Path | None:
    """Where Numba caches the njit functions of the module at ``path`` (its own locators,
    in their order: ``NUMBA_CACHE_DIR``, beside the file, the user's cache)."""
    from numba.core import caching
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl

    def placeholder():  # (the locators read only a function's first line number)
        pass
    for cls in impl._locator_classes:
        try:
            loc = cls.from_function(placeholder, str(path))
        except Exception:  # noqa: BLE001 - a locator that does not apply here
            loc = None
        if loc is not None:
            return Path(loc.get_cache_path())
    return None


def _refresh_helper_caches(digest: str) -> None:
    """Numba caches a helper (the scan in ``cpu/scan.py``) with the helpers it calls
    (``cpu/blas.py``'s product) compiled in, and checks only the helper's own file: after
    an edit of ``blas.py`` alone (a ``git pull`` into an editable install) the scan's
    cached code would still run the old product.  So the helpers' Numba cache files are
    deleted when the helpers' digest differs from the one noted beside them (Numba then
    compiles them again, once).  The helpers share one folder, so Numba caches them in
    one folder, under one note.  A cache folder that cannot be written is left as it is
    (Numba does not write there either)."""
    here = Path(__file__).parent
    tag = "py{}{}".format(*sys.version_info[:2])   # (Numba's file names: scan.forward-61.py311.nbi)
    try:
        d = _helper_cache_dir(here / _HELPERS[0])
        if d is None:
            return
        stamp = d / f"dyngraph-helpers.{tag}"
        if stamp.exists() and stamp.read_text() == digest:
            return
        for stem in (Path(rel).stem for rel in _HELPERS):
            for f in list(d.glob(f"{stem}.*-*.{tag}.nbi")) + \
                    list(d.glob(f"{stem}.*-*.{tag}.*.nbc")):
                f.unlink(missing_ok=True)
        tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
        tmp.write_text(digest)
        os.replace(tmp, stamp)
    except OSError:
        return


def _module_name(source: str, prefix: str) -> str:
    h = hashlib.sha256()
    h.update(_get_version_tag().encode())
    h.update(b"\0")
    h.update(source.encode("utf-8"))
    name = f"{prefix}_{h.hexdigest()[:_KEY_HEX_CHARS]}"
    if not name.isidentifier():
        raise ValueError(f"prefix {prefix!r} does not give a valid module name")
    return name


def _load_slow(source: str, prefix: str) -> types.ModuleType:
    if not isinstance(source, str):
        raise TypeError(f"source must be str, not {type(source).__name__}")
    with _lock:
        mods = _memory.get(prefix)
        if mods is None:
            mods = _memory[prefix] = {}
        mod = mods.get(source)  # another thread may have loaded it meanwhile
        if mod is not None:
            _stats["memory_hits"] += 1
            return mod
        name = _module_name(source, prefix)
        try:
            directory = cache_dir()
        except OSError as exc:
            _log.warning("dyngraph cache dir unusable (%s); caching in memory only", exc)
            directory = None
        if directory is None:
            mod = _exec_in_memory(source, name)
        else:
            mod = _load_from_disk(source, name, directory)
        mods[source] = mod
        return mod


def _load_from_disk(source: str, name: str, directory: Path) -> types.ModuleType:
    path = directory / f"{name}.py"
    data = source.encode("utf-8")
    try:
        wrote = _ensure_source(path, data, name)
    except OSError as exc:
        _log.warning("cannot write %s (%s); caching in memory only", path, exc)
        return _exec_in_memory(source, name)
    try:
        mod = _import_file(name, path, data)
    except Exception as exc:  # noqa: BLE001 - rebuild once, then re-raise the original
        first = exc
    else:
        _stats["builds" if wrote else "disk_loads"] += 1
        return mod

    _log.warning("executing cached module %s failed (%r); rebuilding it", path, first)
    _purge_entry(path, name)
    try:
        _ensure_source(path, data, name)
        mod = _import_file(name, path, data)
    except Exception:  # noqa: BLE001
        mod = None
    if mod is None:  # raised outside the except block to keep ``first``'s own context
        _purge_entry(path, name)
        raise first
    _stats["builds"] += 1
    _stats["rebuilds"] += 1
    return mod


def _ensure_source(path: Path, data: bytes, name: str) -> bool:
    """Make ``path`` contain exactly ``data``. Returns True if it was written."""
    existing = _read_own(path)
    if existing == data:
        return False
    if existing is not None:
        # Corrupt/truncated: its .pyc and Numba files may describe the bad text.
        _purge_entry(path, name)
    _atomic_write(path, data)
    return True


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; cache files are not secret
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_own(path: Path) -> bytes | None:
    """The bytes of ``path``, or None when it is missing or not this user's file."""
    try:
        with open(path, "rb") as f:
            if hasattr(os, "getuid") and os.fstat(f.fileno()).st_uid != os.getuid():
                return None
            return f.read()
    except FileNotFoundError:
        return None


def source_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _import_file(name: str, path: Path, data: bytes | None = None,
                 digest: str | None = None) -> types.ModuleType:
    """Execute the file ``path`` as module ``name``: from ``data`` (bytes just checked to
    be the expected source), else from the file's bytes if their sha256 is ``digest``.
    Compiled from those bytes here: no ``.pyc`` is read or written."""
    if data is None:
        data = _read_own(path)
        if data is None or digest is None or source_digest(data) != digest:
            raise ImportError(f"{path} is not the source this process wrote there: not "
                              "loaded")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - .py always has a loader
        raise ImportError(f"cannot create an import spec for {path}")
    mod = importlib.util.module_from_spec(spec)
    mod.__dg_sha256__ = source_digest(data)  # what a compile worker checks before loading
    code = compile(data, str(path), "exec", dont_inherit=True)
    _trust_numba_files_of(name)
    sys.modules[name] = mod  # before exec: Numba's cache loader imports it by name
    try:
        exec(code, mod.__dict__)  # noqa: S102 - verified generated kernels
    except BaseException:
        if sys.modules.get(name) is mod:
            del sys.modules[name]
        raise
    _guard_numba_caches(mod)
    return mod


# -- Numba's cache files: written with a record of their content, read only when they match

_our_modules: set[str] = set()  # names of the modules whose Numba files are checked
_numba_patched = False
_SIDECAR = ".sha256"


def _trust_numba_files_of(name: str) -> None:
    """Check Numba's cache files of module ``name`` (install the check on first use)."""
    global _numba_patched
    _our_modules.add(name)
    if _numba_patched:
        return
    with _lock:
        if _numba_patched:
            return
        from numba.core.caching import IndexDataCacheFile
        patch_index_data_cache_file(IndexDataCacheFile)
        _numba_patched = True


def _ours(cache_file: Any) -> bool:
    return cache_file._index_name.split(".", 1)[0] in _our_modules


def _write_recorded(cache_file: Any, path: str, data: bytes) -> None:
    with cache_file._open_for_write(path) as f:
        f.write(data)
    with cache_file._open_for_write(path + _SIDECAR) as f:
        f.write(source_digest(data).encode())


def _read_checked(path: str) -> bytes | None:
    """``path``'s bytes if they match their record (None if missing; raises
    _Untrusted, after deleting the file, if they do not match)."""
    data = _read_own(Path(path))
    if data is None:
        if os.path.exists(path):
            _discard_untrusted(path, "it is not your file")
        return None
    record = _read_own(Path(path + _SIDECAR))
    if record is None or record.decode(errors="replace").strip() != source_digest(data):
        _discard_untrusted(path, "its content is not what was recorded when it was written"
                           if record is not None else "it has no record of its content")
    return data


class _Untrusted(OSError):
    pass


def _discard_untrusted(path: str, why: str):
    _log.warning("dyngraph: not loading Numba cache file %s: %s; deleting it (Numba "
                 "recompiles)", path, why)
    _stats["numba_repairs"] += 1
    for p in (path, path + _SIDECAR):
        with contextlib.suppress(OSError):
            os.unlink(p)
    raise _Untrusted(f"untrusted Numba cache file {path}")


def patch_index_data_cache_file(cls: Any) -> None:
    """Numba's index/data file class, for the modules loaded here: write a record of each
    file's content next to it, and unpickle a file only after checking it."""
    load_index, save_index = cls._load_index, cls._save_index
    load_data, save_data = cls._load_data, cls._save_data

    def _load_index(self):
        if not _ours(self):
            return load_index(self)
        try:
            data = _read_checked(self._index_path)
        except _Untrusted:
            return {}
        if data is None:
            return {}
        f = io.BytesIO(data)
        version = pickle.load(f)
        if version != self._version:
            return {}
        stamp, overloads = pickle.loads(f.read())
        return overloads if stamp == self._source_stamp else {}

    def _save_index(self, overloads):
        if not _ours(self):
            return save_index(self, overloads)
        data = pickle.dumps(self._version, protocol=-1) + self._dump(
            (self._source_stamp, overloads))
        _write_recorded(self, self._index_path, data)

    def _load_data(self, name):
        if not _ours(self):
            return load_data(self, name)
        data = _read_checked(self._data_path(name))  # _Untrusted is an OSError: a miss
        if data is None:
            raise FileNotFoundError(self._data_path(name))
        return pickle.loads(data)

    def _save_data(self, name, data):
        if not _ours(self):
            return save_data(self, name, data)
        _write_recorded(self, self._data_path(name), self._dump(data))

    cls._load_index, cls._save_index = _load_index, _save_index
    cls._load_data, cls._save_data = _load_data, _save_data


class _DisableNumbaCache(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if fname in _NUMBA_DECORATORS:
            for kw in node.keywords:
                if kw.arg == "cache":
                    kw.value = ast.copy_location(ast.Constant(False), kw.value)
        return node


def _exec_in_memory(source: str, name: str) -> types.ModuleType:
    tree = _DisableNumbaCache().visit(ast.parse(source, filename=f"<{name}>"))
    code = compile(tree, f"<{name}>", "exec")
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    try:
        exec(code, mod.__dict__)  # noqa: S102 - executing generated kernels is the point
    except BaseException:
        if sys.modules.get(name) is mod:
            del sys.modules[name]
        raise
    _stats["builds"] += 1
    return mod


def _purge_entry(path: Path, name: str) -> None:
    """Delete an entry's source, its .pyc and Numba's index/data files."""
    candidates: list[Path] = [path]
    try:
        candidates.append(Path(importlib.util.cache_from_source(str(path))))
    except (NotImplementedError, ValueError):  # pragma: no cover
        pass
    numba_dirs = [path.parent / "__pycache__"]
    try:
        from numba.core import caching, config

        if config.CACHE_DIR:
            sub = caching._CacheLocator.get_suitable_cache_subpath(str(path))
            numba_dirs.append(Path(config.CACHE_DIR) / sub)
    except Exception as exc:  # noqa: BLE001 - best effort, private Numba API
        _log.debug("cannot locate $NUMBA_CACHE_DIR files for %s: %r", path, exc)
    for d in numba_dirs:
        for ext in ("nbi", "nbc", "nbi" + _SIDECAR, "nbc" + _SIDECAR):
            candidates.extend(d.glob(f"{name}.*.{ext}"))
    for p in candidates:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            _log.warning("could not delete cache file %s: %s", p, exc)


def _guard_numba_caches(mod: types.ModuleType) -> None:
    """Make Numba's lazy disk-cache load of every dispatcher in ``mod`` self-healing."""
    try:
        from numba.core.caching import Cache
        from numba.core.dispatcher import Dispatcher
    except ImportError:  # pragma: no cover
        return
    for obj in list(vars(mod).values()):
        if not isinstance(obj, Dispatcher):
            continue
        cache = getattr(obj, "_cache", None)
        if isinstance(cache, Cache) and "load_overload" not in vars(cache):
            cache.load_overload = _guarded_loader(cache, cache.load_overload, obj)


def _quick_load(cache: Any, load: Callable[..., Any]) -> Callable[..., Any]:
    """Numba's ``load_overload`` without its ``target_context.refresh()``: that imports and
    installs every typing and lowering registry (0.3-0.5 s in a new process, the larger
    part of the first load of a process), which rebuilding machine code from the cache
    does not use; a compile refreshes the context itself (``compile_extra``).  Loading
    needs the runtime (NRT) set up, which is done here.  Numba's own method where its
    private API is not the one known here."""
    inner = getattr(cache, "_load_overload", None)
    guard = getattr(cache, "_guard_against_spurious_io_errors", None)
    try:
        from numba.core.runtime import rtsys
    except ImportError:  # pragma: no cover - another Numba
        rtsys = None
    if inner is None or guard is None or rtsys is None or \
            not hasattr(rtsys, "initialize"):
        return load

    def quick(sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)
        with guard():
            return inner(sig, target_context)
        return None  # the guard swallowed an I/O error: a miss, Numba compiles

    return quick


def _guarded_loader(cache: Any, load: Callable[..., Any], disp: Any) -> Callable[..., Any]:
    load = _quick_load(cache, load)

    def load_overload(sig: Any, target_context: Any) -> Any:
        try:
            return load(sig, target_context)
        except Exception as exc:  # noqa: BLE001 - corrupt/unreadable Numba cache files
            _log.warning(
                "discarding corrupt Numba cache for %s in %s (%r); recompiling",
                getattr(getattr(disp, "py_func", None), "__qualname__", disp),
                cache.cache_path,
                exc,
            )
            _stats["numba_repairs"] += 1
            try:
                cache.flush()  # rewrite an empty, valid index; Numba then recompiles + saves
            except Exception:  # noqa: BLE001
                cache.disable()
            return None

    return load_overload
