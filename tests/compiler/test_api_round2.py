"""compile() front end, round 2 (issues 20 and 22): ``@compile`` on methods and modules
(hooks included), keys that keep ``-0.0``/``0.0`` and ``1``/``1.0``/``True`` apart,
torch.compile's signature, dynamic ints in factories, function transforms over compiled
functions, and the cost of calls that fall back.

Every compiled-vs-eager test runs the same program eagerly and compiled over >= 5 calls
(``compiler.wait()`` after the second) and compares outputs, gradients and side effects.
"""

from __future__ import annotations

import collections
import math
import time
import warnings

import numpy as np
import pytest

import compiler
import eager as torch
from compiler import CompileWarning, GraphBreakError, compile
from eager.tensor import Tensor


def same(got, want):
    """Equal values, bit for bit where it matters (the sign of zero), and equal types."""
    if isinstance(want, Tensor):
        assert isinstance(got, Tensor), type(got)
        assert got._data.shape == want._data.shape
        assert got._data.dtype == want._data.dtype, (got._data.dtype, want._data.dtype)
        np.testing.assert_allclose(got._data, want._data, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(np.signbit(got._data), np.signbit(want._data))
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want)
        for k in want:
            same(got[k], want[k])
    elif isinstance(want, float):
        assert type(got) is float and (got == want or (got != got and want != want))
        assert math.copysign(1, got) == math.copysign(1, want)
    else:
        assert type(got) is type(want) and got == want, (got, want)


def run_both(fn, calls, **kw):
    """``fn`` compiled and eagerly over the argument tuples of ``calls`` (>= 5); the
    compiled results, compared call by call with eager's. ``compiler.wait()`` after the
    second call."""
    assert len(calls) >= 5
    cf = compile(fn, **kw)
    outs = []
    for i, args in enumerate(calls):
        got = cf(*args)
        want = fn(*args)
        same(got, want)
        outs.append(got)
        if i == 1:
            compiler.wait()
    return cf, outs


# -- 2. keys do not conflate values ---------------------------------------------------

def test_negative_zero_float_argument_is_its_own_key():
    def f(x, s):
        return x * s, math.copysign(1.0, s)

    x = torch.tensor([1.0, 2.0, -3.0])
    calls = [(x, 0.0), (x, 0.0), (x, -0.0), (x, 0.0), (x, -0.0), (x, -0.0)]
    run_both(f, calls, backend="python")


def test_negative_zero_in_a_tuple_and_nan_identity():
    def f(x, p):
        return x * p[0] + 1.0

    x = torch.tensor([1.0, -2.0])
    nan = float("nan")
    calls = [(x, (0.0,)), (x, (0.0,)), (x, (-0.0,)), (x, (nan,)), (x, (float("nan"),)),
             (x, (-0.0,))]
    cf, _ = run_both(f, calls, backend="python")
    # a NaN is one key whatever the object: the second NaN call replays
    assert cf.stats()["traces"] <= 4


P = collections.namedtuple("P", "a b")


def _as_arg(v):
    return (v,)


def _in_namedtuple(v):
    return (P(v, 0),)


def _as_dict_key(v):
    return ({v: 0},)


def _as_dict_value(v):
    return ({"k": v},)


def _in_list(v):
    return ([v, 2],)


def _scalar_of(a):  # the number each packing carries, read back inside the function
    if isinstance(a, P):
        return a.a
    if isinstance(a, dict):
        (k, v), = a.items()
        return k if v == 0 and k != "k" else v
    if isinstance(a, list):
        return a[0]
    return a


@pytest.mark.parametrize("pack", [_as_arg, _in_namedtuple, _as_dict_key, _as_dict_value,
                                  _in_list])
