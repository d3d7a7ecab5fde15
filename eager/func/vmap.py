"""``vmap``: the function runs once on whole batches, op by op through batching rules.

The inputs' mapped dimensions move to the front and each input becomes a batched tensor
(:class:`eager.func.batching.Batched` storage) through the op ``add_batch_dim``; the
outputs come back through ``remove_batch_dim`` (moved to ``out_dims``).  Both are ops
with gradients (each other), so ``grad(vmap(f))``, ``vmap(grad(f))`` and nested vmaps
compose.
"""

from __future__ import annotations

import functools

from .._state import STATE
from ..dispatch import dispatch
from ..fn.shape import cat
from ..random import default_generator
from ..tensor import Tensor
from .batching import ACTIVE, AddBatchDim, Batched, RemoveBatchDim, run  # noqa: F401

_LAST_LEVEL = [0]   # levels are never reused: a gradient can tell a returned vmap's level


# -- pytrees: tensors in (nested) tuples, lists and dicts -------------------------------

def _flatten(tree):
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for t in tree:
            lv, sp = _flatten(t)
            leaves += lv
            specs.append(sp)
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k in tree:
            lv, sp = _flatten(tree[k])
            leaves += lv
            specs.append(sp)
        return leaves, (dict, (list(tree), specs))
    return [tree], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(sp):
        if sp is None:
            return next(it)
        kind, sub = sp
        if kind is dict:
            keys, specs = sub
            return {k: build(s) for k, s in zip(keys, specs)}
        items = [build(s) for s in sub]
        if kind is list:
            return items
        if kind is tuple:
            return tuple(items)
        return kind(*items)   # named tuples
    return build(spec)


def _broadcast_dims(dims, spec, what):
    """``dims`` (an int/None or a tree matching ``spec``'s prefix) for every leaf."""
    if dims is None or isinstance(dims, int):
        return [dims] * _count(spec)
    if spec is None:
        raise ValueError(f"vmap: {what} {dims!r} is not compatible with the structure of "
                         "the corresponding value (a single value)")
    kind, sub = spec
    if kind is dict:
        keys, specs = sub
        if not isinstance(dims, dict) or set(dims) != set(keys):
            raise ValueError(f"vmap: {what} {dims!r} is not compatible with the structure "
                             f"of the corresponding dict (keys {keys})")
        return [d for k, s in zip(keys, specs) for d in _broadcast_dims(dims[k], s, what)]
    if not isinstance(dims, (tuple, list)) or len(dims) != len(sub):
        raise ValueError(f"vmap: {what} {dims!r} is not compatible with the structure of "
                         f"the corresponding value (a {kind.__name__} of {len(sub)})")
    return [d for dd, s in zip(dims, sub) for d in _broadcast_dims(dd, s, what)]


def _count(spec):
    if spec is None:
        return 1
    kind, sub = spec
    specs = sub[1] if kind is dict else sub
    return sum(_count(s) for s in specs)


