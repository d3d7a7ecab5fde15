"""Whole-trace native code (compiler.codegen.native_cpu): a trace whose every node has
native code replays as one Numba function, and gives eager's values, gradients and
errors over many calls (after the background build, ``compiler.wait()``)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import compiler
import eager as torch
from compiler.codegen import native_cpu
from eager import nn

pytest.importorskip("scipy")


def _native_used(cf) -> bool:
    """Some program of ``cf`` is whole-trace native code, and none handed a call back to
    its Python program."""
    return _no_misses(cf) and any(name.endswith(".trace") for t in cf.explain().traces
                                  for name, _src in t["kernels"])


def _paths(cf):
    """Every recorded path of ``cf``."""
    return [path for entry in cf._cache.values() for variant in entry
            for path in variant.paths]


def _no_misses(cf) -> bool:
    for path in _paths(cf):
        programs = [path.program] + [getattr(b, "program", None) for b in path.backwards]
        if any(p.native_misses != [0] for p in programs
               if p is not None and p.native_misses is not None):
            return False
    return True


def _forward_native(cf) -> bool:
    """Every trace's forward program is one native function, which never handed a call
    to the Python program (an emitter raising every time would hide behind it)."""
    return _no_misses(cf) and all("# native:" in t["graph"] for t in cf.explain().traces)


def _mlp_run(compiled: bool, opt_name: str, dtype, steps=8, ignore=None, reduction="mean",
             act=nn.ReLU):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 16), act(), nn.Linear(16, 16), nn.Tanh(),
                          nn.Linear(16, 4)).to(dtype)
    opt = getattr(torch.optim, opt_name)(model.parameters(), lr=0.05)
    x = torch.randn(10, 3, dtype=dtype)
    y = torch.randint(0, 4, (10,))
    if ignore is not None:
        y[ignore] = -100
    loss_fn = nn.CrossEntropyLoss(reduction=reduction)

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    f = compiler.compile(step) if compiled else step
    losses = []
    for i in range(steps):
        losses.append(f(x, y).item())
        if i == 2:
            compiler.wait()
    params = [p.detach().numpy().copy() for p in model.parameters()]
    return np.array(losses), params, f


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_training_step_replays_natively_and_equals_eager(opt_name, dtype):
    le, pe, _ = _mlp_run(False, opt_name, dtype)
    lc, pc, f = _mlp_run(True, opt_name, dtype)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(lc, le, rtol=tol, atol=tol)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert _native_used(f)
    assert f.stats()["hits"] >= 5


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_ignored_targets_and_reductions(reduction):
    le, pe, _ = _mlp_run(False, "SGD", torch.float64, ignore=[1, 4], reduction=reduction)
    lc, pc, f = _mlp_run(True, "SGD", torch.float64, ignore=[1, 4], reduction=reduction)
    np.testing.assert_allclose(lc, le, rtol=1e-12)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert _native_used(f)


def test_every_target_ignored_gives_nan_loss_and_zero_gradient():
    all_rows = list(range(10))
    le, pe, _ = _mlp_run(False, "SGD", torch.float32, ignore=all_rows)
    lc, pc, f = _mlp_run(True, "SGD", torch.float32, ignore=all_rows)
    assert np.isnan(le).all() and np.isnan(lc).all()
    for a, b in zip(pc, pe):
        np.testing.assert_array_equal(a, b)
    assert _native_used(f)


def test_target_out_of_bounds_raises_eagers_error():
    torch.manual_seed(0)
    lin = nn.Linear(3, 4)

    def f(x, y):
        return nn.functional.cross_entropy(lin(x), y)

    cf = compiler.compile(f)
    x = torch.randn(5, 3)
    good = torch.tensor([0, 1, 2, 3, 0])
    for i in range(4):
        np.testing.assert_allclose(cf(x, good).item(), f(x, good).item(), rtol=1e-6)
        if i == 1:
            compiler.wait()
    assert _native_used(cf)
    bad = torch.tensor([0, 1, 7, 3, 0])
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        f(x, bad)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        cf(x, bad)
    np.testing.assert_allclose(cf(x, good).item(), f(x, good).item(), rtol=1e-6)


def _misses(cf) -> int:
    return sum(p.native_misses[0] for entry in cf._cache.values() for variant in entry
               for path in variant.paths
               for p in [path.program] + [getattr(b, "program", None) for b in path.backwards]
               if p is not None and p.native_misses is not None)


def test_non_contiguous_input_is_retried_on_a_copy_with_the_same_values():
    torch.manual_seed(0)
    lin = nn.Linear(4, 3)

    def f(x):
        return torch.log_softmax(lin(x), dim=1).sum(dim=0)

    cf = compiler.compile(f)
    base = torch.randn(4, 6)
    for i in range(4):
        x = torch.randn(6, 4)
        np.testing.assert_allclose(cf(x).detach().numpy(), f(x).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        if i == 1:
            compiler.wait()
    assert _native_used(cf)
    xt = base.t()  # same shape, transposed strides: not what the native code was built for
    assert not xt.is_contiguous()
    np.testing.assert_allclose(cf(xt).detach().numpy(), f(xt).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    # strides are part of an argument's key: the transposed layout is a trace of its own
    # (Python may branch on is_contiguous()); its native code, once built, is given the
    # transposed array: refused, then run on a C-contiguous copy, equal to eager
    assert cf.stats()["traces"] == 2
    for i in range(3):
        np.testing.assert_allclose(cf(xt).detach().numpy(), f(xt).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        if i == 0:
            compiler.wait()
    assert cf.stats()["traces"] == 2 and _misses(cf) >= 1


def test_sum_backward_of_a_compiled_output_runs_the_native_backward():
    """``model(x).sum().backward()``: sum's backward sends a broadcast (zero-stride)
    gradient into the compiled node, which the native backward must take without a
    refused call (Numba's refusal cost 100 µs per step on the main example's model)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    cm = compiler.compile(model.forward)
    x = torch.randn(5, 3)
    for i in range(4):
        model.zero_grad()
        cm(x).sum().backward()
        got = [p.grad.numpy().copy() for p in model.parameters()]
        model.zero_grad()
        model(x).sum().backward()
        for a, b in zip(got, [p.grad.numpy() for p in model.parameters()]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        if i == 1:
            compiler.wait()
    assert _native_used(cm)


def test_a_write_back_into_a_non_contiguous_parameter_lands_in_it():
    """A retried call writes its updates into C-contiguous copies: they must reach the
    (transposed) tensor the user holds."""
    def make():
        w = torch.arange(12.0).reshape(3, 4).t()   # (4, 3), not C-contiguous
        return w.detach().requires_grad_(False)

    def step(w, g):
        w.sub_(g * 0.5)
        return (w * 2.0).sum()

    we, wc = make(), make()
    cf = compiler.compile(step)
    g = torch.ones(4, 3)
    for i in range(5):
        assert not wc.is_contiguous()
        np.testing.assert_array_equal(cf(wc, g).numpy(), step(we, g).numpy())
        np.testing.assert_array_equal(wc.numpy(), we.numpy())
        if i == 1:
            compiler.wait()
    assert _misses(cf) > 0   # the native calls were the retried ones, on copies


def test_log_softmax_with_infinities_and_nan_equals_eager():
    w = torch.ones(4, 4)

    def f(x):
        return torch.log_softmax(x @ w, dim=-1)

    cf = compiler.compile(f)
    rows = [[1.0, 2.0, 3.0, 4.0], [-np.inf, 0.0, 0.0, 0.0], [np.inf, 0.0, 1.0, 2.0],
            [np.nan, 0.0, 0.0, 0.0], [-np.inf] * 4]
    for i in range(4):
        x = torch.tensor(np.array(rows, np.float32))
        with np.errstate(all="ignore"):
            e = f(x).detach().numpy()
            c = cf(x).detach().numpy()
        np.testing.assert_allclose(c, e, rtol=1e-6, equal_nan=True)
        if i == 1:
            compiler.wait()
    assert _native_used(cf)


@pytest.mark.parametrize("keepdim", [False, True])
def test_sums_means_and_broadcast_gradients(keepdim):
    torch.manual_seed(1)
    w = torch.randn(5, 6, requires_grad=True)
    b = torch.randn(1, 6, requires_grad=True)

    def f(x):
        h = x @ w + b
        s = h.sum(dim=(0, 2), keepdim=keepdim) if h.dim() == 3 else h.sum(dim=0,
                                                                          keepdim=keepdim)
        m = h.mean(dim=-1, keepdim=keepdim)
        loss = s.sum() + m.sum() * 2.0
        loss.backward()
        return loss, s, m

    cf = compiler.compile(f)
    for i in range(4):
        x = torch.randn(3, 5)
        w.grad = b.grad = None
        le, se, me = f(x)
        ge = (w.grad.numpy().copy(), b.grad.numpy().copy())
        w.grad = b.grad = None
        lc, sc, mc = cf(x)
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-5)
        np.testing.assert_allclose(sc.detach().numpy(), se.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(mc.detach().numpy(), me.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), ge[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.grad.numpy(), ge[1], rtol=1e-5, atol=1e-6)
        if i == 1:
            compiler.wait()
    assert _native_used(cf)


def test_outputs_passed_through_and_repeated_keep_their_identity():
    w = torch.randn(3, 3)

    def f(x):
        y = (x @ w).sum(dim=1)
        return x, y, y

    cf = compiler.compile(f)
    for i in range(4):
        x = torch.randn(2, 3)
        xo, y1, y2 = cf(x)
        assert xo is x
        assert y1 is y2
        np.testing.assert_allclose(y1.detach().numpy(), (x.numpy() @ w.numpy()).sum(1), rtol=1e-5)
        if i == 1:
            compiler.wait()
    assert _native_used(cf)


def test_a_graph_with_an_op_without_native_code_is_refused():
    """The refusal is explicit (Unsupported): such a trace keeps the per-node program."""
    from compiler.ir import Graph, Node, Value
    from eager.ops import linalg
    from eager.ops.base import Op

    class Unknown(Op):
        def forward(a):
            return a

    f32 = np.dtype(np.float32)
    a, mm, out = Value(0, (2, 2), f32), Value(1, (2, 2), f32), Value(2, (2, 2), f32)
    g = Graph([a], [Node(linalg.Matmul, [a, a], {}, mm), Node(Unknown, [mm], {}, out)],
              [out])
    with pytest.raises(native_cpu.Unsupported, match="has no native code"):
        native_cpu.trace_source(g)


@pytest.mark.parametrize("key", [(slice(1, None), 0), (0,), (slice(None), slice(None, None, 2)),
                                 (1, 2)])
def test_basic_indexing_and_its_gradient_replay_natively(key):
    def step(w, x):
        h = (x @ w).tanh()
        return (h[key] * 3.0).sum()

    def run(compiled):
        torch.manual_seed(1)
        w = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
        x = torch.randn(3, 4, dtype=torch.float64)
        f = compiler.compile(step) if compiled else step
        out = []
        for i in range(5):
            w.grad = None
            loss = f(w, x)
            loss.backward()
            out.append((loss.item(), w.grad.numpy().copy()))
            if i == 1:
                compiler.wait()
        return out, f

    eager_out, _ = run(False)
    comp_out, f = run(True)
    for (le, ge), (lc, gc) in zip(eager_out, comp_out):
        assert lc == pytest.approx(le, rel=1e-12)
        np.testing.assert_allclose(gc, ge, rtol=1e-10, atol=1e-14)
    assert _native_used(f)


def _compare_native(make, steps=4, rtol=1e-10, atol=1e-12):
    """Run ``make()``'s step eagerly and compiled (kernels loaded after the second call):
    losses and gradients equal, and the whole trace ran as native code."""
    def run(compiled):
        torch.manual_seed(3)
        step, params = make()
        f = compiler.compile(step) if compiled else step
        out = []
        for i in range(steps):
            for p in params:
                p.grad = None
            loss = f(i)
            loss.backward()
            out.append((loss.item(), [p.grad.numpy().copy() for p in params]))
            if i == 1:
                compiler.wait()
        return out, f

    eager_out, _ = run(False)
    comp_out, f = run(True)
    for (le, ge), (lc, gc) in zip(eager_out, comp_out):
        assert lc == pytest.approx(le, rel=rtol, abs=atol)
        for a, b in zip(gc, ge):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    assert _native_used(f) and _forward_native(f), f.explain()
    return f


def test_attention_with_embeddings_replays_natively():
    """Row lookups and their gradient, linear on 3-D input, batched matmuls, softmax over
    the last dimension, unsqueeze/expand/contiguous, integer arange."""
    def make():
        emb = torch.randn(7, 4, dtype=torch.float64, requires_grad=True)
        pos = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
        wq = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
        idx = torch.tensor([1, 6, 1, 0, -2, 3])     # a repeat and a negative index

        def step(i):
            x = emb[idx * 1].view(2, 3, 4) + pos[torch.arange(3)]   # idx * 1: made here
            q = torch.nn.functional.linear(x, wq)
            att = (q @ x.transpose(1, 2).contiguous()).softmax(-1)
            y = (att @ x).unsqueeze(1).expand(2, 2, 3, 4).contiguous()
            return (y * y).sum()
        return step, [emb, pos, wq]

    _compare_native(make)


def test_clip_grad_norm_and_stack_replay_natively():
    def make():
        w1 = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
        w2 = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)

        def step(i):
            with torch.no_grad():
                norms = torch.stack([torch.linalg.vector_norm(w1), w2.norm()])
                total = torch.linalg.vector_norm(norms)
            return ((w1 @ w2).tanh() * total).sum()
        return step, [w1, w2]

    _compare_native(make)