@pytest.mark.parametrize("values", [(1, 1.0, True), (True, 1, 1.0), (1.0, True, 1)])
def test_one_float_one_and_true_are_distinct_keys(values, pack):
    def f(x, a):
        v = _scalar_of(a)
        return x + v, v, type(v).__name__

    x = torch.tensor([1, 2, 3])  # int64: adding 1.0 gives float32, 1 or True int64
    calls = [(x,) + pack(v) for v in values + values]
    run_both(f, calls, backend="python")


def test_namedtuple_of_tensors_is_flattened():
    """A namedtuple's tensors are arguments of the trace (its key used to hash the
    namedtuple, comparing tensors with ==: "Boolean value of Tensor ... is ambiguous")."""
    def f(p):
        return p[0] * 2 + p[1]

    calls = [(P(torch.randn(3), torch.randn(3)),) for _ in range(6)]
    cf, _ = run_both(f, calls, backend="python")
    assert cf.stats()["hits"] >= 4

    def g(p):  # read by attribute: the observer guards the field's identity (retraces)
        return p.a * 2 + p.b

    run_both(g, calls, backend="python")


# -- 1. @compile on methods; compile(module) runs hooks ----------------------------------

class Scaled(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.scale = scale

    @compile(backend="python")
    def forward(self, x):
        return torch.tanh(self.lin(x)) * self.scale


class Counter:
    def __init__(self, k):
        self.k = k
        self.calls = 0

    @compile(backend="python")
    def step(self, x, y=1.0):
        self.calls += 1
        return x * self.k + y


def _eager_scaled(m, x):
    return torch.tanh(m.lin(x)) * m.scale


def test_compile_as_method_decorator_on_module_forward():
    torch.manual_seed(0)
    models = [Scaled(2.0), Scaled(-1.0)]
    for i in range(6):
        for m in models:
            x = torch.randn(4, 3)
            got = m(x)                   # through Module.__call__
            want = _eager_scaled(m, x)
            same(got, want)
            got.sum().backward()
            gw = m.lin.weight.grad.clone()
            m.lin.weight.grad = None
            _eager_scaled(m, x).sum().backward()
            same(gw, m.lin.weight.grad)
            m.lin.weight.grad = None
            same(m.forward(x), want)     # the bound method directly
        if i == 1:
            compiler.wait()
    for m in models:  # a cache per instance
        st = m.forward.stats()
        assert st["traces"] == 1 and st["hits"] >= 10, st
    assert isinstance(Scaled.forward, compiler.CompiledFunction)


def test_compile_as_method_decorator_on_plain_class_with_side_effects():
    a, b = Counter(2.0), Counter(3.0)
    ea, eb = Counter(2.0), Counter(3.0)
    for i in range(6):
        x = torch.randn(3)
        for obj, ref in ((a, ea), (b, eb)):
            same(obj.step(x), Counter.step.fn(ref, x))
            same(obj.step(x, y=2.0), Counter.step.fn(ref, x, y=2.0))
            assert obj.calls == ref.calls
        if i == 1:
            compiler.wait()
        if i == 3:  # a change of what the trace read through self takes effect
            a.k = ea.k = 5.0
    assert a.step.stats()["hits"] >= 6


def test_compile_module_runs_its_hooks_added_and_removed_between_calls():
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 2)
    cm = compile(m, backend="python")
    log_c, log_e = [], []
    log = log_c
    handles = []

    def pre(mod, args):
        log.append("pre")
        return (args[0] * 2,)

    def post(mod, args, out):
        log.append("post")
        return out + 1

    for i in range(8):
        x = torch.randn(4, 3)
        if i == 2:
            handles = [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
        if i == 5:
            handles[0].remove()
        if i == 7:
            handles[1].remove()
        log = log_c
        got = cm(x)
        log = log_e
        want = m(x)
        same(got, want)
        assert log_c == log_e, (i, log_c, log_e)
        if i == 1:
            compiler.wait()
    assert log_c.count("pre") == 3 and log_c.count("post") == 5
    assert cm.stats()["hits"] >= 2


# -- 6. no cliff below eager: calls that fall back -------------------------------------------

def test_bad_input_does_not_make_its_key_eager_forever():
    w = torch.randn(8)

    def f(x, idx):
        return torch.tanh(x[idx] * w[:4]) + 1

    cf = compile(f, backend="python")
    x, good, bad = torch.randn(8), torch.tensor([0, 1, 2, 3]), torch.tensor([0, 1, 2, 99])
    for i in range(3):
        same(cf(x, good), f(x, good))
        if i == 1:
            compiler.wait()
    hits = cf.stats()["hits"]
    with pytest.raises(IndexError) as info:  # eager's error, as eager raises it
        cf(x, bad)
    assert info.value.__suppress_context__
    for _ in range(5):
        same(cf(x, good), f(x, good))
    assert cf.stats()["hits"] == hits + 5, cf.stats()
    assert cf.stats()["hits"] + cf.stats()["fallbacks"] == cf.stats()["calls"]


def test_replay_that_raises_where_eager_does_not_is_retried_then_given_up(monkeypatch):
    real = compiler.api.compile_graph
    fail = {"left": 1, "runs": 0}

    class Flaky:  # a program that raises while fail["left"] > 0
        def __init__(self, prog):
            self.prog = prog

        def __getattr__(self, name):
            return getattr(self.prog, name)

        def fn(self, *arrays):
            fail["runs"] += 1
            if fail["left"] > 0:
                fail["left"] -= 1
                raise RuntimeError("injected replay failure")
            return self.prog.fn(*arrays)

        def wrote_before(self, exc):
            return False

    monkeypatch.setattr(compiler.api, "compile_graph", lambda *a, **k: Flaky(real(*a, **k)))

    def f(x):
        return torch.sin(x) * 2

    cf = compile(f, backend="python")
    x = torch.randn(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for i in range(6):  # call 2 raises in the replay, runs eagerly; then replays again
            same(cf(x), f(x))
            if i == 1:
                compiler.wait()
        assert cf.stats()["hits"] == 4, cf.stats()
        fail["left"] = 10 ** 6  # now it always raises: at the 3rd strike, eager for good
        runs = fail["runs"]
        for _ in range(8):
            same(cf(x), f(x))
    assert fail["runs"] - runs == compiler.api.REPLAY_STRIKES - 1  # one strike earlier
    assert cf.stats()["hits"] + cf.stats()["fallbacks"] == cf.stats()["calls"]


def test_guard_that_keeps_failing_past_max_traces_is_not_diagnosed_every_call(monkeypatch):
    hist = []

    def f(x):
        return x * len(hist) + 1

    cf = compile(f, backend="python", max_traces=3)
    counts = {"failure": 0, "holds": 0}
    real_failure = compiler.guards.Preconditions.failure
    real_holds = compiler.guards.Preconditions.holds

    def failure(self, *a, **k):
        counts["failure"] += 1
        return real_failure(self, *a, **k)

    def holds(self, *a, **k):
        counts["holds"] += 1
        return real_holds(self, *a, **k)

    monkeypatch.setattr(compiler.guards.Preconditions, "failure", failure)
    monkeypatch.setattr(compiler.guards.Preconditions, "holds", holds)
    x = torch.randn(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for i in range(200):
            hist.append(i)
            same(cf(x), f(x))
            if i == 1:
                compiler.wait()
    # once per key for the words, and the traces' guards at power-of-two calls only
    assert counts["failure"] <= 4, counts
    assert counts["holds"] <= 3 * 20, counts
    s = cf.stats()
    assert s["hits"] + s["fallbacks"] == s["calls"] == 200


def test_list_argument_that_grows_skips_building_its_key(monkeypatch):
    def f(x, h):
        return x * len(h)

    cf = compile(f, backend="python", max_traces=3)
    n = {"flatten": 0}
    real = compiler.api.flatten

    def counting(*a, **k):
        n["flatten"] += 1
        return real(*a, **k)

    monkeypatch.setattr(compiler.api, "flatten", counting)
    h, x = [], torch.randn(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for i in range(300):
            h.append(i)
            same(cf(x, h), f(x, h))
            if i == 1:
                compiler.wait()
    assert n["flatten"] <= 30, n
    # the state comes back to a traced one: found again at a power-of-two call
    same(cf(x, [0]), f(x, [0]))


# -- 3. torch.compile's signature, torch.compiler's functions ---------------------------------

def _gelu(x, k):
    return 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x * x * x))) * k


@pytest.mark.parametrize("backend,ours", [("inductor", "numba"), ("aot_eager", "eager"),
                                          ("eager", "eager"), ("numba", "numba"),
                                          ("python", "python")])
def test_backend_names_of_torch_and_ours(backend, ours):
    calls = [(torch.randn(6), 2.0) for _ in range(5)]
    cf, _ = run_both(_gelu, calls, backend=backend)
    assert cf.backend == ours and cf.stats()["hits"] >= 3
    with pytest.raises(ValueError, match="unknown backend"):
        compile(_gelu, backend="tvm")
    with pytest.raises(NotImplementedError):
        compile(_gelu, backend=lambda gm, inputs: gm)


@pytest.mark.parametrize("mode", [None, "default", "reduce-overhead", "max-autotune",
                                  "max-autotune-no-cudagraphs"])
def test_modes(mode):
    calls = [(torch.randn(6), 2.0) for _ in range(5)]
    cf, _ = run_both(_gelu, calls, mode=mode, backend="python")
    assert cf.mode == mode and cf.stats()["hits"] >= 3
    with pytest.raises(RuntimeError, match="unknown mode"):
        compile(_gelu, mode="fast")
    with pytest.raises(RuntimeError, match="mode or options"):
        compile(_gelu, mode="default", options={})


def test_max_autotune_loads_kernels_without_the_first_load_wait():
    cf = compile(_gelu, mode="max-autotune")
    x = torch.randn(6)
    cf(x, 2.0)
    t0 = time.perf_counter()
    cf(x, 2.0)
    assert cf._first_use <= t0 - compiler.tiers.FIRST_LOAD_AFTER


def test_options_and_disable():
    cf = compile(_gelu, options={"max_traces": 2, "triton.cudagraphs": False},
                 backend="python")
    assert cf.max_traces == 2
    assert compile(_gelu, disable=True) is _gelu
    assert compile(disable=True)(_gelu) is _gelu
    m = torch.nn.Linear(2, 2)
    assert compile(m, disable=True) is m
    assert torch.compile(_gelu, disable=True) is _gelu


def test_dynamic_true_makes_numbers_inputs_from_the_first_trace():
    calls = [(torch.randn(6), float(k) + 0.5) for k in range(6)]
    cf, _ = run_both(_gelu, calls, dynamic=True, backend="python")
    assert cf.stats()["traces"] == 1 and cf.stats()["hits"] == 5


def test_dynamic_false_keeps_every_number_a_guard():
    calls = [(torch.randn(6), float(k) + 0.5) for k in range(6)]
    cf, _ = run_both(_gelu, calls, dynamic=False, backend="python")
    assert cf.stats()["traces"] == 6
    cf, _ = run_both(_gelu, calls, backend="python")  # automatic: dynamic at the change
    assert cf.stats()["traces"] == 2


def test_fullgraph_raises_at_the_first_fallback():
    hist = []

    def f(x):
        return x * len(hist)

    cf = compile(f, fullgraph=True, max_traces=2, backend="python")
    x = torch.randn(3)
    for _ in range(2):
        hist.append(1)
        same(cf(x), f(x))
    hist.append(1)
    with pytest.raises(GraphBreakError, match="max_traces"):
        cf(x)

    def g(x):
        return torch.tensor(x.numpy() * 2)  # data read into Python: a graph break

    with pytest.raises(GraphBreakError):
        compile(g, fullgraph=True)(torch.randn(3))


def test_compiler_disable_and_is_compiling():
    seen = []

    @compiler.disable
    def helper(x):
        seen.append(compiler.is_compiling())
        return x + 1

    def f(x):
        return helper(x) * 2

    calls = [(torch.randn(3),) for _ in range(5)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        cf, _ = run_both(f, calls, backend="python")
    assert cf.stats()["hits"] == 0  # never compiled: f runs eagerly
    assert "compiler.disable" in str(cf.explain())
    with pytest.raises(GraphBreakError, match="compiler.disable"):
        compile(f, fullgraph=True)(torch.randn(3))

    flags = []

    def g(x):
        flags.append(compiler.is_compiling())
        return x * 3

    compile(g, backend="python")(torch.randn(2))
    assert flags == [True] and not compiler.is_compiling()
    assert torch.compiler is compiler and torch.compiler.disable is compiler.disable
    assert callable(torch.compiler.reset) and callable(torch.compiler.is_compiling)


# -- 4. dynamic ints in factories ---------------------------------------------------------

@pytest.mark.parametrize("name", ["arange", "arange_range", "arange_float", "full_size",
                                  "full_value", "view", "zeros"])
def test_factories_take_a_python_int_that_changes_every_call(name):
    fns = {
        "arange": lambda x, k: x[:k] * torch.arange(k),
        "arange_range": lambda x, k: torch.arange(1, k, 2).float().sum() + x,
        "arange_float": lambda x, k: torch.arange(0.5, k * 1.5, 0.5).sum() + x,
        "full_size": lambda x, k: torch.full((k,), 2.5) + x[:k],
        "full_value": lambda x, k: torch.full((3,), k) + x[:3],
        "view": lambda x, k: x[:2 * k].view(k, -1).sum(0) * 2,
        "zeros": lambda x, k: torch.zeros(k, 2).sum(1) + x[:k],
    }
    fn = fns[name]
    ks = [2, 3, 5, 4, 6, 3, 2, 5]
    calls = [(torch.randn(12), k) for k in ks]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        cf, _ = run_both(fn, calls, backend="python")
    assert cf.stats()["hits"] >= 2  # a value seen before replays its trace


def test_dynamic_int_stays_symbolic_where_no_size_depends_on_it():
    def f(x, k):
        return torch.arange(4) * k + x  # k: an input of the trace; arange(4) static

    calls = [(torch.randn(4), k) for k in range(1, 8)]
    cf, _ = run_both(f, calls, backend="python")
    assert cf.stats()["traces"] == 2  # the first, then one with k dynamic


# -- 5. function transforms over a compiled function ---------------------------------------

def _loss(x):
    return (torch.sin(x) * x * x).sum()


def test_vmap_of_a_compiled_function_equals_vmap_of_the_function():
    cf = compile(_loss, backend="python")
    for i in range(6):
        xs = torch.randn(3, 4)
        same(torch.func.vmap(cf)(xs), torch.func.vmap(_loss)(xs))
        same(cf(xs[0]), _loss(xs[0]))  # outside vmap it still compiles and replays
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] >= 4
    assert "eager.func.vmap" in str(cf.explain())


def test_grad_and_friends_of_a_compiled_function():
    cf = compile(_loss, backend="python")
    for i in range(6):
        x = torch.randn(4)
        same(torch.func.grad(cf)(x), torch.func.grad(_loss)(x))
        g, v = torch.func.grad_and_value(cf)(x)
        g2, v2 = torch.func.grad_and_value(_loss)(x)
        same(g, g2)
        same(v, v2)
        same(torch.func.jacrev(cf)(x), torch.func.jacrev(_loss)(x))
        same(torch.func.hessian(cf)(x), torch.func.hessian(_loss)(x))
        xs = torch.randn(3, 4)
        same(torch.func.vmap(torch.func.grad(cf))(xs), torch.func.vmap(torch.func.grad(_loss))(xs))
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] >= 10
