"""A traced backward of the recurrent scan is one ``rnn_scan_grad`` node (eager/ops/recurrent.py):
its gradients are eager's bit for bit, and the trace does not grow with the sequence."""

from __future__ import annotations

import collections
import sys

import numpy as np
import pytest

import compiler
import compiler.check
import eager
from compiler.codegen import numba_cpu
from compiler.passes.fusion import fuse
from eager import nn
from eager.nn.utils.rnn import pack_padded_sequence
from runtime.cpu import DEVICE as CPU

CASES = {
    "rnn_tanh": lambda: nn.RNN(3, 4, nonlinearity="tanh"),
    "rnn_relu_bidirectional": lambda: nn.RNN(3, 4, nonlinearity="relu", bidirectional=True),
    "lstm_two_layers": lambda: nn.LSTM(3, 4, num_layers=2),
    "lstm_proj_bidirectional": lambda: nn.LSTM(3, 5, proj_size=2, bidirectional=True),
    "gru_bidirectional": lambda: nn.GRU(3, 4, bidirectional=True),
}


def _model(case, frozen):
    eager.manual_seed(0)
    m = CASES[case]()
    for name, p in m.named_parameters():
        if name in frozen:
            p.requires_grad_(False)
    return m


def _step(model, packed):
    def step(x, h0, lengths):
        seq = pack_padded_sequence(x, lengths, enforce_sorted=False) if packed else x
        state = h0
        if isinstance(model, nn.LSTM):
            state = (h0, eager.zeros(h0.shape[0], h0.shape[1], model.hidden_size,
                                     dtype=h0.dtype))
        out, h = model(seq, state)
        out = out.data if packed else out
        h = h[0] if isinstance(h, tuple) else h
        return (out * out).sum() + (h * 3).sum()
    return step


def _inputs(model, T, lengths, seed):
    rng = np.random.default_rng(seed)
    d = 2 if model.bidirectional else 1
    P = model.proj_size if getattr(model, "proj_size", 0) else model.hidden_size
    x = eager.tensor(rng.standard_normal((T, len(lengths), 3)).astype(np.float32),
                     requires_grad=True)
    h0 = eager.tensor(rng.standard_normal((d * model.num_layers, len(lengths), P))
                      .astype(np.float32), requires_grad=True)
    return x, h0, lengths


def _grads(model, step, args):
    x, h0, lengths = args
    for t in (x, h0, *model.parameters()):
        t.grad = None
    loss = step(x, h0, lengths)
    loss.backward()
    return [float(loss)] + [t.grad.numpy().copy() for t in (x, h0, *model.parameters())
                            if t.grad is not None]


def _backward_ops(compiled):
    """Op-name counts of each trace's backward graphs."""
    out = []
    for _, _, path, _ in compiled._records:
        counts = collections.Counter()
        for bw in path.backwards:
            if getattr(bw, "graph", None) is not None:
                counts.update(n.op.name for n in bw.graph.nodes)
        out.append(counts)
    return out


