"""Compiled functions called from several threads: results equal eager's, concurrent
misses of one key trace once, and a trace recorded in one thread never captures the ops
of another thread (the tracer slot is per thread, as grad mode)."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import compiler
import eager as torch
from compiler import compile
from tests.helpers import run_threads


@pytest.fixture(autouse=True)
def fast_switching():
    """Switch threads often, so that a trace and another thread's work interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def body(x, w):
    h = torch.tanh(x @ w + 0.5)
    if h.sum() > 0:  # a branch: each thread meets both outcomes
        h = h * 2.0
    else:
        h = h - 1.0
    for _ in range(20):  # a longer trace: other threads run while it is recorded
        h = h * 0.9 + 0.01
    return (h * h).mean()


def inputs(seed, n):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((n, 8)).astype(np.float32))
    w = torch.tensor(rng.standard_normal((8, 4)).astype(np.float32), requires_grad=True)
    return x, w


def check_calls(cf, seed, calls):
    """``calls`` calls of ``cf`` on inputs of two shapes, each result and gradient
    compared with the uncompiled function's."""
    for i in range(calls):
        x, w = inputs(seed * 1000 + i, 4 if i % 2 else 6)
        got = cf(x, w)
        got.backward()
        gw = w.grad._data.copy()
        w.grad = None
        want = body(x, w)
        want.backward()
        assert not got._data.shape and got.requires_grad
        np.testing.assert_allclose(got._data, want._data, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gw, w.grad._data, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_four_threads_call_one_compiled_function(backend):
    cf = compile(body, backend=backend)
    run_threads(*[lambda s=s: check_calls(cf, s, 40) for s in range(4)], timeout=120.0)
    s = cf.stats()
    # two shapes x two branch outcomes: each traced once, whichever thread met it first
    assert s["traces"] <= 4, s
    assert s["hits"] > 0, s
    assert s["calls"] == 4 * 40, s
    compiler.wait()  # the fused kernels (numba) or nothing to build (python)
    run_threads(*[lambda s=s: check_calls(cf, s + 10, 40) for s in range(4)], timeout=120.0)
    s2 = cf.stats()
    assert s2["traces"] == s["traces"], (s, s2)
    assert s2["calls"] == 8 * 40, s2
    assert torch.is_grad_enabled()


def test_concurrent_first_calls_trace_once():
    cf = compile(body, backend="python")
    x, w = inputs(0, 6)
    want = body(x, w)._data
    start = threading.Barrier(4)
    results = [None] * 4

    def call(i):
        start.wait()
        results[i] = cf(x, w)._data

    run_threads(*[lambda i=i: call(i) for i in range(4)], timeout=120.0)
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-6)
    s = cf.stats()
    assert s["traces"] == 1, s      # the other three waited, then replayed that trace
    assert s["hits"] == 3, s


def graph_ops(cf) -> list:
    return [n.op.name for _, _, path, _ in cf._records for n in path.graph.nodes]


def test_a_trace_never_records_another_threads_ops():
    def f(x):
        h = x
        for _ in range(200):
            h = torch.tanh(h * 0.5 + 0.1)
        return h

    cf = compile(f, backend="python")
    tracing = threading.Event()
    traced = threading.Event()
    counts = {"other": 0}

    def other():
        z = torch.ones(3, requires_grad=True)
        assert tracing.wait(10)
        while not traced.is_set():  # eager ops (and reads) for as long as the trace runs
            y = torch.exp(z).sum()
            assert y.requires_grad
            assert float(y) == pytest.approx(3 * np.e)  # a read: no guard in that trace
            y.backward()
            counts["other"] += 1
        assert counts["other"] > 0

    def trace():
        x = torch.linspace(-1, 1, 5)
        tracing.set()
        try:
            cf(x)
        finally:
            traced.set()
        np.testing.assert_allclose(cf(x)._data, f(x)._data, rtol=1e-6)

    run_threads(other, trace, timeout=120.0)
    ops = graph_ops(cf)
    assert ops.count("tanh") == 200, ops
    assert "exp" not in ops and "sum" not in ops, sorted(set(ops))
    s = cf.stats()
    assert (s["traces"], s["hits"]) == (1, 1), s
    assert cf._always_eager is None, cf.explain()

