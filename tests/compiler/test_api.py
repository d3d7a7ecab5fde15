"""The ``compile()`` front end: decorator forms and options, ``stats()``, ``explain()``,
``reset()``, ``compiler.explain``/``compiler.reset``, recompile logging, the trace limit
and fault injection (a compiler failure never reaches the user)."""

from __future__ import annotations

import inspect
import logging
import os
import warnings

import numpy as np
import pytest

import compiler
import compiler.api
import eager as torch
from compiler import CompiledFunction, CompileWarning, GraphBreakError, compile
from eager.tensor import Tensor

STAT_KEYS = {"calls", "hits", "traces", "fallbacks", "compile_seconds"}
HERE = os.path.basename(__file__)


# -- helpers ---------------------------------------------------------------------------------

def t(a, requires_grad=False, dtype=np.float32) -> Tensor:
    return torch.tensor(np.array(a, dtype=dtype), requires_grad=requires_grad)


def assert_same(got, want, rtol=1e-5, atol=1e-6):
    if isinstance(want, Tensor):
        assert isinstance(got, Tensor), f"expected a Tensor, got {type(got).__name__}"
        assert got._data.shape == want._data.shape, (got._data.shape, want._data.shape)
        assert got._data.dtype == want._data.dtype, (got._data.dtype, want._data.dtype)
        assert got.requires_grad == want.requires_grad
        np.testing.assert_allclose(got._data, want._data, rtol=rtol, atol=atol)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol)
    elif isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want)
        for k in want:
            assert_same(got[k], want[k], rtol, atol)
    else:
        assert got == want


def line_of(fn, marker: str) -> str:
    """``test_api.py:<line>`` of the first source line of ``fn`` containing ``marker``."""
    lines, start = inspect.getsourcelines(fn)
    for i, ln in enumerate(lines):
        if marker in ln:
            return f"{HERE}:{start + i}"
    raise AssertionError(f"{marker!r} not in the source of {fn.__name__}")


def f_basic(x):
    """A small elementwise function."""
    return torch.tanh(x * 1.5 + 0.25)


def check_accounting(cf):
    """Every call is either served by compiled code (hit) or runs eagerly (fallback)."""
    s = cf.stats()
    assert s["hits"] + s["fallbacks"] == s["calls"], s


# -- the decorator forms -----------------------------------------------------------------------