def test_split_and_its_gradient_cat_replay_natively():
    """``split`` pieces (views) and their gradient, folded into one ``cat``
    (``passes/scatters.py``), along a middle and the last dimension."""
    def make():
        w = torch.randn(3, 12, dtype=torch.float64, requires_grad=True)

        def step(i):
            x = torch.ones(2, 5, 3, dtype=torch.float64) * (i + 1)
            q, k, v = (p.contiguous() for p in (x @ w).split(4, -1))  # (no view saved)
            a, b = q.split([2, 3], dim=1)
            return ((q * k).sum(-1, keepdim=True) * v).sum() + (a.sum() - 2.0 * b.sum())
        return step, [w]

    f = _compare_native(make)
    backwards = [b.program for path in _paths(f) for b in path.backwards
                 if getattr(b, "program", None) is not None]
    assert backwards and all(p.native_misses == [0] for p in backwards)


def test_an_index_out_of_bounds_raises_eagers_error_from_native_code():
    emb = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)

    def f(idx):
        return (emb[idx] * 2.0).sum()

    cf = compiler.compile(f)
    ok = torch.tensor([0, 4, 1])
    for _ in range(3):
        cf(ok)
    compiler.wait()
    assert cf(ok).item() == pytest.approx(f(ok).item())
    with pytest.raises(IndexError, match="out of bounds"):
        f(torch.tensor([0, 5, 1]))
    with pytest.raises(IndexError, match="out of bounds"):
        cf(torch.tensor([0, 5, 1]))


