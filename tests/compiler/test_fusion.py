"""The fusion pass on its own (no kernels are compiled here): groups are convex, maximal,
never span a guard, keep random ops in order, and a fused graph run by the interpreter
(``FusedElementwise.forward`` evaluates the body with NumPy) equals the original graph.
"""

from __future__ import annotations

import numpy as np
import pytest

import eager
from compiler import compile, wait
from compiler.codegen import compile_graph
from compiler.ir import Guard, Node, Value, check_graph, run_graph
from compiler.passes.dce import dce
from compiler.passes.fusion import (
    FusedElementwise,
    FusedReduction,
    ScalarGraph,
    TupleGet,
    fuse,
    fusible,
)
from eager.ops import elementwise as E
from eager.ops import factory as Fa
from eager.ops import reduce as R
from eager.ops import shape as S
from runtime.cpu import CPU as CPUDevice
from runtime.cpu import DEVICE as CPU
from tests.graphs import Builder, trace


def groups(g):
    """For each fused node: the ids of the original values its body computes."""
    return [[m.out.id for m in n.params["graph"].nodes] for n in g.nodes
            if n.op is FusedElementwise or n.op is FusedReduction]


def fuse_all(g):
    return fuse(g, singleton_min=0)


# -- structure --------------------------------------------------------------------------------

def test_a_chain_is_one_node_with_the_body_printed_short():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    g, want = trace(lambda t: 0.5 * t * (1 + eager.tanh(0.79788456 * (t + 0.044715 * t ** 3))),
                    x)
    fg = fuse_all(g)
    check_graph(fg)
    assert [n.op for n in fg.nodes] == [FusedElementwise]
    body = fg.nodes[0].params["graph"]
    assert isinstance(body, ScalarGraph) and len(body.nodes) == len(g.nodes)
    assert body.inputs == g.inputs and fg.nodes[0].out is g.outputs[0]
    assert "graph=<8 ops: mul pow mul add mul tanh add mul>" in str(fg)
    np.testing.assert_array_equal(run_graph(fg, x)[0], want[0])


def test_outputs_used_outside_become_tuple_outputs():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

    def f(t):
        a = eager.exp(t) * 2          # used by the sum (outside) and inside
        b = a + 1                     # internal only
        c = b * a                     # a graph output
        return c, a.sum(dim=1)

    g, want = trace(f, x)
    fg = fuse_all(g)
    check_graph(fg)
    ops = [n.op for n in fg.nodes]
    assert ops == [FusedElementwise, TupleGet, TupleGet, R.Sum]
    fused = fg.nodes[0]
    assert fused.out.dtype == np.dtype(object) and fused.out.shape == (2,)
    body = fused.params["graph"]
    assert [v.id for v in body.outputs] == [fg.nodes[1].out.id, fg.nodes[2].out.id]
    assert len(body.nodes) == 4 and len(body.outputs) == 2   # b stays in registers
    for got, w in zip(run_graph(fg, x), want):
        np.testing.assert_array_equal(got, w)
    # the python backend runs fused graphs too (forward + TupleGet)
    for got, w in zip(compile_graph(fg, "python")(x), want):
        np.testing.assert_array_equal(got, w)


def test_non_convex_union_is_split():
    # a -> sum -> d and a -> d: putting a and d together would need the sum inside
    b = Builder()
    x = b.input(np.ones((2, 3), np.float32))
    a = b(E.Exp, x)
    s = b(R.Sum, a, dim=(1,), keepdim=True, dtype=None)
    d = b(E.Mul, a, s)
    e = b(E.Tanh, d)
    g = b.graph(e)
    fg = fuse_all(g)
    check_graph(fg)
    assert sorted(groups(fg)) == sorted([[a.id], [d.id, e.id]])
    np.testing.assert_array_equal(run_graph(fg, *b.arrays())[0], run_graph(g, *b.arrays())[0])


def test_diamond_is_one_group():
    b = Builder()
    x = b.input(np.ones((2, 3), np.float32))
    a = b(E.Exp, x)
    l, r = b(E.Sin, a), b(E.Cos, a)
    g = b.graph(b(E.Add, l, r))
    assert len(groups(fuse_all(g))) == 1


