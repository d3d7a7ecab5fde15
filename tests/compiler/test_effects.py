"""Ops with an effect (``Op.effect``, e.g. the collectives of ``eager.distributed``) survive
every pass and run on every replay, in the order eager ran them: never folded, merged,
dropped or fused.

``EffectProbe`` (``effect_probe.py``) stands in for a collective without needing MPI: it
logs each call, so a test sees exactly which calls a replay made.
"""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager
from compiler.ir import Const, Guard, check_graph, run_graph
from compiler.passes import optimize
from compiler.passes.constfold import constfold
from compiler.passes.cse import cse
from compiler.passes.dce import dce, has_effect
from compiler.passes.fusion import FusedElementwise, fuse
from eager.ops import elementwise as E
from tests.compiler.effect_probe import CALLS, EffectProbe, logged
from tests.graphs import Builder


@pytest.fixture(autouse=True)
def _clear_calls():
    CALLS.clear()
    yield
    CALLS.clear()


def probe(t, tag):
    return eager.dispatch(EffectProbe, t, tag=tag)


def effect_ops(graph):
    return [(n.op, n.params.get("tag")) for n in graph.nodes if has_effect(n)]


def test_effect_op_is_an_effect_and_registered():
    assert EffectProbe.effect and not E.Add.effect
    assert has_effect(type("N", (), {"op": EffectProbe})())


def test_dce_keeps_an_effect_whose_value_is_unused():
    b = Builder()
    x = b.input(np.ones(3, np.float32))
    b(EffectProbe, x, tag="unused")
    y = b(E.Mul, x, 2.0)
    b(E.Exp, x)  # dead, no effect: dropped
    g = dce(b.graph(y))
    check_graph(g)
    assert [n.op for n in g.nodes] == [EffectProbe, E.Mul]


def test_cse_never_merges_two_equal_effects():
    b = Builder()
    x = b.input(np.ones(3, np.float32))
    p1 = b(EffectProbe, x, tag="same")
    p2 = b(EffectProbe, x, tag="same")
    g = cse(b.graph(b(E.Add, p1, p2)))
    assert [n.op for n in g.nodes].count(EffectProbe) == 2


def test_constfold_never_runs_an_effect_at_compile_time():
    b = Builder()
    c = b.const(np.arange(3, dtype=np.float32))
    p = b(EffectProbe, c, tag="const")
    CALLS.clear()
    g = constfold(b.graph(b(E.Mul, p, 2.0)))
    assert CALLS == []  # nothing ran while folding
    assert [n.op for n in g.nodes] == [Const, EffectProbe, E.Mul]
    out, = run_graph(g)
    np.testing.assert_array_equal(out, (np.arange(3, dtype=np.float32) + 1) * 2)
    assert logged() == [("const", 3.0)]


def test_optimize_keeps_every_effect_in_order():
    b = Builder()
    x = b.input(np.ones(4, np.float32))
    p1 = b(EffectProbe, x, tag="a")
    b(EffectProbe, x, tag="b")           # unused
    b(EffectProbe, x, tag="a")           # equal to the first
    c = b.const(np.ones(4, np.float32))
    b(EffectProbe, c, tag="c")           # on a constant, unused
    g = optimize(b.graph(b(E.Mul, p1, 3.0)))
    check_graph(g)
    assert effect_ops(g) == [(EffectProbe, "a"), (EffectProbe, "b"), (EffectProbe, "a"),
                             (EffectProbe, "c")]


def test_fusion_leaves_effects_unfused_and_in_order():
    b = Builder()
    x = b.input(np.ones(4, np.float32))
    h = b(E.Exp, b(E.Mul, x, 2.0))
    p1 = b(EffectProbe, h, tag="first")
    flag = b.input(np.array(1.0, np.float32))
    b(Guard, flag, kind="bool", expected=True, index=0, where=None)
    p2 = b(EffectProbe, b(E.Add, p1, 1.0), tag="second")
    out = b(E.Tanh, b(E.Mul, p2, h))
    g = fuse(b.graph(out), singleton_min=0)
    check_graph(g)
    kinds = [n.op for n in g.nodes if n.op is Guard or n.op is EffectProbe]
    assert kinds == [EffectProbe, Guard, EffectProbe]
    assert [n.params["tag"] for n in g.nodes if n.op is EffectProbe] == ["first", "second"]
    assert any(n.op is FusedElementwise for n in g.nodes)  # the elementwise ops still fuse
    same, = run_graph(g, *b.arrays())
    np.testing.assert_array_equal(same, run_graph(b.graph(out), *b.arrays())[0])


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_compiled_function_runs_every_effect_on_every_replay(backend):
    def fn(x):
        y = probe(x * 2, "a")
        z = probe(x * 2, "a")       # the same computation again: still a second call
        probe(x + 0, "unused")      # result unused: still called
        return y + z

    cf = compiler.compile(fn, backend=backend)
    for i in range(4):
        x = eager.full((3,), float(i))
        CALLS.clear()
        out = cf(x)
        compiler.wait()
        got = logged()
        CALLS.clear()
        want = fn(x)
        assert got == logged() == [("a", 6.0 * i), ("a", 6.0 * i), ("unused", 3.0 * i)]
        np.testing.assert_array_equal(out.numpy(), want.numpy())
    assert cf.stats()["hits"] >= 2
    compiler.reset()
