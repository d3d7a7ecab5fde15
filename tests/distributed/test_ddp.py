"""DistributedDataParallel on every rank (``mpiexec -n 2`` / ``-n 3``; a plain pytest run
checks a world of one).  The reference is single-process training on the whole global
batch, computed on every rank: data-parallel training must match it, with parameters
identical across ranks."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

import compiler
import eager
import eager.distributed as dist
from eager import nn, optim
from eager.nn.parallel import DistributedDataParallel as DDP
from tests.distributed.mpi_helpers import assert_same_on_every_rank, gather

GLOBAL_BATCH = 12  # divisible by 1, 2 and 3 ranks


def make_model(seed: int = 0) -> nn.Module:
    eager.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 3))


def data(steps: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((steps, GLOBAL_BATCH, 4)).astype(np.float32)
    y = rng.integers(0, 3, (steps, GLOBAL_BATCH))
    return x, y


def my_slice(a):
    """This rank's share of a global batch (the first axis)."""
    n = len(a) // dist.get_world_size()
    r = dist.get_rank()
    return a[r * n:(r + 1) * n]


def params_of(module):
    return [p.detach().numpy().copy() for p in module.parameters()]


def make_optimizer(kind, params):
    if kind == "sgd":
        return optim.SGD(params, lr=0.1, momentum=0.9)
    return optim.Adam(params, lr=0.01)


def test_construction_gives_every_rank_rank0s_parameters_and_buffers(world):
    model = make_model(seed=dist.get_rank())      # a different init on every rank
    model.register_buffer("scale", eager.full((2,), float(dist.get_rank() + 1)))
    rank0 = gather(params_of(model) + [model.scale.numpy().copy()])[0]
    ddp = DDP(model)
    mine = params_of(ddp.module) + [ddp.module.scale.numpy()]
    for a, b in zip(mine, rank0):
        np.testing.assert_array_equal(a, b)
    assert all(k.startswith("module.") for k in ddp.state_dict())


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("bucket_cap_mb", [None, 0.0002])
def test_training_equals_full_batch_single_process(world, kind, bucket_cap_mb):
    steps = 5
    x, y = data(steps)
    ddp = DDP(make_model(), bucket_cap_mb=bucket_cap_mb)
    if bucket_cap_mb is not None:
        assert len(ddp.reducer.bucket_indices) >= 3  # several buckets, reduced in order
    ref = make_model()
    opt, ref_opt = make_optimizer(kind, ddp.parameters()), make_optimizer(kind, ref.parameters())
    loss_fn = nn.CrossEntropyLoss()
    for i in range(steps):
        opt.zero_grad()
        loss = loss_fn(ddp(eager.tensor(my_slice(x[i]))), eager.tensor(my_slice(y[i])))
        loss.backward()
        grads = [p.grad.numpy().copy() for p in ddp.parameters()]
        opt.step()
        ref_opt.zero_grad()
        ref_loss = loss_fn(ref(eager.tensor(x[i])), eager.tensor(y[i]))
        ref_loss.backward()
        ref_grads = [p.grad.numpy() for p in ref.parameters()]
        ref_opt.step()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss, op=dist.ReduceOp.AVG)
        np.testing.assert_allclose(mean_loss.item(), ref_loss.item(), rtol=1e-6)
        for g, rg in zip(grads, ref_grads):
            np.testing.assert_allclose(g, rg, rtol=1e-5, atol=1e-7)
        assert_same_on_every_rank(grads)
    for p, rp in zip(params_of(ddp), params_of(ref)):
        np.testing.assert_allclose(p, rp, rtol=1e-5, atol=1e-6)
    assert_same_on_every_rank(params_of(ddp))