def test_different_loop_shapes_are_different_groups():
    b = Builder()
    x = b.input(np.ones((2, 3), np.float32))
    v = b.input(np.ones(3, np.float32))
    w = b(E.Exp, b(E.Mul, v, 2.0))       # (3,)
    y = b(E.Tanh, b(E.Add, x, w))        # (2, 3)
    fg = fuse_all(b.graph(y))
    assert sorted(map(len, groups(fg))) == [2, 2]


def test_siblings_reading_one_input_merge():
    b = Builder()
    x = b.input(np.ones((2, 3), np.float32))
    y1 = b(E.Exp, x)
    y2 = b(E.Sin, x)
    fg = fuse_all(b.graph(y1, y2))
    assert groups(fg) == [[y1.id, y2.id]]


def test_guards_split_regions():
    x = np.linspace(-1, 1, 6, dtype=np.float32)

    def f(t):
        a = eager.exp(t) + 1
        if a.sum() > 0:               # a guard between the two halves
            return eager.tanh(a * 2)
        return a

    g, want = trace(f, x)
    fg = fuse_all(g)
    check_graph(fg)
    ops = [n.op for n in fg.nodes]
    gi = ops.index(Guard)
    before = {v for n in fg.nodes[:gi] if n.op is FusedElementwise
              for v in (m.out.id for m in n.params["graph"].nodes)}
    after = {v for n in fg.nodes[gi + 1:] if n.op is FusedElementwise
             for v in (m.out.id for m in n.params["graph"].nodes)}
    assert before and after and not (before & after)
    np.testing.assert_array_equal(run_graph(fg, x)[0], want[0])


def test_expand_is_read_broadcast_not_copied():
    b = Builder()
    x = b.input(np.ones((4, 3), np.float32))
    v = b.input(np.arange(3, dtype=np.float32))
    e = b(S.Expand, v, shape=(4, 3))
    y = b(E.Mul, b(E.Add, x, e), 2.0)
    g = b.graph(y)
    fg = fuse_all(g)
    check_graph(fg)
    assert [n.op for n in fg.nodes] == [FusedElementwise]      # the Expand node is gone
    assert fg.nodes[0].inputs == [x, v]
    np.testing.assert_array_equal(run_graph(fg, *b.arrays())[0], run_graph(g, *b.arrays())[0])


def test_small_singletons_stay_numpy_calls():
    b = Builder()
    x = b.input(np.ones((4, 3), np.float32))
    s = b(R.Sum, b(E.Exp, x), dim=(0,), keepdim=False, dtype=None)
    g = b.graph(s)
    assert fuse(g) is g
    assert len(groups(fuse(g, singleton_min=12))) == 1
    # with a reduction it can join, it is no longer alone: exp + sum is one kernel
    b = Builder()
    x = b.input(np.ones((4, 3), np.float32))
    g = b.graph(b(R.Sum, b(E.Exp, x), dim=(1,), keepdim=False, dtype=None))
    assert [n.op for n in fuse(g).nodes] == [FusedReduction]


@pytest.mark.parametrize("op,params", [(E.Gelu, {}), (E.Gelu, {"approximate": "tanh"}),
                                       (E.Sigmoid, {}), (E.Silu, {}), (E.Softplus, {}),
                                       (E.Erf, {})])
def test_small_multipass_singletons_become_kernels(op, params):
    """An op whose NumPy forward makes several passes (``multipass``: GELU's erf
    polynomial, sigmoid's where of two formulas) is worth a kernel at any size: alone
    between two matmuls (a transformer's MLP) it is fused below ``singleton_min``; the
    kernel computes what the op computes (GELU's erf form bit for bit: eager's algorithm)."""
    b = Builder()
    x = b.input(np.linspace(-4, 4, 12, dtype=np.float32).reshape(4, 3))
    g = b.graph(b(op, x, **params))
    fused = fuse(g)
    assert [n.op for n in fused.nodes] == [FusedElementwise]
    want = run_graph(g, *b.arrays())[0]
    got = compile_graph(g, "numba")(*b.arrays())[0]
    if op is E.Gelu and not params:
        np.testing.assert_array_equal(got, want)
    else:
        # mathlib's tanh/exp: a few ulp, which 1 + tanh(-large) cancels into more: bounded
        # by a few ulp of the array's largest value (the check mode's contract)
        np.testing.assert_allclose(got, want, rtol=4e-7, atol=4e-7 * np.abs(want).max())
    # a one-pass op alone stays a NumPy call below singleton_min
    b = Builder()
    x = b.input(np.ones((4, 3), np.float32))
    g = b.graph(b(E.Exp, x))
    assert fuse(g) is g


