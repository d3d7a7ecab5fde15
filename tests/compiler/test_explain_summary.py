"""explain(): a short summary by default (about 50 lines at most for 8 traces: traces with
hits and counts, shared and distinguishing guards, branch points, kernels counted,
fallbacks with hints) and the whole dump from .full() or verbose=True."""

import warnings

import eager as torch
from compiler import compile
from compiler.explain import hint_for


def _tour():
    def f(x):
        h = torch.tanh(x * 1.01 + 0.1)
        if h.sum() > 0:
            return h * 2
        return -h
    return compile(f, backend="python")


def test_summary_of_eight_traces_is_short_and_complete():
    cf = _tour()
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (3, 5, 7, 9, 11):
            for shift in (3.0, -3.0, 3.0):
                cf(torch.randn(n) + shift)
    e = cf.explain()
    text = str(e)
    lines = text.splitlines()
    assert len(e.traces) == 8
    assert len(lines) <= 50, text
    assert max(map(len, lines)) <= 160
    assert "traces (8):" in text and "trace 7:" in text
    assert "guards shared by all 8 traces" in text and "its own guards" in text
    assert "tensor shape (3,)" in text               # what tells the traces apart
    assert "bool() was True" in text and "bool() was False" in text
    assert "max_traces=8 reached" in text and "hint: " in text and "dynamic=True" in text
    full = e.full()
    assert len(full.splitlines()) > 2 * len(lines)
    assert "graph:" in full and "graph:" not in text
    assert all(g in full for t in e.traces for g in t["guards"])
    e.verbose = True
    assert str(e) == full


def test_summary_of_one_trace_lists_its_guards():
    cf = _tour()
    x = torch.ones(4)
    cf(x)
    cf(x)
    text = str(cf.explain())
    assert "guards (checked before every replay): 2" in text
    assert "arg 0 (x): tensor shape (4,), dtype float32" in text
    assert "trace 0: 1 hit, 2 guards, 1 branch point" in text
    assert "explain().full()" in text


def test_nothing_traced():
    cf = _tour()
    assert str(cf.explain()).startswith("compiled function f: 0 calls")


def test_hints():
    assert "dynamic=True" in hint_for("max_traces=8 reached (arg 0 ...)")
    assert "compiler.disable" in hint_for("this call could not be traced: .item()")
    assert "full()" in hint_for("something new")


def test_explain_verbose_keyword_gives_the_full_dump():
    cf = _tour()
    x = torch.randn(4) + 3.0
    cf(x)
    cf(x)
    summary, verbose = cf.explain(), cf.explain(verbose=True)
    assert str(verbose) == verbose.full() != str(summary)
    assert len(str(verbose).splitlines()) > len(str(summary).splitlines())
    from compiler import explain
    assert str(explain(_tour(), x, verbose=True)).count("trace 0") >= 1


def test_import_eager_compiler_is_the_compiler_package():
    import compiler
    import eager.compiler as ec
    assert ec is compiler and torch.compiler is compiler
    from eager.compiler import is_compiling, reset
    assert is_compiling() is False and callable(reset)
