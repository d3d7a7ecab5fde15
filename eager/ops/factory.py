"""Factory ops: tensors made from nothing but parameters.  They go through dispatch so a
compiler tracer records them (deterministic ones fold to constants; random ones draw
fresh numbers on every replay from the same generator eager mode uses)."""

from __future__ import annotations

import itertools

import numpy as np

from ..random import default_generator
from .base import Op


def _rng(generator) -> np.random.Generator:
    return (default_generator if generator is None else generator)._rng


def generator() -> np.random.Generator:
    """The default generator's NumPy generator (to save and restore every generator's
    state, use ``eager.random.snapshot``/``restore``)."""
    return default_generator._rng


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
    """Draws from the op parameter ``generator`` (an :class:`eager.Generator`; None or absent:
    the default generator, one object for the whole process).  Being a parameter, it is
    recorded in a compiled trace, which draws from the same generator object on every
    replay."""

    abstract = True
    random = True


class Rand(RandomOp):
    def forward(shape, dtype, generator=None):
        return _rng(generator).random(shape, dtype=np.float64).astype(dtype, copy=False)


class Randn(RandomOp):
    def forward(shape, dtype, generator=None):
        return _rng(generator).standard_normal(shape, dtype=np.float64).astype(dtype, copy=False)


class Randint(RandomOp):
    def forward(low, high, shape, dtype, generator=None):
        return _rng(generator).integers(low, high, size=shape).astype(dtype, copy=False)


class Randperm(RandomOp):
    def forward(n, dtype, generator=None):
        return _rng(generator).permutation(n).astype(dtype, copy=False)


class Bernoulli(RandomOp):
    """1 with probability ``p`` (a Python float), as ``dtype``: dropout's keep-mask."""

    def forward(shape, p, dtype, generator=None):
        return (_rng(generator).random(shape) < p).astype(dtype)


def device_params(like) -> dict:
    """The ``device`` param that makes a factory op (in a backward formula) create its
    tensor where ``like`` lives: none on the CPU, whose forwards take no device."""
    d = getattr(like, "_data", like)
    if isinstance(d, (np.ndarray, np.generic)) or not hasattr(like, "device"):
        return {}   # (a NumPy scalar's .device is the array API's string "cpu")
    kind = like.device.type     # a vmap-batched CPU tensor's storage is no ndarray
    return {} if kind == "cpu" else {"device": kind}


class BernoulliTensor(RandomOp):
    """1 where a uniform draw falls below ``probs`` (same shape and dtype as ``probs``)."""

    def forward(probs, generator=None):
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        return (_rng(generator).random(probs.shape) < probs).astype(probs.dtype)


#: multinomial's and normal's errors (raised by the CUDA kernels' callers too)
MULTINOMIAL_BAD_VALUE = "probability tensor contains either `inf`, `nan` or element < 0"
MULTINOMIAL_BAD_SUM = "invalid multinomial distribution (sum of probabilities <= 0)"
NORMAL_BAD_STD = "normal expects all elements of std >= 0.0"


class Multinomial(RandomOp):
    """Category indices drawn from the rows of ``probs`` (1-D or 2-D, unnormalized), with or
    without replacement (without: exponential race, i.e. top-k of ``log p - log E``, which
    draws categories one after another in proportion to the remaining mass)."""

    def forward(probs, num_samples, replacement, generator=None):
        rng = _rng(generator)
        p = probs.astype(np.float64).reshape(-1, probs.shape[-1]) if probs.ndim else probs
        if not np.isfinite(p).all() or (p < 0).any():
            raise RuntimeError(MULTINOMIAL_BAD_VALUE)
        total = p.sum(axis=-1, keepdims=True)
        if (total <= 0).any():
            raise RuntimeError(MULTINOMIAL_BAD_SUM)
        if replacement:
            cdf = np.cumsum(p / total, axis=-1)
            cdf[:, -1] = 1.0
            u = rng.random((p.shape[0], num_samples))
            out = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)]) \
                if len(p) else np.empty((0, num_samples), np.int64)
            out = np.minimum(out, p.shape[-1] - 1)
        else:
            e = rng.standard_exponential(p.shape)
            with np.errstate(divide="ignore"):
                keys = np.log(p) - np.log(e)
            out = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
        out = out.astype(np.int64)
        return out.reshape(num_samples) if probs.ndim == 1 else out


class Normal(RandomOp):
    """Samples of N(mean, std²) for broadcast ``mean``/``std`` (arrays or Python floats)."""

    promotes = True

    def forward(mean, std, generator=None):
        if isinstance(std, np.ndarray) and not (std >= 0).all():
            raise RuntimeError(NORMAL_BAD_STD)
        shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
        dtype = np.result_type(mean, std)
        z = _rng(generator).standard_normal(shape).astype(dtype, copy=False)
        return (mean + std * z).astype(dtype, copy=False)


class TriIndices(Factory):
    """``(2, N)`` row and column indices of the lower (``upper``: upper) triangle of a
    ``row`` x ``col`` matrix from diagonal ``offset``, in row-major order."""

    def forward(row, col, offset, upper, dtype):
        fn = np.triu_indices if upper else np.tril_indices
        return np.stack(fn(row, offset, col)).astype(dtype)


class CombinationIndices(Factory):
    """``(N, r)`` int64 positions of the length-``r`` combinations of ``n`` items (with
    ``with_replacement``: multisets), in lexicographic order."""

    def forward(n, r, with_replacement):
        pick = itertools.combinations_with_replacement if with_replacement else \
            itertools.combinations
        rows = list(pick(range(n), r))
        return np.array(rows, dtype=np.int64).reshape(len(rows), r)