def test_unsupported_nodes_are_not_fused():
    b = Builder()
    x = b.input(np.ones(3, np.float16))
    y = b.input(np.ones(3, np.float32))
    assert not fusible(Node(E.Exp, [x], {}, Value(9, (3,), np.float16)), CPU)  # no float16
    z = b(E.Round, y, decimals=2)
    assert not fusible(b.nodes[-1], CPU)
    assert fusible(Node(E.Round, [y], {"decimals": 0}, z), CPU)


# -- properties on random graphs --------------------------------------------------------------

def _random_graph(seed):
    """Random DAG over (3, 4) float32 values: fusible unary/binary ops, non-elementwise ops
    (softmax, keepdim sums), random factories and branch guards."""
    rng = np.random.default_rng(seed)
    b = Builder()
    vals = [b.input(rng.standard_normal((3, 4)).astype(np.float32)) for _ in range(2)]
    vals.append(b.input(rng.standard_normal(4).astype(np.float32)))
    guards = 0
    for _ in range(int(rng.integers(15, 40))):
        a = vals[int(rng.integers(len(vals)))]
        c = vals[int(rng.integers(len(vals)))]
        k = int(rng.integers(10))
        if k < 3:
            v = b([E.Add, E.Mul, E.Sub, E.Maximum][int(rng.integers(4))], a, c)
        elif k < 5:
            v = b([E.Tanh, E.Sin, E.Neg, E.Abs][int(rng.integers(4))], a)
        elif k == 5:
            v = b(E.Mul, a, float(rng.standard_normal()))
        elif k == 6:
            v = b(R.Softmax, a, dim=len(a.shape) - 1)
        elif k == 7:
            v = b(R.Sum, a, dim=(len(a.shape) - 1,), keepdim=True, dtype=None)
        elif k == 8:
            v = b(Fa.Rand, shape=(3, 4), dtype=np.dtype(np.float32))
        else:
            s = b(R.Sum, a, dim=tuple(range(len(a.shape))), keepdim=False, dtype=None)
            c = b(E.Gt, s, 0.0)
            b(Guard, c, kind="bool", expected=bool(b.env[c.id]), index=guards, where=None)
            guards += 1
            continue
        vals.append(v)
    outs = [vals[-1]] + [vals[int(i)] for i in rng.integers(3, len(vals), 2)]
    uniq = list({v.id: v for v in outs}.values())
    return b, dce(b.graph(*uniq))   # fusion sees optimized graphs: no dead nodes


