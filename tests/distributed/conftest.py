"""Fixtures for the distributed tests, which run on several ranks under ``mpiexec``::

    .venv/bin/mpiexec -n 2 .venv/bin/python -m pytest tests/distributed -p no:cacheprovider

(what ``.ci/run`` does, with ``-n 2`` and ``-n 3``).  In a plain ``pytest`` run, one process
is a world of size 1: the tests that need two or more ranks are skipped, and the whole
folder is skipped when ``mpi4py`` is missing.  ``DYNGRAPH_TEST_WORLD_SIZE=N`` turns those
skips into failures unless the run really has N ranks, so CI cannot skip them silently.

Every rank runs the same tests in the same order.  When a test fails on one rank, the
others would wait for it in the next collective: the failure is printed at once and every
rank is aborted (``MPI_Abort``).
"""

from __future__ import annotations

import datetime
import os
import sys

import pytest

if os.environ.get("DYNGRAPH_TEST_WORLD_SIZE"):
    import mpi4py  # noqa: F401  (a run that must test N ranks fails without it)
else:
    pytest.importorskip("mpi4py")

import eager  # noqa: E402
import eager.distributed as dist  # noqa: E402
from eager.distributed.watchdog import report_and_abort  # noqa: E402

#: how long a collective may wait for the others in these tests before the job aborts
TIMEOUT = datetime.timedelta(seconds=60)


def _expected_world() -> int | None:
    n = os.environ.get("DYNGRAPH_TEST_WORLD_SIZE")
    return int(n) if n else None


def _launcher_rank() -> int:
    """This process's rank as the MPI launcher's environment says (before MPI starts)."""
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


@pytest.hookimpl(trylast=True)  # after the terminal plugin made its reporter
def pytest_configure(config):
    if _launcher_rank() > 0:  # one report per run: rank 0's (failures print on any rank)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            config.pluginmanager.unregister(reporter)


@pytest.fixture(scope="session")
def world() -> int:
    """The world size; the default process group is initialized once per session."""
    if not dist.is_initialized():
        dist.init_process_group("mpi", timeout=TIMEOUT)
    n = dist.get_world_size()
    want = _expected_world()
    if want is not None and n != want:
        pytest.fail(f"DYNGRAPH_TEST_WORLD_SIZE={want}, but this run has {n} ranks: launch "
                    f"with mpiexec -n {want}")
    return n


@pytest.fixture
def ranks(world) -> int:
    """The world size, for tests that need two or more ranks (skipped on one)."""
    if world < 2:
        pytest.skip("needs 2 or more ranks: run under mpiexec -n 2")
    return world


@pytest.fixture(autouse=True)
def _clean_compiler_and_seed():
    eager.manual_seed(0)
    yield
    if "compiler" in sys.modules:
        sys.modules["compiler"].wait()
        sys.modules["compiler"].reset()


def pytest_runtest_logreport(report):
    if not report.failed or not dist.is_initialized() or dist.get_world_size() < 2:
        return
    rank = dist.get_rank()
    from mpi4py import MPI
    report_and_abort(f"\n[rank {rank}] {report.nodeid} FAILED ({report.when}):\n"
                     f"{report.longreprtext}\n[rank {rank}] aborting every rank: the others "
                     "would wait for this one in their next collective\n",
                     lambda: MPI.COMM_WORLD.Abort(1))
