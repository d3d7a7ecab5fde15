"""The compile worker (runtime.cpu.compile_worker) and the tiering policy around it
(compiler.tiers): work done in another process, remembered in the cache directory, and a
program that ends before its kernels are built exits without waiting for them."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from compiler import tiers
from runtime import cache
from runtime.cpu import compile_worker

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_call_runs_in_another_process_and_is_remembered(tmp_path):
    cache.set_cache_dir(tmp_path / "cache")
    try:
        out = tmp_path / "pid.txt"
        script = tmp_path / "pid.py"  # what the worker runs (its functions must import)
        script.write_text(f"import os\nopen({str(out)!r}, 'w').write(str(os.getpid()))\n")
        assert compile_worker.call(runpy.run_path, str(script))
        pid = int(out.read_text())
        assert pid != os.getpid()
        out.unlink()
        # the same request again: done before (a marker in the cache dir), not re-sent
        assert compile_worker.call(runpy.run_path, str(script))
        assert not out.exists()
        assert list((tmp_path / "cache" / "built").glob("*.done"))
        # an error there is reported as "not done": the caller does the work itself
        assert not compile_worker.call(runpy.run_path, str(tmp_path / "missing.py"))
        # a request that cannot be pickled is not sent
        assert not compile_worker.call(lambda: None)
    finally:
        cache.set_cache_dir(None)


def test_no_worker_without_a_disk_cache(tmp_path):
    cache.set_cache_dir("off")
    try:
        script = tmp_path / "pid.py"
        script.write_text(f"open({str(tmp_path / 'pid.txt')!r}, 'w').write('1')\n")
        assert not compile_worker.call(runpy.run_path, str(script))
        assert not (tmp_path / "pid.txt").exists()
    finally:
        cache.set_cache_dir(None)


def test_worth_loading_policy():
    now = time.perf_counter()
    assert not tiers.worth_loading(now - 10, 0, False)       # never replayed
    assert tiers.worth_loading(now, 1, False)                # Numba loaded here already
    assert not tiers.worth_loading(now, 5, True)             # first load: not yet
    assert tiers.worth_loading(now - tiers.FIRST_LOAD_AFTER - 0.01, 5, True)


def test_a_short_program_exits_without_waiting_for_its_kernels(tmp_path):
    """A compiled function called a few times in a program that then ends: the process
    ends at once (its build thread is a daemon; the worker finishes the build after it),
    and a second run finds what the first worker finished (or builds it)."""
    script = tmp_path / "short.py"
    script.write_text(textwrap.dedent("""
        import eager as torch, compiler
        from eager import nn
        lin = nn.Linear(3, 2)
        f = compiler.compile(lambda x: torch.log_softmax(lin(x), dim=1).sum())
        x = torch.randn(4, 3)
        for _ in range(3):
            y = f(x)
        print(float(y), float(torch.log_softmax(lin(x), dim=1).sum()))
    """))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["DYNGRAPH_CACHE_DIR"] = str(tmp_path / "cache")
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                       text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    compiled, eager_value = map(float, p.stdout.split())
    assert abs(compiled - eager_value) <= 1e-5 * max(1.0, abs(eager_value))


def test_builds_are_prepared_only_after_a_second_of_running_or_on_wait(tmp_path):
    """Preparing a build (optimizing and pickling graphs on the compile thread, starting
    the worker) waits until the function has run FIRST_LOAD_AFTER seconds: the program's
    first calls never compete with it; compiler.wait() starts it at once."""
    script = tmp_path / "hold.py"
    script.write_text(textwrap.dedent("""
        import time
        import eager as torch, compiler
        from compiler import tiers
        from runtime.cpu import compile_worker
        f = compiler.compile(lambda x: (x * 2.0).tanh().sum())
        x = torch.randn(64)
        t0 = time.perf_counter()
        for _ in range(5):
            f(x)
        time.sleep(0.2)   # the compile thread had time to start, if it were going to
        early = time.perf_counter() - t0 < tiers.FIRST_LOAD_AFTER
        print(early, compile_worker._proc is None, tiers.pending())
        compiler.wait()
        print(compile_worker._proc is not None or compile_worker._broken, tiers.pending())
    """))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["DYNGRAPH_CACHE_DIR"] = str(tmp_path / "cache")
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                       text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    first, second = p.stdout.split("\n")[:2]
    early, no_worker, pending = first.split()
    assert early == "True" and no_worker == "True" and int(pending) >= 1
    started, pending = second.split()
    assert started == "True" and pending == "0"


_SHORT = textwrap.dedent("""
    import json
    import eager as torch, compiler
    f = compiler.compile(lambda x: (torch.tanh(x * 2.0 + 1.0) * 3.0).sum())
    x = torch.linspace(-2.0, 2.0, 64)
    values = [f(x).item() for _ in range(3)]   # a trace and two replays, then the end
    t = f.explain(wait=False).traces[0]
    print(json.dumps({"kernels": len(t["kernels"]), "python_replays": t["python_replays"],
                      "values": values, "eager": (torch.tanh(x * 2.0 + 1.0) * 3.0).sum().item()}))
