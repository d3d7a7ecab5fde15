"""Helpers for the distributed tests: compare values across ranks."""

from __future__ import annotations

import numpy as np

import eager.distributed as dist


def gather(value) -> list:
    """Every rank's ``value`` (a picklable object), on every rank."""
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def assert_same_on_every_rank(arrays) -> None:
    """Each array is bit for bit the same on every rank."""
    every = gather([np.asarray(a) for a in arrays])
    for r, theirs in enumerate(every):
        for i, (a, b) in enumerate(zip(every[0], theirs)):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes(), f"array {i} differs between rank 0 and rank {r}"
