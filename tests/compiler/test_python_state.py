"""Compiled equals eager when Python state changes between calls: attributes, globals,
closures, containers, modules, counters and other side effects.

Each test builds two identical worlds, runs the function eagerly in one and compiled in
the other with the same changes between calls, and compares results and the state after
every call; ``compiler.wait()`` after the second call, so later calls run fused kernels.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import compiler
import eager as torch
from eager import nn
from eager.nn.utils.rnn import pack_padded_sequence

N_CALLS = 6


def _same(a, b, what):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), what
        assert a.dtype == b.dtype and a.shape == b.shape, what
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6,
                                   atol=1e-7, err_msg=what)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), what
        for x, y in zip(a, b):
            _same(x, y, what)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), what
        for k in a:
            _same(a[k], b[k], f"{what}[{k!r}]")
    else:
        assert a == b and type(a) is type(b), f"{what}: {a!r} != {b!r}"


def twins(make, change=None, args=None, n=N_CALLS, **compile_kw):
    """``make() -> (fn, world)``; ``change(world, i)`` mutates Python state before call i;
    ``args(i)`` gives the call's arguments.  Returns the compiled function."""
    fe, we = make()
    fc, wc = make()
    cf = compiler.compile(fc, **compile_kw)
    for i in range(n):
        if change is not None:
            change(we, i)
            change(wc, i)
        a = args(i) if args is not None else (torch.ones(3) * (i + 1),)
        want = fe(*a)
        got = cf(*a)
        _same(got, want, f"result of call {i}")
        if hasattr(we, "state"):
            _same(wc.state(), we.state(), f"state after call {i}")
        if i == 1:
            compiler.wait()
    return cf


class World:
    def __init__(self, **kw):
        self.__dict__.update(kw)


# -- 1: a float attribute of a module ---------------------------------------------------------

class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = 1.0

    def forward(self, x):
        return x * self.alpha


def test_module_float_attribute_change_is_seen():
    def make():
        m = Scale()
        return m, m

    def change(m, i):
        if i >= 3:
            m.alpha = 2.0

    cf = twins(make, change)
    assert cf.stats()["hits"] >= 3


# -- 2: a plain object's attribute, through a bound method and functools.partial -----------

class Plain:
    def __init__(self):
        self.scale = 1.5

    def apply(self, x):
        return x * self.scale + 1


def _change_scale(o, i):
    if i == 3:
        o.scale = -0.5


def test_attribute_of_bound_self_is_guarded():
    def make():
        o = Plain()
        return o.apply, o
    twins(make, _change_scale)


def _scaled(obj, x):
    return x * obj.scale


def test_attribute_through_functools_partial_is_guarded():
    def make():
        o = Plain()
        return functools.partial(_scaled, o), o
    twins(make, _change_scale)


# -- 3: a config dict read inside the function ------------------------------------------------

def test_config_dict_item_change_is_seen():
    def make():
        cfg = {"scale": 2.0}
        return (lambda x: x * cfg["scale"] + 1), cfg

    def change(cfg, i):
        if i == 3:
            cfg["scale"] = 5.0
    cf = twins(make, change)
    assert cf.stats()["hits"] >= 3


CFG = {"scale": 2.0}


def _uses_global_cfg(x):
    return x * CFG["scale"]


def test_global_dict_item_change_is_seen():
    cf = compiler.compile(_uses_global_cfg)
    x = torch.ones(2)
    try:
        for i in range(5):
            if i == 3:
                CFG["scale"] = 3.0
            _same(cf(x), _uses_global_cfg(x), f"call {i}")
            if i == 1:
                compiler.wait()
    finally:
        CFG["scale"] = 2.0


# -- 4: a method that counts its calls and logs ----------------------------------------------

class Counter:
    def __init__(self):
        self.count = 0
        self.log = []

    def __call__(self, x):
        self.count += 1
        self.log.append(("called", self.count))
        return x * self.count

    def state(self):
        return {"count": self.count, "log": list(self.log)}


def test_counter_and_log_are_kept():
    def make():
        c = Counter()
        return c, c
    twins(make)


# -- 8: a submodule replaced, a config list or dict changed ------------------------------------

def test_replaced_submodule_in_sequential():
    def make():
        torch.manual_seed(0)
        m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
        return m, m

    def change(m, i):
        if i == 3:
            m[1] = nn.Tanh()
    twins(make, change)


