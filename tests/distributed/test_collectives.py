"""eager.distributed's collectives against NumPy, on every rank (``mpiexec -n 2`` / ``-n 3``;
a plain pytest run checks them on a world of one).  Rank ``r`` contributes ``value(r)``;
the expected result is computed with NumPy from every rank's value."""

from __future__ import annotations

import datetime
import os
import tempfile

import numpy as np
import pytest
from mpi4py import MPI

import compiler
import eager
import eager.distributed as dist
from eager.distributed import ReduceOp
from tests.distributed.mpi_helpers import gather

FLOATS = ["float32", "float64", "float16"]
INTS = ["int64", "int32", "int8", "uint8"]


def value(r: int, dtype: str, shape=(2, 3)) -> np.ndarray:
    """Rank ``r``'s contribution: small exact numbers, different on every rank."""
    if dtype == "bool":
        return (np.arange(np.prod(shape)).reshape(shape) + r) % 3 == 0
    a = (np.arange(np.prod(shape)).reshape(shape) % 5 + 1) * (r + 1) + r
    if dtype == "uint8" or dtype == "int8":
        a = a % 7
    return a.astype(dtype)


NUMPY_REDUCE = {
    ReduceOp.SUM: lambda s: s.sum(axis=0), ReduceOp.PRODUCT: lambda s: s.prod(axis=0),
    ReduceOp.MIN: lambda s: s.min(axis=0), ReduceOp.MAX: lambda s: s.max(axis=0),
    ReduceOp.BAND: lambda s: np.bitwise_and.reduce(s, axis=0),
    ReduceOp.BOR: lambda s: np.bitwise_or.reduce(s, axis=0),
    ReduceOp.BXOR: lambda s: np.bitwise_xor.reduce(s, axis=0),
}


def expected(op, dtype, world, shape=(2, 3)):
    s = np.stack([value(r, dtype, shape) for r in range(world)])
    if dtype == "bool":  # as PyTorch: SUM/MAX are a logical or, PRODUCT/MIN a logical and
        return (s.any(axis=0) if op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.BOR)
                else s.all(axis=0))
    if op is ReduceOp.AVG:
        return (s.astype(np.float64).sum(axis=0) / world).astype(dtype)
    return NUMPY_REDUCE[op](s).astype(dtype)


CASES = ([(op, dt) for dt in FLOATS for op in (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT,
                                               ReduceOp.MIN, ReduceOp.MAX)]
         + [(op, dt) for dt in INTS for op in (ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN,
                                               ReduceOp.MAX, ReduceOp.BAND, ReduceOp.BOR,
                                               ReduceOp.BXOR)]
         + [(op, "bool") for op in (ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN,
                                    ReduceOp.MAX)])


def test_rank_and_world_size_come_from_mpi(world):
    assert dist.is_available() and dist.is_initialized()
    assert dist.get_rank() == MPI.COMM_WORLD.Get_rank()
    assert dist.get_world_size() == MPI.COMM_WORLD.Get_size() == world
    assert dist.get_backend() == "mpi"
    assert gather(dist.get_rank()) == list(range(world))


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o.name}-{d}" for o, d in CASES])
def test_all_reduce_matches_numpy(world, op, dtype):
    t = eager.tensor(value(dist.get_rank(), dtype))
    data = t._data
    v0 = t._version[0]
    assert dist.all_reduce(t, op=op) is None
    assert t._data is data  # in place
    assert t._version[0] > v0
    want = expected(op, dtype, world)
    if op is ReduceOp.AVG:
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-3 if dtype == "float16" else 1e-6)
    else:
        np.testing.assert_array_equal(t.numpy(), want)
    assert t.numpy().dtype == np.dtype(dtype)


@pytest.mark.parametrize("op,dtype", [(ReduceOp.SUM, "float32"), (ReduceOp.AVG, "float64"),
                                      (ReduceOp.MAX, "int64"), (ReduceOp.SUM, "bool")])
def test_all_reduce_async_op(world, op, dtype):
    t = eager.tensor(value(dist.get_rank(), dtype))
    work = dist.all_reduce(t, op=op, async_op=True)
    assert isinstance(work, dist.Work)
    assert work.wait() is True
    assert work.is_completed() and work.is_success()
    assert work.result()[0] is t
    np.testing.assert_allclose(t.numpy(), expected(op, dtype, world), rtol=1e-6)


@pytest.mark.parametrize("async_op", [False, True])
def test_all_reduce_writes_through_a_non_contiguous_view(world, async_op):
    base = eager.tensor(value(dist.get_rank(), "float32", (3, 4)))
    view = base.t()  # a transposed view: MPI works on a copy, the result lands in base
    work = dist.all_reduce(view, async_op=async_op)
    if async_op:
        work.wait()
    np.testing.assert_array_equal(base.numpy(), expected(ReduceOp.SUM, "float32", world, (3, 4)))


