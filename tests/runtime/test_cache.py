import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numba
import pytest

from runtime import cache

REPO_ROOT = Path(__file__).resolve().parents[2]

PLAIN_SRC = "X = 41\n\ndef get():\n    return X + 1\n"

NUMBA_SRC = textwrap.dedent(
    """\
    import numba

    @numba.njit(cache=True)
    def affine(x):
        return x * 2.0 + 1.0
    """
)

EAGER_SRC = textwrap.dedent(
    """\
    import numba

    @numba.njit("float64(float64)", cache=True)
    def triple(x):
        return x * 3.0
    """
)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own cache dir; never touch the user's real one."""
    d = tmp_path / "cache"
    monkeypatch.setenv("DYNGRAPH_CACHE_DIR", str(d))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # Ignore $NUMBA_CACHE_DIR: keep Numba's cache files next to ours, in tmp_path.
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    cache.set_cache_dir(None)
    cache.clear_memory_cache()
    yield d
    cache.set_cache_dir(None)
    cache.clear_memory_cache()


def _numba_files(fn, modname, ext):
    return sorted(Path(fn.stats.cache_path).glob(f"{modname}.*.{ext}"))


# --------------------------------------------------------------------------- basics


def test_memory_hit_returns_same_module(_isolated_cache):
    m1 = cache.load_module(PLAIN_SRC)
    m2 = cache.load_module(PLAIN_SRC)
    assert m1 is m2
    assert m1.get() == 42
    assert m1.__name__.startswith("dg_") and len(m1.__name__) == 3 + 20
    assert sys.modules[m1.__name__] is m1
    assert Path(m1.__file__) == _isolated_cache / f"{m1.__name__}.py"
    assert Path(m1.__file__).read_text() == PLAIN_SRC
    assert cache.cache_stats() == {
        "memory_hits": 1,
        "disk_loads": 0,
        "builds": 1,
        "rebuilds": 0,
        "numba_repairs": 0,
    }


def test_prefix_and_load_function():
    m = cache.load_module(PLAIN_SRC, prefix="kern")
    assert m.__name__.startswith("kern_")
    assert m is not cache.load_module(PLAIN_SRC)
    assert cache.load_function(PLAIN_SRC, "get")() == 42
    with pytest.raises(ValueError):
        cache.load_module(PLAIN_SRC, prefix="not valid")


def test_key_depends_on_versions(monkeypatch):
    name = cache.load_module(PLAIN_SRC).__name__
    cache.clear_memory_cache()
    monkeypatch.setattr(cache, "_version_tag", "numba=999")
    assert cache.load_module(PLAIN_SRC).__name__ != name


@pytest.mark.regression("runtime/cpu/window.py (pooling and convolution helpers that native "
                        "whole-trace code calls) was not among the helpers whose source is "
                        "in the key: an edited or upgraded window.py left cached native "
                        "functions running its old code")
def test_every_runtime_module_with_compiled_helpers_is_in_the_key():
    """Numba caches a caller with its callees compiled in: every runtime module defining
    njit functions (that generated code calls) must change the kernels' names when its
    source does; ``erf.py`` holds mathlib's tables."""
    cpu = REPO_ROOT / "runtime" / "cpu"
    defining = {f"cpu/{p.name}" for p in cpu.glob("*.py")
                if re.search(r"^@(numba\.)?njit", p.read_text(), re.M)}
    assert defining, "no module with compiled helpers found"
    assert defining <= set(cache._HELPERS), defining - set(cache._HELPERS)
    assert "cpu/erf.py" in cache._HELPERS
    # (one folder: _refresh_helper_caches keeps one note for their one cache folder)
    assert len({Path(rel).parent for rel in cache._HELPERS}) == 1


@pytest.mark.regression("the native scan's cached code (runtime/cpu/scan.py) kept running "
                        "blas.py's old product after blas.py alone was edited: Numba checks "
                        "only a cached function's own file")
