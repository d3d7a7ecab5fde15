"""The backward engine: an iterative walk of grad nodes in dependency order.

Two ways to run the same derivative formulas (see :mod:`eager.ops.base`):

* plain backward: gradients are NumPy arrays and formulas run through ``A`` (the ops'
  forwards on arrays), building no Tensor objects;
* ``create_graph=True``, or a compiler tracer active: gradients are Tensors and
  formulas run through ``T`` (dispatch), so they build a differentiable graph or are
  recorded as IR.

Order is deterministic: nodes are counted by an explicit-stack DFS, then processed
when all their consumers have sent their gradients (no recursion, no sets).

Leaves are counted the same way: a leaf's gradient is accumulated into ``.grad`` as soon
as the last node that sends it one has run (as PyTorch's ``AccumulateGrad``), then its
post-accumulate hooks run (``Tensor.register_post_accumulate_grad_hook``) while the rest
of the backward is still to come.  :func:`queue_callback` runs a function when the
current backward has finished (``DistributedDataParallel`` starts all-reduces from the
hooks and waits for them in such a callback).
"""

from __future__ import annotations

import threading

import numpy as np

from .. import dispatch as _dispatch  # a module: dispatch imports autograd.node
from .._state import STATE
from ..dtypes import upcast_half
from ..factories import ones_like, zeros_like
from ..ops.base import A
from ..tensor import Tensor
from .node import DEVICE_NODES, Node

_ndarray = np.ndarray


class _Running(threading.local):
    """Per thread, as grad mode (threads may run backwards at the same time)."""
    callbacks: list | None = None  # while a backward runs: functions to call at its end


_running = _Running()
_F32 = np.dtype(np.float32)
#: set by :mod:`eager.func.batching`: ``fn(gradient, leaf) -> gradient`` applied to a
#: gradient leaving the engine (into ``leaf.grad``, or returned by ``grad``: leaf None)
#: when it is a Tensor; it sums away batch dimensions of vmaps that have returned (the
#: gradient of a tensor used unbatched inside a vmap is the sum over the samples)
FINAL_GRAD = None


def register_final_grad(fn) -> None:
    """Install the :data:`FINAL_GRAD` hook (vmap's batching does, when it is imported)."""
    global FINAL_GRAD
    FINAL_GRAD = fn


def queue_callback(callback) -> None:
    """Call ``callback()`` once the backward now running has finished (after every leaf's
    ``.grad`` is written), as PyTorch's ``Variable._execution_engine.queue_callback``.
    Callbacks run in the order queued; one may queue another."""
    callbacks = _running.callbacks
    if callbacks is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    callbacks.append(callback)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves."""
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    if isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _run(tuple(tensors), grad_tensors, retain_graph, create_graph, inputs, capture=False)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False, *, _partial=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` (no ``.grad`` writes).

    ``_partial`` (for the compiler): partial derivatives, each input taken as independent
    of the others — the walk stops at the inputs instead of following a non-leaf input's
    history to another input behind it."""
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not "
                               "require grad")
    got = _run(outputs, grad_outputs, retain_graph, create_graph, inputs, capture=True,
               partial=_partial)
    result = []
    for i, (t, g) in enumerate(zip(inputs, got)):
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been "
                    "used in the graph. Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    return tuple(result)


def _run(roots, root_grads, retain_graph, create_graph, inputs, capture, partial=False):
    """Run a backward with its own ``queue_callback`` list."""
    outer, _running.callbacks = _running.callbacks, []
    try:
        return _run_graph(roots, root_grads, retain_graph, create_graph, inputs, capture,
                          partial)
    finally:
        _running.callbacks = outer


def _upcast_half_tensors(items) -> tuple:
    """Tensor-mode :func:`upcast_half`: float16/bfloat16 tensors cast to float32 by ``cast``
    ops (recorded by a tracer, differentiable for create_graph), so a traced or
    create_graph backward computes what the array backward computes."""
    cast = _dispatch.T.cast
    return tuple(cast(x, dtype=_F32) if isinstance(x, Tensor) and x._data.dtype.char in "eE"
                 else x for x in items)