class TestForms:
    def test_bare_decorator_defaults(self):
        @compile
        def f(x):
            return f_basic(x)

        assert isinstance(f, CompiledFunction)
        assert f.backend == "numba" and f.fullgraph is False and f.max_traces == 8
        x = t([0.5, -1.0, 2.0])
        for _ in range(3):
            assert_same(f(x), f_basic(x))
        assert f.stats()["hits"] == 2

    def test_decorator_with_options(self, backend):
        @compile(backend=backend, max_traces=3, fullgraph=True)
        def f(x):
            return f_basic(x)

        assert f.backend == backend and f.fullgraph is True and f.max_traces == 3
        x = t([0.5, -1.0, 2.0])
        for _ in range(3):
            assert_same(f(x), f_basic(x))
        assert f.stats()["hits"] == 2

    def test_decorator_with_empty_parentheses(self):
        @compile()
        def f(x):
            return f_basic(x)

        assert isinstance(f, CompiledFunction)
        assert_same(f(t([1.0, 2.0])), f_basic(t([1.0, 2.0])))

    def test_call_form(self, backend):
        cf = compile(f_basic, backend=backend)
        assert cf.fn is f_basic
        x = t([[1.0, -2.0], [0.0, 3.0]])
        for _ in range(3):
            assert_same(cf(x), f_basic(x))
        assert cf.stats()["traces"] == 1

    def test_eager_compile_is_a_lazy_alias(self):
        cf = torch.compile(f_basic, backend="python")
        assert isinstance(cf, CompiledFunction)
        x = t([1.0, 2.0])
        cf(x)
        assert_same(cf(x), f_basic(x))
        assert cf.stats()["hits"] == 1

    def test_wraps_the_function(self):
        cf = compile(f_basic)
        assert cf.__name__ == "f_basic"
        assert cf.__doc__ == f_basic.__doc__
        assert cf.__wrapped__ is f_basic

    def test_partial_and_callable_objects(self, backend):
        import functools

        class Scale:
            def __init__(self, k):
                self.k = k

            def __call__(self, x):
                return x * self.k

        def g(x, k):
            return x * k

        x = t([1.0, 2.0])
        for fn in (functools.partial(g, k=3.0), Scale(2.0)):
            cf = compile(fn, backend=backend)
            for _ in range(3):
                assert_same(cf(x), fn(x))
            assert cf.stats()["hits"] == 2
            assert isinstance(cf.__name__, str)
            assert "calls" in str(cf.explain())

    def test_unknown_backend_is_an_error(self):
        with pytest.raises(ValueError, match="cuda-magic"):
            compile(f_basic, backend="cuda-magic")
        with pytest.raises(ValueError, match="cuda-magic"):
            compile(backend="cuda-magic")(f_basic)

    def test_exceptions_are_public(self):
        assert issubclass(GraphBreakError, RuntimeError)
        assert issubclass(CompileWarning, UserWarning)
        assert compiler.GraphBreakError is GraphBreakError
        assert compiler.CompileWarning is CompileWarning

    def test_kwargs_and_defaults(self, backend):
        def f(x, scale=2.0, *, shift=0.5):
            return x * scale + shift

        cf = compile(f, backend=backend)
        x = t([1.0, -1.0])
        for kw in [{}, {"scale": 3.0}, {"shift": -1.0}, {}, {"scale": 3.0}]:
            assert_same(cf(x, **kw), f(x, **kw))
        assert cf.stats()["traces"] == 3
        assert cf.stats()["hits"] == 2

    def test_exception_in_user_function_propagates(self, backend):
        def f(x):
            if x.shape[0] > 2:
                raise KeyError("user error")
            return x + 1

        cf = compile(f, backend=backend)
        cf(t([1.0, 2.0]))
        with pytest.raises(KeyError, match="user error"):
            cf(t([1.0, 2.0, 3.0]))
        assert_same(cf(t([1.0, 2.0])), f(t([1.0, 2.0])))


# -- stats() ---------------------------------------------------------------------------------------

class TestStats:
    def test_keys_before_any_call(self):
        cf = compile(f_basic)
        s = cf.stats()
        assert STAT_KEYS <= set(s)
        assert all(s[k] == 0 for k in STAT_KEYS)
        assert isinstance(s["compile_seconds"], float)

    def test_first_call_is_eager_then_hits(self, backend):
        cf = compile(f_basic, backend=backend)
        x = t([0.5, -1.0, 2.0], requires_grad=True)
        y = cf(x)
        want = f_basic(x)
        assert_same(y, want)
        # the first call returns eager's own result: an eager grad node, not a compiled one
        assert type(y.grad_fn) is type(want.grad_fn)
        assert y.grad_fn.name() == want.grad_fn.name()
        s = cf.stats()
        assert (s["calls"], s["hits"], s["traces"]) == (1, 0, 1)
        assert s["fallbacks"] == 1
        for n in range(2, 5):
            assert_same(cf(x), want)
            s = cf.stats()
            assert (s["calls"], s["hits"], s["traces"]) == (n, n - 1, 1)
        assert s["compile_seconds"] >= 0.0

    def test_stats_is_a_copy(self):
        cf = compile(f_basic, backend="python")
        s = cf.stats()
        s["calls"] = 99
        assert cf.stats()["calls"] == 0

    def test_accounting_plain(self, backend):
        cf = compile(f_basic, backend=backend)
        for n in (2, 3, 2, 3, 3):
            cf(torch.ones(n))
        check_accounting(cf)

    def test_accounting_branches(self, backend):
        def f(x):
            if x.sum() > 0:
                return x * 2
            return x - 1

        cf = compile(f, backend=backend)
        for v in (1.0, -1.0, 2.0, -2.0, 3.0):
            cf(t([v]))
        check_accounting(cf)

    def test_accounting_always_eager(self, backend):
        def f(x):
            x.tolist()
            return x + 1

        cf = compile(f, backend=backend)
        for _ in range(3):
            cf(t([1.0]))
        assert cf.stats()["calls"] == 3
        assert cf.stats()["hits"] == 0
        check_accounting(cf)

    def test_accounting_compile_error(self, backend, monkeypatch):
        def boom(*a, **k):
            raise RuntimeError("injected")

        monkeypatch.setattr(compiler.api, "compile_graph", boom)
        cf = compile(f_basic, backend=backend)
        with pytest.warns(CompileWarning):
            for _ in range(3):
                cf(t([1.0]))
        assert cf.stats()["hits"] == 0
        check_accounting(cf)

    def test_accounting_past_max_traces(self, backend):
        cf = compile(f_basic, backend=backend, max_traces=1)
        with pytest.warns(CompileWarning):
            for n in (1, 2, 3, 1, 2):
                cf(torch.ones(n))
        check_accounting(cf)