def test_helpers_numba_caches_are_dropped_when_any_helper_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    scan = REPO_ROOT / "runtime" / "cpu" / "scan.py"
    d = cache._helper_cache_dir(scan)
    assert d is not None and str(d).startswith(str(tmp_path))
    tag = "py{}{}".format(*sys.version_info[:2])
    d.mkdir(parents=True, exist_ok=True)

    def files(*names):
        for n in names:
            (d / n).write_bytes(b"x")
        return names
    stale = files(f"scan.forward-61.{tag}.nbi", f"scan.forward-61.{tag}.1.nbc")
    other = files(f"scanner.f-3.{tag}.nbi", "scan.forward-61.py27.nbi")
    cache._refresh_helper_caches("old")
    assert not any((d / n).exists() for n in stale)   # no note yet: dropped
    assert all((d / n).exists() for n in other)
    kept = files(f"scan.backward-140.{tag}.nbi")
    cache._refresh_helper_caches("old")
    assert all((d / n).exists() for n in kept)        # same helpers: kept
    cache._refresh_helper_caches("edited")
    assert not any((d / n).exists() for n in kept)
    assert all((d / n).exists() for n in other)


def test_disk_load_after_memory_clear():
    m1 = cache.load_module(PLAIN_SRC)
    cache.clear_memory_cache()
    assert m1.__name__ not in sys.modules
    m2 = cache.load_module(PLAIN_SRC)
    assert m2 is not m1 and m2.get() == 42
    assert cache.cache_stats()["disk_loads"] == 1
    assert cache.cache_stats()["builds"] == 0


def test_cache_dir_resolution(tmp_path, monkeypatch):
    d = tmp_path / "a" / "b"
    monkeypatch.setenv("DYNGRAPH_CACHE_DIR", str(d))
    assert cache.cache_dir() == d and d.is_dir()  # re-read + created on demand
    monkeypatch.delenv("DYNGRAPH_CACHE_DIR")
    assert cache.cache_dir() == tmp_path / "xdg" / "dyngraph"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "dyngraph"
    cache.set_cache_dir(tmp_path / "override")
    assert cache.cache_dir() == tmp_path / "override"
    cache.set_cache_dir("off")
    assert cache.cache_dir() is None
    cache.set_cache_dir(None)
    monkeypatch.setenv("DYNGRAPH_CACHE_DIR", "OFF")
    assert cache.cache_dir() is None


