"""Activation checkpointing: ``checkpoint(fn, *args)`` computes ``fn(*args)`` without
keeping its intermediate activations for backward; backward runs ``fn`` again (with the
random generators put back as they were, so dropout draws the same mask) and
differentiates the recomputed graph.  ``checkpoint_sequential`` checkpoints the segments
of a sequential model.

How: the forward runs with grad enabled; a walk of the graph it built finds its frontier
(the tensor arguments, and the leaves it reached from closures, e.g. module parameters).
Each output is then re-wrapped with one grad node whose edges are that frontier and which
saves only the arguments, and the forward's own graph is dropped, with every activation
it saved.  The node's backward recomputes (once for all outputs of a call) and returns
the gradients of the frontier through ``autograd.grad``; with ``create_graph=True`` the
recomputed graph becomes part of the new graph.  ``use_reentrant=True`` computes the same
(PyTorch's reentrant variant differs only in its restrictions, which are kept: no keyword
arguments, no ``context_fn``).  Under a compiler trace the function simply runs (the
compiled program keeps what it needs).  Measure the effect with
:func:`eager.autograd.graph.saved_tensor_bytes`.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from .. import random as _random
from .._state import STATE
from ..autograd.engine import grad as _grad
from ..autograd.grad_mode import enable_grad
from ..autograd.node import Node
from ..dispatch import T
from ..ops.base import Op
from ..tensor import Tensor

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential", "noop_context_fn"]


class CheckpointError(RuntimeError):
    """The recomputation did not reproduce the forward's outputs (shapes/dtypes)."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
    "exception. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
    "the differences between the two variants.")


