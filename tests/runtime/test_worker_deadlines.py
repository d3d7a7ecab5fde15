"""The compile worker has deadlines: a hung worker is killed and replaced, compiler.wait()
honours its timeout and otherwise returns once the work is done or abandoned, a worker
starts no worker of its own, and no worker outlives its program by more than a second."""

from __future__ import annotations

import os
import runpy
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from compiler import tiers
from runtime import cache
from runtime.cpu import compile_worker

REPO_ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def gone_within(pid: int, seconds: float) -> float | None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if not alive(pid):
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


def run_script(tmp_path: Path, code: str, timeout: float = 120, **env_extra):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["DYNGRAPH_CACHE_DIR"] = str(tmp_path / "cache")
    env.update(env_extra)
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP")
def test_a_hung_worker_is_killed_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_worker, "TIMEOUT_S", 1.0)
    cache.set_cache_dir(tmp_path / "cache")
    try:
        scripts = []
        for i in range(3):
            s = tmp_path / f"s{i}.py"
            s.write_text(f"open({str(tmp_path / f'out{i}')!r}, 'w').write('x')\n")
            scripts.append(str(s))
        assert compile_worker.call(runpy.run_path, scripts[0])
        hung = compile_worker._proc
        os.kill(hung.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        assert not compile_worker.call(runpy.run_path, scripts[1])  # caller compiles itself
        took = time.monotonic() - t0
        assert took < 2.0, f"a hung worker held the caller for {took:.1f} s"
        assert hung.poll() is not None  # killed
        # the lock is free again and a new worker serves the next request
        assert compile_worker.call(runpy.run_path, scripts[2])
        assert compile_worker._proc.pid != hung.pid
    finally:
        cache.set_cache_dir(None)


def test_a_large_request_to_a_hung_worker_times_out_too(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_worker, "TIMEOUT_S", 1.0)
    cache.set_cache_dir(tmp_path / "cache")
    try:
        assert compile_worker.call(runpy.run_path, str(tmp_path / "none.py")) is False
        os.kill(compile_worker._proc.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        # 4 MB: far more than a pipe holds, so writing it blocks on a worker that reads
        assert not compile_worker.call(len, b"x" * (4 << 20))
        assert time.monotonic() - t0 < 2.0
    finally:
        cache.set_cache_dir(None)


def test_a_request_into_a_pipe_with_a_little_room_times_out():
    """A worker stopped mid-read leaves its pipe with some room, less than a write chunk:
    select() says writable, and a blocking write larger than PIPE_BUF then waited for all
    of its bytes, forever (the test above hung that way now and then)."""
    r, w = os.pipe()
    try:
        os.set_blocking(w, False)
        try:
            while True:
                os.write(w, b"x" * 4096)
        except BlockingIOError:
            pass
        os.read(r, 8192)                     # the worker read a little, then stopped
        os.set_blocking(w, True)
        raised = []

        def send():
            try:
                compile_worker._send_until(w, b"y" * 100_000, time.monotonic() + 0.5)
            except compile_worker.WorkerTimeout as exc:
                raised.append(exc)
        t = threading.Thread(target=send, daemon=True)
        t.start()
        t.join(5.0)
        assert not t.is_alive(), "the write blocked past its deadline"
        assert raised and "took no request" in str(raised[0])
    finally:
        os.close(r)
        os.close(w)


def test_compiler_wait_honours_its_timeout_and_returns_after_a_hung_worker(tmp_path):
    p = run_script(tmp_path, """
        import os, signal, time
        import eager as torch, compiler
        from runtime.cpu import compile_worker
        compile_worker.start()
        os.kill(compile_worker._proc.pid, signal.SIGSTOP)   # a worker that hangs
        f = compiler.compile(lambda x: (x * 2.0).tanh().sum())
        x = torch.randn(64)
        for _ in range(3):
            f(x)
        t0 = time.monotonic()
        r1 = compiler.wait(timeout=0.5)
        t1 = time.monotonic() - t0
        t0 = time.monotonic()
        r2 = compiler.wait()
        t2 = time.monotonic() - t0
        c, e = float(f(x)), float((x * 2.0).tanh().sum())
        print(r1, round(t1, 3), r2, round(t2, 3), abs(c - e) <= 1e-5 * max(1.0, abs(e)))
    """, DYNGRAPH_COMPILE_TIMEOUT="3")
    assert p.returncode == 0, p.stderr
    r1, t1, r2, t2, same = p.stdout.split()
    assert r1 == "False" and float(t1) < 1.0, p.stdout
    assert r2 == "True" and float(t2) < 60, (p.stdout, p.stderr)
    assert same == "True"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_wait_without_a_timeout_returns_when_the_compile_thread_is_gone():
    def prepare():  # kills the compile thread (not an Exception: nothing catches it)
        raise SystemExit

    fut = tiers.submit(lambda: None, lambda e: None, prepare)
    t0 = time.monotonic()
    assert tiers.wait() is False  # abandoned, not waited for forever
    assert time.monotonic() - t0 < 2.0
    assert not fut.done() and tiers.pending() == 0
    # the next build gets a new compile thread
    assert tiers.submit(lambda: None, lambda e: None).result(timeout=10) is None


def _descendants(pid: int) -> list[tuple[int, str]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            try:
                with open(f"/proc/{k}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode()
            except OSError:
                continue
            out.append((k, cmd))
            todo.append(k)
    return out


def test_a_compile_worker_starts_no_worker_of_its_own(tmp_path):
    code = """
        import os, sys, json
        sys.path.insert(0, %r)
        from tests.runtime.test_worker_deadlines import _descendants
        import eager as torch, compiler
        f = compiler.compile(lambda x: (x * 3.0 + 1.0).tanh().exp().sum())
        x = torch.randn(256)
        for _ in range(3):
            f(x)
        assert compiler.wait()
        print(json.dumps([c for _, c in _descendants(os.getpid())]))
    """ % str(REPO_ROOT)  # noqa: UP031 (a %r into a code template)
    p = run_script(tmp_path, code)
    assert p.returncode == 0, p.stderr
    workers = [c for c in eval(p.stdout.strip().splitlines()[-1])
               if "runtime.cpu.compile_worker" in c]
    assert len(workers) == 1, workers


@pytest.mark.parametrize("how", ["os._exit", "SIGKILL", "normal exit"])
def test_no_worker_outlives_its_program(tmp_path, how):
    ending = {"os._exit": "os._exit(0)", "SIGKILL": "os.kill(os.getpid(), signal.SIGKILL)",
              "normal exit": "sys.exit(0)"}[how]
    p = run_script(tmp_path, f"""
        import os, signal, sys, threading, time
        from runtime.cpu import compile_worker
        compile_worker.start()
        print(compile_worker._proc.pid, flush=True)
        # the worker is busy: a request that would take 30 s
        threading.Thread(target=compile_worker.call, args=(time.sleep, 30),
                         daemon=True).start()
        time.sleep(1.0)
        {ending}
    """)
    pid = int(p.stdout.split()[0])
    took = gone_within(pid, 3.0)
    assert took is not None, f"the compile worker outlived its program ({how})"
    assert took < 1.0, f"the compile worker outlived its program by {took:.2f} s ({how})"