def test_all_reduce_is_outside_autograd_but_bumps_the_version(world):
    w = eager.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()            # saves w
    dist.all_reduce(w)           # allowed on a leaf that requires grad (as PyTorch)
    assert w.grad_fn is None and w.requires_grad
    np.testing.assert_array_equal(w.detach().numpy(), [1.0 * world, 2.0 * world])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    h = w * 2
    dist.all_reduce(h)
    assert h.grad_fn is not None  # a collective does not become part of the graph


@pytest.mark.parametrize("async_op", [False, True])
def test_broadcast_from_every_rank(world, async_op):
    for src in range(world):
        t = eager.tensor(value(dist.get_rank(), "float64"))
        work = dist.broadcast(t, src, async_op=async_op)
        if async_op:
            work.wait()
        np.testing.assert_array_equal(t.numpy(), value(src, "float64"))


@pytest.mark.parametrize("async_op", [False, True])
def test_all_gather(world, async_op):
    r = dist.get_rank()
    out = [eager.zeros(2, 3, dtype=eager.int64) for _ in range(world)]
    work = dist.all_gather(out, eager.tensor(value(r, "int64")), async_op=async_op)
    if async_op:
        work.wait()
    for k in range(world):
        np.testing.assert_array_equal(out[k].numpy(), value(k, "int64"))


@pytest.mark.parametrize("op", [ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVG])
@pytest.mark.parametrize("async_op", [False, True])
def test_reduce_scatter(world, op, async_op):
    r = dist.get_rank()
    # rank r's input_list[k] = value(r + 10 k): row k of everyone's inputs is reduced on rank k
    inputs = [eager.tensor(value(r + 10 * k, "float64")) for k in range(world)]
    out = eager.zeros(2, 3, dtype=eager.float64)
    work = dist.reduce_scatter(out, inputs, op=op, async_op=async_op)
    if async_op:
        work.wait()
    rows = np.stack([value(q + 10 * r, "float64") for q in range(world)])
    want = {ReduceOp.SUM: rows.sum(0), ReduceOp.MAX: rows.max(0),
            ReduceOp.AVG: rows.sum(0) / world}[op]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("async_op", [False, True])
