"""The numba backend: fused kernels equal the unfused graph run by the interpreter.

Numba compiles cost 0.2-1 s each, so the tests share few, wide kernels: one graph holding
every supported elementwise op as outputs per dtype combination, a broadcasting graph,
a parallel one.  Floats are compared with rtol 1e-6 (arithmetic is bit-identical to
NumPy; runtime.cpu.mathlib functions differ by <= 2 ulp), integers and bools exactly.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compiler
import eager
import eager.nn.functional as F
from compiler import compile
from compiler.codegen.numba_cpu import numba_program
from compiler.ir import check_graph, run_graph
from compiler.passes.fusion import FusedElementwise, fuse
from runtime import cache, plan
from runtime.cpu import buffers, launch, loops
from tests.graphs import trace

E = eager


def close(got, want, what="", atol=None):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f":
        tiny = np.finfo(want.dtype).eps * 8
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-13,
                                   atol=tiny if atol is None else atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check(fn, *arrays, n_kernels=None, atol=None):
    """Trace ``fn``, compile with fused kernels, compare with ``run_graph`` of the trace."""
    with np.errstate(all="ignore"):
        g, _ = trace(fn, *arrays)
        want = run_graph(g, *arrays)
        prog = numba_program(g, parallel_min=1 << 62)
        got = prog(*arrays)
    if n_kernels is not None:
        assert len(prog.kernels) == n_kernels, prog.source
    for i, (a, b) in enumerate(zip(got, want)):
        close(a, b, f"output {i}: {g.outputs[i]} of\n{g}", atol)
    return prog


RNG = np.random.default_rng(0)


def arr(dt, shape, nonzero=False):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return RNG.random(shape) < 0.5
    if dt.kind in "iu":
        a = RNG.integers(-5 if dt.kind == "i" else 0, 6, shape).astype(dt)
    else:
        a = (RNG.standard_normal(shape) * 3).astype(dt)
        special = [0.0, -0.0, 2.5, np.nan, np.inf, -np.inf, 1e-40, -3e38]
        n = min(a.size // 2, len(special))
        a.reshape(-1)[:n] = special[:n]
    if nonzero:
        a[a == 0] = 1
    return a


def all_ops(x, y, m):
    """Every binary/unary elementwise op with broadcasting and weak scalars."""
    outs = [x + y, x * y, x / y, x // y, x % y, E.maximum(x, y), E.minimum(x, y),
            x + 1, 2 - x, x * 0.5, x / 3, x ** 2, x ** 3,
            x == y, x != y, x < y, x <= 0.5, x > 0, x >= y,
            E.logical_and(x, y), E.logical_or(m, x), E.logical_xor(m, y), E.logical_not(x),
            E.where(m, x, y), E.where(m, x, 0.0), E.sign(x), E.floor(x), E.ceil(x),
            E.round(x), E.trunc(x), E.isnan(x / y), E.isinf(x / y), E.isfinite(x / y),
            E.clamp(x, -0.5, 0.5), E.clamp(x, min=0), E.clamp(x, max=1),
            (x * y).to(E.int8) * 100, x.to(E.float64) - 1, x.to(E.bool)]
    if x.dtype != E.bool:  # (PyTorch refuses abs and negation of bool)
        outs += [-x, x - y, E.abs(x), E.abs(x) ** 0.5, E.abs(x) ** 1.7]
    if x.dtype.is_floating_point:
        outs += [(E.abs(x) + 1) ** -1, E.abs(x) ** y]
    return outs


@pytest.mark.parametrize("dx,dy", [(np.float32, np.float32), (np.float64, np.float32),
                                   (np.int64, np.int32), (np.bool_, np.float32)])
def test_every_op_and_promotion(dx, dy):
    x, y, m = arr(dx, (4, 5)), arr(dy, (5,), nonzero=True), RNG.random((4, 1)) < 0.5
    prog = check(all_ops, x, y, m)
    assert prog.kernels  # fused, not the NumPy fallback


def float_ops(x, y):
    return [E.exp(x), E.expm1(x), E.log(E.abs(x)), E.log1p(E.abs(x)), E.sin(x), E.cos(x),
            E.tanh(x), E.sigmoid(x), E.sqrt(E.abs(x)), E.rsqrt(E.abs(x) + 0.1),
            E.reciprocal(y), F.relu(x), F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x),
            F.softplus(x), F.softplus(x, beta=2.0, threshold=1.0)]


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64])
def test_math_functions(dt):
    x, y = arr(dt, (3, 4)), arr(dt, (3, 4), nonzero=True)
    prog = check(float_ops, x, y, n_kernels=1)
    assert "mathlib.tanh(" in prog.kernels[0][1] and "np.tanh" not in prog.kernels[0][1]


def test_narrow_integers_wrap_inside_the_kernel():
    x, y = arr(np.int8, (4, 4)) * 20, arr(np.int8, (4, 4)) * 20
    check(lambda a, b: [(a * b) > 0, (a + b) // 2, E.abs(a * b) < 50], x, y, n_kernels=1)


def test_broadcasting_zero_d_and_loop_plan():
    def f(x, y, z, s):
        a = x * y + z              # (2, 1, 4) * (3, 1) + (4,)  ->  (2, 3, 4)
        b = E.exp(a - s) * 2       # s is 0-d
        return [b, (a > 0) & (b < 3)]

    arrays = [arr(np.float32, (2, 1, 4)), arr(np.float32, (3, 1)), arr(np.float32, (4,)),
              np.array(0.5, np.float32)]
    prog = check(f, *arrays, n_kernels=1)
    src = prog.kernels[0][1]
    assert "for i2 in range(n2):" in src               # three loops, nothing merged
    assert "a3 = x3.reshape((1,))[0]" in src            # the 0-d input is loaded once
    p = plan.plan((2, 3, 4), [(2, 1, 4), (3, 1), (4,), ()])
    assert p.groups == [[0], [1], [2]]
    assert p.patterns == [[True, False, True], [False, True, False], [False, False, True],
                          [False, False, False]]
    # merged dimensions where every input agrees; size-1 output dims dropped
    p = plan.plan((5, 1, 6, 7), [(5, 1, 6, 7), (6, 7), ()])
    assert p.groups == [[0], [2, 3]] and p.patterns == [[True, True], [False, True], [False, False]]


def test_transposed_and_expanded_inputs():
    def f(x, y, b):
        return E.tanh(x.T * 2 + y) + b.expand(3, 5)

    prog = check(f, arr(np.float32, (5, 3)), arr(np.float32, (3, 5)), arr(np.float32, (1, 5)),
                 n_kernels=1)
    assert "expand" not in prog.source.split("graph=")[0]   # read broadcast, not copied


def test_kernel_source_is_the_cache_key_and_new_shapes_reuse_it():
    def f(x):
        return E.tanh(x * 1.5 + 0.25) * x

    p1 = check(f, arr(np.float32, (4, 3)), n_kernels=1)
    K = p1.fn.__globals__["K0"]
    n_sigs = len(K.signatures)
    before = cache.cache_stats()
    p2 = check(f, arr(np.float32, (7, 5)), n_kernels=1)       # same pattern, new shape
    after = cache.cache_stats()
    assert p2.kernels[0][1] == p1.kernels[0][1]
    assert p2.fn.__globals__["K0"] is K                        # the same dispatcher...
    assert len(K.signatures) == n_sigs                         # ...and no new compile
    assert after["builds"] == before["builds"] and after["disk_loads"] == before["disk_loads"]
    assert after["memory_hits"] > before["memory_hits"]
    # no IR ids or source lines in the kernel text
    assert "%" not in p1.kernels[0][1] and "test_codegen" not in p1.kernels[0][1]


def test_parallel_kernel_and_output_buffer_reuse():
    n = loops.PARALLEL_MIN + 1000

    def f(x):
        return E.sigmoid(x * 2 - 1)

    x = np.linspace(-3, 3, n, dtype=np.float32)
    g, _ = trace(f, x)
    prog = numba_program(g)
    assert prog.kernels[0][0].endswith("kernel + kernel_par") and "prange" in prog.kernels[0][1]
    assert isinstance(prog.fn.__globals__["K0"], launch.Adaptive)
    want = run_graph(g, x)[0]
    y1 = prog(x)[0]
    close(y1, want)
    addr = y1.ctypes.data
    y2 = prog(x)[0]                       # y1 is alive: a fresh buffer
    assert y2.ctypes.data != addr
    close(y1, want)
    view = y2[10:]                        # a view keeps y2's memory busy
    del y1, y2
    y3 = prog(x)[0]
    assert y3.ctypes.data != view.base.ctypes.data
    close(view, want[10:])
    close(y3, want)
    addr3 = y3.ctypes.data
    del view, y3
    y4 = prog(x)[0]                       # nobody holds the last result: reused
    assert y4.ctypes.data == addr3
    close(y4, want)


def test_reductions_with_an_elementwise_prologue():
    def f(x, y, i):
        return [(E.tanh(x * 2) * y).sum(dim=2),                  # broadcast y, float32
                (x * y).mean(dim=(1, 2), keepdim=True),
                E.exp(x).amax(dim=2),
                (x - y).amin(dim=(0, 1, 2)),
                (i * 3 + 1).sum(dim=(1, 2)),                     # int32 -> int64, exact
                (i > 0).sum(dim=2),                              # bool -> int64
                (i - 2).amax(dim=2, keepdim=True),
                (x.to(E.float64) * 0.1).sum(dim=2)]

    x, y = arr(np.float32, (4, 5, 6)), arr(np.float32, (5, 1))
    x[0, 0, 0] = np.nan                                          # amax/amin propagate nan
    prog = check(f, x, y, arr(np.int32, (4, 5, 6)), n_kernels=8, atol=1e-5)
    assert all("acc" in src for _, src in prog.kernels)
    assert "radd(acc, np.float64(" in prog.kernels[0][1]      # float64 accumulation


def test_adaptive_launch_follows_the_faster_variant(monkeypatch):
    calls = []
    cost = {"s": 2.0, "p": 1.0}
    clock = [0.0]

    def variant(name):
        def run(*args):
            calls.append(name)
            clock[0] += cost[name]
        return run

    monkeypatch.setattr(launch.time, "perf_counter", lambda: clock[0])
    a = launch.Adaptive(variant("s"), variant("p"))
    for _ in range(200):
        a()
    assert calls[:2] == ["p", "s"] and a.variant == "parallel"
    assert calls.count("s") < 12                 # retries back off exponentially
    cost["p"] = 50.0                             # the parallel one becomes slow (busy cores)
    for _ in range(3000):
        a()
    assert a.variant == "serial"
    recent = calls[-1000:]
    assert recent.count("p") <= 3
    # a slow first call (threads starting) does not count against the parallel variant
    calls.clear()
    cost["p"] = 1.0
    first = {"p": True}

    def par(*args):
        calls.append("p")
        clock[0] += 1000.0 if first.pop("p", False) else cost["p"]

    b = launch.Adaptive(variant("s"), par)
    for _ in range(10):
        b()
    assert b.variant == "parallel" and calls.count("s") <= 3


def test_guards_and_random_ops_in_a_compiled_function():
    @compile(backend="numba")
    def f(x):
        a = E.exp(x) * 0.5 + 1
        if a.sum() > 3:
            return E.tanh(a) * E.rand(*x.shape)
        return a - 1

    outs = []
    for v in ([1.0, 2.0, 3.0], [-50.0, -50.0, -50.0], [1.0, 2.0, 3.0], [-50.0, -50.0, -50.0]):
        eager.manual_seed(1)
        outs.append(f(eager.tensor(v))._data)
    eager.manual_seed(1)
    want = (np.tanh(np.exp(np.float32([1, 2, 3])) * np.float32(0.5) + np.float32(1))
            * eager.rand(3)._data)
    close(outs[2], want)
    close(outs[3], outs[1])
    s = f.stats()
    assert s["hits"] == 2 and s["traces"] == 2, s
    assert len(f.explain().kernels) >= 2


def test_compile_gelu_end_to_end_with_backward():
    def gelu(x):
        return 0.5 * x * (1 + E.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    cf = compile(gelu, backend="numba")
    xa = np.linspace(-4, 4, 33, dtype=np.float32)
    for _ in range(3):
        x = eager.tensor(xa, requires_grad=True)
        y = cf(x)
        y.sum().backward()
    xe = eager.tensor(xa, requires_grad=True)
    ye = gelu(xe)
    ye.sum().backward()
    # 1 + tanh(u) cancels for negative x: compare with an absolute floor too
    close(y._data, ye._data, atol=1e-6)
    close(x.grad._data, xe.grad._data, atol=1e-5)
    assert cf.stats()["hits"] == 2
    text = str(cf.explain().full())
    assert "fused_kernel" in text and "mathlib.tanh" in text


def test_kernel_generation_errors_raise_and_the_front_end_falls_back(monkeypatch):
    def broken(*a, **k):
        return "this is not python ((("

    monkeypatch.setattr(loops, "module_source", broken)
    g, _ = trace(lambda x: E.exp(x) + 1, arr(np.float32, (3,)))
    with pytest.raises(SyntaxError):
        numba_program(g)
    # through compile(): kernels are built in the background; a failure there leaves the
    # trace running as generated Python (tier 1), with a warning, and results stay right
    cf = compile(lambda x: E.exp(x) * 2 + 1, backend="numba")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = cf(eager.tensor([1.0, 2.0]))
        compiler.wait()
        y2 = cf(eager.tensor([1.0, 2.0]))
    assert any("building fused kernels failed" in str(m.message) for m in w)
    close(y2._data, y._data)
    assert cf.stats()["hits"] == 1
    assert cf.explain().kernels == []


def test_unfused_graphs_and_fused_graph_structure():
    # nothing to fuse: the plain program, no kernels
    g, _ = trace(lambda x: x.sum(dim=0), arr(np.float32, (3, 2)))
    prog = numba_program(g)
    assert prog.kernels == []
    # multi-output group: tuple + projections, contiguous outputs passed without a copy
    g, _ = trace(lambda x: [E.exp(x) * 2, (E.exp(x) * 2).sum(dim=1)], arr(np.float32, (3, 2)))
    fg = fuse(g, singleton_min=0)
    check_graph(fg)
    assert sum(n.op is FusedElementwise for n in fg.nodes) == 1
    assert buffers.REUSE_MIN_BYTES >= 4096
