"""The ``expand`` pass: ``scaled_dot_product_attention`` and ``layer_norm`` written as
the ops their forwards run (CSE shares attention's with the backward's recomputation;
fusion makes kernels of layer norm's), with eager's values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compiler
import eager
import eager.nn.functional as F
from compiler.ir import check_graph, run_graph
from compiler.passes import optimize
from compiler.passes.expand import expand
from eager.ops.attention import ScaledDotProductAttention
from eager.ops.norm import LayerNorm
from eager.ops.reduce import Mean, Softmax
from tests.graphs import trace

RNG = np.random.default_rng(0)
SHAPES = {"3-D": ((2, 5, 4), (2, 7, 4), (2, 7, 3)),
          "4-D": ((2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 6)),
          "5-D": ((2, 2, 3, 5, 4), (2, 2, 3, 7, 4), (2, 2, 3, 7, 2))}


def _arrays(shapes, dtype=np.float32):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


def _ops(graph, op):
    return sum(n.op is op for n in graph.nodes)


def _expanded_bitwise(f, arrays, op):
    """``f`` traced holds one ``op``; expanded, none, and the graph gives ``f``'s results
    bit for bit (dtypes and shapes too). Returns the expanded graph."""
    g, want = trace(f, *arrays)
    assert _ops(g, op) == 1
    g2 = expand(g)
    check_graph(g2)
    assert _ops(g2, op) == 0
    for got, w in zip(run_graph(g2, *arrays), want):
        assert got.dtype == w.dtype and got.shape == w.shape
        np.testing.assert_array_equal(got, w)
    return g2


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shapes", list(SHAPES), ids=list(SHAPES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expanded_attention_gives_the_ops_values_bitwise(shapes, causal, dtype):
    q, k, v = _arrays(SHAPES[shapes], dtype)

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.37)

    g2 = _expanded_bitwise(f, (q, k, v), ScaledDotProductAttention)
    assert _ops(g2, Softmax) == 1


def test_the_backwards_recomputation_is_merged_with_the_forward():
    """Traced with its gradients, attention's forward and backward hold one softmax after
    optimization (two before expansion: the forward's, inside the composite, and the
    backward's recomputation), and the optimized graph computes the same bits."""
    q, k, v = _arrays(SHAPES["4-D"])

    def f(q, k, v):
        for t in (q, k, v):
            t.requires_grad_(True)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return (out,) + eager.autograd.grad((out * out).sum(), (q, k, v))

    g, want = trace(f, q, k, v)
    assert _ops(g, Softmax) == 1 and _ops(g, ScaledDotProductAttention) == 1
    g2 = optimize(g)
    check_graph(g2)
    assert _ops(g2, Softmax) == 1 and _ops(g2, ScaledDotProductAttention) == 0
    for got, w in zip(run_graph(g2, q, k, v), want):
        np.testing.assert_array_equal(got, w)


def _train_side_by_side(make, shape) -> str:
    """Five steps of ``make()``'s step, compiled (its kernels built after the second) and
    eager, from the same state: equal losses and parameters; the last trace's graph."""
    (m_e, step_e), (m_c, step_c) = make(), make()
    compiled = compiler.compile(step_c)
    xs = [eager.tensor(RNG.standard_normal(shape).astype(np.float32)) for _ in range(5)]
    for i, x in enumerate(xs):
        np.testing.assert_allclose(float(compiled(x)), float(step_e(x)), rtol=1e-6)
        if i == 1:
            compiler.wait()
    for (name, p), q in zip(m_e.named_parameters(), m_c.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    assert compiled.stats()["hits"] >= 3
    return compiled.explain().traces[-1]["graph"]


def test_a_compiled_attention_training_step_equals_eager():
    """Multi-head self-attention trained compiled, with its kernels built, against eager."""
    def make():
        eager.manual_seed(0)
        mha = eager.nn.MultiheadAttention(8, 2, batch_first=True)
        # (SGD: the key bias's gradient is 0 up to rounding, which Adam would scale to lr)
        opt = eager.optim.SGD(mha.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            out, _ = mha(x, x, x, need_weights=False,
                         attn_mask=eager.nn.Transformer.generate_square_subsequent_mask(6),
                         is_causal=True)
            loss = (out ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return mha, step

    graph = _train_side_by_side(make, (3, 6, 8))
    assert "scaled_dot_product_attention(" not in graph and graph.count("softmax(") <= 1


@pytest.mark.parametrize("affine", ["weight and bias", "weight", "none"])
@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expanded_layer_norm_gives_the_ops_values_bitwise(affine, dims, dtype):
    x = RNG.standard_normal((3, 5, 4, 6)).astype(dtype) * 3 + 1
    shape = x.shape[-dims:]
    w = RNG.standard_normal(shape).astype(dtype)
    b = RNG.standard_normal(shape).astype(dtype)

    def f(x, w, b):
        return F.layer_norm(x, shape, w if affine != "none" else None,
                            b if affine == "weight and bias" else None, eps=1e-3)

    assert _ops(_expanded_bitwise(f, (x, w, b), LayerNorm), Mean) == 2


def test_a_compiled_layer_norm_step_equals_eager():
    """LayerNorm trained compiled (its forward as kernels once built) against eager."""
    def make():
        eager.manual_seed(0)
        model = eager.nn.Sequential(eager.nn.Linear(6, 8), eager.nn.LayerNorm(8),
                                    eager.nn.Tanh(), eager.nn.LayerNorm(8, bias=False))
        opt = eager.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return model, step

    graph = _train_side_by_side(make, (40, 7, 6))
    assert "layer_norm(" not in graph


def test_softmax_for_kernels_only_over_the_last_dimension_of_large_inputs():
    from compiler.passes.expand import for_kernels
    from eager.ops.reduce import Amax, Sum
    x = RNG.standard_normal((4, 6, 17)).astype(np.float32)

    def f(x):
        return F.softmax(x, -1), F.softmax(x, 1), F.softmax(x[0], -1)

    g, want = trace(f, x)
    g2 = for_kernels(g, 200)   # (x[0] has 102 elements)
    check_graph(g2)
    assert _ops(g2, Softmax) == 2 and _ops(g2, Amax) == 1 and _ops(g2, Sum) == 1
    for got, w in zip(run_graph(g2, x), want):
        np.testing.assert_allclose(got, w, rtol=1e-6)
    assert for_kernels(g, x.size + 1) is g


def test_compiled_softmax_kernels_equal_eager_with_nonfinite_rows():
    """Rows whose maximum is -inf (every key masked), +inf or NaN give eager's NaNs, and
    no warning, once the softmax runs as kernels."""
    def f(x):
        return F.softmax(x, -1), F.softmax(x * 2, dim=3).sum()

    xs = [eager.tensor(RNG.standard_normal((8, 4, 9, 17)).astype(np.float32))
          for _ in range(3)]
    x = xs[0].clone()
    x[0, 0, 0, :] = float("-inf")
    x[0, 0, 1, 3] = float("inf")
    x[0, 0, 2, 5] = float("nan")
    x[1, 2, 3, :4] = float("-inf")
    xs.append(x)
    cf = compiler.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for i, x in enumerate(xs):
            for got, w in zip(cf(x), f(x)):
                np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)
            if i == 1:
                compiler.wait()
    assert cf.stats()["hits"] == 3
    assert "then amax over dimensions (3,)" in cf.explain().full()