def _run_graph(roots, root_grads, retain_graph, create_graph, inputs, capture,
               partial=False):
    """Run one backward: pick the walk (spine, lean or general), seed, count, walk."""
    autocast = STATE.autocast
    if autocast is not None:
        # a backward inside an autocast region: each backward op runs in the dtypes its
        # forward ran in (as PyTorch), so autocast does not cast the formulas' ops
        STATE.autocast = None
        try:
            return _run_graph(roots, root_grads, retain_graph, create_graph, inputs, capture,
                              partial)
        finally:
            STATE.autocast = autocast
    if retain_graph is None:
        retain_graph = create_graph
    tracing = STATE.tracer is not None
    quiet = False  # the compiler recording a backward: user hooks must not run now
    if tracing:
        # False: the backward reaches history made before the traced call, which a
        # replay cannot run (a graph break): it runs unrecorded, on arrays
        tracing = STATE.tracer.on_backward(roots)
        quiet = STATE.tracer.phase == "backward"
    # on a device other than the CPU the formulas run through dispatch (its kernels),
    # with grad mode as for create_graph: the same formulas, the same engine
    as_tensors = create_graph or tracing or (DEVICE_NODES[0] and _touches_device(roots))
    F = _dispatch.T if as_tensors else A
    if not as_tensors and inputs is None and len(roots) == 1 and not STATE.anomaly:
        chain = _chain(roots[0])
        if chain is not None:
            return _run_chain(roots[0], chain, root_grads, retain_graph)
        if roots[0].grad_fn is not None and (root_grads is None or root_grads[0] is None):
            done = _run_plain(roots[0], retain_graph)
            if done is not None:
                return done

    node_buf, leaf_buf = _seed(roots, root_grads, as_tensors, F)
    # which nodes' totals to capture (autograd.grad / backward(inputs=...))
    want_nodes, want_leaves = _wanted(inputs)
    captured = [None] * (len(inputs) if inputs is not None else 0)
    useful = None if inputs is None else _useful_nodes(list(node_buf), want_nodes, want_leaves)
    # id(leaf) -> gradients still to come, when leaves are accumulated as they complete
    leaf_deps: dict | None = None if capture else {}
    deps = _count_deps(list(node_buf), useful, want_nodes if partial else None, leaf_deps)
    ready = [n for n in node_buf if n not in deps]
    finish = _LeafFinisher(quiet, as_tensors, create_graph, want_leaves)

    prev_mode = STATE.grad_enabled
    if not create_graph:
        STATE.grad_enabled = False
    try:
        _walk(ready, node_buf, leaf_buf, deps, leaf_deps, finish, F, retain_graph,
              as_tensors, not quiet, want_nodes, captured, partial, useful, STATE.anomaly)
        # leaves not finished yet: roots that are leaves, or every leaf when capturing
        for key, (leaf, gl) in leaf_buf.items():
            if capture:
                if leaf._hooks and not quiet:
                    gl = _call_hooks(leaf._hooks, gl, as_tensors)
                k = want_leaves.get(key)
                if k is not None:
                    captured[k] = _final(gl) if as_tensors else Tensor._make(np.asarray(gl))
                continue
            finish(key, leaf, gl)
        callbacks = _running.callbacks
        while callbacks:
            callbacks.pop(0)()
    finally:
        STATE.grad_enabled = prev_mode
    return captured


def _root_grad(t, g, i, as_tensors):
    """The gradient that starts the walk at root ``i``: ones for a scalar, else ``g`` checked."""
    if g is None:
        if t._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs "
                               f"(got an output of shape {tuple(t._data.shape)})")
        return ones_like(t) if as_tensors else np.ones_like(t._data)
    if not isinstance(g, Tensor):
        g = Tensor._make(np.asarray(g, dtype=t._data.dtype))
    if g._data.shape != t._data.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                           f"{tuple(g._data.shape)} and output[{i}] has a shape of "
                           f"{tuple(t._data.shape)}.")
    return g if as_tensors else g._data


def _seed(roots, root_grads, as_tensors, F):
    """The node and leaf buffers holding the roots' gradients (checked) before the walk."""
    if root_grads is not None and len(root_grads) != len(roots):
        raise RuntimeError(f"got {len(root_grads)} gradients for {len(roots)} outputs")
    node_buf: dict = {}   # Node -> gradient flowing into it
    leaf_buf: dict = {}   # id(leaf) -> [leaf, gradient]
    for i, t in enumerate(roots):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        g = _root_grad(t, None if root_grads is None else root_grads[i], i, as_tensors)
        _send(t.grad_fn if t.grad_fn is not None else t, g, node_buf, leaf_buf, F)
    return node_buf, leaf_buf