def test_config_list_and_new_dict_key():
    def make():
        cfg = [1.0, 2.0]
        opts = {"bias": 0.5}

        def f(x):
            y = x * cfg[0] + cfg[1]
            if "extra" in opts:
                y = y + opts["extra"]
            return y + opts["bias"]
        return f, World(cfg=cfg, opts=opts)

    def change(w, i):
        if i == 2:
            w.cfg[0] = 2.0
        if i == 4:
            w.opts["extra"] = 10.0
    twins(make, change)


def test_modules_in_a_python_list_attribute():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.blocks = [nn.Linear(3, 3), nn.Linear(3, 3)]

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    def make():
        n = Net()
        return n, n

    def change(n, i):
        if i == 3:
            n.blocks.append(nn.Linear(3, 3))
            n.blocks[-1].weight.data.mul_(0)
            n.blocks[-1].bias.data.fill_(0.25)
    twins(make, change)


def test_random_module_call_runs_eagerly_with_reason():
    import random

    def f(x):
        return x * random.random()

    cf = compiler.compile(f)
    with pytest.warns(compiler.CompileWarning, match="random"):
        cf(torch.ones(2))
    assert "random" in str(cf.explain())
    assert cf.stats()["hits"] == 0


def test_class_attribute_change_is_seen():
    class Cfg:
        k = 2.0

    def f(x):
        return x * Cfg.k

    cf = compiler.compile(f)
    x = torch.ones(2)
    for i in range(5):
        if i == 3:
            Cfg.k = 4.0
        _same(cf(x), f(x), f"call {i}")


@pytest.mark.parametrize("kind", ["staticmethod", "classmethod", "builtin classmethod"])
def test_a_method_called_through_its_class_replays_and_is_guarded(kind):
    """``Cls.helper(...)`` with a staticmethod or classmethod: the read gives the function
    (a new bound method each time for a classmethod), not the class dict's descriptor.
    Traced as the descriptor, its identity guard failed at every call: every call was
    traced again (``nn.Transformer.generate_square_subsequent_mask`` in a step)."""
    class Masks:
        scale = 2.0

        @staticmethod
        def s(x):
            return x * 3.0

        @classmethod
        def c(cls, x):
            return x * cls.scale

    def f(x):
        if kind == "staticmethod":
            return Masks.s(x) + 1
        if kind == "classmethod":
            return Masks.c(x) + 1
        return x * len(dict.fromkeys("abca")) + 1

    cf = compiler.compile(f)
    x = torch.ones(2)
    for i in range(6):
        if i == 4 and kind == "staticmethod":
            Masks.s = staticmethod(lambda x: x * -1.0)
        if i == 4 and kind == "classmethod":
            Masks.scale = 5.0
        _same(cf(x), f(x), f"call {i}")
        if i == 1:
            compiler.wait()
    assert cf.stats()["traces"] <= 2 and cf.stats()["hits"] >= 3, cf.stats()


def test_property_reading_state_is_guarded():
    class P:
        def __init__(self):
            self._v = 1.0

        @property
        def v(self):
            return self._v * 2

    p = P()

    def f(x):
        return x + p.v

    cf = compiler.compile(f)
    x = torch.ones(2)
    for i in range(5):
        if i == 3:
            p._v = 5.0
        _same(cf(x), f(x), f"call {i}")


def test_closure_variable_rebound_is_seen():
    scale = 1.0

    def f(x):
        return x * scale

    cf = compiler.compile(f)
    x = torch.ones(2)
    for i in range(5):
        if i == 3:
            scale = 3.0  # noqa: F841 - rebinding the cell f reads
        _same(cf(x), f(x), f"call {i}")


def test_module_buffer_replaced():
    class B(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offset", torch.zeros(3))

        def forward(self, x):
            return x + self.offset

    def make():
        b = B()
        return b, b

    def change(b, i):
        if i == 3:
            b.offset = torch.ones(3) * 7
    twins(make, change)


def test_container_of_tensors_whose_length_changes():
    def make():
        bank = [torch.ones(3)]

        def f(x):
            return x + sum(bank)
        return f, World(bank=bank)

    def change(w, i):
        if i in (2, 4):
            w.bank.append(torch.ones(3) * i)
    twins(make, change)


def test_nested_compiled_function_sees_state():
    o = Plain()
    inner = compiler.compile(lambda x: x * o.scale)

    def outer(x):
        return inner(x) + 1

    cf = compiler.compile(outer)
    x = torch.ones(2)
    for i in range(5):
        if i == 3:
            o.scale = 9.0
        _same(cf(x), x * o.scale + 1, f"call {i}")


def test_generator_inside_the_function():
    o = Plain()

    def gen(n):
        for k in range(n):
            yield k * o.scale

    def f(x):
        return x + sum(gen(3))

    cf = compiler.compile(f)
    x = torch.ones(2)
    for i in range(5):
        if i == 3:
            o.scale = 4.0
        _same(cf(x), f(x), f"call {i}")


def test_exception_raised_and_caught_mid_trace():
    o = Plain()

    def f(x):
        try:
            v = o.missing
        except AttributeError:
            v = o.scale
        return x * v

    cf = compiler.compile(f)
    x = torch.ones(2)
    for i in range(5):
        if i == 2:
            o.scale = 3.0
        if i == 4:
            o.missing = 100.0
        _same(cf(x), f(x), f"call {i}")


# -- regressions from integrating other parts --------------------------------------------------

@pytest.mark.regression("Module.zero_grad() retraced every call (named_modules' memo set)")
def test_module_zero_grad_inside_replays():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))

    def step(x):
        m.zero_grad()
        loss = m(x).sum()
        loss.backward()
        return loss

    cf = compiler.compile(step)
    x = torch.randn(4, 2)
    for i in range(5):
        cf(x)
    assert cf.stats()["hits"] >= 3
    for b in m.buffers():
        pass


