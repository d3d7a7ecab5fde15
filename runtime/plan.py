"""Loop planning shared by every device's kernel templates.

A kernel evaluates a scalar core at every element of its output.  The loop nest is
planned from the shapes when the graph is traced:

* output dimensions of size 1 are dropped (every operand is indexed 0 there);
* each input is right-aligned with the output (NumPy broadcasting) and gets a pattern:
  for each remaining dimension, indexed (its size equals the output's) or broadcast
  (size 1: index 0, so the dimension is left out of its index altogether);
* neighbouring dimensions where every input has the same pattern are merged into one
  loop (all operands are C-contiguous, so merged dimensions are one flat range).

So a chain without broadcasting is one flat loop whatever the rank, ``(x + b[None, :]) *
c[:, None]`` is two nested loops, and an input broadcast everywhere is loaded once.  The
source depends only on that pattern: loop bounds are read at run time, so a new shape
with the same pattern reuses the compiled kernel.

Reductions plan the same way with the kept dimensions and the reduced (trailing) ones
never merged together (``split``).  :class:`Reduction` says how a kernel accumulates.
"""

from __future__ import annotations


class LoopPlan:
    """``groups``: for each loop, the output dimensions merged into it (outermost first);
    ``patterns``: for each input, for each loop, whether the input is indexed by it;
    ``n_outer``: for a reduction, how many loops (the first ones) are kept dimensions."""

    __slots__ = ("groups", "n_outer", "patterns", "rank")

    def __init__(self, rank, groups, patterns, n_outer=None):
        self.rank = rank
        self.groups = groups
        self.patterns = patterns
        self.n_outer = len(groups) if n_outer is None else n_outer

    def key(self):
        return (self.rank, tuple(map(tuple, self.groups)), tuple(map(tuple, self.patterns)),
                self.n_outer)


def plan(out_shape: tuple, in_shapes: list, split: int | None = None) -> LoopPlan:
    """Plan the loops for an output of ``out_shape`` and inputs of ``in_shapes``.

    ``split`` (reductions): dimensions from ``split`` on are reduced; loops never merge
    a kept dimension with a reduced one, and the kept loops come first.
    """
    rank = len(out_shape)
    keep = [d for d in range(rank) if out_shape[d] != 1]
    full = []
    for s in in_shapes:
        s = tuple(s)
        if len(s) > rank:
            raise ValueError(f"input shape {s} has more dimensions than the output {out_shape}")
        pad = (1,) * (rank - len(s)) + s
        for d in range(rank):
            if pad[d] != out_shape[d] and pad[d] != 1:
                raise ValueError(f"input shape {s} does not broadcast to {out_shape}")
        full.append([pad[d] == out_shape[d] for d in keep])
    groups: list = []
    pats: list = [[] for _ in in_shapes]
    for j, d in enumerate(keep):
        same_side = split is None or (keep[j - 1] < split) == (d < split)
        if groups and same_side and all(p[j] == p[j - 1] for p in full):
            groups[-1].append(d)
            continue
        groups.append([d])
        for k, p in enumerate(full):
            pats[k].append(p[j])
    n_outer = None if split is None else sum(1 for g in groups if g[0] < split)
    return LoopPlan(rank, groups, pats, n_outer)


class Reduction:
    """How a reduction kernel accumulates: ``init``, ``combine`` (a format string with
    ``{acc}`` and ``{x}``) and ``final`` (with ``{acc}`` and ``{count}``)."""

    __slots__ = ("combine", "final", "init")

    def __init__(self, init: str, combine: str, final: str):
        self.init = init
        self.combine = combine
        self.final = final


