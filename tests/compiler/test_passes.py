"""Unit tests of the graph passes: constant folding, CSE, their order in ``optimize``.

Graphs are built by tracing small functions (``trace``) or node by node (``Builder``);
every optimized graph is checked with the verifier and against ``run_graph`` on the
original graph.
"""

from __future__ import annotations

import numpy as np
import pytest

import eager
from compiler import passes
from compiler.ir import Const, Graph, Guard, Node, Value, check_graph, run_graph
from compiler.passes import PASSES, optimize
from compiler.passes.constfold import MAX_ELEMENTS, constfold
from compiler.passes.cse import cse
from compiler.passes.dce import dce
from eager.ops import elementwise as E
from eager.ops import factory as Fa
from eager.ops import reduce as R
from tests.graphs import Builder, trace


def same(a, b):
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


# -- order ---------------------------------------------------------------------------------

def test_pass_order_has_dce_last_and_no_fusion():
    names = [p.__name__ for p in PASSES]
    assert names == ["simplify", "fold_scatters", "expand", "constfold", "cse", "dce"]
    assert "fuse" not in names  # fusion is the numba backend's own step
    assert passes.optimize is optimize


# -- CSE -------------------------------------------------------------------------------------

class TestCSE:
    def test_merges_equal_nodes_and_their_users(self):
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        g, want = trace(lambda t: eager.tanh(t * 2) + eager.tanh(t * 2), x)
        g2 = cse(g)
        check_graph(g2)
        assert [n.op for n in g2.nodes] == [E.Mul, E.Tanh, E.Add]
        add = g2.nodes[-1]
        assert add.inputs[0] is add.inputs[1]
        same(run_graph(g2, x), want)

    def test_scalars_of_different_type_or_sign_differ(self):
        b = Builder()
        x = b.input(np.arange(3, dtype=np.int64))
        y = b.input(np.array([1.0, -2.0], dtype=np.float32))
        outs = [b(E.Mul, x, 2), b(E.Mul, x, 2.0), b(E.Mul, x, True),
                b(E.Mul, y, 0.0), b(E.Mul, y, -0.0)]
        g = b.graph(*[b(E.Add, o, 1) for o in outs])
        g2 = cse(g)
        assert len(g2.nodes) == len(g.nodes)  # nothing is equal to anything else

    def test_equal_params_merge_different_params_do_not(self):
        b = Builder()
        x = b.input(np.ones((2, 3), np.float32))
        s1 = b(R.Sum, x, dim=(1,), keepdim=False, dtype=None)
        s2 = b(R.Sum, x, dim=(1,), keepdim=False, dtype=None)
        s3 = b(R.Sum, x, dim=(0,), keepdim=False, dtype=None)
        c1 = b(E.Cast, x, dtype=np.dtype(np.float64))
        c2 = b(E.Cast, x, dtype=np.dtype(np.float16))
        g = b.graph(b(E.Add, s1, s2), s3, c1, c2)
        g2 = cse(g)
        check_graph(g2)
        assert sum(n.op is R.Sum for n in g2.nodes) == 2
        assert sum(n.op is E.Cast for n in g2.nodes) == 2
        same(run_graph(g2, *[b.env[v.id] for v in g.inputs]),
             run_graph(g, *[b.env[v.id] for v in g.inputs]))

    def test_never_random_nor_guards(self):
        b = Builder()
        x = b.input(np.ones(3, np.float32))
        r1 = b(Fa.Rand, shape=(3,), dtype=np.dtype(np.float32))
        r2 = b(Fa.Rand, shape=(3,), dtype=np.dtype(np.float32))
        s = b(R.Sum, x, dim=(0,), keepdim=False, dtype=None)
        b(Guard, s, kind="bool", expected=True, index=0, where=None)
        b(Guard, s, kind="bool", expected=True, index=1, where=None)
        g = b.graph(b(E.Add, r1, r2))
        g2 = cse(g)
        assert sum(n.op is Fa.Rand for n in g2.nodes) == 2
        assert sum(n.op is Guard for n in g2.nodes) == 2

    def test_consts_merge_only_when_equal(self):
        b = Builder()
        x = b.input(np.ones(3, np.float32))
        c1 = b.const(np.array([1, 2, 3], np.float32))
        c2 = b.const(np.array([1, 2, 3], np.float32))
        c3 = b.const(np.array([1, 2, 4], np.float32))
        c4 = b.const(np.array([1, 2, 3], np.float64))
        g = b.graph(b(E.Add, b(E.Add, b(E.Add, b(E.Mul, x, c1), c2), c3), c4))
        g2 = cse(g)
        assert sum(n.op is Const for n in g2.nodes) == 3

    def test_two_outputs_stay_two_values(self):
        # eager returns two tensors: a caller writing into one must not change the other
        x = np.ones(3, np.float32)
        g, want = trace(lambda t: (t + 1, t + 1, (t + 1) * 2), x)
        g2 = cse(g)
        check_graph(g2)
        assert len({v.id for v in g2.outputs}) == 3
        same(run_graph(g2, x), want)
        # an output equal to a non-output value may take that value's place
        g3, want3 = trace(lambda t: ((t + 1) * 2, t + 1), x)
        g4 = cse(g3)
        assert len({v.id for v in g4.outputs}) == 2
        same(run_graph(g4, x), want3)