def test_barrier_waits_for_every_rank(world, async_op):
    path = [tempfile.mkdtemp(prefix="dyngraph-barrier-") if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(path, src=0)
    mine = os.path.join(path[0], f"rank{dist.get_rank()}")
    with open(mine, "w") as f:
        f.write("here")
    work = dist.barrier(async_op=async_op)
    if async_op:
        work.wait()
    # after the barrier every rank has written its file
    assert sorted(os.listdir(path[0])) == sorted(f"rank{k}" for k in range(world))
    dist.barrier()


def test_object_collectives(world):
    r = dist.get_rank()
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": r, "name": f"r{r}"})
    assert objs == [{"rank": k, "name": f"r{k}"} for k in range(world)]
    lst = [r, "x" * r]
    dist.broadcast_object_list(lst, src=world - 1)
    assert lst == [world - 1, "x" * (world - 1)]


def test_errors_name_the_problem(world):
    t = eager.ones(3)
    with pytest.raises(RuntimeError, match="AVG needs a floating-point tensor"):
        dist.all_reduce(eager.ones(3, dtype=eager.int64), op=ReduceOp.AVG)
    with pytest.raises(RuntimeError, match="BXOR needs an integer or bool tensor"):
        dist.all_reduce(t, op=ReduceOp.BXOR)
    with pytest.raises(TypeError, match="op must be a ReduceOp"):
        dist.all_reduce(t, op="sum")
    with pytest.raises(TypeError, match="all_reduce: tensor must be a Tensor"):
        dist.all_reduce(np.ones(3))
    with pytest.raises(RuntimeError, match="read-only"):
        dist.all_reduce(eager.ones(1).expand(3))
    with pytest.raises(RuntimeError, match=f"invalid src rank {world} for a group of {world}"):
        dist.broadcast(t, world)
    with pytest.raises(RuntimeError, match=f"one tensor per rank \\({world}\\), got {world + 1}"):
        dist.all_gather([eager.ones(3) for _ in range(world + 1)], t)
    with pytest.raises(RuntimeError, match=r"tensor_list\[0\] is float32\[4\].*float32\[3\]"):
        dist.all_gather([eager.ones(4) for _ in range(world)], t)
    with pytest.raises(TypeError, match="group must be None or a ProcessGroup"):
        dist.all_reduce(t, group="world")
    with pytest.raises(ValueError, match="initialize the default process group twice"):
        dist.init_process_group("mpi")


def test_destroy_then_init_again_with_checked_arguments(world):
    dist.destroy_process_group()
    try:
        assert not dist.is_initialized()
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            dist.get_rank()
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            dist.all_reduce(eager.ones(1))
        with pytest.raises(ValueError, match=f"world_size={world + 1}, but MPI started {world}"):
            dist.init_process_group("mpi", world_size=world + 1)
        os.environ["WORLD_SIZE"] = str(world + 1)
        try:
            with pytest.raises(ValueError, match=f"WORLD_SIZE={world + 1}"):
                dist.init_process_group("mpi", init_method="env://")
        finally:
            del os.environ["WORLD_SIZE"]
        with pytest.raises(RuntimeError, match="doesn't have GLOO built in"):
            dist.init_process_group("gloo")
        with pytest.raises(TypeError, match="datetime.timedelta"):
            dist.init_process_group("mpi", timeout=30)
        assert not dist.is_initialized()
    finally:
        os.environ["RANK"] = str(MPI.COMM_WORLD.Get_rank())
        try:
            dist.init_process_group(backend="mpi", init_method="env://",
                                    timeout=datetime.timedelta(seconds=60))
        finally:
            del os.environ["RANK"]
    t = eager.ones(2)
    dist.all_reduce(t)
    assert t.tolist() == [float(world)] * 2


def test_compiled_collectives_run_on_every_replay(world):
    r = dist.get_rank()

    def step(x, lst):
        y = x * 2
        dist.all_reduce(y)
        dist.all_reduce(y, op=ReduceOp.MAX)
        dist.broadcast(x, world - 1)   # in place on an argument: a write-back
        dist.all_gather(lst, y)        # in place on the list's tensors
        dist.barrier()
        return y

    f = compiler.compile(step)
    lst = [eager.zeros(3) for _ in range(world)]  # the same list: a new one retraces
    for i in range(4):
        x = eager.full((3,), float(r + i))
        for t in lst:
            t.zero_()
        y = f(x, lst)
        compiler.wait()
        total = 2.0 * sum(k + i for k in range(world))
        assert y.tolist() == [total] * 3
        assert x.tolist() == [float(world - 1 + i)] * 3
        assert [t.tolist() for t in lst] == [[total] * 3] * world
    assert f.stats()["hits"] >= 2


def test_compiled_collectives_are_never_merged_or_dropped(ranks):
    # Rank 0 runs a compiled function; the other ranks call the same collectives eagerly
    # with values that tell the calls apart.  Had rank 0's replay merged the two equal
    # all-reduces or dropped the unused one, its calls would pair with the wrong ones.
    r = dist.get_rank()

    def step(x):
        a = x + 0
        dist.all_reduce(a)            # result unused
        b = x * 1
        c = x * 1
        dist.all_reduce(b)
        dist.all_reduce(c)            # equal to the one above
        return b + c

    f = compiler.compile(step) if r == 0 else None
    for i in range(4):
        if r == 0:
            out = f(eager.zeros(2))
            compiler.wait()
            sums = [sum(100 * k + 10 * i + j for k in range(1, ranks)) for j in range(3)]
            assert out.tolist() == [float(sums[1] + sums[2])] * 2
        else:
            for j in range(3):
                dist.all_reduce(eager.full((2,), float(100 * r + 10 * i + j)))
    if r == 0:
        assert f.stats()["hits"] >= 2


def test_blocking_async_and_compiled_calls_pair_up_across_ranks(ranks):
    # MPI never matches a blocking collective with a non-blocking one: every call must
    # pair up whatever each rank's mode (rank 0 blocking, 1 async, 2 compiled, ...).
    r = dist.get_rank()
    mode = ("blocking", "async", "compiled")[r % 3]

    def calls(x, lst, out):
        works = [dist.all_reduce(x, async_op=mode == "async"),
                 dist.broadcast(x, 0, async_op=mode == "async"),
                 dist.all_gather(lst, x, async_op=mode == "async"),
                 dist.reduce_scatter(out, lst, op=ReduceOp.MAX, async_op=mode == "async"),
                 dist.barrier(async_op=mode == "async")]
        for w in works:
            if w is not None:
                w.wait()
        return out * 1

    f = compiler.compile(calls) if mode == "compiled" else calls
    lst = [eager.zeros(2) for _ in range(ranks)]
    for i in range(3):
        x = eager.full((2,), float(r + i))
        out = eager.zeros(2)
        got = f(x, lst, out)
        compiler.wait()
        total = float(sum(k + i for k in range(ranks)))
        assert x.tolist() == [total] * 2 and got.tolist() == [total] * 2
        assert [t.tolist() for t in lst] == [[total] * 2] * ranks
