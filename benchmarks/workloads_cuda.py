"""CUDA rows: GELU on 32M float32 against a device-to-device copy, and an MLP train step,
for ours (eager and compiled) and PyTorch CUDA (eager and ``torch.compile``) when
importable.  They run only where a real GPU is present (never in numba-cuda's
simulator); elsewhere every peer is skipped with the reason.

Each timed call ends with a device synchronize, so the time is the GPU's work; results
are handed to the harness's check lazily (copied to the host only when checked).
Register with the harness through :func:`cuda_workloads`.
"""

from __future__ import annotations

import numpy as np

from .workloads import (
    COMPILED,
    COPY,
    EAGER,
    TORCH,
    TORCH_COMPILE,
    Skip,
    Workload,
    _compile,
    _torch,
    _torch_compile,
    gelu_expr,
    gelu_np,
)


class _OnHost:
    """A device result the harness's check reads with ``numpy()`` (copied on demand)."""

    def __init__(self, to_numpy):
        self._to_numpy = to_numpy

    def numpy(self):
        return self._to_numpy()


def _ours():
    import eager
    from runtime.cuda import SIMULATED
    if not eager.cuda.is_available() or SIMULATED:
        raise Skip("no GPU here (CUDA rows need one; the simulator is not timed)")
    return eager


def _torch_cuda():
    torch = _torch()
    if not torch.cuda.is_available():
        raise Skip("torch has no CUDA device here")
    return torch


def gelu_cuda_workload(n: int, quick: bool) -> Workload:
    x_np = np.random.default_rng(0).standard_normal(n, dtype=np.float32) * np.float32(3.0)

    def numpy_ref():   # the host reference the GPU results are checked against
        return lambda: gelu_np(x_np)

    def ours(compiled):
        def make():
            eg = _ours()
            x = eg.tensor(x_np, device="cuda")
            f = gelu_expr(eg.tanh)
            if compiled:
                f = _compile()(f)

            def run():
                y = f(x)
                eg.cuda.synchronize()
                return _OnHost(lambda: y.cpu().numpy())
            return run
        return make

    def torch_(compile_):
        def make():
            torch = _torch_cuda()
            if compile_:
                _torch_compile(quick)
            x = torch.from_numpy(x_np).cuda()
            f = gelu_expr(torch.tanh)
            if compile_:
                f = torch.compile(f)

            def run():
                y = f(x)
                torch.cuda.synchronize()
                return _OnHost(lambda: y.cpu().numpy())
            return run
        return make

    def copy_():
        from numba import cuda
        eg = _ours()
        x = cuda.to_device(x_np)
        out = cuda.device_array_like(x)

        def run():
            out.copy_to_device(x)   # device-to-device: read + write of 4n bytes
            eg.cuda.synchronize()
        return run

    label = f"{n // (1 << 20)}M"
    return Workload(f"cuda_gelu_{label.lower()}", f"CUDA GELU tanh {label} f32, no grad",
                    [("numpy", numpy_ref), (EAGER, ours(False)), (COMPILED, ours(True)),
                     (TORCH, torch_(False)), (TORCH_COMPILE, torch_(True)), (COPY, copy_)],
                    rtol=1e-4, atol=2e-5,
                    notes={COPY: "device-to-device copy of the input (bandwidth limit)"})


def mlp_cuda_workload(quick: bool, batch: int = 64, d_in: int = 784, d_h: int = 256,
                      d_out: int = 10) -> Workload:
    rng = np.random.default_rng(0)
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
            model.to("cuda")
            opt = optim.SGD(model.parameters(), lr=0.01)
            x, y = eg.tensor(x_np, device="cuda"), eg.tensor(y_np, device="cuda")

            def step():
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                return loss
            f = _compile()(step) if compiled else step

            def run():
                loss = f()
                eg.cuda.synchronize()
                return _OnHost(lambda: np.array(loss.item()))
            return run
        return make

    def torch_(compile_):
        def make():
            torch = _torch_cuda()
            if compile_:
                _torch_compile(quick)
            model = torch.nn.Sequential(torch.nn.Linear(d_in, d_h), torch.nn.ReLU(),
                                        torch.nn.Linear(d_h, d_out))
            with torch.no_grad():
                model[0].weight.copy_(torch.from_numpy(w1))
                model[2].weight.copy_(torch.from_numpy(w2))
            model.cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            x = torch.from_numpy(x_np).cuda()
            y = torch.from_numpy(y_np).cuda()

            def step():
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                return loss
            f = torch.compile(step) if compile_ else step

            def run():
                loss = f()
                torch.cuda.synchronize()
                return _OnHost(lambda: np.array(loss.item()))
            return run
        return make

    return Workload("cuda_mlp", f"CUDA MLP {d_in}-{d_h}-{d_out} b{batch} train step",
                    [(EAGER, ours(False)), (COMPILED, ours(True)), (TORCH, torch_(False)),
                     (TORCH_COMPILE, torch_(True))], reference=None, stateful=True)


def cuda_workloads(quick: bool) -> list:
    return [gelu_cuda_workload(32 << 20, quick), mlp_cuda_workload(quick)]
