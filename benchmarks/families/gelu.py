"""GELU on a large float32 vector, no grad: one fused elementwise kernel against ufuncs."""

from __future__ import annotations

import math

import numpy as np

from .. import peers as P
from ..harness import Family, Goal, Workload, with_stats

C0, C1 = 0.7978845608, 0.044715


def gelu_np(x):
    return 0.5 * x * (1.0 + np.tanh(C0 * (x + C1 * x * x * x)))


def gelu_expr(tanh):
    """The same expression for every tensor library (``x*x*x``: NumPy's float32 ``x**3``
    goes through powf and is ~15x slower than the whole GELU)."""
    def gelu(x):
        return 0.5 * x * (1.0 + tanh(C0 * (x + C1 * x * x * x)))
    return gelu


_fused_kernels = {}


def _numba_gelu():
    if "gelu" not in _fused_kernels:
        from numba import njit, prange

        from runtime.cpu import mathlib

        f32 = np.float32
        h, one, c0, c1 = f32(0.5), f32(1.0), f32(C0), f32(C1)

        @njit(parallel=True, cache=False)
        def gelu_par(x, out):
            for i in prange(x.size):
                v = x[i]
                out[i] = h * v * (one + mathlib.tanh(c0 * (v + c1 * v * v * v)))

        _fused_kernels["gelu"] = gelu_par
    return _fused_kernels["gelu"]


def _label(n: int) -> str:
    return f"{n // (1 << 20)}M" if n >= 1 << 20 else str(n)


def tanh_form(n: int, quick: bool) -> Workload:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n, dtype=np.float32) * np.float32(3.0)

    def numpy_():
        return lambda: gelu_np(x_np)

    def eager_():
        import eager
        x = eager.from_numpy(x_np)
        f = gelu_expr(eager.tanh)
        return lambda: f(x)

    def compiled_():
        import eager
        from compiler import compile
        x = eager.from_numpy(x_np)
        f = compile(gelu_expr(eager.tanh), backend="numba")
        return with_stats(lambda: f(x), f)

    def torch_():
        torch = P.torch()
        x = torch.from_numpy(x_np)
        f = gelu_expr(torch.tanh)
        return lambda: f(x)

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        x = torch.from_numpy(x_np)
        f = tc(gelu_expr(torch.tanh))
        return lambda: f(x)

    def jax_():
        jax, jnp = P.jax()
        x = jnp.asarray(x_np)
        f = jax.jit(gelu_expr(jnp.tanh))
        return lambda: f(x).block_until_ready()

    def copy_():
        out = np.empty_like(x_np)

        def run():
            np.copyto(out, x_np)
            # not a GELU: no result to check
        return run

    def numba_():
        k = _numba_gelu()
        out = np.empty_like(x_np)

        def run():
            k(x_np, out)
            return out
        return run

    label = _label(n)
    return Workload(
        f"gelu_{label.lower()}", f"GELU tanh form, {label} float32",
        [(P.NUMPY, numpy_), (P.EAGER, eager_), (P.COMPILED, compiled_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_), (P.JAX, jax_), (P.COPY, copy_),
         (P.NUMBA, numba_)],
        rtol=1e-4, atol=2e-5, headline=f"GELU (tanh form), {label} float32",
        notes={P.NUMPY: "ufunc expression with temporaries",
               P.COPY: "np.copyto into a reused buffer (read+write bandwidth)",
               P.NUMBA: "hand-fused prange loop, runtime.cpu.mathlib.tanh"})


_math_erf = np.frompyfunc(math.erf, 1, 1)


def exact_form(n: int, quick: bool) -> Workload:
    """``gelu(x, approximate='none')`` = ``x/2 * (1 + erf(x/sqrt 2))``: NumPy has no erf,
    so its peer calls ``math.erf`` per element (what our eager did before it had a
    vectorized erf)."""
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n, dtype=np.float32) * np.float32(3.0)
    inv_sqrt2 = np.float32(1 / math.sqrt(2))

    def numpy_():
        def run():
            e = np.asarray(_math_erf(x_np * inv_sqrt2), dtype=np.float32)
            return np.float32(0.5) * x_np * (np.float32(1) + e)
        return run

    def eager_():
        import eager
        from eager.nn import functional as F
        x = eager.from_numpy(x_np)
        return lambda: F.gelu(x)

    def compiled_():
        import eager
        from compiler import compile
        from eager.nn import functional as F
        x = eager.from_numpy(x_np)

        def gelu(x):
            return F.gelu(x)
        f = compile(gelu, backend="numba")
        return with_stats(lambda: f(x), f)

    def torch_():
        torch = P.torch()
        x = torch.from_numpy(x_np)
        return lambda: torch.nn.functional.gelu(x)

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        x = torch.from_numpy(x_np)
        f = tc(torch.nn.functional.gelu)
        return lambda: f(x)

    def jax_():
        jax, jnp = P.jax()
        x = jnp.asarray(x_np)
        f = jax.jit(lambda x: jax.nn.gelu(x, approximate=False))
        return lambda: f(x).block_until_ready()

    label = _label(n)
    return Workload(
        f"gelu_exact_{label.lower()}", f"GELU erf form, {label} float32",
        [(P.NUMPY, numpy_), (P.EAGER, eager_), (P.COMPILED, compiled_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_), (P.JAX, jax_)],
        rtol=1e-4, atol=2e-5,
        notes={P.NUMPY: "NumPy has no erf: np.frompyfunc(math.erf) per element",
               P.EAGER: "F.gelu(x): vectorized erf (runtime.cpu.erf)",
               P.COMPILED: "compile(a function calling F.gelu): fused kernel, the same erf "
                           "per element (runtime.cpu.mathlib.erf)"})


def workloads(quick: bool) -> list:
    return [tanh_form(1 << 20, quick), tanh_form(32 << 20, quick), exact_form(1 << 20, quick)]


FAMILY = Family(
    "gelu", "GELU, float32, no grad",
    "GELU of a float32 vector without autograd: the compiled function is one fused Numba "
    "kernel (parallel above 32k elements) against NumPy's ufunc-by-ufunc evaluation. "
    "References: a plain copy of the input (the memory-bandwidth limit) and a GELU "
    "fused by hand in Numba.",
    workloads,
    goals=[
        Goal("GELU 1M: NumPy / ours compiled", ">=", 4, ("gelu_1m", P.NUMPY),
             ("gelu_1m", P.COMPILED)),
        Goal("GELU 32M: NumPy / ours compiled", ">=", 10, ("gelu_32m", P.NUMPY),
             ("gelu_32m", P.COMPILED)),
        Goal("GELU 32M: ours compiled / plain copy of the input", "<=", 1.5,
             ("gelu_32m", P.COMPILED), ("gelu_32m", P.COPY)),
        Goal("GELU 1M: torch.compile / ours compiled", ">=", 2,
             ("gelu_1m", P.TORCH_COMPILE), ("gelu_1m", P.COMPILED)),
    ])