@pytest.mark.parametrize("packed", [False, True], ids=["padded", "packed"])
@pytest.mark.parametrize("frozen", [(), ("weight_hh_l0", "bias_ih_l0")],
                         ids=["all", "frozen"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_rnn_gradients_are_eager_bits(case, frozen, packed):
    model = _model(case, frozen)
    step = _step(model, packed)
    compiled = compiler.compile(step, backend="python")
    for seed, lengths in enumerate(([5, 2, 4], [5, 2, 4], [3, 3, 1])):
        args = _inputs(model, max(lengths), lengths, seed)
        want = _grads(model, step, args)
        got = _grads(model, compiled, args)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert compiled.stats()["hits"] >= 1
    scans = sum(1 for n in compiled._records[0][2].graph.nodes if n.op.name == "rnn_scan")
    assert scans >= 1
    for counts in _backward_ops(compiled):
        assert counts["rnn_scan_grad"] == scans, counts


def test_traced_backward_does_not_grow_with_the_sequence():
    """The walk over time steps is inside one node: traces of 4 and of 16 steps have
    backward graphs of the same size."""
    model = _model("lstm_two_layers", ())
    step = _step(model, False)
    compiled = compiler.compile(step, backend="python")
    for T in (4, 16):
        _grads(model, compiled, _inputs(model, T, [T, T], T))
    short, long = _backward_ops(compiled)
    assert sum(short.values()) == sum(long.values()), (short, long)


def _scan_kernels(compiled):
    """(module, source) of the native scan kernels (compiler/codegen/scan_cpu.py)."""
    return [(sys.modules[name.split(".")[0]], src) for name, src in compiled.explain().kernels
            if "the recurrent scan" in src]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_native_scan_after_the_kernels_are_built(case, dtype):
    """With the Numba backend, after ``compiler.wait()``: the scan and its gradients run in
    native code (runtime/cpu/scan.py; eager's NumPy op where a projection is involved)
    and equal eager's within the few-ulp bound of mathlib's tanh and sigmoid (the same
    bits where there are none: the ReLU RNN in float32; in float64 NumPy's product of a
    one-row step calls another BLAS routine), with no compile at a replay."""
    model = _model(case, ())
    if dtype == "float64":
        model = model.double()
    step = _step(model, True)
    compiled = compiler.compile(step)
    args = _inputs(model, 6, [6, 3, 5], 0)
    if dtype == "float64":
        args = (args[0].detach().double().requires_grad_(),
                args[1].detach().double().requires_grad_(), args[2])
    _grads(model, compiled, args)
    compiler.wait()
    modules = _scan_kernels(compiled)
    assert bool(modules) == ("proj" not in case)
    signatures = [len(m.kernel.signatures) for m, _ in modules]
    for _ in range(2):
        want = _grads(model, step, args)
        got = _grads(model, compiled, args)
        for g, w in zip(got, want):
            if case == "rnn_relu_bidirectional" and dtype == "float32":
                np.testing.assert_array_equal(g, w)
            else:
                tol = 1e-5 if dtype == "float32" else 1e-12
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    assert compiled.stats()["hits"] >= 2
    assert [len(m.kernel.signatures) for m, _ in modules] == signatures   # none compiled
    inexact = compiler.check.inexact_ops([(m.__name__, src) for m, src in modules])
    assert ("mathlib.tanh" in inexact) == case.startswith(("lstm_two", "gru", "rnn_tanh"))


def test_second_derivative_through_the_scan_still_differentiates_the_walk():
    """``create_graph=True`` keeps the walk as differentiable ops (the packed op has no
    derivative): the second derivative matches finite differences of the first."""
    eager.manual_seed(0)
    lstm = nn.LSTM(2, 3).double()
    rng = np.random.default_rng(0)
    x = eager.tensor(rng.standard_normal((4, 2, 2)), requires_grad=True)

    def first(x):
        (g,) = eager.autograd.grad((lstm(x)[0] ** 2).sum(), x, create_graph=True)
        return g

    g = first(x)
    v = eager.tensor(rng.standard_normal(x.shape))
    (hv,) = eager.autograd.grad((g * v).sum(), x)
    eps = 1e-6
    xp = eager.tensor(x.detach().numpy() + eps * v.numpy(), requires_grad=True)
    xm = eager.tensor(x.detach().numpy() - eps * v.numpy(), requires_grad=True)
    fd = (first(xp).detach().numpy() - first(xm).detach().numpy()) / (2 * eps)
    np.testing.assert_allclose(hv.numpy(), fd, rtol=1e-5, atol=1e-7)


@pytest.mark.regression("lowering a scan replaced the node in the trace's own graph when "
                        "nothing else fused (fuse returns its input then)")
def test_lowering_the_scan_leaves_the_traced_graph_alone():
    """The kernel program of a graph that only projects and scans: the recorded graph (read
    again by explain, the warm-start note's key and later builds) keeps its nodes."""
    eager.manual_seed(0)
    gru = nn.GRU(3, 4)

    def f(x):
        with eager.no_grad():
            return gru(x)[0]
    compiled = compiler.compile(f, backend="python")
    x = eager.randn(5, 2, 3)
    compiled(x)
    compiled(x)
    graph = compiled._records[0][2].graph
    assert fuse(graph, CPU) is graph   # the case: nothing to fuse
    before = list(graph.nodes)
    program = numba_cpu.numba_program(graph)
    assert [n is m for n, m in zip(graph.nodes, before)] == [True] * len(before)
    assert any("the recurrent scan" in src for _, src in program.kernels)