# -- constant folding ----------------------------------------------------------------------

class TestConstfold:
    def test_folds_a_chain_of_constants_exactly(self):
        x = np.ones((2, 3), np.float32)

        def f(t):
            c = eager.tensor([1.0, 2.0, 3.0])
            d = eager.exp(c * 2 + 1) / 3
            return t * d

        g, want = trace(f, x)
        g2 = dce(constfold(g))
        check_graph(g2)
        consts = [n for n in g2.nodes if n.op is Const]
        assert len(consts) == 1 and [n.op for n in g2.nodes] == [Const, E.Mul]
        ref = (np.exp(np.array([1, 2, 3], np.float32) * np.float32(2) + np.float32(1))
               / np.float32(3))
        np.testing.assert_array_equal(consts[0].params["value"], ref)
        same(run_graph(g2, x), want)

    def test_random_and_inputs_are_not_folded(self):
        b = Builder()
        x = b.input(np.ones(3, np.float32))
        r = b(Fa.Rand, shape=(3,), dtype=np.dtype(np.float32))
        y = b(E.Mul, r, 2.0)
        z = b(E.Mul, x, 2.0)
        g = b.graph(b(E.Add, y, z))
        g2 = constfold(g)
        assert [n.op for n in g2.nodes] == [n.op for n in g.nodes]

    def test_large_results_are_not_stored(self):
        b = Builder()
        x = b.input(np.ones(3, np.float32))
        c = b.const(np.arange(MAX_ELEMENTS + 1, dtype=np.float32))
        y = b(E.Mul, c, 2.0)
        g = b.graph(b(E.Add, b(R.Sum, y, dim=(0,), keepdim=False, dtype=None), x))
        g2 = constfold(g)
        assert g2.nodes[1].op is E.Mul        # too big to become a Const
        assert g2.nodes[2].op is Const        # the sum is small
        same(run_graph(g2, b.env[0]), run_graph(g, b.env[0]))

    def test_uniform_values_fold_into_full(self):
        x = np.ones((100, 100), np.float32)

        def f(t):
            big = eager.ones(100, 100) * 3 + 1        # 10000 elements of 4.0
            half = eager.zeros(100, 100, dtype=eager.int64) + 7
            return t * big + half / 2

        g, want = trace(f, x)
        g2 = dce(constfold(g))
        check_graph(g2)
        fulls = [n for n in g2.nodes if n.op is Fa.Full]
        assert sorted(n.params["value"] for n in fulls) == [3.5, 4.0]
        assert all(n.op is not Const for n in g2.nodes)
        same(run_graph(g2, x), want)

    def test_outputs_are_not_turned_into_constants(self):
        # a Const is one array for every call: the caller must get a fresh one
        b = Builder()
        b.input(np.ones(3, np.float32))
        c = b.const(np.array([1.0, 2.0], np.float32))
        g = b.graph(b(E.Mul, c, 2.0))
        assert constfold(g).nodes[-1].op is E.Mul

    def test_errors_are_left_to_run_time(self):
        # int ** -1 raises in eager: folding must not raise, the node stays to raise later
        b = Builder()
        x = b.input(np.ones(2, np.int64))
        c = b.const(np.array([1, 2], np.int64))
        bad = Node(E.Pow, [c, -1], {}, Value(99, (2,), np.int64))
        b.nodes.append(bad)
        g = Graph(b.inputs, b.nodes + [Node(E.Add, [bad.out, x], {}, Value(100, (2,), np.int64))],
                  [Value(100, (2,), np.int64)])
        g2 = constfold(g)
        assert any(n is bad for n in g2.nodes)