def _wanted(inputs):
    """``(want_nodes, want_leaves)``: input position by grad node, and by id of a leaf."""
    want_nodes: dict = {}
    if inputs is None:
        return want_nodes, None
    want_leaves: dict = {}
    for k, t in enumerate(inputs):
        if t.grad_fn is None:
            want_leaves[id(t)] = k
        else:
            want_nodes[t.grad_fn] = k
    return want_nodes, want_leaves


def _count_deps(starts, useful, stop_at, leaf_deps) -> dict:
    """Node -> edges into it from nodes to run (leaves into ``leaf_deps``), not past ``stop_at``."""
    deps: dict = {}
    stack = list(starts)
    seen = set(map(id, stack))
    while stack:
        n = stack.pop()
        if stop_at is not None and n in stop_at:
            continue  # an input: nothing behind it counts
        sends = leaf_deps is not None and (useful is None or useful.get(n))
        for nx in n.next:
            if type(nx) is Node:
                if useful is None or nx in useful:
                    deps[nx] = deps.get(nx, 0) + 1
                    if id(nx) not in seen:
                        seen.add(id(nx))
                        stack.append(nx)
            elif nx is not None and sends:
                leaf_deps[id(nx)] = leaf_deps.get(id(nx), 0) + 1
    return deps


def _walk(ready, node_buf, leaf_buf, deps, leaf_deps, finish, F, retain_graph,
          as_tensors=False, hooks=False, want_nodes=None, captured=None, partial=False,
          useful=None, anomaly=False) -> None:
    """Run ready nodes' formulas, routing gradients to nodes and leaves (defaults: lean walk)."""
    add, sum_to, cast = F.add, F.sum_to, F.cast
    while ready:
        node = ready.pop()
        g = node_buf.pop(node)
        if hooks and (node.hooks or node.retains):
            g = _tensor_hooks(node, g, as_tensors)
        if want_nodes and node in want_nodes:
            captured[want_nodes[node]] = _final(g) if as_tensors else \
                Tensor._make(np.asarray(g))
            if partial:
                continue
        if useful is not None and not useful.get(node):
            continue  # no wanted input lies behind this node
        saved = node.saved
        unpacked = node.unpack(as_tensors) if saved is None or saved else ()
        if node.half:  # a float16/bfloat16 op: its maths in float32, rounded once
            if as_tensors:
                g, unpacked = _upcast_half_tensors((g,))[0], _upcast_half_tensors(unpacked)
            else:
                g, unpacked = upcast_half((g,))[0], tuple(upcast_half(unpacked))
        grads = node.op.backward(F, g, unpacked, node)
        if not retain_graph and saved:
            node.saved = None
            node.out_data = None
            node.aux = None
        if anomaly:
            _check_anomaly(node, grads, as_tensors)
        shapes = node.shapes
        dtypes = node.dtypes
        for i, nx in enumerate(node.next):
            if nx is None:
                continue
            gi = grads[i]
            if gi is not None:
                arr = gi._data if as_tensors else gi
                if arr.shape != shapes[i]:
                    gi = sum_to(gi, shape=shapes[i])
                if arr.dtype is not dtypes[i] and arr.dtype != dtypes[i]:
                    gi = cast(gi, dtype=dtypes[i])
            if type(nx) is Node:
                if gi is None or (useful is not None and nx not in useful):
                    continue
                prev = node_buf.get(nx)
                node_buf[nx] = gi if prev is None else add(prev, gi)
                left = deps[nx] - 1
                deps[nx] = left
                if left == 0:
                    ready.append(nx)
                continue
            key = id(nx)
            if gi is not None:
                if not as_tensors and (gi is g or type(gi) is not _ndarray
                                       or gi.base is not None):
                    gi = np.array(gi)  # take ownership: g may be shared elsewhere
                entry = leaf_buf.get(key)
                if entry is None:
                    leaf_buf[key] = [nx, gi]
                else:
                    entry[1] = add(entry[1], gi)
            if leaf_deps is not None:
                left = leaf_deps[key] - 1
                leaf_deps[key] = left
                if left == 0 and key in leaf_buf:  # its last gradient has arrived
                    finish(key, *leaf_buf.pop(key))