# -- explain() ---------------------------------------------------------------------------------

class TestExplain:
    def test_guards(self, backend):
        def f(x, k, mode="a"):
            return x * k if mode == "a" else x + k

        cf = compile(f, backend=backend)
        x = t(np.ones((2, 3)), requires_grad=True, dtype=np.float64)
        cf(x, 2.5)
        with torch.no_grad():
            cf(t([1.0, 2.0]), 7, mode="b")
        text = str(cf.explain())
        assert "(2, 3)" in text and "float64" in text and "requires_grad=True" in text
        assert "(2,)" in text and "float32" in text and "requires_grad=False" in text
        assert "grad mode enabled == True" in text
        assert "grad mode enabled == False" in text
        assert "2.5" in text and "7" in text and "'b'" in text
        assert "arg 0 (x)" in text and "arg 1 (k)" in text and "kwarg mode" in text

    def test_branch_points_name_the_line_and_outcome(self, backend):
        def f(x):
            if x.sum() > 0:  # <- branch
                return x * 2
            return -x

        cf = compile(f, backend=backend)
        cf(t([1.0, 2.0]))
        cf(t([-1.0, -2.0]))
        text = str(cf.explain())
        where = line_of(f, "# <- branch")
        assert where in text, text
        assert "bool() was True" in text and "bool() was False" in text
        assert "branch points" in text

    def test_branch_kinds(self, backend):
        def f(x):
            a = round(x.sum().item(), 2)  # <- item
            b = float(x.max())  # <- float
            c = int(x.min() > 0)  # <- int
            return x * a + b + c

        cf = compile(f, backend=backend)
        cf(t([1.0, 2.0]))
        text = str(cf.explain())
        for marker, kind in (("# <- item", "item()"), ("# <- float", "float()"),
                             ("# <- int", "int()")):
            assert line_of(f, marker) in text
            assert kind in text

    def test_lifted_tensors(self, backend):
        w = t(np.ones(3), requires_grad=True, dtype=np.float64)

        def f(x):
            return x * w

        cf = compile(f, backend=backend)
        cf(t(np.ones(3), dtype=np.float64))
        text = str(cf.explain())
        assert "lifted tensors" in text
        assert "[3] float64 requires_grad=True" in text

    def test_kernels(self, backend):
        def f(x, y):
            return torch.sigmoid(torch.tanh(x * y + 1.0) * 0.5)

        cf = compile(f, backend=backend)
        x, y = t(np.ones((2, 3))), t(np.ones(3))
        cf(x, y)
        cf(x, y)
        e = cf.explain()
        kernels = e.kernels
        assert isinstance(kernels, list)
        if backend != "numba":
            assert kernels == []
        else:
            assert kernels, "an elementwise chain compiled with backend='numba' has no kernel"
        text = str(e.full())
        for name, src in kernels:
            assert isinstance(name, str) and isinstance(src, str) and src.strip()
            assert f"kernel {name}" in text
        assert "graph:" in text

    def test_fallbacks_with_reasons(self, backend):
        def f(x):
            y = x + 1
            y.detach().numpy()  # <- leaves
            return y

        cf = compile(f, backend=backend)
        cf(t([1.0]))
        cf(t([1.0]))
        e = cf.explain()
        text = str(e)
        assert "fallbacks" in text
        assert "numpy()" in text
        assert line_of(f, "# <- leaves") in text
        # split at that line (compiler.split): the line eager, the lines around compiled
        assert e.always_eager is None and "numpy()" in e.graph_breaks[0]
        assert [ex is None for _, ex in e.pieces] == [False, True, False]

    def test_compile_error_is_a_listed_fallback(self, backend, monkeypatch):
        def boom(*a, **k):
            raise RuntimeError("injected failure")

        monkeypatch.setattr(compiler.api, "compile_graph", boom)
        cf = compile(f_basic, backend=backend)
        with pytest.warns(CompileWarning):
            cf(t([1.0]))
        text = str(cf.explain())
        assert "fallbacks" in text and "injected failure" in text

    def test_trace_reasons(self, backend):
        cf = compile(f_basic, backend=backend)
        cf(torch.ones(3))
        cf(torch.ones(4))
        text = str(cf.explain())
        assert "first call" in text
        assert "arg 0 (x): shape (3,) != (4,)" in text

    def test_counts_in_header(self, backend):
        cf = compile(f_basic, backend=backend)
        for _ in range(3):
            cf(torch.ones(2))
        text = str(cf.explain())
        assert "3 calls" in text and "2 hits" in text and "1 traces" in text


