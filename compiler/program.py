"""Replaying traces: a :class:`Path` is one recorded path through the function, compiled;
a :class:`Variant` holds the paths of one cache key and preconditions as a tree keyed by
branch outcomes.

A forward program returns, in order: the user's output tensors, the final values of
tensors written in place (write-backs), the new ``.grad`` values, and the values the
compiled backward needs (saved).  Nothing visible changes until every guard has passed;
then write-backs are applied, ``.grad`` set, and outputs wrapped in tensors — with one
grad node per differentiable output whose backward runs the compiled backward program.
"""

from __future__ import annotations

import numpy as np

from eager import random as _random
from eager.autograd.node import Node
from eager.dispatch import copy_into, dispatch
from eager.ops.base import A, Op
from eager.tensor import Tensor

from .ir import Const, Graph, Guard, GuardFailed, Value
from .pystate.effects import apply_all as apply_all_effects

_NOT_COMPILED = "not compiled"


class BackwardProgram:
    """The compiled backward of one differentiable output."""

    __slots__ = ("graph", "_program", "_make", "saved_slots", "targets", "forward_graph")

    def __init__(self, graph, make, saved_slots, targets, forward_graph):
        """``make()`` compiles the program when a backward first needs it: many outputs
        (a returned loss read with ``.item()``) are never differentiated."""
        self.graph = graph              # inputs: [grad of the output] + saved values
        self._program = None
        self._make = make
        self.saved_slots = saved_slots  # indices into the forward program's outputs
        self.targets = targets          # indices into the path's diff tensors
        self.forward_graph = forward_graph

    @property
    def program(self):
        """The compiled program, or None where compiling it failed (the backward then runs
        its graphs through dispatch: eager's values, slower)."""
        p = self._program
        if p is None:
            p = self._program = self._make() or _NOT_COMPILED
        return None if p is _NOT_COMPILED else p

    @program.setter
    def program(self, program) -> None:
        self._program = program


class CompiledBackward(Op):
    """Grad node op of a compiled output: runs the compiled backward program.

    Plain backward runs the compiled program on arrays.  With ``create_graph=True`` the
    forward and backward graphs are re-run through dispatch on the saved input tensors, so
    the gradient is itself differentiable.
    """
    abstract = True
    name = "compiled"
    grad_name = "CompiledFunction"

    def backward(F, g, saved, node):
        bw: BackwardProgram = node.params["backward"]
        program = bw.program if F is A else None
        if program is not None:
            if not g.flags.c_contiguous:  # a broadcast from sum's backward: native code
                g = g.copy()              # takes C arrays (a refused call costs ~60 us)
            grads = program(g, *saved)
        else:
            path, tensors = node.params["path"], node.params["tensors"]
            inputs = [tensors[i] for i in path.input_slots] + list(path.lifted) + \
                [r.resolve(tensors)._grad for r in path.grad_inputs] + \
                [Tensor._make(a) for a in node.params.get("scalars", ())]
            if F is A:  # the program could not be compiled: the graphs, on arrays' values
                grads = [None if x is None else x._data
                         for x in _backward_as_tensors(bw, Tensor._make(g), inputs)]
            else:
                grads = _backward_as_tensors(bw, g, inputs)
        out = [None] * len(node.next)
        for gi, k in zip(grads, bw.targets):
            out[k] = gi
        return out


def _backward_as_tensors(bw: BackwardProgram, g, inputs):
    fg = bw.forward_graph
    env = {}
    for v, t in zip(fg.inputs, inputs):
        env[v.id] = t
    _run_tensors(fg, env)
    bg = bw.graph
    benv = {bg.inputs[0].id: g}
    for v in bg.inputs[1:]:
        benv[v.id] = env[v.id]
    _run_tensors(bg, benv)
    return [benv[v.id] for v in bg.outputs]


def _run_tensors(graph: Graph, env: dict) -> None:
    """Run a graph through dispatch on Tensors (builds an eager autograd graph)."""
    for n in graph.nodes:
        if n.op is Guard:
            continue
        if n.op is Const:
            env[n.out.id] = Tensor._make(n.params["value"])
            continue
        args = [env[a.id] if type(a) is Value else a for a in n.inputs]
        env[n.out.id] = dispatch(n.op, *args, **n.params)


