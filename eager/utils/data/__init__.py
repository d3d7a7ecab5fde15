"""``eager.utils.data``: datasets, samplers and ``DataLoader`` with PyTorch's API.

    from eager.utils.data import DataLoader, TensorDataset
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    for xb, yb in loader: ...

``eager.utils.data.distributed.DistributedSampler`` splits a dataset across processes.
"""

from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker import WorkerInfo, get_worker_info

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "WorkerInfo", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