# -- reset -----------------------------------------------------------------------------------------

class TestReset:
    def test_reset_forgets_traces(self, backend):
        cf = compile(f_basic, backend=backend)
        x = torch.ones(3)
        cf(x)
        cf(x)
        cf.reset()
        assert all(cf.stats()[k] == 0 for k in STAT_KEYS)
        assert cf.explain().traces == []
        assert_same(cf(x), f_basic(x))
        assert cf.stats()["traces"] == 1 and cf.stats()["hits"] == 0
        cf(x)
        assert cf.stats()["hits"] == 1

    def test_reset_clears_always_eager(self, backend):
        state = {"leave": True}

        def f(x):
            if state["leave"]:
                x.tolist()
            return x + 1

        cf = compile(f, backend=backend)
        cf(t([1.0]))
        assert cf.explain().graph_breaks and cf.explain().pieces
        state["leave"] = False
        cf.reset()
        assert not cf.explain().graph_breaks and not cf.explain().pieces
        cf(t([1.0]))
        cf(t([1.0]))
        assert cf.stats()["hits"] == 1

    def test_reset_restores_the_trace_budget(self, backend):
        cf = compile(f_basic, backend=backend, max_traces=1)
        cf(torch.ones(1))
        with pytest.warns(CompileWarning):
            cf(torch.ones(2))
        cf.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileWarning)
            cf(torch.ones(2))
            cf(torch.ones(2))
        assert cf.stats()["hits"] == 1

    def test_global_reset(self, backend):
        a = compile(f_basic, backend=backend)
        b = compile(lambda x: x * 3, backend=backend)
        x = torch.ones(2)
        for cf in (a, b):
            cf(x)
            cf(x)
        compiler.reset()
        for cf in (a, b):
            assert cf.stats()["calls"] == 0
            cf(x)
            assert cf.stats()["traces"] == 1 and cf.stats()["hits"] == 0


# -- compiler.explain ----------------------------------------------------------------------------

class TestModuleExplain:
    def test_explain_a_plain_function(self):
        def f(x, k):
            if x.sum() > 0:
                return x * k
            return x

        e = compiler.explain(f, t([1.0, 2.0]), 3)
        assert e.stats["calls"] == 2 and e.stats["hits"] == 1
        text = str(e)
        assert "arg 1 (k) == 3" in text and "bool() was True" in text

    def test_explain_a_compiled_function(self, backend):
        cf = compile(f_basic, backend=backend)
        x = torch.ones(2)
        cf(x)
        e = compiler.explain(cf, x)
        assert cf.stats()["calls"] == 3 and cf.stats()["hits"] == 2
        assert e.stats["hits"] == 2
        assert "f_basic" in str(e)


