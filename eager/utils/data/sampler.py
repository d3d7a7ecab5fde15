"""Samplers: iterables of dataset indices (or of index lists, for ``BatchSampler``) with
PyTorch's semantics, defaults and errors."""

from __future__ import annotations

from ...dtypes import float64, int64
from ...factories import as_tensor, empty, randint, randperm
from ...fn.random import multinomial
from ...random import Generator

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]


class Sampler:
    """Base class: subclasses define ``__iter__`` over indices (and ``__len__``)."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _seeded_generator(generator):
    """``generator``, or (None) a new generator seeded by a draw from the default one."""
    if generator is not None:
        return generator
    seed = int(empty((), dtype=int64).random_().item())
    return Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """Shuffled indices: a fresh permutation per pass (``replacement=False``; with
    ``num_samples`` larger than the dataset, several permutations), or ``num_samples``
    independent uniform draws (``replacement=True``).  Without ``generator``, each pass
    seeds a new generator from the default one (so ``manual_seed`` reproduces it)."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _seeded_generator(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), dtype=int64, generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), dtype=int64,
                               generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a fresh permutation per pass)."""

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (with
    replacement by default)."""

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or \
                num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        rand_tensor = multinomial(self.weights, self.num_samples, self.replacement,
                                  generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter unless
    ``drop_last``)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