def checkpoint(function, *args, use_reentrant: bool | None = None,
               context_fn=noop_context_fn, determinism_check: str = "default",
               debug: bool = False, **kwargs):
    """``function(*args, **kwargs)``, recomputed in backward instead of keeping its
    activations (see the module docstring).  ``preserve_rng_state=True`` (a keyword)
    restores the generators' states for the recomputation; ``context_fn`` returns the two
    context managers the forward and the recomputation run in; ``determinism_check``
    ("default" or "none") compares the recomputed outputs' shapes and dtypes."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if not STATE.grad_enabled or STATE.tracer is not None:
        return function(*args, **kwargs)
    forward_ctx, recompute_ctx = context_fn()
    rng = _random.snapshot() if preserve else None
    with forward_ctx:
        out = function(*args, **kwargs)
    return _Region(function, args, kwargs, rng, recompute_ctx,
                   determinism_check == "default").wrap(out)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run ``functions`` (a list, or an ``nn.Sequential``) in order on ``input``, in
    ``segments`` chunks, checkpointing all but the last."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)


# -- nested structures of tensors ------------------------------------------------------

def _flatten(obj, out: list):
    """``obj`` with every tensor replaced by its index in ``out`` (appended there)."""
    if isinstance(obj, Tensor):
        out.append(obj)
        return _Slot(len(out) - 1)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_flatten(o, out) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_flatten(o, out) for o in obj)
    if isinstance(obj, dict):
        return {k: _flatten(v, out) for k, v in obj.items()}
    return obj


def _fill(spec, values: list):
    if isinstance(spec, _Slot):
        return values[spec.i]
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        return type(spec)(*(_fill(o, values) for o in spec))
    if isinstance(spec, (list, tuple)):
        return type(spec)(_fill(o, values) for o in spec)
    if isinstance(spec, dict):
        return {k: _fill(v, values) for k, v in spec.items()}
    return spec


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i


# -- the checkpointed region -----------------------------------------------------------

class _CheckpointOp(Op):
    abstract = True
    name = "checkpoint"
    grad_name = "Checkpoint"

    def backward(F, g, saved, node):
        return node.params["region"].backward(F, g, node)


class _Region:
    """One checkpointed call: what recomputation needs, shared by its outputs' nodes."""

    def __init__(self, function, args, kwargs, rng, recompute_ctx, check):
        self.function = function
        self.inputs: list[Tensor] = []
        self.spec = _flatten((args, kwargs), self.inputs)
        self.rng = rng
        self.recompute_ctx = recompute_ctx
        self.check = check
        self.leaves: list[Tensor] = []
        self.meta: list = []
        self.cache = None
        self.pending = 0

    def wrap(self, out):
        outputs: list[Tensor] = []
        out_spec = _flatten(out, outputs)
        input_ids = {id(t) for t in self.inputs}
        input_nodes = {id(t.grad_fn) for t in self.inputs if t.grad_fn is not None}
        wrap = [t.grad_fn is not None and id(t) not in input_ids
                and id(t.grad_fn) not in input_nodes for t in outputs]
        if not any(wrap):
            return out
        self.leaves = self._frontier([t.grad_fn for t, w in zip(outputs, wrap) if w],
                                     input_ids, input_nodes)
        edges = self.inputs + self.leaves
        op = type("Checkpoint", (_CheckpointOp,),
                  {"abstract": True, "saves": tuple(range(len(edges)))})
        self.meta = [(tuple(t._data.shape), t._data.dtype) for t in outputs]
        new = []
        for i, (t, w) in enumerate(zip(outputs, wrap)):
            if not w:
                new.append(t)
                continue
            r = Tensor._make(t._data, True)
            r._version = t._version
            r.grad_fn = Node(op, edges, {"region": self, "index": i}, r)
            new.append(r)
            self.pending += 1
        self.n_wrapped = self.pending
        return _fill(out_spec, new)

    @staticmethod
    def _frontier(roots, input_ids, input_nodes) -> list:
        """Leaves requiring grad reached from ``roots`` without passing an input."""
        leaves: dict[int, Tensor] = {}
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            for nx in node.next:
                if nx is None:
                    continue
                if type(nx) is Node:
                    if id(nx) not in input_nodes:
                        stack.append(nx)
                elif id(nx) not in input_ids:
                    leaves.setdefault(id(nx), nx)
        return list(leaves.values())

    def _recompute(self, create_graph: bool):
        """(inputs the recomputation ran on, its output tensors).  Plain backward: detached
        copies of the inputs (gradients stop there); ``create_graph``: the inputs themselves,
        so the gradients returned are differentiable back through them."""
        detached = []
        for t in self.inputs:
            if create_graph:
                detached.append(t)
                continue
            d = t.detach()
            if t.requires_grad:
                d.requires_grad_(True)
            detached.append(d)
        args, kwargs = _fill(self.spec, detached)
        current = _random.snapshot() if self.rng is not None else None
        if self.rng is not None:
            _random.restore(self.rng)
        try:
            with enable_grad(), self.recompute_ctx:
                out = self.function(*args, **kwargs)
        finally:
            if current is not None:
                _random.restore(current)
        outputs: list[Tensor] = []
        _flatten(out, outputs)
        meta = [(tuple(t._data.shape), t._data.dtype) for t in outputs]
        if self.check and meta != self.meta:
            diffs = [f"output {i}: {a} during the forward, {b} recomputed"
                     for i, (a, b) in enumerate(zip(self.meta, meta)) if a != b]
            if len(meta) != len(self.meta):
                diffs.append(f"{len(self.meta)} tensors during the forward, {len(meta)} "
                             "recomputed")
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following "
                                  "tensors have different metadata than during the forward "
                                  "pass.\n" + "\n".join(diffs))
        return detached, outputs

    def backward(self, F, g, node):
        as_tensors = F is T
        if self.cache is None or self.cache[0] != as_tensors:
            self.cache = (as_tensors, *self._recompute(as_tensors))
        _, detached, outputs = self.cache
        out = outputs[node.params["index"]]
        wrt = [d for d in detached if d.requires_grad] + self.leaves
        grads = [None] * (len(detached) + len(self.leaves))
        if out.requires_grad and wrt:
            gt = g if as_tensors else Tensor._make(np.asarray(g))
            got = _grad([out], wrt, [gt], retain_graph=True, create_graph=as_tensors,
                        allow_unused=True)
            k = 0
            for i, d in enumerate(detached):
                if d.requires_grad:
                    grads[i] = got[k]
                    k += 1
            for j in range(len(self.leaves)):
                grads[len(detached) + j] = got[k + j]
        self.pending -= 1
        if self.pending == 0:               # every output's gradient is out: free the graph
            self.cache = None
            self.pending = self.n_wrapped   # (a retained graph recomputes again)
        if not as_tensors:
            grads = [None if x is None else x._data for x in grads]
        return tuple(grads)
