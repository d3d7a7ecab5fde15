"""``DataLoader``: batches from a dataset, with PyTorch's options, defaults and errors.

Map-style datasets are read through a sampler (``SequentialSampler``, or ``RandomSampler``
with ``shuffle=True``) grouped by a ``BatchSampler``; iterable datasets are iterated.
Samples are merged by ``collate_fn`` (:func:`default_collate`; :func:`default_convert` when
``batch_size=None`` turns batching off).  ``num_workers > 0`` loads in worker processes
(:mod:`eager.utils.data.worker`) and yields the same batches in the same order.
"""

from __future__ import annotations

import math
import multiprocessing

import numpy as np

from ..._state import STATE
from ...dtypes import int64
from ...factories import empty
from ...tensor import Tensor
from .collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import MultiProcessingIter

__all__ = ["DataLoader"]


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: None forever (the dataset yields the samples)."""

    def __iter__(self):
        while True:
            yield None


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if self.auto_collation:
            if self.collate_fn is default_collate:
                batch = _tensor_batch(self.dataset, index)
                if batch is not None:
                    return batch
            getitems = getattr(self.dataset, "__getitems__", None)
            if callable(getitems):
                data = getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


def _tensor_batch(dataset, index):
    """``default_collate([dataset[i] for i in index])`` for a :class:`TensorDataset` of
    plain CPU tensors that need no gradient: the same list of new tensors, made by one
    gather per tensor instead of an indexing op per sample and tensor and a ``stack``
    (the digits CNN example's 10 epochs of batches of 32: 0.16 s, then 0.01 s).  None
    where that would not be the same (a subclass may index otherwise; a
    tensor needing a gradient gets a graph; a compiler tracer records the ops; an index
    out of range raises the sample's own error)."""
    if type(dataset) is not TensorDataset or STATE.tracer is not None or not index:
        return None
    tensors = dataset.tensors
    for t in tensors:
        if type(t) is not Tensor or t.requires_grad or type(t._data) is not np.ndarray \
                or t._data.ndim == 0:
            return None
    if not all(type(i) is int or isinstance(i, np.integer) for i in index):
        return None
    idx = np.asarray(index, dtype=np.int64)
    n = tensors[0]._data.shape[0]
    if idx.min() < -n or idx.max() >= n:
        return None
    return [Tensor._make(np.take(t._data, idx, axis=0)) for t in tensors]


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _FetcherFactory:
    """Makes a fetcher (picklable, for worker processes)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.args = (dataset, auto_collation, collate_fn, drop_last)

    def __call__(self):
        cls = _IterableFetcher if isinstance(self.args[0], IterableDataset) else _MapFetcher
        return cls(*self.args)


class _SingleProcessIter:
    def __init__(self, loader, fetcher_factory):
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        self._fetcher = fetcher_factory()

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def __next__(self):
        index = next(self._sampler_iter)
        return self._fetcher.fetch(index)


class DataLoader:
    """Iterate over ``dataset`` in batches (PyTorch's ``torch.utils.data.DataLoader``).

    ``batch_size`` (1; None: no batching), ``shuffle`` (a new random order per epoch, drawn
    from ``generator`` or the default generator), ``sampler`` / ``batch_sampler`` (custom
    index orders, exclusive with ``shuffle`` / ``batch_size``...), ``drop_last``,
    ``collate_fn``, ``num_workers`` (worker processes, same batches in the same order),
    ``worker_init_fn``, ``prefetch_factor`` (2 with workers), ``persistent_workers``,
    ``timeout``, ``multiprocessing_context``, ``in_order``.  ``pin_memory`` is accepted and
    does nothing (there is no accelerator memory to pin).
    """

    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        if isinstance(dataset, IterableDataset):
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterator = None
        self.__initialized = True

    # -- attributes ----------------------------------------------------------------------
    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None and self.num_workers > 0:
            if isinstance(ctx, str):
                valid = multiprocessing.get_all_start_methods()
                if ctx not in valid:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {valid!r}, but got "
                                     f"multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            elif not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context "
                                f"object or a string specifying the start method, but got "
                                f"multiprocessing_context={ctx}")
        self.__multiprocessing_context = ctx

    def __setattr__(self, attr, val):
        if self.__dict__.get("_DataLoader__initialized") and attr in self._FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    # -- iteration -----------------------------------------------------------------------
    def _get_iterator(self):
        factory = _FetcherFactory(self.dataset, self._auto_collation, self.collate_fn,
                                  self.drop_last)
        # drawn per iterator with or without workers (as PyTorch does), so both consume the
        # generator alike and give the same batches
        base_seed = int(empty((), dtype=int64).random_(generator=self.generator).item())
        if self.num_workers == 0:
            return _SingleProcessIter(self, factory)
        if self.multiprocessing_context is None:
            self.__dict__["_DataLoader__multiprocessing_context"] = multiprocessing.get_context()
        return MultiProcessingIter(self, base_seed, factory)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset()
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)
