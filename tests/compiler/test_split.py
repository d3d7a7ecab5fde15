"""Graph breaks at a line (compiler.split): a function whose trace meets a line that cannot
be compiled is cut there; the statements before and after it run as compiled pieces, the
statement itself eagerly.  Everything observable equals eager's over calls that change
shapes, branches and Python state, after the kernels are built: results, gradients, what
is printed, globals and closure state written, early returns, unbound locals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compiler
import eager
from eager import nn
from tests.helpers import quiet_call

COUNTER = {"n": 0}
TOTAL = 0


def _x(rows, seed):
    rng = np.random.default_rng(seed)
    return eager.tensor(rng.standard_normal((rows, 3)).astype(np.float32))


def _same(a, b):
    if isinstance(a, eager.Tensor):
        assert isinstance(b, eager.Tensor)
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        assert a.requires_grad == b.requires_grad
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q)
    else:
        assert a == b or (a != a and b != b), (a, b)


def _twins(make, calls, backend="python"):
    """Run ``make()``'s function eagerly and compiled over ``calls`` (argument tuples), the
    kernels built half way; compare each result and what was printed."""
    fe, se = make()
    fc, sc = make()
    cf = compiler.compile(fc, backend=backend)
    for i, args in enumerate(calls):
        if i == len(calls) // 2:
            compiler.wait()
        a, out_a = quiet_call(fe, *args)
        b, out_b = quiet_call(cf, *args)
        _same(a, b)
        assert out_a == out_b
    return cf, se, sc


def _pieces(cf):
    return [(lines, ex is not None) for lines, ex in cf.explain().pieces]


def test_a_training_step_split_at_numpy_equals_eager():
    def make():
        eager.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 2))
        opt = eager.optim.Adam(model.parameters(), lr=0.05)
        seen = []

        def step(x, y):
            h = model(x)
            top = float(h.detach().numpy().max())      # data into NumPy: a break
            seen.append(round(top, 3))
            loss = ((h - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            print("loss", loss)
            opt.step()
            return loss.detach(), h.sum()
        return step, (model, seen)

    calls = [(_x(r, i), _x(r, 100 + i)[:, :2]) for i, r in enumerate([4, 4, 5, 4, 5, 5, 4, 4])]
    cf, (me, se), (mc, sc) = _twins(make, calls * 2)
    assert se == sc
    for p, q in zip(me.parameters(), mc.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    kinds = _pieces(cf)
    assert kinds[0][1] and not kinds[1][1], kinds  # the model compiled, the break eager
    ex = cf.explain()
    first = ex.pieces[0][1]
    assert first.stats["hits"] >= len(calls), first.stats
    assert "graph break" in str(ex) and "compiled" in str(ex)
    assert any(".numpy()" in b or "NumPy" in b for b in ex.graph_breaks)


def test_an_early_return_before_the_break_and_a_branch_after_it():
    def make():
        def f(x, flag):
            y = x * 2
            if flag == 0:
                return y + 1
            n = int((y > 0).numpy().sum())             # a break
            if n > 3:
                z = y.exp()
            else:
                z = y.sin()
            return z * n
        return f, None
    calls = [(_x(4, i), i % 3) for i in range(12)]
    cf, _, _ = _twins(make, calls)
    assert [c for _, c in _pieces(cf)][:2] == [True, False]


def test_a_local_left_unbound_raises_as_eager_does():
    def make():
        def f(x, k):
            if k:
                w = x + 1
            x.numpy()                                  # a break
            return w * 2
        return f, None
    fe, _ = make()
    fc, _ = make()
    cf = compiler.compile(fc, backend="python")
    for k in (1, 1, 0, 1, 0):
        x = _x(3, k)
        if k:
            _same(fe(x, k), quiet_call(cf, x, k)[0])
        else:
            with pytest.raises(UnboundLocalError):
                fe(x, k)
            with pytest.raises(UnboundLocalError):
                quiet_call(cf, x, k)
    assert cf.explain().pieces


def test_del_and_rebinding_across_the_cut():
    def make():
        def f(x):
            a = x + 1
            b = a * 3
            del a
            x.numpy()                                  # a break
            a = b - 1
            return a, b
        return f, None
    _twins(make, [(_x(2, i),) for i in range(6)])


def test_globals_and_closure_state_written_in_every_piece():
    def make():
        state = {"calls": 0}

        def f(x):
            global TOTAL
            state["calls"] += 1
            TOTAL += 1
            COUNTER["n"] += 2
            y = x * state["calls"]
            print(y.numpy().round(3))                  # a break (prints NumPy data)
            TOTAL += 10
            state["calls"] += 1
            return y + COUNTER["n"]
        return f, state
    global TOTAL
    TOTAL = 0
    COUNTER["n"] = 0
    fe, se = make()
    fc, sc = make()
    cf = compiler.compile(fc, backend="python")
    for i in range(8):
        x = _x(2, i)
        t0, c0 = TOTAL, COUNTER["n"]
        a, out_a = quiet_call(fe, x)
        t1, c1 = TOTAL, COUNTER["n"]
        TOTAL, COUNTER["n"] = t0, c0
        b, out_b = quiet_call(cf, x)
        _same(a, b)
        assert out_a == out_b
        assert (TOTAL, COUNTER["n"]) == (t1, c1)
        if i == 4:
            compiler.wait()
    assert se == sc
    assert cf.explain().pieces


def test_a_method_with_super_and_self_split_in_pieces():
    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x)

    class Net(Base):
        def __init__(self):
            super().__init__()
            self.scale = 2.0
            self.log = []

        def forward(self, x):
            h = super().forward(x) * self.scale
            self.log.append(h.detach().numpy().shape)  # a break
            return (h * h).sum() + super().forward(h).sum()  # super() after the cut

    eager.manual_seed(1)
    ne = Net()
    eager.manual_seed(1)
    nc = Net()
    nc.forward = compiler.compile(nc.forward, backend="python")
    for i in range(6):
        x = _x(2 + i % 2, i)
        a, b = ne(x), quiet_call(nc, x)[0]
        _same(a, b)
        a.backward()
        b.backward()
    assert ne.log == nc.log
    for p, q in zip(ne.parameters(), nc.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert nc.forward.explain().pieces


def test_backward_into_history_made_outside_the_call_is_not_replayed():
    """A compiled function calling backward() on a loss whose graph reaches tensors
    computed before the call: its saved tensors are that call's, so a replay cannot run
    that part; the gradients equal eager's on every call (they were call 0's before)."""
    w = eager.randn(3, 3, requires_grad=True)

    def tail(h, y):
        loss = ((h @ w) - y).pow(2).sum()
        loss.backward()
        return loss.detach()
    cf = compiler.compile(tail, backend="python")
    for i in range(5):
        x, y = _x(2, i), _x(2, 50 + i)
        w.grad = None
        quiet_call(cf, (x @ w).tanh(), y)
        got = w.grad.numpy().copy()
        w.grad = None
        tail((x @ w).tanh(), y)
        np.testing.assert_array_equal(got, w.grad.numpy())


def test_a_fresh_array_or_set_returned_is_new_at_every_call():
    def f(x):
        return x + 1, np.zeros(3), set()
    cf = compiler.compile(f, backend="python")
    for _ in range(4):
        _, arr, s = quiet_call(cf, _x(2, 0))[0]
        assert not arr.any() and not s
        arr[0] = 5
        s.add(1)


def test_numpy_data_handed_to_a_piece_runs_that_line_eagerly():
    """A per-call NumPy value crossing a cut (rewards, an environment) is cut at its first
    use, so the pieces after it replay instead of retracing for every new value."""
    def make():
        eager.manual_seed(2)
        lin = nn.Linear(3, 1)

        def f(x):
            r = x.numpy().sum(axis=1)                  # a break: NumPy data from here
            out = lin(x)
            ret = eager.tensor(np.cumsum(r))           # NumPy data back into a tensor
            return (out.squeeze(1) * ret).sum()
        return f, lin
    cf, _, _ = _twins(make, [(_x(4, i),) for i in range(10)])
    last = cf.explain().pieces[-1][1]
    assert last is not None and last.stats["hits"] >= 4, cf.explain()


def test_a_function_without_source_still_runs_its_body_eagerly():
    ns = {}
    exec("def f(x):\n    y = x * 2\n    y.numpy()\n    return y + 1\n", {"np": np}, ns)
    cf = compiler.compile(ns["f"], backend="python")
    for i in range(4):
        _same(ns["f"](_x(2, i)), quiet_call(cf, _x(2, i))[0])
    ex = cf.explain()
    assert ex.graph_breaks and not ex.pieces


def test_fullgraph_is_never_split():
    def f(x):
        y = x * 2
        y.numpy()
        return y
    cf = compiler.compile(f, fullgraph=True)
    with pytest.raises(compiler.GraphBreakError):
        cf(_x(2, 0))


def test_a_compiled_method_in_the_class_body_is_split_per_instance():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.seen = []

        @compiler.compile(backend="python")
        def forward(self, x):
            h = self.lin(x)
            self.seen.append(int((h > 0).numpy().sum()))   # a break
            return h.relu().sum()

    eager.manual_seed(4)
    a = Net()
    eager.manual_seed(4)
    b = Net()
    for i in range(6):
        x = _x(3, i)
        ra = quiet_call(a, x)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", compiler.CompileWarning)
            rb = Net.forward.fn(b, x)  # the plain function: eager's reference
        _same(ra, rb)
    assert a.seen == b.seen
    assert a.forward.explain().pieces


def test_a_source_file_edited_since_the_import_is_not_split(tmp_path, monkeypatch):
    """The pieces are made from the source: a file changed after the import holds other
    code than the function runs, so the function is not split (its body runs eagerly)."""
    import importlib
    import sys
    path = tmp_path / "split_edited_mod.py"
    path.write_text("def f(x):\n    y = x * 2\n    y.numpy()\n    return y + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("split_edited_mod")
    try:
        path.write_text("def f(x):\n    y = x * 3\n    y.numpy()\n    return y - 1\n")
        cf = compiler.compile(mod.f, backend="python")
        for i in range(4):
            _same(mod.f(_x(2, i)), quiet_call(cf, _x(2, i))[0])
        ex = cf.explain()
        assert ex.graph_breaks and not ex.pieces
    finally:
        sys.modules.pop("split_edited_mod", None)


def test_an_inner_functions_global_is_not_the_functions():
    """``global X`` inside an inner function leaves the outer function's ``X`` a local:
    a piece must not declare it global."""
    def make():
        def f(x):
            X = x * 2

            def inner():
                global X
                return X
            x.numpy()                                  # a break
            return X + 1, inner
        return f, None
    fe, _ = make()
    fc, _ = make()
    cf = compiler.compile(fc, backend="python")
    for i in range(4):
        _same(fe(_x(2, i))[0], quiet_call(cf, _x(2, i))[0][0])
    assert "X" not in globals()


def test_a_with_block_that_swallows_an_error_leaves_a_local_unbound():
    import contextlib as cl

    def make():
        def f(x, fail):
            with cl.suppress(ZeroDivisionError):
                if fail:
                    raise ZeroDivisionError
                y = x + 1
            x.numpy()                                  # a break
            try:
                return y * 2
            except UnboundLocalError:
                return x - 1
        return f, None
    _twins(make, [(_x(2, i), i % 2 == 1) for i in range(6)])


@pytest.mark.parametrize("read", ["item", "float"])
def test_a_loss_logged_to_a_list_cuts_there(read):
    """``losses.append(loss.item())`` (or ``float(loss)``) in a compiled step: a number
    that changes every call, read into Python state; the step is cut at that line and the
    rest replays (it retraced every call until max_traces before)."""
    def make():
        eager.manual_seed(5)
        lin = nn.Linear(3, 1)
        opt = eager.optim.SGD(lin.parameters(), lr=0.1)
        losses = []

        def step(x):
            loss = lin(x).pow(2).mean()
            losses.append(float(loss.item()) if read == "item" else float(loss))
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()
        return step, (lin, losses)
    cf, (le, se), (lc, sc) = _twins(make, [(_x(4, i),) for i in range(10)])
    assert se == sc
    for p, q in zip(le.parameters(), lc.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    first = cf.explain().pieces[0][1]
    assert first is not None and first.stats["hits"] >= 5


def test_an_augmented_assignment_after_the_cut_reads_the_local():
    def make():
        def f(x):
            total = x.sum()
            count = 1
            x.numpy()                                  # a break
            total += x.mean()
            count += 1
            return total * count
        return f, None
    _twins(make, [(_x(3, i),) for i in range(6)])


def test_a_cut_that_fails_is_no_error_to_the_user(monkeypatch):
    """Cutting is the compiler's business: if making the pieces raises, the call goes on
    (the function keeps its traces or runs its body eagerly) and gives eager's result."""
    import compiler.split as split_module

    def make():
        def f(x):
            y = x * 2
            loss = float(y.sum())                      # a float that changes: a cut
            return y + loss
        return f, None
    fe, _ = make()
    fc, _ = make()
    cf = compiler.compile(fc, backend="python")

    def broken(*a, **k):
        raise RuntimeError("injected")
    monkeypatch.setattr(split_module, "split_at", broken)
    for i in range(6):
        _same(fe(_x(2, i)), quiet_call(cf, _x(2, i))[0])
