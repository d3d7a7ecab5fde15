"""Datasets with PyTorch's semantics: ``Dataset`` (map-style: ``__getitem__``/``__len__``),
``IterableDataset`` (``__iter__``), ``TensorDataset``, ``Subset``, ``ConcatDataset``,
``ChainDataset``, ``StackDataset`` and ``random_split``."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings

from ...factories import randperm
from ...random import default_generator
from ...tensor import Tensor

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` (and usually
    ``__len__``, which samplers and ``DataLoader`` need).  Optionally ``__getitems__(indices)``
    returns a whole batch of samples at once."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``.  With ``num_workers > 0``
    each worker iterates its own copy; use :func:`get_worker_info` in ``__iter__`` to split
    the work, or every sample comes once per worker."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[i] for t in tensors)``; every tensor has the same first size."""

    def __init__(self, *tensors: Tensor) -> None:
        assert all(tensors[0].size(0) == tensor.size(0) for tensor in tensors), \
            "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Samples are tuples (``StackDataset(a, b)``) or dicts (``StackDataset(x=a, y=b)``) of
    the datasets' samples at the same index; all datasets have the same length."""

    def __init__(self, *args, **kwargs) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or"
                                 "``dict``- (via ``kwargs``) like input/output, but both "
                                 "types are given.")
            self._length = len(args[0])
            if any(self._length != len(dataset) for dataset in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(dataset) for dataset in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The datasets one after another (map-style only)."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), \
                "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            assert isinstance(d, IterableDataset), \
                "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset), \
                "ChainDataset only supports IterableDataset"
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset: Dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset: Dataset, lengths, generator=default_generator) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given ``lengths`` (ints
    summing to ``len(dataset)``, or fractions summing to 1: the remainder of the floors goes
    one by one to the first subsets)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              f"This might result in an empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length: offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
