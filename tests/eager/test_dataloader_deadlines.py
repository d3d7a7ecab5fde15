"""DataLoader worker processes have deadlines: ``timeout=`` raises within 0.5 s of it, a
dead worker is noticed within 0.5 s with its exit code or signal named, and no worker
outlives its program by more than a second (forked workers included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import eager
from eager.utils.data import DataLoader, Dataset

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork and signals")


class Slow(Dataset):
    def __init__(self, seconds: float):
        self.seconds = seconds

    def __len__(self):
        return 8

    def __getitem__(self, i):
        time.sleep(self.seconds)
        return eager.tensor([float(i)])


class Dies(Dataset):
    """Item 2 ends its worker: by a signal, or by os._exit(code)."""

    def __init__(self, how):
        self.how = how

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 2:
            time.sleep(0.3)  # item 0 leaves this worker's queue first
            if isinstance(self.how, signal.Signals):
                os.kill(os.getpid(), self.how)
                time.sleep(10)
            os._exit(self.how)
        return eager.tensor([float(i)])


def test_timeout_raises_within_half_a_second_of_it():
    it = iter(DataLoader(Slow(30.0), batch_size=2, num_workers=2, timeout=1.0))
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 1.0 seconds"):
        next(it)
    took = time.monotonic() - t0
    assert took < 1.5, f"timeout=1 raised after {took:.2f} s"


@pytest.mark.parametrize("how,named", [
    (signal.SIGKILL, r"is killed by signal: Killed \(SIGKILL\)"),
    (signal.SIGSEGV, r"is killed by signal: Segmentation fault \(SIGSEGV\)"),
    (3, r"exited unexpectedly with exit code 3"),
])
def test_a_dead_worker_is_noticed_within_half_a_second_and_named(how, named):
    loader = DataLoader(Dies(how), batch_size=1, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [[0.0]]
    assert next(it).tolist() == [[1.0]]
    time.sleep(0.3)  # the worker is dead now
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"DataLoader worker \(pid \d+\) {named}"):
        for _ in it:
            pass
    took = time.monotonic() - t0
    assert took < 0.5 + 0.3, f"a dead worker was noticed after {took:.2f} s"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
@pytest.mark.parametrize("ending", ["os._exit(0)", "os.kill(os.getpid(), signal.SIGKILL)",
                                    "sys.exit(0)"])
def test_forked_workers_do_not_outlive_their_program(tmp_path, ending):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys, time
        import multiprocessing as mp
        import eager
        from eager.utils.data import DataLoader, Dataset

        class Slow(Dataset):
            def __len__(self):
                return 100
            def __getitem__(self, i):
                if i >= 2:
                    time.sleep(30)   # busy when the program ends
                return eager.tensor([float(i)])

        loader = DataLoader(Slow(), batch_size=1, num_workers=3,
                            multiprocessing_context=mp.get_context("fork"))
        it = iter(loader)
        next(it)
        print(" ".join(str(w.pid) for w in it._workers), flush=True)
        time.sleep(0.3)
        t0 = time.monotonic()
        {ending}
    """))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                       text=True, timeout=120, check=False)
    pids = [int(x) for x in p.stdout.split()]
    assert len(pids) == 3, (p.stdout, p.stderr)
    ended = time.monotonic()
    while time.monotonic() - ended < 3 and any(_alive(pid) for pid in pids):
        time.sleep(0.02)
    left = [pid for pid in pids if _alive(pid)]
    assert not left, f"DataLoader workers {left} outlived their program ({ending})"
    took = time.monotonic() - ended
    assert took < 1.0, f"DataLoader workers outlived their program by {took:.2f} s"
    assert ended - t0 < 30, "the program waited for its busy workers"
