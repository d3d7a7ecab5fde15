"""The generated Python program (the first tier, ``backend="python"``): PyTorch's
promotion decided from the static dtypes, and 0-d float arithmetic run as Python
operators on NumPy scalars — eager's values, dtypes and special values, bit for bit."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import eager as torch
from compiler import compile


def _same(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g, w = got.detach().numpy(), want.detach().numpy()
    assert g.shape == w.shape
    assert np.array_equal(g, w, equal_nan=True), (g, w)
    assert np.array_equal(np.signbit(g), np.signbit(w))


def _run_both(f, *calls):
    cf = compile(f, backend="python")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # x/0, sqrt(-1) in the programs
        for args in calls:
            want = f(*args)
            got = cf(*args)
            for g, w in zip(got, want):
                _same(g, w)
    return cf


def bias_corrections(step, v):
    """An optimizer's 0-d maths (Adam's bias corrections) and a tensor it scales."""
    s = step + 1
    t = s.to(torch.float64)
    bc1 = 1 - 0.9 ** t
    bc2 = (1 - 0.999 ** t).sqrt()
    lr = -(0.01 / bc1)
    scale = bc2 * lr
    return s, bc1, bc2, lr, scale, v / scale, (1e-8 / lr) + v


def test_zero_d_chains_equal_eager_bit_for_bit():
    v = torch.linspace(-1, 1, 7)
    calls = [(torch.tensor(np.float32(k)), v) for k in (0.0, 1.0, 2.0, 10.0, 123.0)]
    cf = _run_both(bias_corrections, *calls)
    assert cf.stats()["hits"] == len(calls) - 1
    src = str(cf.explain().full())
    assert " ** " in src and "__promote" not in src   # the scalar path ran, no promote


def special(a, b):
    """0-d float64 and float32 arithmetic meeting zeros, infinities and nan."""
    q = a / b
    r = (a - b).sqrt()
    p = a ** b
    n = -(a * b)
    m = (a.to(torch.float32) * 3.0 + 1) / b.to(torch.float32)
    return q, r, p, n, m, q * 0.0


@pytest.mark.parametrize("a,b", [(1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (-0.0, 2.0),
                                 (1e300, 1e10), (2.0, -1074.5), (np.inf, np.inf),
                                 (np.nan, 1.0), (-8.0, 1 / 3)])
def test_zero_d_special_values_equal_eager(a, b):
    ta, tb = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
    _run_both(special, (ta, tb), (ta, tb))


def mixed(i, f32, f64_0d, h):
    """Promotion across categories and 0-d tensors: casts decided from static dtypes."""
    return (i + f64_0d, f32 * f64_0d, i * 2.5, f32 + i, h + f64_0d, i / 2,
            (i > 1) * f32, f64_0d + True)


def test_promotion_decided_statically_equals_eager():
    args = (torch.tensor([1, 2, 3]), torch.tensor([0.5, -1.5, 2.0]),
            torch.tensor(0.1, dtype=torch.float64), torch.tensor([1.5, 2.5], dtype=torch.float16))
    _run_both(mixed, args, args)


def mlp_pieces(x, w1, b1, w2, g):
    """A linear layer with and without bias, matmul, relu, a transpose and the sums that
    reduce broadcast gradients: written as NumPy calls, without the ops' forwards."""
    h = torch.nn.functional.relu(torch.nn.functional.linear(x, w1, b1))
    y = torch.nn.functional.linear(h, w2)
    gw = g.t() @ h
    gb = (g * 1.0).sum(dim=0)
    return y, gw, gb, h.t().contiguous()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_inline_layers_equal_eager_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    calls = []
    for k in range(4):
        x, w1, b1, w2, g = (torch.tensor(rng.standard_normal(s)).to(dtype)
                            for s in ((5, 3), (4, 3), (4,), (2, 4), (5, 2)))
        calls.append((x, w1, b1, w2, g))
    cf = _run_both(mlp_pieces, *calls)
    assert cf.stats()["hits"] == len(calls) - 1
    src = str(cf.explain().full())
    assert "__matmul(" in src and "__maximum(" in src and ".transpose(" in src


def test_inline_relu_of_a_zero_d_value_is_an_array():
    """np.maximum of a 0-d array is a NumPy scalar: the program makes it an array as the
    forward's dispatch does (found by a random program)."""
    def f(x):
        return torch.relu(x), torch.relu(-x)

    cf = _run_both(f, *[(torch.tensor(v),) for v in (1.5, -2.0, 0.0)])
    x = torch.tensor(3.0, requires_grad=True)
    a, b = cf(x)
    assert type(a._data) is np.ndarray and type(b._data) is np.ndarray
    (a * 2 + b).backward()
    assert x.grad.item() == 2.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_inline_two_norm_equals_eager_bit_for_bit_without_warnings(dtype):
    """A whole tensor's 2-norm (clip_grad_norm_'s per gradient) is three NumPy calls in the
    program: eager's bits, keepdim's shape, and no warning where eager gives none (an
    overflowing square, a NaN)."""
    def f(a, b, c):
        return (torch.linalg.vector_norm(a), torch.linalg.vector_norm(b, keepdim=True),
                c.norm(), torch.linalg.vector_norm(a.t()), torch.linalg.vector_norm(b, 3.0))

    rng = np.random.default_rng(1)
    calls = []
    for k in range(4):
        a, b, c = (torch.tensor(rng.standard_normal(s) * 10.0 ** k).to(dtype)
                   for s in ((7, 5), (2, 3, 4), (9,)))
        calls.append((a, b, c))
    big = 1e200 if dtype == torch.float64 else 1e30
    calls.append((calls[0][0] * big, calls[0][1].clone().fill_(float("nan")), calls[0][2]))
    cf = compile(f, backend="python")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in calls:
            for g, w in zip(cf(*args), f(*args)):
                _same(g, w)
    assert cf.stats()["hits"] == len(calls) - 1
    assert str(cf.explain().full()).count("__add_reduce(") == 4


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_inline_batched_products_equal_eager_bit_for_bit(dtype):
    """Stacks of matrices (attention's products), a stack times a matrix (folded into one
    product, as the forward does), a matrix times a stack and an N-D linear layer are
    NumPy calls in the program, with eager's bits."""
    import eager.nn.functional as F

    def f(q, k, m, w, b):
        s = q @ k.transpose(-2, -1)
        return s, q @ m, m.t() @ k.transpose(-2, -1), F.linear(q, w, b), F.linear(q, w), \
            q[0] @ k[0].transpose(-2, -1)

    rng = np.random.default_rng(2)
    calls = [tuple(torch.tensor(rng.standard_normal(s)).to(dtype)
                   for s in ((2, 3, 5, 4), (2, 3, 6, 4), (4, 7), (8, 4), (8,)))
             for _ in range(3)]
    cf = _run_both(f, *calls)
    assert cf.stats()["hits"] == len(calls) - 1
    src = str(cf.explain().full())
    assert not re.search(r"op\d+_(matmul|linear)\(", src) and src.count("__matmul(") >= 6