# -- recompile logging ---------------------------------------------------------------------------

class TestRecompileLog:
    def test_names_the_failing_guard(self, backend, recompile_log):
        def f(x, k=1.0):
            return x * k

        cf = compile(f, backend=backend)
        cf(torch.ones(3))
        assert recompile_log() == []  # the first call is not a recompile
        cf(torch.ones(3))
        assert recompile_log() == []  # a hit is not either
        cf(torch.ones(4))
        cf(torch.ones(4, dtype=torch.float64))
        cf(torch.ones(4, dtype=torch.float64, requires_grad=True))
        with torch.no_grad():
            cf(torch.ones(4, dtype=torch.float64, requires_grad=True))
        cf(torch.ones(4, dtype=torch.float64, requires_grad=True), 2.0)
        msgs = recompile_log()
        expected = ["arg 0 (x): shape (3,) != (4,)",
                    "arg 0 (x): dtype float32 != float64",
                    "arg 0 (x): requires_grad False != True",
                    "grad mode: True != False",
                    "grad mode: False != True"]
        assert len(msgs) == 5, msgs
        for m, want in zip(msgs, expected):
            assert want in m, (m, want)
            assert "f" in m
        cf(torch.ones(4, dtype=torch.float64, requires_grad=True), 3.0)
        assert "arg 1 (k): 2.0 != 3.0" in recompile_log()[-1]

    def test_lifted_tensor_guard(self, backend, recompile_log):
        w = t([1.0, 2.0])

        def f(x):
            return x * w

        cf = compile(f, backend=backend)
        x = t([1.0, 1.0])
        cf(x)
        w.requires_grad_(True)
        y = cf(x)
        assert y.requires_grad
        msgs = recompile_log()
        assert len(msgs) == 1 and "lifted tensor" in msgs[0] and "requires_grad" in msgs[0]

    def test_nothing_logged_when_off(self, backend, caplog):
        cf = compile(f_basic, backend=backend)
        cf(torch.ones(3))
        cf(torch.ones(4))
        assert not [r for r in caplog.records if r.name == "dyngraph.recompiles"]

    def test_environment_variable(self, backend, monkeypatch, caplog):
        monkeypatch.setenv("DYNGRAPH_LOG", "guards, recompiles")
        compiler.log.configure()
        caplog.set_level(logging.INFO, logger="dyngraph.recompiles")
        cf = compile(f_basic, backend=backend)
        cf(torch.ones(3))
        cf(torch.ones(5))
        msgs = [r.getMessage() for r in caplog.records if r.name == "dyngraph.recompiles"]
        assert len(msgs) == 1 and "arg 0 (x): shape (3,) != (5,)" in msgs[0]

    def test_unknown_topic_is_an_error(self):
        with pytest.raises(ValueError, match="nonsense"):
            compiler.log.configure("recompiles,nonsense")


# -- max_traces --------------------------------------------------------------------------------