@pytest.mark.regression("iterating a list argument of new tensors retraced every call")
def test_iterating_a_list_argument_replays():
    def f(ts, y):
        out = y
        for t in ts:
            out = out + t
        return out

    cf = compiler.compile(f)
    for i in range(5):
        ts = [torch.ones(2) * i, torch.ones(2)]
        _same(cf(ts, torch.zeros(2)), f(ts, torch.zeros(2)), f"call {i}")
    assert cf.stats()["hits"] >= 3


class _Packs(nn.Module):
    """Packs ``x`` by a list of lengths (library code reading the list's items in C), and
    returns a number that tells ``True`` from ``1`` in it."""

    def __init__(self, lengths=None):
        super().__init__()
        self.lengths = lengths

    def forward(self, x, lengths=None):
        lengths = self.lengths if lengths is None else lengths
        p = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        return p.data.sum() * len(str(lengths))


def test_lists_of_lengths_each_replay_their_own_trace():
    """Batches made once, each with its list of lengths, called in turns (as the LSTM
    example does): each list's items are guarded, and each replays its own trace."""
    m = _Packs()
    cf = compiler.compile(lambda x, lengths: m(x, lengths), max_traces=12)
    lists = [[1, 2, 3], [3, 2, 1], [2, 2, 3], [True, 2, 3], [1, True, 3], [1, 1, 3]]
    x = torch.arange(9.0).reshape(3, 3, 1)
    for i in range(4 * len(lists)):
        if i == len(lists):
            compiler.wait()
        lengths = lists[(i * 5) % len(lists)]
        _same(cf(x, lengths), m(x, lengths), f"call {i} with {lengths!r}")
    assert cf.stats()["hits"] == 3 * len(lists)


def test_a_list_of_lengths_changed_in_place_is_seen_by_item_type():
    """A list held by a module, its items changed between calls: ``True`` in place of
    ``1`` (equal, but printed differently) is a change."""
    m = _Packs([1, 2, 3])
    cf = compiler.compile(lambda x: m(x))
    x = torch.arange(9.0).reshape(3, 3, 1)
    for i, v in enumerate([1, 1, True, True, 1, 3, True]):
        m.lengths[0] = v
        _same(cf(x), m(x), f"call {i} with {m.lengths!r}")
    assert cf.stats()["hits"] >= 3


@pytest.mark.regression("a @contextmanager block made the function run eagerly")
def test_contextmanager_block_replays():
    import contextlib
    events = []

    @contextlib.contextmanager
    def scaled(k):
        yield k * 2

    def f(x):
        with scaled(3.0) as k:
            y = x * k
        return y

    cf = compiler.compile(f)
    for i in range(4):
        _same(cf(torch.ones(2)), f(torch.ones(2)), f"call {i}")
    assert cf.stats()["hits"] >= 2 and not events


@pytest.mark.regression("the forward of an op defined outside eager was watched")
def test_user_defined_op_replays():
    from eager.dispatch import dispatch
    from eager.ops.base import Op

    class Cube(Op):
        name = "test_user_cube"
        saves = (0,)

        def forward(a):
            return a * a * a

        def backward(F, g, saved, node):
            return (F.mul(g, F.mul(F.mul(saved[0], saved[0]), 3.0)),)

    def f(x):
        return dispatch(Cube, x) + 1

    cf = compiler.compile(f)
    for i in range(4):
        _same(cf(torch.ones(2) * i), f(torch.ones(2) * i), f"call {i}")
    assert cf.stats()["hits"] >= 2


