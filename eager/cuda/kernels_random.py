"""Factories and random numbers on CUDA: full, host-made ranges copied over, and the
counter-based generator's draws (:data:`eager.random.CUDA_GENERATOR` gives each call its
seed and counters; :mod:`runtime.cuda.launch` runs the kernels), so ``manual_seed``
reproduces eager and compiled draws alike."""

from __future__ import annotations

from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from ..random import CUDA_GENERATOR as GENERATOR
from .elementwise import contiguous


def on_host(op):
    def impl(*args, device=None, **params):
        return CudaArray.from_host(op.forward(*args, **params))
    return impl


def _no_cpu_generator(generator) -> None:
    if generator is not None:
        raise RuntimeError("Expected a 'cuda' device type for generator but found 'cpu' (CUDA "
                           "random ops draw from eager.cuda's generator: eager.cuda.manual_seed)")


def random(name, *extra):
    def impl(shape, dtype, device=None, generator=None, **params):
        _no_cpu_generator(generator)
        out = CudaArray.empty(shape, dtype)
        seed, offset = GENERATOR.take(out.size)
        return launch.random(name, out, seed, offset,
                             *[params[k] if k in params else k for k in extra])
    return impl


def randint(low, high, shape, dtype, device=None, generator=None):
    _no_cpu_generator(generator)
    out = CudaArray.empty(shape, dtype)
    seed, offset = GENERATOR.take(out.size)
    return launch.random("randint", out, seed, offset, int(low), int(high) - int(low))


def bernoulli_tensor(probs, generator=None):
    """1 where a uniform draw falls below ``probs`` (PyTorch's error for p outside [0, 1],
    read back from a device flag)."""
    _no_cpu_generator(generator)
    p = contiguous(probs)
    out = CudaArray.empty(p.shape, p.dtype)
    n = out.size
    if not n:
        return out
    seed, offset = GENERATOR.take(n)
    if launch.bernoulli_tensor(out, p, seed, offset):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return out


def randperm(n, dtype, device=None, generator=None):
    """A random permutation: each index ranked by a 64-bit random key (ties by index)."""
    _no_cpu_generator(generator)
    out = CudaArray.empty((n,), dtype)
    if not n:
        return out
    seed, offset = GENERATOR.take(n)
    return launch.randperm(out, seed, offset)