def test_threads_build_once():
    src = PLAIN_SRC + "# threads\n"
    results = []
    barrier = threading.Barrier(8)

    def worker():
        barrier.wait()
        results.append(cache.load_module(src))

    ts = [threading.Thread(target=worker) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(results) == 8 and all(m is results[0] for m in results)
    assert cache.cache_stats()["builds"] == 1


# --------------------------------------------------------------------------- disk robustness


def test_truncated_source_is_rewritten():
    path = Path(cache.load_module(PLAIN_SRC).__file__)
    path.write_text(PLAIN_SRC[:10])  # truncated: "X = 41\n\nde" would not even parse
    cache.clear_memory_cache()
    m = cache.load_module(PLAIN_SRC)
    assert m.get() == 42
    assert path.read_text() == PLAIN_SRC
    assert cache.cache_stats()["builds"] == 1


def test_atomic_write_leaves_no_temp_files(_isolated_cache):
    for i in range(5):
        cache.load_module(PLAIN_SRC + f"# {i}\n")
    names = sorted(p.name for p in _isolated_cache.iterdir() if p.name != "__pycache__")
    assert len(names) == 5 and all(n.startswith("dg_") and n.endswith(".py") for n in names)


def test_failed_write_cleans_temp_and_falls_back_to_memory(_isolated_cache, monkeypatch):
    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(cache.os, "replace", broken_replace)
    m = cache.load_module(PLAIN_SRC)
    assert m.get() == 42
    assert not hasattr(m, "__file__")
    assert [p for p in _isolated_cache.iterdir() if p.name != "__pycache__"] == []


def test_failing_module_raises_original_error_and_cleans_up(_isolated_cache):
    src = "raise LookupError('boom')\n"
    name = cache._module_name(src, "dg")
    with pytest.raises(LookupError, match="boom"):
        cache.load_module(src)
    assert name not in sys.modules
    assert list(_isolated_cache.glob("*.py")) == []  # broken entry purged
    with pytest.raises(LookupError):  # not memoized
        cache.load_module(src)


# --------------------------------------------------------------------------- Numba integration


@pytest.mark.parametrize("corrupt", ["nbi", "nbc"])
def test_corrupt_numba_cache_files_are_repaired(corrupt):
    m = cache.load_module(NUMBA_SRC)
    assert m.affine(1.0) == 3.0
    files = _numba_files(m.affine, m.__name__, corrupt)
    assert files, "Numba should have written its cache next to the source"
    for f in files:
        f.write_bytes(b"\x80\x04garbage" * 3)

    cache.clear_memory_cache()
    m2 = cache.load_module(NUMBA_SRC)
    assert m2.affine(2.0) == 5.0  # no crash: recompiled
    assert cache.cache_stats()["numba_repairs"] == 1
    assert sum(m2.affine.stats.cache_misses.values()) == 1

    cache.clear_memory_cache()  # the repaired Numba cache is valid again
    m3 = cache.load_module(NUMBA_SRC)
    assert m3.affine(3.0) == 7.0
    assert sum(m3.affine.stats.cache_hits.values()) == 1
    assert cache.cache_stats()["numba_repairs"] == 0


def test_corrupt_numba_index_with_eager_signature_rebuilds_entry():
    # An explicit signature compiles (and reads Numba's cache) while the module
    # executes: the corrupt index does not match the record of its content written
    # with it, so it is discarded unread and Numba recompiles (no exec failure).
    m = cache.load_module(EAGER_SRC)
    assert m.triple(2.0) == 6.0
    for f in _numba_files(m.triple, m.__name__, "nbi"):
        f.write_bytes(b"not a pickle")
    cache.clear_memory_cache()
    m2 = cache.load_module(EAGER_SRC)
    assert m2.triple(3.0) == 9.0
    stats = cache.cache_stats()
    assert stats["numba_repairs"] == 1 and stats["disk_loads"] == 1


def test_off_mode_executes_in_memory_with_numba_cache_true(_isolated_cache, monkeypatch):
    monkeypatch.setenv("DYNGRAPH_CACHE_DIR", "off")
    m = cache.load_module(NUMBA_SRC)
    assert cache.load_module(NUMBA_SRC) is m
    assert not hasattr(m, "__file__")
    assert m.affine(4.0) == 9.0
    assert m.affine._cache.__class__.__name__ == "NullCache"
    assert cache.cache_stats()["builds"] == 1
    assert not _isolated_cache.exists()


_CHILD = textwrap.dedent(
    """\
    import json, sys
    from runtime import cache
    m = cache.load_module(sys.stdin.read())
    y = m.affine(5.0)
    st = m.affine.stats
    print(json.dumps({
        "y": y,
        "stats": cache.cache_stats(),
        "numba_hits": sum(st.cache_hits.values()),
        "numba_misses": sum(st.cache_misses.values()),
        "cache_path": st.cache_path,
    }))
    """
)


def _child_env():
    env = dict(os.environ)  # DYNGRAPH_CACHE_DIR is set by the fixture
    env.pop("NUMBA_CACHE_DIR", None)  # keep Numba's files next to our source
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def test_concurrent_processes_write_same_entry(_isolated_cache):
    code = f"from runtime import cache; print(cache.load_module({PLAIN_SRC!r}).get())"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=_child_env(), stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0] * 4 and outs == ["42"] * 4
    # one intact file, no temp files
    (entry,) = [p for p in _isolated_cache.iterdir() if p.name != "__pycache__"]
    assert entry.read_text() == PLAIN_SRC


def test_new_process_loads_from_disk_and_numba_cache(_isolated_cache):
    env = _child_env()

    def run():
        out = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=NUMBA_SRC,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = run()
    assert first["y"] == 11.0
    assert first["stats"]["builds"] == 1 and first["stats"]["disk_loads"] == 0
    assert (first["numba_hits"], first["numba_misses"]) == (0, 1)
    assert Path(first["cache_path"]) == _isolated_cache / "__pycache__"

    second = run()
    assert second["y"] == 11.0
    assert second["stats"]["builds"] == 0 and second["stats"]["disk_loads"] == 1
    assert (second["numba_hits"], second["numba_misses"]) == (1, 0)  # no recompilation
