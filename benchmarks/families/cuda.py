"""CUDA: GELU on 32M float32 against a device-to-device copy, and an MLP train step, for
ours (eager and compiled) and PyTorch CUDA (eager and ``torch.compile``) when importable.
Runs only where a real GPU is present (never in numba-cuda's simulator); elsewhere every
peer is skipped with the reason.  Each timed call ends with a device synchronize, so the
time is the GPU's work; results reach the check lazily (copied to the host only then).
"""

from __future__ import annotations

import numpy as np

from .. import peers as P
from ..harness import Family, Goal, Workload, with_stats
from .gelu import gelu_expr, gelu_np


class _OnHost:
    """A device result the harness's check reads with ``numpy()`` (copied on demand)."""

    def __init__(self, to_numpy):
        self._to_numpy = to_numpy

    def numpy(self):
        return self._to_numpy()


def _ours():
    import eager
    if not eager.cuda.is_available():
        raise P.Skip("no CUDA device here")
    from runtime.cuda import SIMULATED
    if SIMULATED:
        raise P.Skip("numba-cuda's simulator is not timed")
    return eager


def _torch_cuda():
    torch = P.torch()
    if not torch.cuda.is_available():
        raise P.Skip("torch has no CUDA device here")
    return torch


def gelu_workload(n: int, quick: bool) -> Workload:
    x_np = np.random.default_rng(0).standard_normal(n, dtype=np.float32) * np.float32(3.0)

    def numpy_():   # the host reference the GPU results are checked against
        _ours()
        return lambda: gelu_np(x_np)

    def ours(compiled):
        def make():
            eg = _ours()
            x = eg.tensor(x_np, device="cuda")
            f = gelu_expr(eg.tanh)
            cf = None
            if compiled:
                from compiler import compile
                f = cf = compile(f)

            def run():
                y = f(x)
                eg.cuda.synchronize()
                return _OnHost(lambda: y.cpu().numpy())
            return with_stats(run, cf) if cf is not None else run
        return make

    def torch_(compiled):
        def make():
            torch = _torch_cuda()
            f = gelu_expr(torch.tanh)
            if compiled:
                f = P.torch_compile(quick)[1](f)
            x = torch.from_numpy(x_np).cuda()

            def run():
                y = f(x)
                torch.cuda.synchronize()
                return _OnHost(lambda: y.cpu().numpy())
            return run
        return make

    def copy_():
        eg = _ours()
        from numba import cuda
        x = cuda.to_device(x_np)
        out = cuda.device_array_like(x)

        def run():
            out.copy_to_device(x)   # device to device: read + write of the input
            eg.cuda.synchronize()
        return run

    label = f"{n // (1 << 20)}M"
    return Workload(
        f"cuda_gelu_{label.lower()}", f"CUDA GELU tanh form, {label} float32",
        [(P.NUMPY, numpy_), (P.EAGER, ours(False)), (P.COMPILED, ours(True)),
         (P.TORCH, torch_(False)), (P.TORCH_COMPILE, torch_(True)), (P.COPY, copy_)],
        rtol=1e-4, atol=2e-5,
        notes={P.NUMPY: "on the host: the reference for the check",
               P.COPY: "device-to-device copy of the input (the bandwidth limit)"})


def mlp_workload(quick: bool, batch: int = 64, sizes=(784, 256, 10)) -> Workload:
    rng = np.random.default_rng(0)
    d_in, d_h, d_out = sizes
    x_np = rng.standard_normal((batch, d_in), dtype=np.float32)
    y_np = rng.integers(0, d_out, batch)
    w1 = (rng.standard_normal((d_h, d_in)) / np.sqrt(d_in)).astype(np.float32)
    w2 = (rng.standard_normal((d_out, d_h)) / np.sqrt(d_h)).astype(np.float32)

    def ours(compiled):
        def make():
            eg = _ours()
            from eager import nn, optim
            model = nn.Sequential(nn.Linear(d_in, d_h), nn.ReLU(), nn.Linear(d_h, d_out))
            model[0].weight.data = eg.tensor(w1)
            model[2].weight.data = eg.tensor(w2)
            for m in (model[0], model[2]):
                m.bias.data = eg.zeros(m.bias.shape)
            model.to("cuda")
            opt = optim.SGD(model.parameters(), lr=0.01)
            x, y = eg.tensor(x_np, device="cuda"), eg.tensor(y_np, device="cuda")

            def step():
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                return loss
            f = step
            if compiled:
                from compiler import compile
                f = compile(step)

            def run():
                loss = f()
                eg.cuda.synchronize()
                return _OnHost(lambda: np.array(loss.item()))
            return with_stats(run, f) if compiled else run
        return make

    def torch_(compiled):
        def make():
            torch = _torch_cuda()
            model = torch.nn.Sequential(torch.nn.Linear(d_in, d_h), torch.nn.ReLU(),
                                        torch.nn.Linear(d_h, d_out))
            with torch.no_grad():
                model[0].weight.copy_(torch.from_numpy(w1))
                model[2].weight.copy_(torch.from_numpy(w2))
                model[0].bias.zero_()
                model[2].bias.zero_()
            model.cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            x, y = torch.from_numpy(x_np).cuda(), torch.from_numpy(y_np).cuda()

            def step():
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                return loss
            f = P.torch_compile(quick)[1](step) if compiled else step

            def run():
                loss = f()
                torch.cuda.synchronize()
                return _OnHost(lambda: np.array(loss.item()))
            return run
        return make

    return Workload(
        "cuda_mlp", f"CUDA MLP {d_in}-{d_h}-{d_out}, batch {batch}, SGD step",
        [(P.EAGER, ours(False)), (P.COMPILED, ours(True)), (P.TORCH, torch_(False)),
         (P.TORCH_COMPILE, torch_(True))],
        reference=P.EAGER, stateful=True, rtol=1e-3, atol=1e-4)


def workloads(quick: bool) -> list:
    return [gelu_workload(32 << 20, quick), mlp_workload(quick)]


FAMILY = Family(
    "cuda", "CUDA (needs a GPU)",
    "The same code on a CUDA device: GELU of a 32M float32 vector (one fused numba-cuda "
    "kernel, against a device-to-device copy of the input, the bandwidth limit) and the "
    "784-256-10 MLP's SGD train step, for ours and PyTorch's CUDA eager and torch.compile. "
    "Skipped where no GPU is present.",
    workloads,
    goals=[
        Goal("CUDA GELU 32M: ours compiled / device copy", "<=", 1.3,
             ("cuda_gelu_32m", P.COMPILED), ("cuda_gelu_32m", P.COPY)),
        Goal("CUDA GELU 32M: torch.compile / ours compiled", ">=", 1.0,
             ("cuda_gelu_32m", P.TORCH_COMPILE), ("cuda_gelu_32m", P.COMPILED)),
    ])