def test_no_sync_accumulates_locally_then_averages_the_sum(world):
    x, y = data(2, seed=3)
    ddp, ref = DDP(make_model()), make_model()
    loss_fn = nn.CrossEntropyLoss()
    with ddp.no_sync():
        loss_fn(ddp(eager.tensor(my_slice(x[0]))), eager.tensor(my_slice(y[0]))).backward()
    local = [p.grad.numpy().copy() for p in ddp.parameters()]
    if world > 1:  # not averaged: each rank has its own slice's gradient
        every = gather(local)
        assert any(not np.array_equal(every[0][0], e[0]) for e in every[1:])
    loss_fn(ddp(eager.tensor(my_slice(x[1]))), eager.tensor(my_slice(y[1]))).backward()
    for i in range(2):
        loss_fn(ref(eager.tensor(x[i])), eager.tensor(y[i])).backward()
    for p, rp in zip(ddp.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), rp.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert_same_on_every_rank([p.grad.numpy() for p in ddp.parameters()])


class TwoHeads(nn.Module):
    """Head ``b`` is used on rank 0 only, head ``c`` nowhere."""

    def __init__(self):
        super().__init__()
        eager.manual_seed(0)
        self.a, self.b, self.c = nn.Linear(3, 2), nn.Linear(3, 2), nn.Linear(3, 2)

    def forward(self, x, use_b: bool):
        out = self.a(x)
        return out + self.b(x) if use_b else out


def test_find_unused_parameters_averages_what_some_ranks_used(world):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((world, 4, 3)).astype(np.float32)
    r = dist.get_rank()
    ddp = DDP(TwoHeads(), find_unused_parameters=True)
    ddp(eager.tensor(x[r]), r == 0).square().mean().backward()
    # expected: every rank's local gradients (zeros where unused), averaged
    local = []
    for k in range(world):
        m = TwoHeads()
        m(eager.tensor(x[k]), k == 0).square().mean().backward()
        local.append({n: (np.zeros(p.shape, np.float32) if p.grad is None else p.grad.numpy())
                      for n, p in m.named_parameters()})
    for name, p in ddp.module.named_parameters():
        if name.startswith("c."):
            assert p.grad is None  # unused on every rank: left alone, as PyTorch does
        else:
            want = sum(lg[name] for lg in local) / world
            np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-6, atol=1e-7)
    assert_same_on_every_rank([p.grad.numpy() for n, p in ddp.module.named_parameters()
                               if not n.startswith("c.")])


def test_a_parameter_without_gradient_is_an_error_without_find_unused(world):
    ddp = DDP(TwoHeads())
    with pytest.raises(RuntimeError, match=r"received no gradient.*2 \(b.weight\), 3 \(b.bias\), "
                                           r"4 \(c.weight\), 5 \(c.bias\).*find_unused_parameters"):
        ddp(eager.ones(2, 3), False).sum().backward()
    # the reducer starts afresh at the next backward: now only c lacks a gradient
    with pytest.raises(RuntimeError, match=r"on rank \d+: 4 \(c.weight\), 5 \(c.bias\)\."):
        ddp(eager.ones(2, 3), True).sum().backward()


def test_models_that_differ_across_ranks_are_a_clear_error_on_every_rank(ranks):
    last = 4 if dist.get_rank() == ranks - 1 else 3
    msg = (r"same model on every rank, but parameter 2 \(2.weight\) is float32\[4, 16\] on "
           rf"rank {ranks - 1}, while rank 0 has .* float32\[3, 16\]")
    with pytest.raises(RuntimeError, match=msg):
        DDP(nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, last)))
    extra = [nn.Linear(2, 2)] * (dist.get_rank() == ranks - 1)
    with pytest.raises(RuntimeError, match=rf"rank {ranks - 1} has 4 parameters and buffers, "
                                           "while rank 0 has 2"):
        DDP(nn.Sequential(nn.Linear(2, 2), *extra))


def test_constructor_errors():
    with pytest.raises(ValueError, match="device_ids"):
        DDP(nn.Linear(2, 2), device_ids=[0])
    with pytest.raises(TypeError, match="wraps a Module"):
        DDP(lambda x: x)
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a gradient"):
        DDP(nn.Linear(2, 2).requires_grad_(False))