def _reach(g):
    """Ancestor sets over node indices of ``g`` (data edges only)."""
    prod = {n.out.id: i for i, n in enumerate(g.nodes) if n.out is not None}
    anc = []
    for n in g.nodes:
        a = set()
        for v in n.values():
            p = prod.get(v.id)
            if p is not None:
                a |= anc[p] | {p}
        anc.append(a)
    return prod, anc


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_convex_maximal_and_equal(seed):
    eager.manual_seed(seed)      # the guards saw the values of these random draws
    b, g = _random_graph(seed)
    fg = fuse_all(g)
    check_graph(fg)
    prod, anc = _reach(g)
    seg, s = [], 0
    for n in g.nodes:
        s += n.op is Guard
        seg.append(s)
    unit = {i: ("n", i) for i in range(len(g.nodes))}
    for k, grp in enumerate(groups(fg)):
        members = {prod[v] for v in grp if v in prod}
        assert len(members) == len(grp)
        # convex: no outside node is both after and before the group
        for m in range(len(g.nodes)):
            if m in members:
                continue
            after = any(p in anc[m] for p in members)
            before = any(m in anc[q] for q in members)
            assert not (after and before), f"group {grp} is not convex (node {m})"
        assert len({seg[m] for m in members}) == 1, "a group spans a guard"
        for m in members:
            unit[m] = ("g", k)
    # maximal: two fusible neighbours in different units could not be merged
    for i, n in enumerate(g.nodes):
        if not fusible(n, CPU):
            continue
        for v in n.values():
            p = prod.get(v.id)
            if p is None or not fusible(g.nodes[p], CPU) or unit[p] == unit[i]:
                continue
            if g.nodes[p].out.shape != n.out.shape or seg[p] != seg[i]:
                continue
            union = {m for m, u in unit.items() if u in (unit[p], unit[i])}
            convex = not any(
                any(q in anc[m] for q in union) and any(m in anc[q] for q in union)
                for m in range(len(g.nodes)) if m not in union)
            assert not convex, f"nodes {p} and {i} could have fused"
    # same values, same random draws (the random ops keep their order)
    eager.manual_seed(seed)
    want = run_graph(g, *b.arrays())
    eager.manual_seed(seed)
    got = run_graph(fg, *b.arrays())
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)


def test_random_ops_keep_their_order():
    b = Builder()
    x = b.input(np.ones((2, 2), np.float32))
    r1 = b(Fa.Rand, shape=(2, 2), dtype=np.dtype(np.float32))
    a = b(E.Mul, b(E.Add, x, r1), 2.0)
    r2 = b(Fa.Randn, shape=(2, 2), dtype=np.dtype(np.float32))
    c = b(E.Add, b(E.Exp, x), r2)
    y = b(E.Add, a, c)
    g = b.graph(y)
    fg = fuse_all(g)
    rand = [n.op for n in fg.nodes if n.op in (Fa.Rand, Fa.Randn)]
    assert rand == [Fa.Rand, Fa.Randn]
    eager.manual_seed(3)
    want = run_graph(g, *b.arrays())[0]
    eager.manual_seed(3)
    np.testing.assert_array_equal(run_graph(fg, *b.arrays())[0], want)


# -- reductions ---------------------------------------------------------------------------------

def test_a_trailing_reduction_joins_the_group_it_is_the_only_user_of():
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)

    def f(t):
        a = (eager.tanh(t) * 2).sum(dim=(1, 2))         # joins
        b = (t + 1).amax(dim=2, keepdim=True)           # joins
        c = (t * 3).sum(dim=1)                          # not trailing: stays a sum
        d = eager.exp(t)
        return a, b, c, d.mean(dim=2), d                # d is used outside: stays

    g, want = trace(f, x)
    fg = fuse_all(g)
    check_graph(fg)
    reds = [n for n in fg.nodes if n.op is FusedReduction]
    assert sorted(n.params["graph"].nodes[-1].op.name for n in reds) == ["amax", "sum"]
    for n in reds:
        body = n.params["graph"]
        assert body.outputs == [body.nodes[-1].out] and n.out is body.nodes[-1].out
    assert sum(n.op is R.Sum for n in fg.nodes) == 1 and sum(n.op is R.Mean for n in fg.nodes) == 1
    for got, w in zip(run_graph(fg, x), want):
        np.testing.assert_array_equal(got, w)


