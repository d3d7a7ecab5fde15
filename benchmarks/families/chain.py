"""A chain of small ops, forward and backward: where per-op overhead is everything."""

from __future__ import annotations

import numpy as np

from .. import peers as P
from ..harness import Family, Goal, Workload, with_stats


def chain_workload(quick: bool, n: int = 64, depth: int = 5) -> Workload:
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal(n, dtype=np.float32)

    def numpy_():
        f32 = np.float32
        a, b = f32(1.01), f32(0.1)

        def run():
            h = x_np
            ts = []
            for _ in range(depth):
                h = np.tanh(h * a + b)
                ts.append(h)
            g = np.ones_like(x_np)
            for t in reversed(ts):
                g = g * (1 - t * t) * a
            return g
        return run

    def chain(tanh):
        def f(x):
            for _ in range(depth):
                x = tanh(x * 1.01 + 0.1)
            return x
        return f

    def _step(lib):
        f = chain(lib.tanh)

        def step(x):
            x.grad = None
            loss = f(x).sum()
            loss.backward()
            return x.grad
        return step

    def eager_():
        import eager
        x = eager.tensor(x_np, requires_grad=True)
        step = _step(eager)
        return lambda: step(x)

    def compiled_():
        import eager
        from compiler import compile
        x = eager.tensor(x_np, requires_grad=True)
        step = compile(_step(eager), backend="numba")
        return with_stats(lambda: step(x), step)

    def compiled_fwd_():
        import eager
        from compiler import compile
        x = eager.tensor(x_np, requires_grad=True)
        f = compile(chain(eager.tanh), backend="numba")

        def run():
            x.grad = None
            f(x).sum().backward()
            return x.grad
        return with_stats(run, f)

    def torch_():
        torch = P.torch()
        x = torch.tensor(x_np, requires_grad=True)
        step = _step(torch)
        return lambda: step(x)

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        x = torch.tensor(x_np, requires_grad=True)
        f = tc(chain(torch.tanh))

        def run():
            x.grad = None
            f(x).sum().backward()
            return x.grad
        return run

    def jax_():
        jax, jnp = P.jax()
        x = jnp.asarray(x_np)
        f = chain(jnp.tanh)
        vg = jax.jit(jax.value_and_grad(lambda x: f(x).sum()))

        def run():
            _, g = vg(x)
            return g.block_until_ready()
        return run

    return Workload(
        "chain", f"{depth}x tanh(x*1.01+0.1) on {n} float32, forward + backward",
        [(P.NUMPY, numpy_), (P.EAGER, eager_), (P.COMPILED, compiled_),
         (P.COMPILED_FWD, compiled_fwd_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_), (P.JAX, jax_)],
        rtol=1e-4, atol=1e-6, headline=f"small graph: {depth}x tanh on {n} floats, fwd+bwd",
        notes={P.NUMPY: "hand-written forward and backward",
               P.EAGER: "x.grad = None; f(x).sum().backward()",
               P.COMPILED: "the whole step (forward + backward into .grad) compiled",
               P.COMPILED_FWD: "compile(f); .sum().backward() outside, through the "
                               "compiled forward's backward",
               P.TORCH_COMPILE: "torch.compile(f); .sum().backward() outside (AOT autograd)",
               P.JAX: "jit(value_and_grad)"})


FAMILY = Family(
    "chain", "small graph, forward + backward",
    "Five `tanh(x*1.01+0.1)` on 64 floats and the gradient of their sum: every library "
    "here spends its time on per-op overhead, not arithmetic. Ours compiled runs the "
    "whole step (forward, backward, `.grad`) as replayed kernels; ours compiled fwd "
    "compiles only the forward and calls `.sum().backward()` outside, as torch.compile "
    "does here.",
    lambda quick: [chain_workload(quick)],
    goals=[
        Goal("small chain fwd+bwd: our eager / our compiled", ">=", 8, ("chain", P.EAGER),
             ("chain", P.COMPILED)),
        Goal("small chain, compiled fwd + eager .sum().backward(): our eager / it", ">=", 8,
             ("chain", P.EAGER), ("chain", P.COMPILED_FWD)),
        Goal("small chain fwd+bwd: JAX jit / our compiled", ">=", 1, ("chain", P.JAX),
             ("chain", P.COMPILED)),
        Goal("small chain fwd+bwd: PyTorch eager / our eager", ">=", 1, ("chain", P.TORCH),
             ("chain", P.EAGER)),
    ])
