"""``DistributedSampler``: each of ``num_replicas`` processes reads its own ``1/num_replicas``
of the dataset (PyTorch's semantics: the same permutation on every rank from
``seed + epoch``, padded by repeating indices so every rank gets as many, or trimmed with
``drop_last``).  ``num_replicas`` and ``rank`` default to the world size and rank of
:mod:`eager.distributed` once a process group is initialized."""

from __future__ import annotations

import importlib
import math

from ...factories import randperm
from ...random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _dist():
    """:mod:`eager.distributed` when it is available, else None (it is optional: imported
    only when a sampler needs the world size or rank)."""
    try:
        dist = importlib.import_module("eager.distributed")
    except ImportError:
        return None
    return dist if dist.is_available() else None


class DistributedSampler(Sampler):
    """Indices of this rank's share of ``dataset``; call :meth:`set_epoch` every epoch so
    the shuffle differs between epochs."""

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            dist = _dist()
            if dist is None:
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas)
                                         / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch number, mixed into the shuffle's seed."""
        self.epoch = epoch
