"""The kernel cache runs nothing it did not write: files planted in the cache directory
(a ``numba.py``, a ``.pyc`` whose header matches its source, a source under an entry's
name, a replaced Numba index or data pickle) never run, and a directory that others can
write into, or that belongs to someone else, is refused with a warning naming the fix.
Each planted file would create a marker file if it ran."""

from __future__ import annotations

import importlib.util
import marshal
import os
import pickle
import runpy
import stat
import sys
import textwrap
from pathlib import Path

import numba
import pytest

from runtime import cache
from runtime.cpu import compile_worker

PLAIN_SRC = "X = 41\n\ndef get():\n    return X + 1\n"

NUMBA_SRC = textwrap.dedent(
    """\
    import numba

    @numba.njit(cache=True)
    def affine(x):
        return x * 2.0 + 1.0
    """
)


@pytest.fixture(autouse=True)
def cdir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("DYNGRAPH_CACHE_DIR", str(d))
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")  # Numba's files next to ours
    cache.set_cache_dir(None)
    cache.clear_memory_cache()
    yield d
    cache.set_cache_dir(None)
    cache.clear_memory_cache()


@pytest.fixture
def marker(tmp_path):
    return tmp_path / "PLANTED_CODE_RAN"


def evil_source(marker: Path, extra: str = "") -> str:
    return f"open({str(marker)!r}, 'w').write('ran')\n" + extra


