"""``eager.distributed``: data-parallel training over MPI, with ``torch.distributed``'s names.

Install the optional extra (``pip install -e ".[distributed]"``: ``mpi4py`` and the
``mpich`` wheel; Open MPI, Intel MPI or a cluster's own MPI work the same) and launch one
process per rank with ``mpiexec``::

    # mpiexec -n 2 python train.py
    import eager as torch
    import eager.distributed as dist

    dist.init_process_group(backend="mpi")      # rank and world size come from MPI
    rank, world = dist.get_rank(), dist.get_world_size()
    t = torch.ones(3) * (rank + 1)
    dist.all_reduce(t)                          # in place: 1 + 2 = 3 on every rank
    work = dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True)
    work.wait()
    dist.destroy_process_group()

Collectives: :func:`all_reduce`, :func:`broadcast`, :func:`all_gather`,
:func:`reduce_scatter`, :func:`barrier` (``async_op=True`` returns a :class:`Work`), and
:func:`all_gather_object` / :func:`broadcast_object_list` for picklable Python objects.
Inside a compiled function the tensor collectives are graph ops with an effect: they run
on every replay, in the order eager ran them.

Ranks must agree on every collective: before each one (eager, async or in a compiled
replay) the ranks all-gather a small descriptor of their call and compare collective, op
or source rank, dtype and shape; when they differ, every rank raises a RuntimeError
("Detected mismatch between collectives on ranks") naming each rank's call, and nothing
was communicated, so the group stays usable.  Without it MPI would silently reduce
mismatched buffers (3 elements against 5) or fail with "Other MPI error".  This costs one
tiny all-gather per collective; ``DYNGRAPH_DISTRIBUTED_CHECK=0`` (read at
``init_process_group``) turns it off.  ``DistributedDataParallel`` checks once that every
rank has the same gradient buckets.

Failures end the job instead of hanging it: an uncaught exception on any rank aborts
every rank (``MPI_Abort``) after its traceback is printed, and a collective that waits
longer than the group's ``timeout`` aborts the job with a message naming it.

Sharding data: each rank trains on its own slice of every global batch.  With a batch of
``B`` samples (``B`` divisible by the world size), rank ``r`` takes
``xb[r * B // world:(r + 1) * B // world]``; with a mean loss, averaging the gradients
over the ranks (what :class:`eager.nn.parallel.DistributedDataParallel` does) gives the
gradient of the whole batch.  To split a data set once instead, take every
``world``-th sample starting at ``rank`` (``indices[rank::world]``, after the same
seeded shuffle on every rank), as ``DistributedSampler`` does.
"""

from .collectives import (
    Work,
    all_gather,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    reduce_scatter,
)
from .group import (
    Backend,
    ProcessGroup,
    ReduceOp,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
)

__all__ = ["Backend", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_object",
           "all_reduce", "barrier", "broadcast", "broadcast_object_list",
           "destroy_process_group", "get_backend", "get_rank", "get_world_size",
           "init_process_group", "is_available", "is_initialized", "is_mpi_available",
           "reduce_scatter"]
