"""Collectives that the ranks call differently raise a clear error on every rank instead
of returning garbage (``mpiexec -n 2`` / ``-n 3``): before each collective the ranks
all-gather a small descriptor of their call (collective, op or src, dtype, shape) and
compare.  After the error no collective has run, so the group goes on working."""

from __future__ import annotations

import datetime
import time

import pytest

import compiler
import eager
import eager.distributed as dist
from eager import nn
from eager.distributed import ReduceOp
from eager.distributed.group import CHECK_ENV, check_enabled_by_env, default_group
from eager.nn.parallel import DistributedDataParallel as DDP
from tests.distributed.mpi_helpers import gather


def last(world) -> bool:
    """Whether this is the rank that calls differently."""
    return dist.get_rank() == world - 1


def per_rank(world, mine: str, odd: str) -> str:
    """The regex of the error's list of calls: ``odd`` on the last rank, ``mine`` on others."""
    return "; ".join(f"rank {r}: {odd if r == world - 1 else mine}" for r in range(world))


def group_still_works(world) -> None:
    t = eager.ones(2)
    dist.all_reduce(t)
    assert t.tolist() == [float(world)] * 2


def test_all_reduce_of_different_sizes_raises_on_every_rank(ranks):
    t = eager.ones(5 if last(ranks) else 3)
    before = t.tolist()
    msg = ("Detected mismatch between collectives on ranks.*"
           + per_rank(ranks, r"all_reduce\(op=SUM\) on a float32\[3\] tensor",
                      r"all_reduce\(op=SUM\) on a float32\[5\] tensor"))
    with pytest.raises(RuntimeError, match=msg):
        dist.all_reduce(t)
    assert t.tolist() == before  # nothing was reduced
    group_still_works(ranks)


def test_all_reduce_of_different_dtypes_raises_on_every_rank(ranks):
    t = eager.ones(3, dtype=eager.float64 if last(ranks) else eager.float32)
    msg = per_rank(ranks, r"all_reduce\(op=SUM\) on a float32\[3\] tensor",
                   r"all_reduce\(op=SUM\) on a float64\[3\] tensor")
    with pytest.raises(RuntimeError, match=msg):
        dist.all_reduce(t)
    with pytest.raises(RuntimeError, match=msg):  # async_op: raises when started
        dist.all_reduce(t, async_op=True)
    group_still_works(ranks)


def test_all_reduce_with_different_ops_or_shapes_of_the_same_size(ranks):
    with pytest.raises(RuntimeError, match=r"op=SUM.*op=MAX"):
        dist.all_reduce(eager.ones(4), op=ReduceOp.MAX if last(ranks) else ReduceOp.SUM)
    with pytest.raises(RuntimeError, match=r"float32\[2, 2\].*float32\[4\]"):
        dist.all_reduce(eager.ones(4) if last(ranks) else eager.ones(2, 2))
    group_still_works(ranks)


def test_broadcast_of_different_sizes_or_sources(ranks):
    t = eager.ones(5 if last(ranks) else 3)
    msg = per_rank(ranks, r"broadcast\(src=0\) on a float32\[3\] tensor",
                   r"broadcast\(src=0\) on a float32\[5\] tensor")
    with pytest.raises(RuntimeError, match=msg):
        dist.broadcast(t, 0)
    with pytest.raises(RuntimeError, match=r"broadcast\(src=0\).*broadcast\(src=1\)"):
        dist.broadcast(eager.ones(3), 1 if last(ranks) else 0)
    group_still_works(ranks)


def test_different_collectives_raise(ranks):
    t = eager.ones(3)
    msg = per_rank(ranks, r"all_reduce\(op=SUM\) on a float32\[3\] tensor",
                   r"broadcast\(src=0\) on a float32\[3\] tensor")
    with pytest.raises(RuntimeError, match=msg):
        if last(ranks):
            dist.broadcast(t, 0)
        else:
            dist.all_reduce(t)
    with pytest.raises(RuntimeError, match=per_rank(ranks, "barrier",
                                                    r"all_gather_object")):
        if last(ranks):
            dist.all_gather_object([None] * ranks, "x")
        else:
            dist.barrier()
    group_still_works(ranks)


def test_all_gather_and_reduce_scatter_of_different_shapes(ranks):
    n = 4 if last(ranks) else 3
    with pytest.raises(RuntimeError, match=r"all_gather on a float32\[3\].*float32\[4\]"):
        dist.all_gather([eager.zeros(n) for _ in range(ranks)], eager.ones(n))
    with pytest.raises(RuntimeError, match=rf"reduce_scatter\(op=SUM\) on a "
                                           rf"float32\[{ranks}, 3\].*float32\[{ranks}, 4\]"):
        dist.reduce_scatter(eager.zeros(n), [eager.ones(n) for _ in range(ranks)])
    group_still_works(ranks)


def test_a_compiled_collective_is_checked_too(ranks):
    n = 5 if last(ranks) else 3

    @compiler.compile
    def step(x):
        y = x * 2
        dist.all_reduce(y)
        return y + 1

    for _ in range(3):  # the traced call and the replays
        with pytest.raises(RuntimeError, match=r"float32\[3\].*float32\[5\]"):
            step(eager.ones(n))
    group_still_works(ranks)


def test_ddp_checks_that_the_ranks_have_the_same_buckets(ranks):
    eager.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    cap = 0.0001 if last(ranks) else None  # ~100 bytes: a bucket per layer
    with pytest.raises(RuntimeError, match=r"same gradient buckets on every rank.*rank 0 has "
                                           r"1 bucket\(s\): float32\[131\] \(parameters "
                                           rf"\[3, 2, 1, 0\]\), while rank {ranks - 1} has 2: "
                                           r"float32\[51\]"):
        DDP(model, bucket_cap_mb=cap)
    group_still_works(ranks)


def test_the_check_can_be_turned_off(world, monkeypatch):
    for off in ("0", "off", "false"):
        monkeypatch.setenv(CHECK_ENV, off)
        assert not check_enabled_by_env()
    monkeypatch.delenv(CHECK_ENV)
    assert check_enabled_by_env()  # on by default
    pg = default_group()
    assert pg.check == (world > 1)
    dist.destroy_process_group()
    monkeypatch.setenv(CHECK_ENV, "0")
    try:
        dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=60))
        assert not default_group().check
        group_still_works(world)
    finally:
        dist.destroy_process_group()
        monkeypatch.delenv(CHECK_ENV)
        dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=60))
    assert default_group().check == (world > 1)
    group_still_works(world)


def test_the_check_costs_little_per_all_reduce(world):
    """The per-all-reduce overhead of the check on a small tensor (printed; bounded loosely:
    the check is one more tiny collective, so about the time of the all-reduce itself, and
    CI machines are shared and may run more ranks than cores)."""
    pg = default_group()
    t = eager.ones(16)

    def per_call(check: bool, n: int = 300) -> float:
        pg.check = check and world > 1
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(n):
            dist.all_reduce(t)
        return (time.perf_counter() - t0) / n

    try:
        times = {c: min(per_call(c) for _ in range(3)) for c in (False, True)}
    finally:
        pg.check = world > 1
    every = gather(times)
    if dist.get_rank() == 0:
        print(f"\nall_reduce of 16 floats on {world} ranks: {times[False] * 1e6:.1f} us "
              f"unchecked, {times[True] * 1e6:.1f} us checked")
    assert all(t[True] < 5 * t[False] + 2e-3 for t in every), every