class Counter(nn.Module):
    """A buffer every forward adds ``rank + 1`` to (as running statistics change)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 1)
        self.register_buffer("seen", eager.zeros(1))

    def forward(self, x):
        with eager.no_grad():
            self.seen.add_(float(dist.get_rank() + 1))
        return self.lin(x)


@pytest.mark.parametrize("broadcast_buffers", [True, False])
def test_buffers_follow_rank_0_at_each_forward(world, broadcast_buffers):
    r = dist.get_rank()
    ddp = DDP(Counter(), broadcast_buffers=broadcast_buffers)
    ddp(eager.ones(1, 2))
    ddp(eager.ones(1, 2))
    # broadcast before each forward: rank 0's count (1 after its first forward) + own step
    want = (1 + (r + 1)) if broadcast_buffers and world > 1 else 2 * (r + 1)
    assert ddp.module.seen.item() == want
    with eager.no_grad():  # no buffer broadcast without grad mode (as PyTorch)
        ddp(eager.ones(1, 2))
    assert ddp.module.seen.item() == want + r + 1


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_compiled_ddp_step_equals_the_eager_one(world, backend):
    steps = 8
    x, y = data(steps, seed=7)
    loss_fn = nn.CrossEntropyLoss()
    results = {}
    for mode in ("eager", "compiled"):
        ddp = DDP(make_model(), bucket_cap_mb=0.0002)
        opt = optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)

        def step(xb, yb, sync):
            with nullcontext() if sync else ddp.no_sync():  # accumulate locally, or average
                loss = loss_fn(ddp(xb), yb)
                loss.backward()
            if sync:
                opt.step()
                opt.zero_grad()
            return loss

        f = compiler.compile(step, backend=backend) if mode == "compiled" else step
        losses = []
        for i in range(steps):
            loss = f(eager.tensor(my_slice(x[i])), eager.tensor(my_slice(y[i])), i != 2)
            compiler.wait()
            losses.append(loss.item())
        results[mode] = losses, params_of(ddp)
        if mode == "compiled":
            assert f.stats()["hits"] >= 4  # replays, each with its all-reduces
    (le, pe), (lc, pc) = results["eager"], results["compiled"]
    if backend == "python":  # one op per node: bit for bit
        assert le == lc
        for a, b in zip(pe, pc):
            np.testing.assert_array_equal(a, b)
    else:  # fused kernels: transcendental functions within 2 ULP of NumPy
        np.testing.assert_allclose(le, lc, rtol=1e-5)
        for a, b in zip(pe, pc):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert_same_on_every_rank(pc)


def test_compiled_step_with_find_unused_parameters_runs_eagerly_and_right(world):
    # which parameters some rank used is read into Python: a graph break, the step split
    # at that line (the forward and backward eager, the optimizer step compiled)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, world, 2, 3)).astype(np.float32)
    r = dist.get_rank()
    results = []
    for compiled in (False, True):
        ddp = DDP(TwoHeads(), find_unused_parameters=True)
        opt = optim.SGD(ddp.parameters(), lr=0.1)

        def step(xb):
            opt.zero_grad()
            ddp(xb, r == 0).square().mean().backward()
            opt.step()

        f = compiler.compile(step) if compiled else step
        for i in range(4):
            f(eager.tensor(x[i, r]))
        results.append(params_of(ddp))
        if compiled:
            ex = f.explain()
            assert any("tolist()" in reason for reason in ex.graph_breaks)
            assert [p is not None for _, p in ex.pieces] == [True, False, True]
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    assert_same_on_every_rank(results[1])


def test_a_dropped_wrapper_stops_reducing(world, monkeypatch):
    model = make_model()
    DDP(model)  # dropped at once: its hooks stay on the parameters but do nothing
    ddp = DDP(model, bucket_cap_mb=0.0002)
    started = []
    pg = ddp.process_group
    real = pg.start_all_reduce
    monkeypatch.setattr(pg, "start_all_reduce", lambda *a: started.append(1) or real(*a))
    x, y = data(1)
    loss = nn.CrossEntropyLoss()(ddp(eager.tensor(my_slice(x[0]))),
                                 eager.tensor(my_slice(y[0])))
    loss.backward()
    assert len(started) == len(ddp.reducer.bucket_indices) == 3  # the live wrapper's only
    assert_same_on_every_rank([p.grad.numpy() for p in ddp.parameters()])
