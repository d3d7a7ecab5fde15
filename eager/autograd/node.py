"""Grad nodes: what the forward leaves behind for the backward.

A :class:`Node` is the ``grad_fn`` of one op result.  It keeps the op, one edge per
argument (the argument's own grad node, the leaf tensor itself, or None when no
gradient flows there), the tensors the op's backward needs and their version numbers.
Nodes point at their inputs' nodes, never at tensors they produced, so no reference
cycles form and a graph is freed as soon as its output is.
"""

from __future__ import annotations

import traceback

import numpy as np

from .._state import _State
from ..ops.base import OUT
from ..tensor import Tensor, _HookHandle

_ndarray = np.ndarray
#: becomes True once a grad node on a device other than the CPU exists: only then does a
#: backward look for such nodes (a CPU-only process never pays for the check)
DEVICE_NODES = [False]


class Node:
    __slots__ = ("op", "next", "saved", "shapes", "dtypes", "params", "needs", "hooks",
                 "retains", "trace", "out_data", "out_version", "on_device", "half", "dev",
                 "aux", "__weakref__")

    def __init__(self, op, args, params, out):
        nxt = []
        shapes = []
        dtypes = []
        needs = []
        dev = False
        for a in args:
            if isinstance(a, Tensor):
                d = a._data
                shapes.append(d.shape)
                dtypes.append(d.dtype)
                if a.requires_grad:
                    f = a.grad_fn
                    if f is None:
                        nxt.append(a)
                    else:
                        nxt.append(f)
                        if f.dev:
                            dev = True
                    needs.append(True)
                    continue
            else:
                shapes.append(None)
                dtypes.append(None)
            nxt.append(None)
            needs.append(False)
        self.op = op
        self.next = nxt
        self.shapes = shapes
        self.dtypes = dtypes
        self.needs = needs
        self.params = params
        self.hooks = None
        self.retains = None
        self.out_data = None
        self.out_version = None
        self.aux = None   # what the op's forward_aux handed its backward (dispatch sets it)
        self.half = False  # set by dispatch for a float16/bfloat16 op (engine upcasts)
        self.on_device = type(out._data) is not _ndarray if out is not None else False
        if self.on_device:
            DEVICE_NODES[0] = True
        # this node or one behind it is on a device: its backward runs through dispatch
        self.dev = dev or self.on_device
        saves = op.saves
        if saves:
            saved = []
            for i in saves:
                if i == OUT:
                    self.out_data = out._data
                    self.out_version = (out._version, out._version[0])
                    saved.append(OUT)
                else:
                    a = args[i]
                    saved.append((a, a._version[0]) if isinstance(a, Tensor) else (a, None))
            self.saved = saved
        else:
            self.saved = ()
        # anomaly mode is process-wide: a class attribute (read without the per-thread lookup)
        self.trace = traceback.format_stack()[:-3] if _State.anomaly else None

    # -- PyTorch-compatible introspection -------------------------------------------
    def name(self) -> str:
        return f"{type_name(self.op)}Backward0"

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        out = []
        for n in self.next:
            if n is None or isinstance(n, Node):
                out.append((n, 0))
            else:
                out.append((AccumulateGrad(n), 0))
        return tuple(out)

    @property
    def metadata(self) -> dict:
        return {}

    def register_hook(self, hook):
        raise NotImplementedError("register a hook on the tensor instead: tensor.register_hook")

    def add_hook(self, hook):
        if self.hooks is None:
            self.hooks = []
        return _HookHandle(self.hooks, hook)

    def add_retain(self, tensor) -> None:
        import weakref
        if self.retains is None:
            self.retains = []
        self.retains.append(weakref.ref(tensor))

    # -- saved tensors ---------------------------------------------------------------
    def unpack(self, as_tensors: bool) -> tuple:
        """The saved values as arrays (plain backward) or Tensors (create_graph/tracing)."""
        saved = self.saved
        if saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        out = []
        for entry in saved:
            if entry is OUT:
                counter, v = self.out_version
                if counter[0] != v:
                    self._modified(self.out_data.shape, self.out_data.dtype, counter, v, True)
                if as_tensors:
                    t = Tensor._make(self.out_data, True, self)
                    t._version = counter
                    out.append(t)
                else:
                    out.append(self.out_data)
                continue
            a, v = entry
            if v is None:  # a Python number (a compiler's dynamic one: its value on arrays)
                out.append(a if as_tensors or type(a) in _PLAIN else _value_of(a))
                continue
            if a._version[0] != v:
                self._modified(a._data.shape, a._data.dtype, a._version, v, False)
            out.append(a if as_tensors else a._data)
        return tuple(out)

    def _modified(self, shape, dtype, counter, expected, is_output):
        by = f" by {counter[1]}" if counter[1] else ""
        what = f"output 0 of {self.name()}" if is_output else f"an input of {self.name()}"
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation{by}: [{dtype} {list(shape)}], which is {what}, is at version "
            f"{counter[0]}; expected version {expected} instead. Hint: the backtrace further "
            "above can show the forward op; enable eager.autograd.set_detect_anomaly(True).")


_PLAIN = (np.ndarray, float, int, bool, type(None))


def _value_of(a):
    plain = getattr(a, "_plain", None)  # compiler.pystate.symbolic's numbers
    return plain() if plain is not None else a


class AccumulateGrad:
    """Stands for a leaf in ``next_functions``, as in PyTorch."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    @property
    def next_functions(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def type_name(op) -> str:
    return getattr(op, "grad_name", None) or op.__name__