""")


def _finishers(cache_dir: Path) -> list:
    """Processes building for ``cache_dir`` (Linux: their command lines)."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if b"runtime.cpu.compile_worker" in cmd and str(cache_dir).encode() in cmd:
                out.append(int(pid))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_builds_a_program_did_not_wait_for_are_finished_for_its_next_run(tmp_path):
    """A program that ends before its kernels are built (a short script) hands the builds to
    the worker, which finishes them after the program and then exits: the next run of the
    program loads them from the disk cache at its first replay.  Both runs compute eager's
    values."""
    cache_dir = tmp_path / "cache"
    env = dict(os.environ, DYNGRAPH_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")

    def run() -> dict:
        p = subprocess.run([sys.executable, "-c", _SHORT], env=env, capture_output=True,
                           text=True, timeout=120, check=False)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout.strip().splitlines()[-1])

    first = run()
    assert first["kernels"] == 0   # it ended before they were built
    start = time.monotonic()
    while time.monotonic() - start < 150:
        if not _finishers(cache_dir) and (list((cache_dir / "loaded").glob("*"))
                                          or time.monotonic() - start > 10):
            break   # done, or no worker was left to do it
        time.sleep(0.5)
    assert list((cache_dir / "loaded").glob("*")), "the builds were not finished"
    assert not _finishers(cache_dir), "the worker did not exit after the builds"
    second = run()
    assert second["kernels"] > 0 and second["python_replays"] == 0, second
    for r in (first, second):
        np.testing.assert_allclose(r["values"], [r["eager"]] * 3, rtol=1e-5)


def _kernels(tag: str, n: int, bad: int | None = None) -> list:
    """``n`` new kernel modules loaded through the cache (their ``kernel(x)`` returns
    ``x * (k + 1) + k``); the ``bad``-th one fails to compile (a typing error)."""
    mods = []
    for k in range(n):
        body = "return x.undefined_attribute" if k == bad else f"return x * {k + 1}.0 + {k}.0"
        mods.append(cache.load_module(
            f"# {tag} {k}\nimport numba\n\n\n@numba.njit(cache=True)\ndef kernel(x):\n"
            f"    {body}\n", prefix="dgt"))
    return mods


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork")
def test_a_workers_kernels_are_compiled_side_by_side_in_forked_processes(tmp_path,
                                                                          monkeypatch):
    """In the worker, the kernels of a build not compiled yet are spread over forked
    processes that leave them in Numba's disk cache: after the fan-out this process has
    compiled one share itself and finds the others on disk, and compiling them all loads
    those from the disk cache (no compile here) with the right values."""
    import numba
    cache.set_cache_dir(tmp_path / "cache")
    monkeypatch.setenv(compile_worker.IN_WORKER_ENV, "1")
    monkeypatch.setenv("DYNGRAPH_COMPILE_JOBS", "3")
    try:
        mods = _kernels(str(tmp_path), 6)
        sig = (numba.float64,)
        jobs = [(m.kernel, sig) for m in mods]
        compile_worker._fan_out(jobs)
        here = [compile_worker._has(m.kernel, sig) for m in mods]
        on_disk = [compile_worker._on_disk(m.kernel, sig) for m in mods]
        assert all(h or d for h, d in zip(here, on_disk))
        assert sum(here) == 2 and sum(on_disk) == 6   # one share of three compiled here
        compile_worker.compile_all(jobs)
        assert sum(sum(m.kernel.stats.cache_hits.values()) for m in mods) == 4
        assert [m.kernel(2.0) for m in mods] == [2.0 * (k + 1) + k for k in range(6)]
    finally:
        cache.set_cache_dir(None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork")
def test_a_kernel_that_fails_in_a_forked_process_raises_its_error_here(tmp_path,
                                                                       monkeypatch):
    """A kernel whose compile fails in a child is compiled again here, which raises its
    error (as a build in one process would); the others are built."""
    import numba
    cache.set_cache_dir(tmp_path / "cache")
    monkeypatch.setenv(compile_worker.IN_WORKER_ENV, "1")
    monkeypatch.setenv("DYNGRAPH_COMPILE_JOBS", "2")
    try:
        mods = _kernels(str(tmp_path), 6, bad=0)
        sig = (numba.float64,)
        with pytest.raises(numba.core.errors.TypingError, match="undefined_attribute"):
            compile_worker.compile_all([(m.kernel, sig) for m in mods])
        for m in mods[1:]:   # (the failing one shares a process with two others)
            assert compile_worker._on_disk(m.kernel, sig)
    finally:
        cache.set_cache_dir(None)


def test_a_programs_kernels_go_to_the_worker_as_one_request(tmp_path):
    """Outside a worker, the kernels a program needs compiled are sent to the worker in one
    request (which spreads them over its processes); this process only loads them from
    the disk cache."""
    import numba
    cache.set_cache_dir(tmp_path / "cache")
    try:
        mods = _kernels(str(tmp_path), 3)
        sig = (numba.float64,)
        compile_worker.compile_all([(m.kernel, sig) for m in mods])
        assert [sum(m.kernel.stats.cache_hits.values()) for m in mods] == [1, 1, 1]
        assert [sum(m.kernel.stats.cache_misses.values()) for m in mods] == [0, 0, 0]
        assert len(list((tmp_path / "cache" / "built").glob("*.done"))) == 1
        assert [m.kernel(1.0) for m in mods] == [1.0, 3.0, 5.0]
    finally:
        cache.set_cache_dir(None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork")
def test_a_hung_forked_compile_is_killed_at_its_deadline():
    """A child that does not finish by the deadline is killed (the worker then compiles
    its share itself); one that ends is reaped."""
    quick = os.fork()
    if quick == 0:
        os._exit(0)
    hung = os.fork()
    if hung == 0:
        time.sleep(60)
        os._exit(0)
    start = time.monotonic()
    compile_worker._reap([quick, hung], time.monotonic() + 0.5)
    assert time.monotonic() - start < 10
    with pytest.raises(ChildProcessError):   # both reaped: no zombie left
        os.waitpid(hung, os.WNOHANG)
    with pytest.raises(ChildProcessError):
        os.waitpid(quick, os.WNOHANG)
