"""Factories and random numbers on CUDA: full, host-made ranges copied over, and the
counter-based generator's draws (:data:`eager.random.CUDA_GENERATOR` gives each call its
seed and counters; :mod:`runtime.cuda.launch` runs the kernels), so ``manual_seed``
reproduces eager and compiled draws alike: rand, randn, bernoulli, randint, randperm,
multinomial and normal with tensor arguments (randn times std plus mean)."""

from __future__ import annotations

import numpy as np

from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from .. import dtypes as _dt
from ..ops import elementwise as E
from ..ops import factory as Fa
from ..random import CUDA_GENERATOR as GENERATOR
from . import kernels_reduce as KR
from . import kernels_sort as KSo
from .elementwise import cast, contiguous, run_elementwise


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



def multinomial(probs, num_samples, replacement, generator=None):
    """``num_samples`` categories per row of the 1-D or 2-D float32/float64 ``probs``: with
    replacement (or a single draw, the same distribution) each a bisection of the row's
    running sums at a uniform times its total; without, the ``num_samples`` largest keys
    of an exponential race (:func:`.kernels_sort.select`).  The CPU's errors, from device
    flags read back."""
    _no_cpu_generator(generator)
    p = contiguous(probs)
    rows, m = (1, p.shape[0]) if p.ndim == 1 else p.shape
    cdf, total, bad_value, bad_sum = launch.multinomial_sums(p, rows, m)
    if bad_value:
        raise RuntimeError(Fa.MULTINOMIAL_BAD_VALUE)
    if bad_sum:
        raise RuntimeError(Fa.MULTINOMIAL_BAD_SUM)
    shape = (num_samples,) if probs.ndim == 1 else (rows, num_samples)
    if replacement or num_samples == 1:
        seed, offset = GENERATOR.take(rows * num_samples)
        out = CudaArray.empty((rows, num_samples), np.int64)
        return launch.multinomial_draw(cdf, total, out, num_samples, seed, offset).reshape(shape)
    seed, offset = GENERATOR.take(rows * m)
    keys = launch.multinomial_keys(p.reshape((rows, m)), seed, offset)
    return KSo.select(keys, 1, 0, num_samples, True, "multinomial").reshape(shape)


def normal(mean, std, generator=None):
    """Samples of N(mean, std²) for CUDA arrays or Python floats ``mean``/``std`` (one at
    least an array): randn of the broadcast shape in the promoted dtype, times ``std``
    plus ``mean``; the CPU's error for a negative (or NaN) ``std``, its minimum read back."""
    _no_cpu_generator(generator)
    if isinstance(std, CudaArray) and std.size:
        low = std.to_host() if std.ndim == 0 else \
            KR.reduce("amin", std, tuple(range(std.ndim)), False, std.dtype).to_host()
        if not low >= 0:
            raise RuntimeError(Fa.NORMAL_BAD_STD)
    dtype = np.dtype(_dt.result_type(mean, std))
    mean, std = [cast(x, dtype) if isinstance(x, CudaArray) and x.dtype != dtype else x
                 for x in (mean, std)]
    shape = np.broadcast_shapes(*[x.shape for x in (mean, std) if isinstance(x, CudaArray)])
    z = CudaArray.empty(shape, dtype)
    seed, offset = GENERATOR.take(z.size)
    launch.random("randn", z, seed, offset)
    return run_elementwise(E.Add, [mean, run_elementwise(E.Mul, [std, z], {})], {})