def _chain(root):
    """The nodes from ``root`` when the graph is a spine: each node sends to at most one
    node, plus any leaves, and no leaf is reached twice (an MLP, a compiled model under
    its loss), with no node hooks: the common small backward, run without the general
    walk's bookkeeping, each leaf finished when its one gradient arrives.  None
    otherwise."""
    node = root.grad_fn
    if node is None:
        return None
    nodes = []
    leaves = set()
    while True:
        if node.hooks or node.retains:
            return None
        nodes.append(node)
        nxt = None
        for nx in node.next:
            if nx is None:
                continue
            if type(nx) is Node:
                if nxt is not None:
                    return None
                nxt = nx
            else:
                k = id(nx)
                if k in leaves:
                    return None
                leaves.add(k)
        if nxt is None:
            return nodes
        node = nxt


def _run_chain(root, nodes, root_grads, retain_graph):
    """The spine's walk (see :func:`_chain`): one gradient carried from node to node."""
    g = _root_grad(root, None if root_grads is None else root_grads[0], 0, False)
    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = False
    finish = _LeafFinisher(False, False, False, None)
    try:
        for node in nodes:
            saved = node.saved
            unpacked = node.unpack(False) if saved is None or saved else ()
            if node.half:  # a float16/bfloat16 op: its maths in float32
                g, unpacked = upcast_half((g,))[0], tuple(upcast_half(unpacked))
            grads = node.op.backward(A, g, unpacked, node)
            if not retain_graph and saved:
                node.saved = None
                node.out_data = None
                node.aux = None
            g_in = g
            g = None
            for i, nx in enumerate(node.next):
                if nx is None:
                    continue
                gi = grads[i]
                if gi is not None:
                    if gi.shape != node.shapes[i]:
                        gi = A.sum_to(gi, shape=node.shapes[i])
                    if gi.dtype != node.dtypes[i]:
                        gi = A.cast(gi, dtype=node.dtypes[i])
                if type(nx) is Node:
                    g = gi
                elif gi is not None:  # a leaf: this is its whole gradient
                    if gi is g_in or type(gi) is not _ndarray or gi.base is not None:
                        gi = np.array(gi)  # take ownership: g may be shared elsewhere
                    finish(id(nx), nx, gi)
            if g is None:
                break
        callbacks = _running.callbacks
        while callbacks:
            callbacks.pop(0)()
    finally:
        STATE.grad_enabled = prev_mode
    return []


def _run_plain(root, retain_graph):
    """``loss.backward()`` on arrays: the general walk without the set-up this case never
    needs (wanted inputs, capture, tensors, anomaly checks): its own dependency count, then
    the same :func:`_walk` with those features off, in the same order, so the same
    gradients.  None (nothing done) when some node has hooks or retains a grad: the
    general walk runs those."""
    if root.requires_grad is False:
        return None
    if root._data.size != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs "
                           f"(got an output of shape {tuple(root._data.shape)})")
    first = root.grad_fn
    deps: dict = {}
    leaf_deps: dict = {}
    stack = [first]
    seen = {first}
    while stack:   # dependency counts: the general walk's, nodes seen once
        n = stack.pop()
        if n.hooks or n.retains:
            return None
        for nx in n.next:
            if type(nx) is Node:
                deps[nx] = deps.get(nx, 0) + 1
                if nx not in seen:
                    seen.add(nx)
                    stack.append(nx)
            elif nx is not None:
                k = id(nx)
                leaf_deps[k] = leaf_deps.get(k, 0) + 1
    node_buf = {first: np.ones_like(root._data)}
    ready = [first] if first not in deps else []
    finish = _LeafFinisher(False, False, False, None)
    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        _walk(ready, node_buf, {}, deps, leaf_deps, finish, A, retain_graph)
        callbacks = _running.callbacks
        while callbacks:
            callbacks.pop(0)()
    finally:
        STATE.grad_enabled = prev_mode
    return []


class _LeafFinisher:
    """Accumulate one leaf's total gradient: its hooks, ``.grad``, post-accumulate hooks."""

    __slots__ = ("quiet", "as_tensors", "create_graph", "want_leaves")

    def __init__(self, quiet, as_tensors, create_graph, want_leaves):
        self.quiet = quiet
        self.as_tensors = as_tensors
        self.create_graph = create_graph
        self.want_leaves = want_leaves

    def __call__(self, key, leaf, gl) -> None:
        if self.want_leaves is not None and key not in self.want_leaves:
            return
        if self.as_tensors:
            gl = _final(gl, leaf)
        if leaf._hooks and not self.quiet:
            gl = _call_hooks(leaf._hooks, gl, self.as_tensors)
        _accumulate(leaf, gl, self.as_tensors, self.create_graph)
        post = leaf._post_accumulate_hooks
        if post and not self.quiet:
            for hook in list(post):
                hook(leaf)