def test_a_trace_too_large_for_one_native_function_keeps_the_kernel_program(monkeypatch):
    monkeypatch.setattr(native_cpu, "MAX_LINES", 20)
    w = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)

    def step(x):
        return ((x @ w).tanh() @ w).sum()

    cf = compiler.compile(step)
    x = torch.randn(3, 4, dtype=torch.float64)
    for _ in range(3):
        cf(x).backward()
    compiler.wait()
    assert cf(x).item() == pytest.approx(step(x).item(), rel=1e-12)
    assert not _native_used(cf)


def test_a_long_native_function_is_built_after_the_fused_kernels(monkeypatch, caplog):
    """Longer than FIRST_LINES: the trace's first build is its fused kernels (seconds
    from a cold cache, where the whole function takes tens), the function comes with a
    second build, which ``compiler.wait()`` also waits for."""
    import logging
    monkeypatch.setattr(native_cpu, "FIRST_LINES", 5)
    w = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    new = 1.0 + int.from_bytes(os.urandom(4), "little") / 2 ** 40  # a graph no run built

    def step(x):
        return ((x @ w).tanh() @ w).sum() * new

    cf = compiler.compile(step)
    x = torch.randn(3, 4, dtype=torch.float64)
    with caplog.at_level(logging.INFO, logger="dyngraph.kernels"):
        for _ in range(3):
            cf(x).backward()
        compiler.wait()
    later = [r.getMessage() for r in caplog.records if "native code later" in r.getMessage()]
    assert later, "the first build made the whole-trace function"
    assert cf(x).item() == pytest.approx(step(x).item(), rel=1e-12)
    assert _native_used(cf)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_native_matrix_products_equal_eagers_bit_for_bit(dtype):
    """Native code multiplies through NumPy's own BLAS call (runtime.cpu.blas), so each
    product of a trace — plain, transposed operands, a linear layer — has eager's bits."""
    def f(a, b, w, c):
        h = torch.relu(a @ b)
        return h, a.t() @ h, nn.functional.linear(h, w, c)

    cf = compiler.compile(f)
    rng = np.random.default_rng(0)
    args = [torch.tensor(rng.standard_normal(s)).to(dtype)
            for s in ((30, 20), (20, 40), (7, 40), (7,))]
    for _ in range(2):
        cf(*args)
    compiler.wait()
    for _ in range(2):
        got, want = cf(*args), f(*args)
        for g, w in zip(got, want):
            assert np.array_equal(g.numpy(), w.numpy())
    assert _forward_native(cf)
    assert "B.matmul(" in cf.explain().traces[0]["graph"]