@pytest.mark.regression(".grad changed in place after backward was lost on replay")
def test_grad_changed_in_place_inside_the_function():
    def make():
        w = torch.tensor([1.0, 2.0], requires_grad=True)

        def step(x):
            w.grad = None
            (w * x).sum().backward()
            w.grad.mul_(10.0)
            return w.grad.sum()
        return step, World(w=w, state=lambda: w.grad.clone())
    twins(make, args=lambda i: (torch.ones(2) * (i + 1),))


def test_existing_grad_changed_in_place_inside_the_function():
    def make():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        w.grad = torch.ones(2)

        def step(x):
            w.grad.mul_(0.5)
            w.grad.add_(x)
            return w.grad.sum()
        return step, World(w=w, state=lambda: w.grad.clone())
    twins(make, args=lambda i: (torch.ones(2) * (i + 1),))


# -- numbers that change every call become inputs (no cliff) --------------------------------------

def test_counter_replays_once_dynamic():
    def make():
        c = Counter()
        return c, c
    cf = twins(make, n=8)
    s = cf.stats()
    assert s["traces"] <= 3 and s["hits"] >= 5, s


def test_float_argument_changing_every_call_becomes_an_input():
    def f(x, s):
        return torch.tanh(x * s) + s

    cf = compiler.compile(f)
    x = torch.randn(8)
    for i in range(8):
        s = 0.25 + 0.1 * i
        got, want = cf(x, s), f(x, s)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-7, atol=1e-7)
        if i == 1:
            compiler.wait()
    st = cf.stats()
    assert st["traces"] == 2 and st["hits"] == 6, st
    assert "input of the trace" in str(cf.explain())


def test_attribute_changing_every_call_becomes_an_input():
    def make():
        m = Scale()
        return m, m

    def change(m, i):
        m.alpha = 1.0 + i

    cf = twins(make, change, n=8)
    assert cf.stats()["hits"] >= 5


def test_dynamic_number_in_a_branch_and_in_c_code_specializes():
    import math

    class Gate:
        def __init__(self):
            self.t = 0.0

        def __call__(self, x):
            if self.t > 2.5:                   # a branch on the number: guarded
                x = x * 2
            return x * math.exp(-self.t)       # C code reads the value: guarded

        def state(self):
            return self.t

    def make():
        g = Gate()
        return g, g

    def change(g, i):
        g.t = float(i)
    twins(make, change, n=7)


def test_dynamic_numbers_returned_and_stored():
    class Acc:
        def __init__(self):
            self.total = 0.0
            self.history = []

        def __call__(self, x, w):
            self.total = self.total + w
            self.history.append(self.total * 2)
            return x * self.total, self.total / 4

        def state(self):
            return {"total": self.total, "history": list(self.history)}

    def make():
        a = Acc()
        return a, a

    cf = twins(make, args=lambda i: (torch.ones(2), 0.5 * i), n=7)
    assert cf.stats()["hits"] >= 3


def test_adam_with_a_scheduler_changing_lr_every_step():
    def make():
        torch.manual_seed(0)
        m = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
        opt = torch.optim.Adam(m.parameters(), lr=1e-2)
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)
        X, Y = torch.randn(16, 2), torch.randint(0, 2, (16,))

        def step():
            opt.zero_grad()
            loss = nn.functional.cross_entropy(m(X), Y)
            loss.backward()
            opt.step()
            return loss
        return step, World(m=m, sched=sched,
                           state=lambda: [p.detach().clone() for p in m.parameters()])

    def change(w, i):
        if i:
            w.sched.step()
    cf = twins(make, change, args=lambda i: (), n=8)
    assert cf.stats()["hits"] >= 5, cf.stats()


@pytest.mark.regression("the backward baked the trace-time value of a dynamic number")
def test_gradients_through_a_dynamic_number():
    m = Scale()
    cf = compiler.compile(m)
    for i in range(6):
        m.alpha = 0.5 + i
        xc = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        xe = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (cf(xc) * xc).sum().backward()
        (m(xe) * xe).sum().backward()
        np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=1e-6)
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] >= 3


def test_history_of_item_values_replays():
    hist = []

    def f(x):
        loss = (x * x).sum()
        hist.append(loss.item())
        return loss

    cf = compiler.compile(f)
    for i in range(5):
        cf(torch.ones(3) * i)
    assert hist == [3.0 * i * i for i in range(5)]
    assert all(type(v) is float for v in hist)
    assert cf.stats()["hits"] == 4


# -- regions: when whole-function traces keep diverging -------------------------------------------