class Path:
    """One compiled path through the function for one key."""

    def __init__(self, *, graph, program, outcomes, input_slots, lifted, grad_inputs,
                 out_spec, n_outputs, writebacks, wb_backwards, grad_writes, saved_slots,
                 backwards,
                 diff_sources, has_random, guards, effects=(), view_outputs=(),
                 scalar_inputs=()):
        self.graph = graph
        self.program = program
        self.outcomes = outcomes          # tuple of guard outcomes along this path
        self.input_slots = input_slots    # flat-tensor index for each unique graph input
        self.lifted = lifted              # tensors read at every call
        self.grad_inputs = grad_inputs    # leaves whose .grad is read at every call
        self.out_spec = out_spec
        self.n_outputs = n_outputs
        self.writebacks = writebacks      # (TensorRef, output index)
        self.wb_backwards = wb_backwards  # per write-back: BackwardProgram or None
        self.grad_writes = grad_writes    # (TensorRef of the leaf, output index or None)
        self.saved_slots = saved_slots
        self.backwards = backwards        # per user output: BackwardProgram or None
        self.diff_sources = diff_sources  # refs (compiler.refs) in target order
        self.has_random = has_random
        self.guards = guards              # (where, kind, expected) per branch guard
        self.effects = list(effects)      # Python side effects to replay (pystate.effects)
        self.view_outputs = list(view_outputs)  # outputs eager made as views of graph values
        self.scalar_inputs = list(scalar_inputs)  # (Source, dtype): dynamic Python numbers
        self.hits = 0
        self.superseded = False   # a later variant of the same key was recorded
        self.build_later = None   # its kernel build, until submitted (first hit, wait())
        self.python_replays = None  # replays run as generated Python before its kernels
        # one output tensor, nothing written back, no grad node: the common inference call
        self.simple = (out_spec == ("out", 0) and not writebacks and not grad_writes
                       and not any(b is not None for b in backwards) and not effects)
        self.feed_simple = not lifted and not grad_inputs and not scalar_inputs
        # one differentiable output and nothing else to do: the compiled-forward,
        # eager-backward call (``compile(model)`` then ``loss.backward()``)
        self.one_diff = (out_spec == ("out", 0) and n_outputs == 1 and not writebacks
                         and not grad_writes and not effects and not any(view_outputs)
                         and type(backwards[0]) is BackwardProgram)
        # whether finish() hangs outputs under compiled backward nodes (which need to know
        # the user-visible tensor over each saved value's memory)
        self.attaches = any(type(b) is BackwardProgram for b in list(backwards) +
                            list(wb_backwards))

    def arrays(self, tensors, args=(), kwargs=None) -> list:
        if self.feed_simple and len(self.input_slots) == len(tensors):
            return [t._data for t in tensors]
        arrs = [tensors[i]._data for i in self.input_slots]
        for t in self.lifted:
            arrs.append(t._data)
        for r in self.grad_inputs:
            arrs.append(r.resolve(tensors)._grad._data)
        for src, dtype in self.scalar_inputs:
            arrs.append(np.asarray(src.read(args, kwargs), dtype))
        return arrs

    def finish(self, outs: list, tensors, apply_effects: bool = True, args=(), kwargs=None):
        """Apply write-backs, grad writes and Python effects, and build the user's result:
        output tensors hang in the autograd graph under nodes running the compiled
        backward, whose saved values keep eager's version checks (an in-place write to a
        saved output or input before ``backward()`` raises as in eager)."""
        if self.simple:
            return Tensor._make(outs[0])
        if self.one_diff:
            t = Tensor._make(outs[0])
            self._attach(t, self.backwards[0], outs, tensors, None, args, kwargs)
            return t
        written = []
        for (r, k), bw in zip(self.writebacks, self.wb_backwards):
            t = r.resolve(tensors)
            if outs[k] is not t._data:  # else the kernel already wrote into t's storage
                copy_into(t._data, outs[k])
            t._version[0] += 1
            if bw is not None:
                written.append((t, bw))
        for r, k in self.grad_writes:
            r.resolve(tensors)._grad = None if k is None else Tensor._make(outs[k])
        if self.effects and apply_effects:
            apply_all_effects(self.effects, outs, args, kwargs)
        wrapped = []
        visible = None  # memory root -> the user-visible tensor over it
        if self.attaches:
            visible = {}
            for t in tensors:
                visible.setdefault(_root(t._data), t)
            for t in self.lifted:
                visible.setdefault(_root(t._data), t)
        shared = {}  # memory root -> first output over it: views of it share its counter
        for i in range(self.n_outputs):
            t = Tensor._make(outs[i])
            root = _root(outs[i])
            if visible is not None:
                visible.setdefault(root, t)
            first = shared.setdefault(root, t)
            if first is not t:
                t._version = first._version
            wrapped.append(t)
        for t, bw in written:
            if isinstance(bw, BackwardFails):
                t.requires_grad = True
                t.grad_fn = Node(_Fails, (), {"message": bw.message}, t)
            else:
                self._attach(t, bw, outs, tensors, visible, args, kwargs)
        for t, is_view in zip(wrapped, self.view_outputs):
            if is_view:  # as in eager, writing into it in place is refused
                base = t._data.base
                t._base = Tensor._make(t._data if base is None else base, True)
        for t, bw in zip(wrapped, self.backwards):
            if bw is FREED:  # eager's output had a graph that a backward inside freed
                t.requires_grad = True
                t.grad_fn = _freed_node(t)
            elif isinstance(bw, BackwardFails):
                t.requires_grad = True
                t.grad_fn = Node(_Fails, (), {"message": bw.message}, t)
            elif bw is not None:
                self._attach(t, bw, outs, tensors, visible, args, kwargs)
        return build(self.out_spec, wrapped, tensors)

    def _attach(self, t: Tensor, bw: BackwardProgram, outs, tensors, visible, args,
                kwargs) -> None:
        """Hang ``t`` in the autograd graph under a node running the compiled backward
        (which keeps this call's dynamic numbers for a backward run as tensor ops)."""
        diff = [r.resolve(tensors) for r in self.diff_sources]
        params = {"backward": bw, "path": self, "tensors": tensors}
        if self.scalar_inputs:
            params["scalars"] = [np.asarray(src.read(args, kwargs), dtype)
                                 for src, dtype in self.scalar_inputs]
        node = Node(CompiledBackward, diff, params, t)
        saved = []
        if visible is None and bw.saved_slots:   # one output: the inputs and it
            visible = {}
            for u in tensors:
                visible.setdefault(_root(u._data), u)
            for u in self.lifted:
                visible.setdefault(_root(u._data), u)
            visible.setdefault(_root(outs[0]), t)
        for k in bw.saved_slots:
            owner = visible.get(_root(outs[k]))
            saved.append((outs[k], None) if owner is None else (_Saved(owner, outs[k]),
                                                                owner._version[0]))
        node.saved = saved
        t.requires_grad = True
        t.grad_fn = node