def _classifier_step(optimizer, **kw):
    """(training step, model, optimizer) of a small classifier, the same each call."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = optimizer(model.parameters(), **kw)

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, model, opt


def _kernel_sources(cf):
    return [src for t in cf.explain().traces for _name, src in t["kernels"]]


def test_optimizer_updates_run_kernels_that_store_into_the_parameters():
    """A write-back kernel's variant stores into its input itself (one array for loads
    and stores, which LLVM vectorizes); the native step calls it with no output array."""
    (fc, mc, _), (fe, me, _) = _classifier_step(torch.optim.SGD, lr=0.1), \
        _classifier_step(torch.optim.SGD, lr=0.1)
    cf = compiler.compile(fc)
    x, y = torch.randn(6, 5), torch.randint(0, 3, (6,))
    for _ in range(3):
        cf(x, y), fe(x, y)
    compiler.wait()
    for _ in range(3):
        np.testing.assert_allclose(cf(x, y).item(), fe(x, y).item(), rtol=1e-6)
    for p, q in zip(mc.parameters(), me.parameters()):   # (native sums accumulate in
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(),  # float64)
                                   rtol=1e-5, atol=1e-7)
    assert _native_used(cf)
    assert any("computed into input" in src for src in _kernel_sources(cf))


def test_a_kernel_computing_into_a_strided_target_writes_a_new_array():
    """The per-node program (a node without native code) calls the storing variant only
    on a C-contiguous writeable target; a strided one gets the result copied in."""
    def f(p, g):
        c = g.cumsum(0)       # no native code: the per-node program
        p.sub_(g * 0.5)
        return c

    cf = compiler.compile(f)
    for strided in (False, True, False):
        base_c, base_e = torch.ones(4, 6), torch.ones(4, 6)
        pc, pe = (base_c[:, ::2], base_e[:, ::2]) if strided else (base_c[:, :3].contiguous(),
                                                                    base_e[:, :3].contiguous())
        g = torch.arange(12.0).reshape(4, 3)
        for _ in range(2):
            cf(pc, g), f(pe, g)
        compiler.wait()
        for _ in range(2):
            assert np.array_equal(cf(pc, g).numpy(), f(pe, g).numpy())
            assert np.array_equal(pc.numpy(), pe.numpy())
            assert np.array_equal(base_c.numpy(), base_e.numpy())
    assert any("computed into input" in src for src in _kernel_sources(cf))


def test_adam_stores_each_state_tensor_and_the_parameter_into_itself():
    """Adam's fused update has several outputs (exp_avg, exp_avg_sq, the parameter), each
    stored into the tensor it replaces: the native step returns none of them."""
    (fc, mc, oc), (fe, me, oe) = [_classifier_step(torch.optim.Adam, lr=0.01,
                                                   capturable=True) for _ in range(2)]
    cf = compiler.compile(fc)
    x, y = torch.randn(6, 5), torch.randint(0, 3, (6,))
    for _ in range(3):
        cf(x, y), fe(x, y)
    compiler.wait()
    state = [oc.state[p]["exp_avg"]._data for p in mc.parameters()]
    for _ in range(3):
        np.testing.assert_allclose(cf(x, y).item(), fe(x, y).item(), rtol=1e-6)
    assert all(oc.state[p]["exp_avg"]._data is a for p, a in zip(mc.parameters(), state))
    for p, q in zip(mc.parameters(), me.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                   atol=1e-7)
        for key in ("exp_avg", "exp_avg_sq", "step"):
            np.testing.assert_allclose(oc.state[p][key].numpy(), oe.state[q][key].numpy(),
                                       rtol=1e-5, atol=1e-9)
    assert _native_used(cf)
    stored = [src for src in _kernel_sources(cf) if "computed into inputs" in src]
    assert any(src.count("->") >= 3 for src in stored)   # one kernel, three targets


def test_a_kernel_reading_a_view_of_its_target_does_not_write_into_it():
    """Row 0 of ``p`` is read by every row of the loop that stores into ``p``: the kernel
    must write a new array (eager computes from the old values)."""
    def f(p, u):
        p.add_(p[0] * u)
        return u + 1

    cf = compiler.compile(f)
    pc, pe = torch.arange(16.0).reshape(4, 4), torch.arange(16.0).reshape(4, 4)
    u = torch.full((4, 4), 0.5)
    for _ in range(2):
        cf(pc, u), f(pe, u)
    compiler.wait()
    for _ in range(3):
        cf(pc, u), f(pe, u)
        assert np.array_equal(pc.numpy(), pe.numpy())


def test_the_mean_of_a_zero_d_value_has_native_code(caplog):
    """A 0-d mean divided a 0-d accumulator by its count, which Numba makes a number, so
    building the trace failed (found by a random program; it ran the per-node program)."""
    def f(a, w):
        s = (a @ w).sum()
        return s.mean() * 2.0, s * 3.0

    cf = compiler.compile(f)
    a, w = torch.randn(4, 3), torch.randn(3, 2)
    with caplog.at_level("WARNING", logger="dyngraph"):
        for _ in range(2):
            cf(a, w)
        compiler.wait()
        for _ in range(2):
            for g, e in zip(cf(a, w), f(a, w)):   # (native sums accumulate in float64)
                np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)
    assert not [r for r in caplog.records if "failed to build" in r.getMessage()]
    assert _forward_native(cf)


_LOAD_NATIVE = """
import sys
import eager as torch, compiler
torch.manual_seed(0)
lin = torch.nn.Linear(3, 4)
f = compiler.compile(lambda x: (lin(x).tanh() ** 2).sum())
x = torch.randn(5, 3)
for _ in range(3):
    f(x)
