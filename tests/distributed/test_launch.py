"""Whole jobs started with ``mpiexec`` from a single-process pytest run: the DDP example
prints single-process training's losses, and a rank that raises or hangs ends the whole
job quickly with a clear message instead of leaving the other ranks waiting forever."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


@pytest.fixture
def mpiexec(world) -> str:
    """The ``mpiexec`` next to this Python (the mpich wheel's), else the one on PATH."""
    if world > 1 or any(k.startswith(("PMI_", "OMPI_COMM_WORLD")) for k in os.environ):
        pytest.skip("starts mpiexec jobs itself: runs in the single-process pytest run")
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    path = here if os.path.exists(here) else shutil.which("mpiexec")
    if path is None:
        if os.environ.get("DYNGRAPH_TEST_WORLD_SIZE"):
            pytest.fail("mpiexec not found next to python nor on PATH")
        pytest.skip("mpiexec not found")
    return path


def job(mpiexec, n, args, timeout=120):
    """Run ``mpiexec -n n python *args``; (returncode, stdout, stderr, seconds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "HYDRA_"))}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.monotonic()
    p = subprocess.run([mpiexec, "-n", str(n), sys.executable, *args], capture_output=True,
                       text=True, timeout=timeout, cwd=ROOT, env=env, check=False)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def losses(out: str) -> list[tuple[int, float]]:
    return [(int(e), float(v)) for e, v in re.findall(r"epoch +(\d+) +loss ([\d.]+)", out)]


def test_ddp_example_prints_the_losses_of_single_process_training(mpiexec):
    single = subprocess.run([sys.executable, os.path.join(EXAMPLES, "train_mlp.py"),
                             "--epochs", "6"], capture_output=True, text=True, timeout=120,
                            cwd=ROOT, check=True).stdout
    want = losses(single)
    assert len(want) == 3
    for extra in ([], ["--compile"]):
        rc, out, err, _ = job(mpiexec, 2, [os.path.join(EXAMPLES, "train_ddp.py"),
                                           "--epochs", "6", *extra])
        assert rc == 0, out + err
        assert "batch 100 (2 ranks x 50)" in out and "2 ranks)" in out
        got = losses(out)  # printed by rank 0 only
        assert [e for e, _ in got] == [e for e, _ in want]
        for (_, a), (_, b) in zip(got, want):
            assert abs(a - b) <= 2e-4, (out, single)


RAISES = textwrap.dedent("""
    import datetime
    import eager, eager.distributed as dist
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=120))
    if dist.get_rank() == 1:
        raise ValueError("rank 1 failed on purpose")
    dist.all_reduce(eager.ones(3))   # rank 0 waits here for rank 1
    print("rank 0 should not get here")
""")


def test_a_rank_that_raises_ends_the_job_at_once(mpiexec):
    rc, out, err, seconds = job(mpiexec, 2, ["-c", RAISES], timeout=90)
    assert rc != 0, (out, err)
    assert "ValueError: rank 1 failed on purpose" in err
    assert "[rank 1] eager.distributed: uncaught ValueError on this rank: aborting all 2 " \
           "ranks (MPI_Abort)" in err, (rc, out, err)
    assert "should not get here" not in out
    assert seconds < 60  # far below the group's 120 s timeout: nobody waited for it


HANGS = textwrap.dedent("""
    import datetime, time
    import eager, eager.distributed as dist
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=1.5))
    if dist.get_rank() == 1:
        time.sleep(600)              # stuck: never joins the collective
    dist.all_reduce(eager.ones(3))
""")


def test_a_rank_that_hangs_makes_the_others_time_out_with_a_clear_error(mpiexec):
    rc, out, err, seconds = job(mpiexec, 2, ["-c", HANGS], timeout=90)
    assert rc != 0, (out, err)
    assert "[rank 0] eager.distributed: all_reduce of a float32[3] tensor (op SUM) timed " \
           "out: waited longer than the process group's timeout (0:00:01.500000)" in err
    assert "Aborting every rank of the job (MPI_Abort)" in err
    assert seconds < 60  # the sleeping rank was aborted too


def test_importing_eager_never_imports_mpi4py():
    code = ("import sys, eager, eager.distributed, eager.nn.parallel\n"
            "assert 'mpi4py' not in sys.modules, 'mpi4py imported'\n"
            "assert eager.distributed.is_available()\n"
            "assert 'mpi4py' not in sys.modules, 'is_available() imported mpi4py'\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