def _final(g, into=None):
    return g if FINAL_GRAD is None else FINAL_GRAD(g, into)


def _useful_nodes(roots, want_nodes, want_leaves) -> dict:
    """Node -> True when a wanted input lies behind it (so its backward must run).

    Nodes that are wanted inputs themselves map to False unless another wanted input lies
    further behind them; nodes not reachable from the roots are absent.
    """
    order = []  # iterative post-order
    state = {}
    stack = [(n, False) for n in roots]
    while stack:
        n, done = stack.pop()
        if done:
            order.append(n)
            continue
        if n in state:
            continue
        state[n] = False
        stack.append((n, True))
        for nx in n.next:
            if type(nx) is Node and nx not in state:
                stack.append((nx, False))
    useful = {}
    for n in order:  # children come before parents in post-order
        u = False
        for nx in n.next:
            if nx is None:
                continue
            if type(nx) is Node:
                if useful.get(nx) or nx in want_nodes:
                    u = True
                    break
            elif want_leaves is not None and id(nx) in want_leaves:
                u = True
                break
        useful[n] = u
    return useful


def _touches_device(roots) -> bool:
    """Whether the graph behind ``roots`` has a node or root on a non-CPU device (each
    node knows whether one lies behind it: ``Node.dev``)."""
    for t in roots:
        if type(t._data) is not _ndarray:
            return True
        f = t.grad_fn
        if f is not None and getattr(f, "dev", False):
            return True
    return False


def _send(target, g, node_buf, leaf_buf, F):
    if type(target) is Node:
        prev = node_buf.get(target)
        node_buf[target] = g if prev is None else F.add(prev, g)
    else:
        entry = leaf_buf.get(id(target))
        if entry is None:
            leaf_buf[id(target)] = [target, g if isinstance(g, Tensor) else np.array(g)]
        else:
            entry[1] = F.add(entry[1], g)


def _accumulate(leaf: Tensor, g, as_tensors: bool, create_graph: bool) -> None:
    """Add a gradient into ``leaf.grad`` (in place unless building a graph)."""
    old = leaf.grad
    if as_tensors:
        if old is None:
            new = g if create_graph else g.detach()
        else:
            new = old + g
            if not create_graph:
                new = new.detach()
        leaf.grad = new
        return
    if type(g) is not _ndarray:
        g = np.asarray(g)
    if old is None:
        if STATE.tracer is None and g.shape == leaf._data.shape:
            leaf._grad = Tensor._make(g)   # the setter's checks, passed (no tracer to tell)
            return
        leaf.grad = Tensor._make(g)
    elif old._data.shape == g.shape and old._data.dtype == g.dtype and old._data.flags.writeable:
        np.add(old._data, g, out=old._data)
        old._version[0] += 1
    else:
        leaf.grad = Tensor._make(old._data + g)


def _tensor_hooks(node, g, as_tensors):
    if node.hooks:
        g = _call_hooks(node.hooks, g, as_tensors)
    if node.retains:
        for ref in node.retains:
            t = ref()
            if t is None:
                continue
            gt = g if as_tensors else Tensor._make(np.array(g))
            if not as_tensors:
                gt = gt.detach()
            t.grad = gt if t.grad is None else (t.grad + gt).detach()
    return g


def _call_hooks(hooks, g, as_tensors):
    for hook in list(hooks):
        gt = g if as_tensors else Tensor._make(np.asarray(g))
        r = hook(gt)
        if r is not None:
            if not isinstance(r, Tensor):
                raise TypeError(f"a hook must return a Tensor or None, got {type(r).__name__}")
            g = r if as_tensors else r._data
    return g


def _check_anomaly(node, grads, as_tensors):
    for i, gi in enumerate(grads):
        if gi is None:
            continue
        arr = gi._data if as_tensors else np.asarray(gi)
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            what = "nan" if np.isnan(arr).any() else "inf"
            trace = "".join(node.trace or ["(no forward traceback recorded)\n"])
            raise RuntimeError(
                f"Function '{node.name()}' returned {what} values in its {i}th output.\n"
                f"Traceback of the forward call that created this node:\n{trace}")