def test_variable_length_loop_runs_compiled_regions():
    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.cell = nn.GRUCell(2, 4)
            self.head = nn.Linear(4, 1)

        def forward(self, seq):
            h = None
            for t in range(seq.shape[0]):  # a trip count that is data
                h = self.cell(seq[t][None], h)
            return self.head(h).sum()

    model = Seq()
    cf = compiler.compile(model, max_traces=2)
    rng = np.random.default_rng(0)
    with pytest.warns(compiler.CompileWarning, match="compiled on its own"):
        for i in range(8):
            seq = torch.tensor(rng.standard_normal((2 + i % 5, 2)).astype(np.float32))
            for p in model.parameters():
                p.grad = None
            loss_c = cf(seq)
            loss_c.backward()
            grads_c = [p.grad.clone() for p in model.parameters()]
            for p in model.parameters():
                p.grad = None
            loss_e = model(seq)
            loss_e.backward()
            np.testing.assert_allclose(loss_c.item(), loss_e.item(), rtol=1e-5)
            for gc, p in zip(grads_c, model.parameters()):
                np.testing.assert_allclose(gc.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)
            if i == 1:
                compiler.wait()
    regions = dict(cf.explain().regions)
    assert regions["GRUCell"]["hits"] >= 10, regions
    assert "compiled regions" in str(cf.explain())


@pytest.mark.regression("a region with submodules guarded on the tracer slot it read in "
                        "Module.__call__, so it retraced at every call and never replayed")
def test_a_region_with_submodules_replays():
    torch.manual_seed(0)
    block = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3))

    def f(x):
        h = x[0]
        for t in range(x.shape[0]):  # a trip count that is data: traces keep diverging
            h = block(h + x[t])
        return h.sum()

    cf = compiler.compile(f, max_traces=3)
    with pytest.warns(compiler.CompileWarning, match="compiled on its own"):
        for i in range(12):
            x = torch.randn(1 + i % 6, 3)
            np.testing.assert_allclose(cf(x).item(), f(x).item(), rtol=1e-5)
            if i == 1:
                compiler.wait()
    regions = dict(cf.explain().regions)
    assert regions["Sequential"]["traces"] == 2, regions  # h without, then with a graph
    assert regions["Sequential"]["hits"] >= 20, regions


@pytest.mark.parametrize("read", ["len", "item", "iterate", "dict_len"])
def test_a_container_changed_then_read_in_the_same_call(read):
    """``log.append(x)`` then ``len(log)`` (or an item it held before, or iteration): what
    the call reads depends on what the container held at entry, which changes between
    calls; a replay used call 0's length (the appends are effects, and reads of a
    container the call changed were taken as the call's own)."""
    def make():
        log = [0.5] if read != "dict_len" else {}
        w = torch.ones(3, requires_grad=True)

        def f(x):
            h = x * w
            if read == "dict_len":
                log[len(log)] = 1.0
                n = len(log)
            else:
                log.append(1.0)
                n = {"len": lambda: len(log), "item": lambda: log[0],
                     "iterate": lambda: sum(v for v in log)}[read]()
            return h * float(n)
        return f, log
    fe, le = make()
    fc, lc = make()
    cf = compiler.compile(fc, backend="python")
    for i in range(N_CALLS):
        if read == "item":  # what it held at entry changes between calls
            le[0] = lc[0] = float(i)
        _same(fe(torch.ones(2, 3)), cf(torch.ones(2, 3)), f"call {i}")
        _same(le, lc, f"call {i}: log")
        if i == 1:
            compiler.wait()


def _walk(n, outer):
    stack = [n]
    while stack:
        k = stack.pop()
        yield k
        kids = [k - 1] if k > 0 else []
        kids.reverse()
        stack += kids                 # the same list: still the one made in this call
        stack += outer                # ... holding objects made before it


def test_augmented_assignment_on_a_list_made_in_the_call_is_not_a_break():
    """``lst += other`` returns ``lst`` itself: a list made during the call stays one
    (mutating it after is no break), and what came from ``other`` stays an old object
    (writing into it is an effect every call makes, as eager does)."""
    outer = []

    def f(x):
        for k in list(_walk(3, outer)):
            x = x * 2 + k
        return x

    cf = compiler.compile(f, fullgraph=True)
    for _ in range(3):
        np.testing.assert_array_equal(cf(torch.ones(3)).numpy(), f(torch.ones(3)).numpy())

    box = [[0]]

    def g(x):
        mine = []
        mine += box
        mine[0].append(1)             # box's list, made before the call
        return x * len(box[0])

    cg = compiler.compile(g)
    for n in range(2, 7):
        if n == 4:
            compiler.wait()
        assert cg(torch.ones(2)).numpy().tolist() == [n, n] and box == [[0] + [1] * (n - 1)]
