"""Factory ops: tensors made from nothing but parameters.  They go through dispatch so a
compiler tracer records them (deterministic ones fold to constants; random ones draw
fresh numbers on every replay from the same generator eager mode uses)."""

from __future__ import annotations

import numpy as np

from ..cuda.random import GENERATOR as CUDA_GENERATOR
from .base import Op


class Factory(Op):
    abstract = True
    differentiable = False


class Full(Factory):
    def forward(shape, value, dtype):
        return np.full(shape, value, dtype=dtype)


class Arange(Factory):
    def forward(start, end, step, dtype):
        return np.arange(start, end, step, dtype=dtype)


class Linspace(Factory):
    def forward(start, end, steps, dtype):
        return np.linspace(start, end, steps, dtype=dtype)


class Eye(Factory):
    def forward(n, m, dtype):
        return np.eye(n, m, dtype=dtype)


class RandomOp(Factory):
    abstract = True
    random = True


class Rand(RandomOp):
    def forward(shape, dtype):
        return generator().random(shape, dtype=np.float64).astype(dtype, copy=False)


class Randn(RandomOp):
    def forward(shape, dtype):
        return generator().standard_normal(shape, dtype=np.float64).astype(dtype, copy=False)


class Randint(RandomOp):
    def forward(low, high, shape, dtype):
        return generator().integers(low, high, size=shape).astype(dtype, copy=False)


class Bernoulli(RandomOp):
    """Keep-mask for dropout: 1 with probability ``p``, as ``dtype``."""

    def forward(shape, p, dtype):
        return (generator().random(shape) < p).astype(dtype)


def device_params(like) -> dict:
    """The ``device`` param that makes a factory op (in a backward formula) create its
    tensor where ``like`` lives: none on the CPU, whose forwards take no device."""
    d = getattr(like, "_data", like)
    if type(d) is np.ndarray or not hasattr(d, "shape"):
        return {}
    return {"device": like.device.type}


class _Gen:
    gen = np.random.default_rng()
    seed = None


def generator() -> np.random.Generator:
    return _Gen.gen


def manual_seed(seed: int):
    """Seed the generator every random op draws from (eager and compiled alike)."""
    _Gen.gen = np.random.default_rng(int(seed))
    _Gen.seed = int(seed)
    CUDA_GENERATOR.seed(int(seed))   # as PyTorch: one seed for every device
    return _Gen


def initial_seed() -> int:
    return _Gen.seed
