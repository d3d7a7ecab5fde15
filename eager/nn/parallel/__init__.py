"""``eager.nn.parallel``: :class:`DistributedDataParallel` (data parallelism over MPI ranks,
see :mod:`eager.distributed`)."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