def test_a_reduction_of_its_own_is_a_kernel_from_the_devices_size():
    """A trailing reduction whose input no group computes (an input, a NumPy op's result)
    is a fused reduction of one node from ``lone_reduce_min`` elements: a mean cast to
    float64 (LayerNorm's backward), a sum, a max. Smaller ones stay NumPy calls."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 17, 32)).astype(np.float32)
    small = rng.standard_normal((2, 3)).astype(np.float32)

    def f(t, s):
        m = t @ t.transpose(1, 2)                            # not elementwise: no group
        return (t.mean(dim=2, keepdim=True, dtype=eager.float64), m.sum(dim=(1, 2)),
                m.amax(dim=2), s.sum(dim=1))

    g, want = trace(f, x, small)
    fg = fuse(g, CPU)
    check_graph(fg)
    reds = [n.params["graph"].nodes for n in fg.nodes if n.op is FusedReduction]
    assert [[m.op.name for m in body] for body in reds] == [["mean"], ["sum"], ["amax"]]
    assert reds[0][0].params["dtype"] == np.float64 and reds[0][0].out.dtype == np.float64
    assert [n.op for n in fg.nodes].count(R.Sum) == 1               # the small one
    for got, w in zip(run_graph(fg, x, small), want):
        np.testing.assert_array_equal(got, w)
    assert CPU.lone_reduce_min <= x.size
    class Never(CPUDevice):
        lone_reduce_min = 1 << 62
    assert not [n for n in fuse(g, Never()).nodes if n.op is FusedReduction]


def test_reductions_of_their_own_compiled_equal_eager():
    rng = np.random.default_rng(1)

    def f(t):
        m = t @ t.transpose(1, 2)
        return (t.mean(dim=-1, keepdim=True, dtype=eager.float64), m.sum(dim=(1, 2)),
                m.amax(dim=2), t.mean(dim=(1, 2)), m.amin(dim=-1, keepdim=True))

    cf = compile(f)
    xs = [eager.tensor(rng.standard_normal((4, 16, 24)).astype(np.float32) * 10 ** k)
          for k in range(4)]
    xs.append(eager.tensor(np.full((4, 16, 24), np.nan, np.float32)))
    for i, x in enumerate(xs):
        for got, w in zip(cf(x), f(x)):
            assert got.dtype == w.dtype and got.shape == w.shape
            np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=2e-6, atol=0)
        if i == 1:
            wait()
    text = cf.explain().full()
    assert text.count("then mean over dimensions") == 2 and "then amin" in text


def test_reduction_checks():
    from compiler.passes.fusion import reduction_ok
    b = Builder()
    x = b.input(np.ones((2, 3), np.float32))
    i = b.input(np.ones((2, 3), np.int32))
    assert reduction_ok(Node(R.Sum, [x], {"dim": (1,), "keepdim": False, "dtype": None},
                             Value(50, (2,), np.float32)), CPU)
    assert reduction_ok(Node(R.Sum, [i], {"dim": (0, 1), "keepdim": False, "dtype": None},
                             Value(50, (), np.int64)), CPU)
    assert not reduction_ok(Node(R.Sum, [x], {"dim": (0,), "keepdim": False, "dtype": None},
                                 Value(50, (3,), np.float32)), CPU)
    assert not reduction_ok(Node(R.Mean, [i], {"dim": (1,), "keepdim": False, "dtype": None},
                                 Value(50, (2,), np.int32)), CPU)
    assert not reduction_ok(Node(R.Softmax, [x], {"dim": 1}, Value(50, (2, 3), np.float32)), CPU)


def test_fusion_asks_the_device_what_it_can_fuse():
    """A device without tanh in its math table, without float64 or without reductions
    gets those nodes unfused: fusion decisions need no code generator."""
    class NoTanh(CPUDevice):
        math = {k: v for k, v in CPU.math.items() if k != "tanh"}
        reductions = frozenset()
        dtypes = CPU.dtypes - {np.dtype(np.float64)}

    dev = NoTanh()
    b = Builder()
    x = b.input(np.ones((4, 3), np.float32))
    d = b.input(np.ones((4, 3), np.float64))
    assert fusible(Node(E.Tanh, [x], {}, Value(9, (4, 3), np.float32)), CPU)
    assert not fusible(Node(E.Tanh, [x], {}, Value(9, (4, 3), np.float32)), dev)
    assert not fusible(Node(E.Exp, [d], {}, Value(9, (4, 3), np.float64)), dev)
    g = b.graph(b(R.Sum, b(E.Exp, b(E.Mul, x, 2.0)), dim=(1,), keepdim=False, dtype=None))
    assert [n.op for n in fuse(g, CPU).nodes] == [FusedReduction]
    assert [n.op.name for n in fuse(g, dev, singleton_min=0).nodes] == ["fused", "sum"]