class TestTraceLimit:
    def test_one_warning_naming_the_changing_guard(self, backend):
        cf = compile(f_basic, backend=backend, max_traces=2)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            for n in (1, 2, 3, 4, 5, 6):
                x = torch.ones(n)
                assert_same(cf(x), f_basic(x))
        ws = [w for w in rec if issubclass(w.category, CompileWarning)]
        assert len(ws) == 1, [str(w.message) for w in ws]
        msg = str(ws[0].message)
        assert "max_traces=2" in msg and "arg 0 (x): shape" in msg
        assert cf.stats()["traces"] == 2
        # keys traced before the limit are still served by compiled code
        hits = cf.stats()["hits"]
        cf(torch.ones(1))
        cf(torch.ones(2))
        assert cf.stats()["hits"] == hits + 2
        assert "max_traces=2 reached" in str(cf.explain())

    def test_scalar_argument_that_keeps_changing_becomes_an_input(self, backend):
        def f(x, k):
            return x * k

        cf = compile(f, backend=backend, max_traces=3)
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileWarning)
            for k in range(10):
                assert_same(cf(torch.ones(2), k), f(torch.ones(2), k))
        assert cf.stats()["traces"] == 2 and cf.stats()["hits"] == 8

    def test_string_argument_that_keeps_changing(self, backend):
        def f(x, name):
            return x * len(name)

        cf = compile(f, backend=backend, max_traces=3)
        with pytest.warns(CompileWarning, match=r"arg 1 \(name\)"):
            for k in range(10):
                assert_same(cf(torch.ones(2), "a" * k), f(torch.ones(2), "a" * k))
        assert cf.stats()["traces"] == 3

    def test_warning_names_the_branch_that_keeps_changing(self, backend):
        """A value formatted into a string sees a new value on every call: a graph break
        at the first new value, and the warning must say which read it is (its source
        line), not just "new branch outcome"."""
        def f(x):
            y = (x * x).sum()
            return f"{y.item():.3f}"  # <- the read

        cf = compile(f, backend=backend, max_traces=2)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            for v in range(5):
                x = t([float(v), 1.0])
                assert cf(x) == f(x)
        msgs = [str(w.message) for w in rec if issubclass(w.category, CompileWarning)]
        assert len(msgs) == 1, msgs
        assert line_of(f, "# <- the read") in msgs[0], msgs[0]

    def test_item_only_used_in_arithmetic_needs_no_guard(self, backend):
        def f(x):
            loss = (x * x).sum()
            return x * loss.item(), loss.item() + 1

        cf = compile(f, backend=backend, max_traces=2)
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileWarning)
            for v in range(6):
                x = t([float(v), 1.0])
                got, want = cf(x), f(x)
                assert_same(got[0], want[0])
                assert got[1] == want[1] and type(got[1]) is float
        assert cf.stats()["traces"] == 1 and cf.stats()["hits"] == 5

    def test_branch_outcomes_count_against_the_limit(self, backend):
        def f(x):
            return x * round(x.sum().item(), 3)

        cf = compile(f, backend=backend, max_traces=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            for v in range(8):
                x = t([float(v)])
                assert_same(cf(x), f(x))
        assert cf.stats()["traces"] <= 3


# -- fault injection: the compiler never raises at the user ----------------------------------------

class TestFaultInjection:
    def test_compile_graph_raises(self, backend, monkeypatch):
        def boom(*a, **k):
            raise RuntimeError("injected compile failure")

        monkeypatch.setattr(compiler.api, "compile_graph", boom)
        cf = compile(f_basic, backend=backend)
        x = t([0.5, -1.0], requires_grad=True)
        with pytest.warns(CompileWarning, match="injected compile failure"):
            y = cf(x)
        assert_same(y, f_basic(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            for _ in range(3):
                y = cf(x)
                assert_same(y, f_basic(x))
        y.sum().backward()
        x2 = t([0.5, -1.0], requires_grad=True)
        f_basic(x2).sum().backward()
        assert_same(x.grad, x2.grad)
        s = cf.stats()
        assert s["hits"] == 0 and s["fallbacks"] >= 4

    def test_only_the_backward_fails_to_compile(self, backend, monkeypatch):
        real = compiler.api.compile_graph
        calls = []

        def second_fails(*a, **k):
            calls.append(1)
            if len(calls) == 2:
                raise RuntimeError("injected backward failure")
            return real(*a, **k)

        monkeypatch.setattr(compiler.api, "compile_graph", second_fails)
        w = t([2.0, -1.0], requires_grad=True)

        def f(x):
            return (x * w).tanh().sum()

        cf = compile(f, backend=backend)
        x = t([1.0, 0.5])
        cf(x)
        with pytest.warns(CompileWarning, match="compiling a backward failed"):
            cf(x).backward()   # compiled at the first backward through the output
        for _ in range(2):
            w.grad = None
            cf(x).backward()
            got = w.grad._data.copy()
            w.grad = None
            f(x).backward()
            np.testing.assert_allclose(got, w.grad._data, rtol=1e-6)

    def test_compiled_program_raises_when_run(self, backend, monkeypatch):
        """Numba compiles lazily, at a kernel's first call: an error inside a compiled
        program is a compile error too, and must fall back to eager with a warning."""
        real = compiler.api.compile_graph

        class Broken:
            def __init__(self, prog):
                self.source, self.kernels = prog.source, prog.kernels

            def __call__(self, *arrays):
                raise RuntimeError("injected kernel failure")

        monkeypatch.setattr(compiler.api, "compile_graph",
                            lambda *a, **k: Broken(real(*a, **k)))
        x = t([1.0, -2.0])
        cf = compile(f_basic, backend=backend)
        cf(x)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            for _ in range(3):
                assert_same(cf(x), f_basic(x))
        assert any(issubclass(w.category, CompileWarning) for w in rec)
        check_accounting(cf)

    def test_never_raises_with_inplace_inputs(self, backend, monkeypatch):
        def boom(*a, **k):
            raise RuntimeError("injected")

        monkeypatch.setattr(compiler.api, "compile_graph", boom)

        def f(x):
            x.add_(1)
            return x * 2

        cf = compile(f, backend=backend)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            for _ in range(3):
                a, b = t([1.0, 2.0]), t([1.0, 2.0])
                assert_same(cf(a), f(b))
                assert_same(a, b)


# -- compiling a Module --------------------------------------------------------------------------

class TestModule:
    def test_linear(self, backend):
        nn = pytest.importorskip("eager.nn")
        torch.manual_seed(0)
        m = nn.Linear(3, 2)
        cm = compile(m, backend=backend)
        assert cm.weight is m.weight  # attributes are the module's
        x = torch.randn(4, 3)
        for _ in range(3):
            assert_same(cm(x), m(x))
            with torch.no_grad():
                m.weight.mul_(2.0)  # parameters are read at every call
        assert cm.stats()["hits"] == 2
        assert "lifted tensors" in str(cm.explain())
        cm.reset()
        assert cm.stats()["calls"] == 0

    def test_rebinding_a_parameter_between_calls(self, backend):
        """``m.weight = nn.Parameter(...)`` replaces the tensor the trace lifted: the next
        call must read the new one (DESIGN: Python state a trace read is guarded)."""
        nn = pytest.importorskip("eager.nn")
        torch.manual_seed(0)
        m = nn.Linear(2, 1)
        cm = compile(m, backend=backend)
        x = torch.ones(1, 2)
        cm(x)
        cm(x)
        m.weight = nn.Parameter(torch.zeros(1, 2) + 0.5)
        assert_same(cm(x), m(x))
        assert_same(cm(x), m(x))

    def test_parameter_gradients(self, backend):
        nn = pytest.importorskip("eager.nn")
        torch.manual_seed(0)
        m = nn.Linear(3, 2)
        cm = compile(m, backend=backend)
        for i in range(3):
            x = torch.randn(4, 3)
            m.zero_grad()
            cm(x).tanh().sum().backward()
            got = [p.grad._data.copy() for p in m.parameters()]
            m.zero_grad()
            m(x).tanh().sum().backward()
            for g, p in zip(got, m.parameters()):
                np.testing.assert_allclose(g, p.grad._data, rtol=1e-5, atol=1e-6)
        assert cm.stats()["hits"] >= 1


def test_a_step_starting_with_zero_grad_is_one_trace_whether_grads_existed_or_not():
    """``zero_grad()`` writes ``.grad = None`` without reading it, so the first call (no
    grads yet) and later calls (grads left by the previous step) share one trace."""
    from eager import nn, optim

    def make():
        torch.manual_seed(0)
        m = nn.Linear(3, 2)
        opt = optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = m(x).tanh().sum()
            loss.backward()
            opt.step()
            return loss
        return m, step

    m_e, step_e = make()
    m_c, step_c = make()
    cstep = compile(step_c)
    for i in range(4):
        x = torch.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3) * (i + 1))
        assert_same(cstep(x), step_e(x))
        compiler.wait()
        for p, q in zip(m_c.parameters(), m_e.parameters()):
            np.testing.assert_allclose(p._data, q._data, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(p.grad._data, q.grad._data, rtol=1e-5, atol=1e-6)
    assert cstep.stats()["traces"] == 1
    assert cstep.stats()["hits"] == 3
