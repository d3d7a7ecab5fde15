"""Fused kernels and graph rewrites change no bit against eager: signed zeros, ties and
NaNs come out as NumPy gives them.  Compared bitwise (NaN payloads aside); only ``pow``
with a general exponent is a transcendental, held to runtime.mathlib's ULP contract."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compiler
import eager as E
from compiler.codegen.numba_cpu import numba_program
from compiler.ir import run_graph
from tests.graphs import trace

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, np.nan, np.inf, -np.inf, 1e-40,
           -1e-40, 3e38, -3e38, 7.0, -7.0]


def _ops(x, y):
    z = E.zeros_like(x)
    return {
        "add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "floordiv": x // y,
        "mod": x % y, "maximum": E.maximum(x, y), "minimum": E.minimum(x, y),
        "maximum_zeros": E.maximum(x, z), "zeros_maximum": E.maximum(z, x),
        "minimum_zeros": E.minimum(x, z), "add_0": x + 0.0, "sub_0": x - 0.0,
        "mul_0": x * 0.0, "mul_neg0": x * -0.0, "sub_self": x - x, "relu": E.relu(x),
        "clamp_0_1": E.clamp(x, 0, 1), "clamp_min_neg0": E.clamp(x, min=-0.0),
        "clamp_max_0": E.clamp(x, max=0.0), "sign": E.sign(x), "abs": E.abs(x), "neg": -x,
        "square": x ** 2, "sqrt_pow": x ** 0.5, "recip_pow": x ** -1, "pow_0": x ** 0,
        "sqrt": E.sqrt(x), "rsqrt": E.rsqrt(x), "reciprocal": E.reciprocal(x),
        "floor": E.floor(x), "ceil": E.ceil(x), "trunc": E.trunc(x), "round": E.round(x),
        "where": E.where(x > y, x, y), "lt": x < y, "eq": x == y,
    }


def _bits(a):
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return a, np.zeros(a.shape, bool)
    nan = np.isnan(a)
    u = a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64).copy()
    u[nan] = 0
    return u, nan


def _differences(want, got):
    bw, nw = _bits(want)
    bg, ng = _bits(got)
    if bw.dtype != bg.dtype:
        return f"dtype {want.dtype} != {got.dtype}"
    bad = np.nonzero((bw != bg) | (nw != ng))[0]
    return [(want[i], got[i]) for i in bad[:4]] if len(bad) else None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_kernel_is_bitwise_eager_on_special_values(dtype):
    a = np.array(SPECIAL, dtype)
    x, y = (m.ravel().copy() for m in np.meshgrid(a, a))
    names = list(_ops(E.tensor(x), E.tensor(y)))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        g, eager_out = trace(lambda x, y: list(_ops(x, y).values()), x, y)
        interp = run_graph(g, x, y)
        kernel = numba_program(g, parallel_min=1 << 62)(x, y)
    bad = {}
    for name, want, i_got, k_got in zip(names, eager_out, interp, kernel):
        for tier, got in (("run_graph", i_got), ("kernel", k_got)):
            d = _differences(want, got)
            if d:
                bad[f"{name} ({tier})"] = d
    assert not bad, bad


@pytest.mark.regression("maximum(x, zeros) gave -0.0 fused, +0.0 eager")
def test_compiled_signed_zero_case_over_calls():
    def f(x):
        return E.maximum(x, E.zeros_like(x)), x * 0.0, x.sign(), x.clamp(-1, 1)

    cf = compiler.compile(f)
    x = E.tensor([-0.0, 0.0, -1.5, np.nan, 2.0])
    for i in range(5):
        got = cf(x)
        if i == 1:
            compiler.wait()
        for g, w in zip(got, f(x)):
            assert _differences(w._data, g._data) is None, (i, g, w)
    assert cf.stats()["hits"] >= 3