def _fn_name(func):
    return getattr(func, "__name__", type(func).__name__)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a dimension of its inputs (PyTorch's ``torch.func.vmap``).

    ``in_dims``: an int or None for all positional arguments, or a tuple with one entry
    per argument (each an int, None, or a tree matching that argument's tuples, lists and
    dicts of tensors); negative dims count from the end.  Keyword arguments are passed
    unbatched.  ``out_dims``: where the batch dimension goes in each output (an int, or a
    tuple per output; None: the output must not depend on the batch).  ``chunk_size``
    runs the batch in chunks of that size (1: one sample at a time), concatenated.

    ``func`` runs once for the whole batch: every op it uses needs a batching rule
    (:data:`eager.func.batching.RULES`); an op without one raises an error naming it.
    Random factories (``randn``...) are not batched: ``randomness`` is checked for
    PyTorch's values ('error', 'different', 'same') but every sample sees the same draw.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    if not callable(func):
        raise RuntimeError(f"vmap(f, ...): f must be a callable, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if STATE.tracer is not None:
            STATE.tracer.on_unsupported("vmap")
        name = _fn_name(func)
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...): expected `in_dims` to "
                             f"be int or a (potentially nested) tuple matching the structure "
                             f"of inputs, got: {type(in_dims)}.")
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                             "inputs, or you are trying to vmap over a function with no "
                             "inputs. The latter is unsupported.")
        leaves, spec = _flatten(args)
        dims = _broadcast_dims(in_dims, spec, "in_dims")
        sizes = []
        norm = []
        for x, d in zip(leaves, dims):
            if d is None:
                norm.append(None)
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got "
                                 f"in_dim={d} for an input but the input is of type "
                                 f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                                 "use None as the respective in_dim")
            n = x.ndim
            if not -n <= d < n:
                raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got "
                                 f"in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {n} so expected in_dim to satisfy "
                                 f"-{n} <= in_dim < {n}.")
            d = d + n if d < 0 else d
            norm.append(d)
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): at least one "
                             "input must be batched (a Tensor with a non-None in_dim)")
        if any(s != sizes[0] for s in sizes):
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        size = sizes[0]
        if chunk_size is not None and chunk_size < size:
            return _chunked(leaves, spec, norm, size, kwargs)
        return _run(func, leaves, spec, norm, size, kwargs, out_dims, name, randomness)

    def _chunked(leaves, spec, norm, size, kwargs):
        parts = []
        for start in range(0, size, chunk_size):
            stop = min(size, start + chunk_size)
            chunk = [x if d is None else x.narrow(d, start, stop - start)
                     for x, d in zip(leaves, norm)]
            parts.append(_run(func, chunk, spec, norm, stop - start, kwargs, out_dims,
                              _fn_name(func), randomness))
        outs0, ospec = _flatten(parts[0])
        odims = _broadcast_dims(out_dims, ospec, "out_dims")
        cols = [[_flatten(p)[0][i] for p in parts] for i in range(len(outs0))]
        joined = [c[0] if d is None else cat(c, dim=d) for c, d in zip(cols, odims)]
        return _unflatten(joined, ospec)

    return wrapped


def _run(func, leaves, spec, norm, size, kwargs, out_dims, name, randomness):
    _LAST_LEVEL[0] += 1
    level = _LAST_LEVEL[0]
    ACTIVE.append(level)
    rng = default_generator._rng
    if randomness != "same":
        default_generator._rng = _RandomGuard(randomness)
    try:
        batched = [x if d is None else dispatch(AddBatchDim, x, in_dim=d, level=level)
                   for x, d in zip(leaves, norm)]
        out = func(*_unflatten(batched, spec), **kwargs)
        outs, ospec = _flatten(out)
        odims = _broadcast_dims(out_dims, ospec, "out_dims")
        res = []
        for o, d in zip(outs, odims):
            if not isinstance(o, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(o)}. Did you mean to set out_dims= to None for "
                                 "output?" if d is not None else
                                 f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(o)}.")
            is_batched = type(o._data) is Batched and o._data.level == level
            if d is None:
                if is_batched:
                    raise ValueError(f"vmap({name}, ..., out_dims=None): the output is "
                                     "batched (it depends on a mapped input), so it needs an "
                                     "out_dim other than None")
                res.append(o)
                continue
            n = o.ndim + 1
            if not -n <= d < n:
                raise ValueError(f"vmap({name}, ...): Dimension out of range (expected to be "
                                 f"in range of [{-n}, {n - 1}], but got {d}) for out_dims")
            d = d + n if d < 0 else d
            res.append(dispatch(RemoveBatchDim, o, level=level, out_dim=d, size=size))
        return _unflatten(res, ospec)
    finally:
        ACTIVE.pop()
        default_generator._rng = rng


class _RandomGuard:
    """The default generator's NumPy generator while vmap runs with randomness 'error'
    (PyTorch's error) or 'different' (not supported: random ops are not batched)."""

    def __init__(self, randomness):
        self.randomness = randomness

    def __getattr__(self, name):
        if self.randomness == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. "
                               "Please either use the 'same' or 'different' randomness flags "
                               "on vmap or perform the randomness operation out of vmap")
        raise NotImplementedError("vmap: randomness='different' is not supported: random ops "
                                  "are not batched (use randomness='same' for one draw shared "
                                  "by every sample, or draw outside vmap)")