compiler.wait()
native = any(name.endswith(".trace") for t in f.explain().traces for name, _ in t["kernels"])
print(native, "scipy.linalg" in sys.modules, abs(f(x).item() - (lin(x).tanh() ** 2).sum().item()))
"""


def _twice(script: str, tmp_path) -> list:
    """``script``'s printed (compiled natively?, scipy.linalg imported?, error) in two new
    processes on one kernel cache: the first builds into it, the second loads from it."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, DYNGRAPH_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", script], env=env, cwd=root,
                           capture_output=True, text=True, timeout=300, check=False)
        assert p.returncode == 0, p.stderr
        native, imported, diff = p.stdout.split()
        runs.append((native, imported, float(diff)))
    assert all(native == "True" and diff < 1e-5 for native, _, diff in runs), runs
    return runs


def test_a_native_trace_with_a_product_loads_without_importing_scipys_blas(tmp_path):
    """A new process loading a native trace that calls BLAS from the disk cache does not
    import SciPy's BLAS (~0.4 s; only Numba's ``np.dot`` calls it, and imports it itself
    at its first call): checking that SciPy is installed no longer imports it."""
    runs = _twice(_LOAD_NATIVE, tmp_path)
    assert runs[1][1] == "False", runs


_LOAD_SCAN = """
import sys
import eager as torch, compiler
from eager.nn.utils.rnn import pack_padded_sequence
torch.manual_seed(0)
lstm = torch.nn.LSTM(2, 8, batch_first=True)
def f(x):
    _, (h, _) = lstm(pack_padded_sequence(x, [4, 1, 2], batch_first=True,
                                          enforce_sorted=False))
    return (h ** 2).sum()
cf = compiler.compile(f)
x = torch.randn(3, 4, 2)
for _ in range(3):
    cf(x)
compiler.wait()
scan = any("the recurrent scan" in src for name, src in cf.explain().kernels)
print(scan, "scipy.linalg" in sys.modules, abs(cf(x).item() - f(x).item()))
"""


def test_a_native_scan_with_one_row_steps_runs_without_importing_scipys_blas(tmp_path):
    """The native LSTM scan's products of a one-row step (the last steps of a packed
    batch) call NumPy's gemv and dot, as ``np.matmul`` does, not Numba's ``np.dot``
    (SciPy's BLAS, imported at its first call: ~0.4 s in every run of the LSTM example)."""
    runs = _twice(_LOAD_SCAN, tmp_path)
    assert runs[1][1] == "False", runs
