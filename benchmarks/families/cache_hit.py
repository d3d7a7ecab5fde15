"""The overhead of calling a compiled function: a 1-op function on 4 floats."""

from __future__ import annotations

import numpy as np

from .. import peers as P
from ..harness import Family, Goal, Workload, with_stats


def cache_hit_workload(quick: bool) -> Workload:
    x_np = np.arange(4, dtype=np.float32)

    def one_op(x):
        return x + 1.0

    def numpy_():
        return lambda: one_op(x_np)

    def eager_():
        import eager
        x = eager.tensor(x_np)
        return lambda: one_op(x)

    def compiled_():
        import eager
        from compiler import compile
        x = eager.tensor(x_np)
        f = compile(one_op, backend="numba")
        return with_stats(lambda: f(x), f)

    def torch_():
        torch = P.torch()
        x = torch.from_numpy(x_np)
        return lambda: one_op(x)

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        x = torch.from_numpy(x_np)
        f = tc(one_op)
        return lambda: f(x)

    def jax_():
        jax, jnp = P.jax()
        x = jnp.asarray(x_np)
        f = jax.jit(one_op)
        return lambda: f(x).block_until_ready()

    return Workload(
        "cache_hit", "x + 1 on 4 float32 (a compiled function's cache hit)",
        [(P.NUMPY, numpy_), (P.EAGER, eager_), (P.COMPILED, compiled_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_), (P.JAX, jax_)],
        rtol=0, atol=0,
        notes={P.COMPILED: "cache hit: key lookup, guards, replay, result wrap"})


FAMILY = Family(
    "cache_hit", "call overhead",
    "`x + 1` on 4 floats: for compiled functions, the cost of a cache hit (looking up "
    "the trace, checking its guards, replaying it, wrapping the result).",
    lambda quick: [cache_hit_workload(quick)],
    goals=[Goal("cache-hit call of a compiled 1-op function on 4 elements", "<=", 3e-6,
                ("cache_hit", P.COMPILED))])