def _root(a: np.ndarray) -> int:
    b = a.base
    return id(a) if b is None else id(b)


class _Saved:
    """A saved value of a compiled backward that lies in a tensor the user can write to:
    checked against that tensor's version counter, read as the saved array."""

    __slots__ = ("_version", "_data")

    def __init__(self, owner: Tensor, arr):
        self._version = owner._version
        self._data = arr


FREED = "freed"


class _Freed(Op):
    abstract = True
    name = "compiled"
    grad_name = "CompiledFunction"


def _freed_node(t: Tensor) -> Node:
    node = Node(_Freed, (), {}, t)
    node.saved = None  # a backward raises PyTorch's "second time" error, as eager would
    return node


class BackwardFails:
    """Eager's backward through this output raises (a value it saved was written in place
    inside the function): the replayed output's backward raises the same error."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


class _Fails(Op):
    abstract = True
    name = "compiled"
    grad_name = "CompiledFunction"

    def backward(F, g, saved, node):
        raise RuntimeError(node.params["message"])


def build(spec, outs, tensors):
    kind = spec[0]
    if kind == "out":
        return outs[spec[1]]
    if kind == "arg":
        return tensors[spec[1]]
    if kind == "const":
        return spec[1]
    if kind == "scalar":  # a dynamic Python number the function returned
        return spec[2](outs[spec[1]]._data)
    if kind == "tuple":
        return tuple(build(s, outs, tensors) for s in spec[1])
    if kind == "list":
        return [build(s, outs, tensors) for s in spec[1]]
    if kind == "dict":
        return {k: build(s, outs, tensors) for k, s in spec[1]}
    if kind == "namedtuple":
        return spec[1](*[build(s, outs, tensors) for s in spec[2]])
    raise AssertionError(kind)


class Variant:
    """The paths recorded for one key under one set of preconditions, as a tree."""

    def __init__(self, pre):
        self.pre = pre
        self.paths: list[Path] = []
        self.tree: dict[tuple, Path] = {}   # outcome prefix (incl. the last outcome) -> path
        self.last: Path | None = None

    def add(self, path: Path) -> None:
        self.paths.append(path)
        oc = path.outcomes
        self.tree.setdefault((), path)
        for i in range(len(oc)):
            self.tree.setdefault(oc[:i + 1], path)
        self.last = path

    def run(self, tensors, args=(), kwargs=None):
        """(path, outputs) of a path whose guards all pass, or (None, (path, guard index,
        outcome seen)) when no recorded path took that outcome."""
        path = self.last
        state = None
        while True:
            if path.has_random and state is None:
                state = _random.snapshot()  # every generator: a failed replay may have drawn
            try:
                outs = path.program.fn(*path.arrays(tensors, args, kwargs))
                self.last = path
                return path, outs
            except GuardFailed as e:  # raised before any in-place write (guards come first)
                prefix = path.outcomes[:e.index] + (e.seen,)
                nxt = self.tree.get(prefix)
                if state is not None:
                    _random.restore(state)
                if nxt is None or nxt is path:
                    return None, (path, e.index, e.seen)
                path = nxt
            except Exception as e:
                # a program that may have written into inputs cannot be rerun eagerly
                e.after_writes = path.program.wrote_before(e)
                if state is not None:  # the eager rerun draws the same numbers
                    _random.restore(state)
                raise