class Evil:
    """A pickle that runs code when loaded."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


def test_a_planted_module_named_like_a_library_never_runs_in_the_worker(cdir, marker,
                                                                        tmp_path):
    cdir.mkdir(mode=0o700)
    for lib in ("numba", "numpy", "llvmlite"):
        (cdir / f"{lib}.py").write_text(evil_source(marker))
    out = tmp_path / "where.txt"
    script = tmp_path / "imports.py"
    script.write_text(f"import numba, numpy\nopen({str(out)!r}, 'w').write(numba.__file__)\n")
    cache.set_cache_dir(cdir)
    try:
        assert compile_worker.call(runpy.run_path, str(script))
    finally:
        cache.set_cache_dir(None)
    assert not marker.exists(), "a numba.py planted in the cache directory ran in the worker"
    assert Path(out.read_text()).parent != cdir


def test_a_planted_pyc_matching_the_source_header_never_runs(cdir, marker):
    m = cache.load_module(PLAIN_SRC)
    path = Path(m.__file__)
    st = path.stat()
    code = compile(evil_source(marker, "def get():\n    return 666\n"), str(path), "exec")
    pyc = Path(importlib.util.cache_from_source(str(path)))
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
                    + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                    + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little") + marshal.dumps(code))
    cache.clear_memory_cache()
    assert cache.load_module(PLAIN_SRC).get() == 42
    assert not marker.exists(), "a planted .pyc ran"


def test_a_planted_source_under_an_entrys_name_never_runs(cdir, marker):
    cdir.mkdir(mode=0o700)
    name = cache._module_name(PLAIN_SRC, "dg")
    (cdir / f"{name}.py").write_text(evil_source(marker, "def get():\n    return 666\n"))
    assert cache.load_module(PLAIN_SRC).get() == 42
    assert not marker.exists()
    assert (cdir / f"{name}.py").read_text() == PLAIN_SRC  # rewritten


@pytest.mark.parametrize("kind", ["nbi", "nbc"])
def test_a_replaced_numba_pickle_never_runs(cdir, marker, kind):
    m = cache.load_module(NUMBA_SRC)
    assert m.affine(1.0) == 3.0
    files = sorted(Path(m.affine.stats.cache_path).glob(f"{m.__name__}.*.{kind}"))
    assert files and all(Path(str(f) + ".sha256").exists() for f in files)
    for f in files:
        if kind == "nbi":  # Numba unpickles the version first, then the index
            f.write_bytes(pickle.dumps(Evil(marker)) + pickle.dumps(Evil(marker)))
        else:
            f.write_bytes(pickle.dumps(Evil(marker)))
    cache.clear_memory_cache()
    m2 = cache.load_module(NUMBA_SRC)
    assert m2.affine(2.0) == 5.0  # recompiled
    assert not marker.exists(), f"a replaced Numba .{kind} pickle ran"
    assert cache.cache_stats()["numba_repairs"] >= 1
    cache.clear_memory_cache()  # what Numba wrote again is trusted again
    m3 = cache.load_module(NUMBA_SRC)
    assert m3.affine(3.0) == 7.0
    assert sum(m3.affine.stats.cache_hits.values()) == 1


def test_a_numba_pickle_without_a_record_is_not_loaded(cdir, marker):
    m = cache.load_module(NUMBA_SRC)
    m.affine(1.0)
    for f in Path(m.affine.stats.cache_path).glob(f"{m.__name__}.*.nbi.sha256"):
        f.unlink()  # as a file planted with no record
    for f in Path(m.affine.stats.cache_path).glob(f"{m.__name__}.*.nbi"):
        f.write_bytes(pickle.dumps(Evil(marker)))
    cache.clear_memory_cache()
    assert cache.load_module(NUMBA_SRC).affine(2.0) == 5.0
    assert not marker.exists()


def test_the_worker_loads_a_module_only_with_the_recorded_digest(cdir, marker):
    m = cache.load_module(NUMBA_SRC)
    path, digest = m.__file__, m.__dg_sha256__
    sig = "float64(float64)"
    assert compile_worker.call(compile_worker._compile_function, path, m.__name__, "affine",
                               sig, digest)
    Path(path).write_text(evil_source(marker, NUMBA_SRC))  # replaced after it was loaded
    compile_worker._stop()  # a new worker, which reads the file
    assert not compile_worker.call(compile_worker._compile_function, path, m.__name__,
                                   "affine", "int64(int64)", digest)
    assert not marker.exists(), "a source replaced after loading ran in the worker"


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777, 0o722])
def test_a_directory_others_can_write_is_refused(tmp_path, monkeypatch, mode):
    d = tmp_path / f"shared{mode:o}"
    d.mkdir()
    os.chmod(d, mode)
    monkeypatch.setenv("DYNGRAPH_CACHE_DIR", str(d))
    with pytest.warns(RuntimeWarning, match=rf"not using the kernel cache directory {d}: "
                                            rf".*group or others may write.*Fix: chmod go-w"):
        assert cache.cache_dir() is None
    assert cache.load_module(PLAIN_SRC).get() == 42  # in memory
    assert list(d.iterdir()) == []
    assert not compile_worker.call(runpy.run_path, str(tmp_path / "x.py"))


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="making a directory that belongs to another user needs root")
def test_a_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    d = tmp_path / "theirs"
    d.mkdir(mode=0o755)
    os.chown(d, 65534, 65534)
    monkeypatch.setenv("DYNGRAPH_CACHE_DIR", str(d))
    with pytest.warns(RuntimeWarning, match=r"belongs to uid 65534, not to you.*Fix: chown"):
        assert cache.cache_dir() is None
    assert cache.load_module(PLAIN_SRC).get() == 42


def test_the_default_directory_is_private(tmp_path, monkeypatch):
    monkeypatch.delenv("DYNGRAPH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    d = cache.cache_dir()
    assert d == tmp_path / "xdg" / "dyngraph"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    os.chmod(d, 0o755)  # made by an older version: tightened
    assert cache.cache_dir() == d and stat.S_IMODE(d.stat().st_mode) == 0o700
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    d = cache.cache_dir()
    assert d == tmp_path / "home" / ".cache" / "dyngraph"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


def test_no_pyc_is_written(cdir):
    m = cache.load_module(PLAIN_SRC)
    assert not Path(importlib.util.cache_from_source(m.__file__)).exists()
    assert sys.modules[m.__name__] is m
