"""The ``fold_scatters`` pass: the gradient pieces of ``split``/``chunk`` (one
``basic_scatter`` each, summed) become one ``cat`` plus ``0.0``, with eager's bits."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager
from compiler.ir import check_graph, run_graph
from compiler.passes.scatters import fold_scatters
from eager.ops.index import BasicScatter
from eager.ops.shape import Cat
from tests.graphs import trace

RNG = np.random.default_rng(0)


def _ops(graph, op):
    return sum(n.op is op for n in graph.nodes)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _grad_of_pieces(pieces):
    """``x``'s gradient through ``pieces(x)`` (a tuple of slices of ``x``), each piece's
    gradient holding -0.0, +0.0 and NaN somewhere."""
    def f(x):
        x.requires_grad_(True)
        parts = pieces(x)
        loss = sum(((p * -0.0 if i == 1 else p * p) + (p * np.nan if i == 0 else 0.0))
                   .sum() for i, p in enumerate(parts))
        return eager.autograd.grad(loss, x)
    return f


CASES = {
    "split last dim": (lambda x: x.split(2, dim=-1), (3, 4, 6)),
    "chunk dim 0": (lambda x: x.chunk(3, dim=0), (6, 5)),
    "uneven split dim 1": (lambda x: x.split([1, 3, 2], dim=1), (2, 6, 3)),
    "unbind": (lambda x: x.unbind(1), (4, 3, 2)),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_gradients_fold_into_one_cat_with_eagers_bits(case, dtype):
    pieces, shape = CASES[case]
    x = RNG.standard_normal(shape).astype(dtype)
    g, want = trace(_grad_of_pieces(pieces), x)
    assert _ops(g, BasicScatter) >= 2
    g2 = fold_scatters(g)
    check_graph(g2)
    folded = case != "unbind"   # (unbind's pieces are integer indexes: kept)
    assert _ops(g2, Cat) == folded
    (got,), (w,) = run_graph(g2, x), want
    assert got.dtype == w.dtype and got.shape == w.shape
    np.testing.assert_array_equal(_bits(got), _bits(w))   # (-0.0 and NaN included)


def test_pieces_that_do_not_tile_a_dimension_are_kept():
    """A gap, an overlap, pieces cut in two dimensions, or a piece also used elsewhere:
    no fold (the graph is returned as it is)."""
    x = RNG.standard_normal((4, 6)).astype(np.float32)

    def grads(pieces):
        def f(x):
            x.requires_grad_(True)
            return eager.autograd.grad(sum((p * p).sum() for p in pieces(x)), x)
        return f

    for pieces in (lambda x: (x[:, :2], x[:, 3:]),            # a gap
                   lambda x: (x[:, :4], x[:, 2:]),            # an overlap
                   lambda x: (x[:2, :3], x[2:, 3:]),          # two dimensions
                   lambda x: (x[:, ::2], x[:, 1::2])):        # steps
        g, want = trace(grads(pieces), x)
        assert fold_scatters(g) is g


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_compiled_split_step_equals_eager(backend):
    """``qkv.split`` inside a compiled step: the gradient is eager's, bit for bit as
    generated Python, and with the kernels built (whose sums accumulate in float64) within
    rounding; the trace holds no ``basic_scatter``."""
    eager.manual_seed(0)
    lin = eager.nn.Linear(4, 12)

    def step(x):
        q, k, v = lin(x).split(4, dim=-1)
        loss = ((q * k).sum(-1, keepdim=True) * v).square().mean()
        return eager.autograd.grad(loss, lin.weight)[0]

    compiled = compiler.compile(step, backend=backend)
    for i in range(4):
        x = eager.tensor(RNG.standard_normal((5, 3, 4)).astype(np.float32))
        got, want = compiled(x).numpy(), step(x).numpy()
        if backend == "python":
            np.testing.assert_array_equal(_bits(got), _bits(want))
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if i == 1:
            compiler.wait()
    assert compiled.stats()["hits"] >= 2
    graph = compiled.explain().traces[-1]["graph"]
    assert "basic_scatter(" not in graph   # (native code writes the cat as slices)
    assert "cat(" in graph or backend == "numba"