def test_optimize_matches_run_graph_on_a_mixed_graph():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)

    def f(t):
        c = eager.tensor([[0.5], [1.0], [2.0]])
        a = t * (c + 1)
        b = t * (c + 1)
        m = a.amax(dim=1, keepdim=True)
        return eager.exp(a - m) + eager.exp(b - m), eager.zeros(3, 4) + 2

    g, want = trace(f, x)
    g2 = optimize(g)
    check_graph(g2)
    assert len(g2.nodes) < len(g.nodes)
    same(run_graph(g2, x), want)


@pytest.mark.parametrize("seed", range(3))
def test_random_graphs_keep_their_values(seed):
    rng = np.random.default_rng(seed)
    b = Builder()
    vals = [b.input(rng.standard_normal((2, 3)).astype(np.float32)),
            b.const(rng.standard_normal(3).astype(np.float32)),
            b.const(np.float32(2.5) * np.ones((2, 3), np.float32))]
    for _ in range(25):
        k = rng.integers(4)
        a = vals[rng.integers(len(vals))]
        c = vals[rng.integers(len(vals))]
        if k == 0:
            vals.append(b(E.Add, a, c))
        elif k == 1:
            vals.append(b(E.Mul, a, float(rng.integers(1, 3))))
        elif k == 2:
            vals.append(b(E.Tanh, a))
        else:
            vals.append(b(E.Sub, c, a))
    g = b.graph(*vals[-3:])
    g2 = optimize(g)
    check_graph(g2)
    ins = [b.env[v.id] for v in g.inputs]
    same(run_graph(g2, *ins), run_graph(g, *ins))


# -- simplify --------------------------------------------------------------------------------

def test_simplify_drops_noop_reshapes_and_casts_and_keeps_results():
    from compiler.ir import Graph, Node, Value, check_graph, run_graph
    from compiler.passes.simplify import simplify
    from eager.ops import elementwise as ew
    from eager.ops import shape as sh

    x = Value(0, (2, 3), np.float32)
    r = Value(1, (2, 3), np.float32)   # reshape to its own shape: a no-op
    c = Value(2, (2, 3), np.float32)   # cast to its own dtype: a no-op
    y = Value(3, (2, 3), np.float32)
    z = Value(4, (3, 2), np.float32)   # a real reshape: kept
    g = Graph([x], [Node(sh.Reshape, [x], {"shape": (2, 3)}, r),
                    Node(ew.Cast, [r], {"dtype": np.dtype(np.float32)}, c),
                    Node(ew.Mul, [c, 2.0], {}, y),
                    Node(sh.Reshape, [y], {"shape": (3, 2)}, z)], [z, c])
    s = simplify(g)
    check_graph(s)
    assert [n.op.name for n in s.nodes] == ["mul", "reshape"]
    assert s.outputs[1] is x  # an output that was a no-op of the input is the input
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for got, want in zip(run_graph(s, a), run_graph(g, a)):
        np.testing.assert_array_equal(got, want)
