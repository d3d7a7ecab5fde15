"""Capture: run the user's function eagerly with a Tracer in eager's tracer slot.

Every dispatched op appends an IR node.  Values are tracked by the identity of the NumPy
array a tensor holds, so a re-wrapped saved output, ``detach()`` and ``.data`` resolve to
the same IR value, and an in-place op rebinds the value for every tensor sharing the array.

What the trace learns besides the nodes:

* **inputs** — tensor arguments, in flattened argument order;
* **lifted** tensors — tensors the function read but neither received nor made (module
  parameters, closure and global tensors); replay reads their current storage each call;
* **grad inputs** — ``p.grad`` read before the function wrote it (read anew each call);
* **guards** — branch guards (``bool(t)``, ``t.item()``...) as IR nodes; Python values
  (``Module.training``, an optimizer's ``lr``) through :meth:`Tracer.guard_value`;
* **write-backs** — in-place writes to inputs/lifted tensors and ``.grad`` assignments,
  applied only after a replay has passed every guard (functionalization);
* **breaks** — reads that leave the graph (``repr``, ``.numpy()``, iteration) and
  unsupported constructs: the function must run eagerly, and the reason says where.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from eager import dtypes as _dt
from eager.autograd.node import Node as GradNode
from eager.dispatch import dispatch
from eager.ops.elementwise import Cast
from eager.tensor import Tensor, storage_device
from eager.tracing import TracerHooks

from .guards import hooks_key
from .ir import Const, Graph, Guard, Node, Value, outcome_key
from .pystate.base import line_of, our_file
from .pystate.symbolic import SymFloat, SymInt, is_sym, specialize
from .pystate.symbolic import plain as sym_plain
from .tensor_guards import Declared

_KINDS = {"bool()": "bool", "item()": "item", "float()": "float", "int()": "int",
          "text()": "text"}


_OURS: dict[str, bool] = {}   # the answers of _is_ours, read inline on the hot path


def _is_ours(filename: str) -> bool:
    """Whether a code file is the project's own (or the import machinery)."""
    r = _OURS[filename] = our_file(filename) or "importlib" in filename
    return r


_BASENAMES: dict[str, str] = {}


def user_frame_line() -> str | None:
    """``file:line`` of the innermost frame outside eager/ and compiler/ (the user's code).
    Called for every recorded op, with the observer's trace function making each Python
    call dearer: no calls but on a file's first sight."""
    f = sys._getframe(2)
    ours = _OURS
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        r = ours.get(fn)
        if r is None:
            r = _is_ours(fn)
        if not r:
            base = _BASENAMES.get(fn)
            if base is None:
                base = _BASENAMES[fn] = os.path.basename(fn)
            return f"{base}:{f.f_lineno} in {code.co_name}"
        f = f.f_back
    return None


_HALF_CHARS = "eE"  # float16, bfloat16 (eager.dtypes.HALF_CHARS)

class GradOf:
    """The ``.grad`` of a leaf, as the target of an in-place write-back."""

    __slots__ = ("leaf",)

    def __init__(self, leaf):
        self.leaf = leaf


class GraphBreak(Exception):
    """Raised inside tracing only when ``fullgraph=True``."""


def _tensor_facts(t: Tensor) -> tuple:
    h, p = t._hooks, t._post_accumulate_hooks
    return type(t), t.grad_fn is None, hooks_key(h, p) if h or p else None


class LiftedFacts:
    """The getter of a :class:`~compiler.tensor_guards.Declared` guard, with its ``holds``
    fast test: every lifted tensor still has the class, leafness and gradient hooks it had
    when traced (the backward eager ran called those hooks; Python may branch on
    ``isinstance(p, Parameter)`` or ``p.is_leaf``).  Arguments carry the same facts in the
    call's key."""

    __slots__ = ("tensors", "facts")

    def __init__(self):
        self.tensors: list = []
        self.facts: list = []

    def add(self, t: Tensor) -> None:
        self.tensors.append(t)
        self.facts.append(_tensor_facts(t))

    def __call__(self) -> list:
        return [_tensor_facts(t) for t in self.tensors]

    def holds(self) -> bool:
        for t, (cls, leaf, hooks) in zip(self.tensors, self.facts):
            if type(t) is not cls or (t.grad_fn is None) is not leaf:
                return False
            if t._hooks or t._post_accumulate_hooks or hooks is not None:
                if _tensor_facts(t)[2] != hooks:
                    return False
        return True


class Tracer(TracerHooks):
    """Records one call of a function into a :class:`Graph` plus its side conditions
    (the hooks of eager's tracer contract, :class:`eager.tracing.TracerHooks`)."""

    def __init__(self, fullgraph: bool = False):
        self.fullgraph = fullgraph
        self.nodes: list[Node] = []
        self.inputs: list[Value] = []
        self.vals: dict[int, Value] = {}       # id(ndarray) -> Value
        self.keep: list = []                   # keeps traced arrays alive (stable ids)
        self.origin: dict[int, Tensor] = {}    # id(ndarray) of an input/lifted -> its tensor
        self.lifted: list[tuple[Tensor, Value]] = []
        self.grad_inputs: list[tuple[Tensor, Value]] = []  # (leaf, value of leaf.grad at entry)
        self.grad_none: list[Tensor] = []      # leaves whose .grad must be None at entry
        self.grad_shadow: dict[int, tuple] = {}  # id(leaf) -> (leaf, Value | None)
        self.writebacks: dict[int, tuple[Tensor, Value]] = {}
        self.py_guards: list[Declared] = []    # values eager declared (guard_value)
        self._guarded: set = set()
        self.breaks: list[str] = []
        self.unsupported: list[str] = []
        # tensors whose next data read is print's str() of a value the trace replays as a
        # print effect (pystate.effects.record_print): one read each, until print returns
        self.print_reads: list = []
        self.text_read = False   # a dynamic number is being formatted (symbolic._as_text)
        # comparisons a dynamic number's own method made (symbolic._compare): the observer
        # tells them from one Python made without asking the number (``1.5 < n``, n an
        # int: float's comparison reads the int itself), whose operand it specializes
        self.compared = 0
        # a float16/bfloat16 value was made or read: compiled code computes those types
        # natively (NumPy matmul of bfloat16 is float32), so that key runs eagerly
        self.half = False
        self.alias_root: dict[int, int] = {}   # id(view array) -> id(root array)
        self.stale: set = set()                # array ids made stale by in-place on an alias
        self.memory: dict = {}                 # id(memory root) -> first input array over it
        self.grad_origin: dict = {}            # id(array of a .grad read at entry) -> leaf
        self.has_syms = False                  # dynamic Python scalars are in play
        self.sym_nodes: list = []              # eager grad nodes saving a dynamic scalar
        self.observer = None                   # the pystate observer of this trace
        self.sym_inputs: list = []             # (Source, Value, int | float) per dynamic one
        self.sym_sources: dict = {}            # id(tensor of a dynamic input) -> Source
        self.sym_casts: dict = {}              # (id(tensor), dtype) -> input read as dtype
        self.n_guards = 0
        self.has_backward = False
        self.root_code = None                  # the compiled function's code object
        self.break_line = None                 # its line where the first break happened
        self.foreign: dict = {}                # id(grad_fn) -> tensor: autograd history
                                               # made before the call (inputs, lifted)
        self.has_random = False
        self.phase = "forward"
        self.entry_rg: dict[int, bool] = {}    # id(tensor) -> requires_grad at entry
        self.lifted_facts = None               # LiftedFacts guard, made at the first lift
        self._next_id = 0

    # -- values ------------------------------------------------------------------------
    def new_value(self, arr: np.ndarray) -> Value:
        v = Value(self._next_id, arr.shape, arr.dtype, storage_device(arr).type)
        self._next_id += 1
        return v

    def bind(self, arr: np.ndarray, v: Value) -> None:
        self.vals[id(arr)] = v
        self.keep.append(arr)

    def add_input(self, t: Tensor) -> Value:
        arr = t._data
        if id(arr) in self.vals:  # the same tensor passed twice
            v = self.vals[id(arr)]
        else:
            v = self.new_value(arr)
            self.bind(arr, v)
            self.origin[id(arr)] = t
            self._note_memory(arr)
        self.entry_rg.setdefault(id(t), t.requires_grad)
        if t.grad_fn is not None:
            self.foreign[id(t.grad_fn)] = t
        self.inputs.append(v)
        return v

    def value_of(self, t: Tensor) -> Value:
        """The Value a tensor holds now, lifting tensors the trace has not seen."""
        arr = t._data
        v = self.vals.get(id(arr))
        if v is None:
            v = self.new_value(arr)
            self.bind(arr, v)
            self.origin[id(arr)] = t
            self.entry_rg.setdefault(id(t), t.requires_grad)
            self.lifted.append((t, v))
            if t.grad_fn is not None:
                self.foreign[id(t.grad_fn)] = t
            self._note_memory(arr)
            if self.lifted_facts is None:
                self.lifted_facts = LiftedFacts()
                self.guard_value("lifted tensors' class, is_leaf and gradient hooks",
                                 self.lifted_facts, self.lifted_facts.facts)
            self.lifted_facts.add(t)
        elif id(arr) in self.stale:
            self._unsupported("a view (or base) was used after an in-place write to an alias "
                              "of it")
        return v

    def _note_memory(self, arr) -> None:
        """Inputs and lifted tensors over the same memory are views of one another: an
        in-place write through one makes the others stale (the trace then runs eagerly)."""
        root = arr if arr.base is None else arr.base
        first = self.memory.setdefault(id(root), arr)
        if first is not arr:
            self.alias_root[id(first)] = id(root)
            self.alias_root[id(arr)] = id(root)
            self.alias_root.setdefault(id(root), id(root))
            self.keep.append(root)

    # -- hooks called by eager ---------------------------------------------------------
    def record(self, op, args, params, t: Tensor) -> None:
        if op.data_dependent_shape:
            self._unsupported(f"{op.name} (its output shape depends on the data)")
        if not self.half:
            if t._data.dtype.char in _HALF_CHARS:
                self.half = True
            for a in args:  # (a loop, not any(genexpr): no generator frame per argument)
                if isinstance(a, Tensor) and a._data.dtype.char in _HALF_CHARS:
                    self.half = True
        if self.has_syms and any(is_sym(a) for a in args):
            inputs = self._sym_operands(op, args, t)
            if t.grad_fn is not None:
                self.sym_nodes.append(t.grad_fn)
        else:
            inputs = [self.value_of(a) if isinstance(a, Tensor) else a for a in args]
        out = self.new_value(t._data)
        self.nodes.append(Node(op, inputs, params, out, user_frame_line()))
        self.bind(t._data, out)
        if op.random:
            self.has_random = True
        if op.view and isinstance(args[0], Tensor):
            root = self.alias_root.get(id(args[0]._data), id(args[0]._data))
            self.alias_root[id(t._data)] = root
            self.alias_root.setdefault(root, root)

    def on_python_read(self, container, key, value) -> None:
        """eager's own code read ``container[key]`` (an optimizer's learning rate): guard
        it as the observer guards the state user code reads."""
        if self.observer is not None:
            self.observer.declared_read(container, key, value)

    # -- dynamic Python scalars (pystate.symbolic) ---------------------------------------
    def new_sym(self, value, source):
        """A dynamic scalar for ``value``, read from ``source`` at every replay."""
        kind = float if isinstance(value, float) else int
        t = Tensor._make(np.array(value, np.float64 if kind is float else np.int64))
        v = self.new_value(t._data)
        self.bind(t._data, v)
        self.sym_inputs.append((source, v, kind))
        self.sym_sources[id(t)] = source
        self.has_syms = True
        return SymFloat(value, t) if kind is float else SymInt(value, t)

    def _sym_input_as(self, st: Tensor, dtype) -> Value:
        key = (id(st), dtype)
        v = self.sym_casts.get(key)
        if v is None:
            arr = np.asarray(st._data, dtype)
            v = self.sym_casts[key] = self.new_value(arr)
            self.keep.append(arr)
            self.sym_inputs.append((self.sym_sources[id(st)], v, None))
        return v

    def unsym_nodes(self) -> None:
        """After the trace: the grad nodes it made save plain numbers, not dynamic ones
        (a backward run after the call, ``create_graph=True`` included, computes with
        this call's values, as eager's nodes do)."""
        for node in self.sym_nodes:
            if node.saved:  # (None once a backward freed it)
                node.saved = [(sym_plain(s[0]), None) if type(s) is tuple and is_sym(s[0])
                              else s for s in node.saved]
        self.sym_nodes.clear()

    def unwrap(self, args, params):
        """Arguments of an op with dynamic scalars replaced by their values (the op's
        forward computes as eager does); a dynamic scalar passed as a keyword parameter
        is specialized (parameters are constants of the node)."""
        plain_args = tuple(sym_plain(a) for a in args)
        if params and any(is_sym(v) for v in params.values()):
            params = {k: specialize(v) for k, v in params.items()}
        return plain_args, params

    def plain_data(self, data):
        """Python data made into a tensor (``eager.tensor``): its numbers are constants."""
        if is_sym(data):
            return specialize(data)
        if isinstance(data, (list, tuple)):
            return type(data)(self.plain_data(x) for x in data)
        return data

    def _sym_operands(self, op, args, t: Tensor) -> list:
        """Node inputs for an op with dynamic scalar operands: each enters as its tensor,
        cast to the dtype eager's promotion gave the Python number (NEP 50)."""
        plain = [sym_plain(a) for a in args]
        dtype = None
        if op.elementwise and op.promotes:
            try:
                dtype = np.dtype(_dt.result_type(*[a._data if isinstance(a, Tensor) else a
                                                    for a in plain]))
            except Exception:  # noqa: BLE001
                dtype = None
        inputs = []
        for a, p in zip(args, plain):
            if is_sym(a):
                if dtype is None or dtype.kind not in "fi" or (
                        dtype.kind == "i" and dtype != np.int64) or (
                        dtype.kind == "i" and isinstance(p, float)):
                    specialize(a)  # not a plain arithmetic operand: guard its value
                    inputs.append(p)
                    continue
                st = a._t
                if st._data.dtype == dtype:
                    inputs.append(self.value_of(st))
                elif id(st) in self.sym_sources:  # read from its place in this dtype
                    inputs.append(self._sym_input_as(st, dtype))
                else:
                    inputs.append(self.value_of(dispatch(Cast, st, dtype=dtype)))
            elif isinstance(a, Tensor):
                inputs.append(self.value_of(a))
            else:
                inputs.append(a)
        return inputs

    def on_new_tensor(self, t: Tensor) -> None:
        """A tensor made from Python data (``eager.tensor([...])``): a constant."""
        out = self.new_value(t._data)
        self.nodes.append(Node(Const, [], {"value": t._data.copy()}, out, user_frame_line()))
        self.bind(t._data, out)

    def on_alias(self, src: Tensor, t: Tensor) -> None:
        pass  # detach() shares the array object: same Value by construction

    def on_branch(self, t: Tensor, value, what: str) -> None:
        v = self.value_of(t)
        where = user_frame_line()
        self.nodes.append(Node(Guard, [v], {"kind": _KINDS[what],
                                           "expected": outcome_key(value),
                                           "index": self.n_guards, "where": where},
                               None, where))
        self.n_guards += 1

    def on_item(self, t: Tensor, value):
        """``t.item()``.  Called from the user's code (a watched frame), the number stays
        the trace's: a dynamic scalar computed by the graph, so a value that only flows
        into arithmetic, the result or stored state needs no guard (an ``if`` on it, or a
        print, still guards it).  Called from eager's own code, it is a guard."""
        if self.print_reads and self._print_read(t):
            return value  # print's str() of a dynamic number: printed anew by each replay
        caller = sys._getframe(2)
        if self.observer is not None and type(value) in (float, int) and \
                caller in self.observer.states:
            scalar = t.reshape(()) if t._data.ndim else t
            wide = np.float64 if type(value) is float else np.int64
            if scalar._data.dtype != wide:
                scalar = dispatch(Cast, scalar, dtype=np.dtype(wide))
            self.has_syms = True
            return SymFloat(value, scalar) if type(value) is float else SymInt(value, scalar)
        self.on_branch(t, value, "text()" if self.text_read else "item()")
        return value

    def printable(self, t: Tensor):
        """The text before ``tensor(...)`` in ``t``'s repr when a replay can print ``t`` as
        eager does, else None: a tensor (or a class whose ``__repr__`` states its
        ``prefix``, as Parameter's does) of a known storage (not vmap's batched tensors),
        not of a half type (eager prints those rounded)."""
        d = t._data
        if not (type(d) is np.ndarray or hasattr(d, "__cuda_array_interface__")) or \
                d.dtype.char in _HALF_CHARS:
            return None
        r = type(t).__repr__
        return "" if r is Tensor.__repr__ else getattr(r, "prefix", None)

    def _print_read(self, t: Tensor) -> bool:
        for i, p in enumerate(self.print_reads):
            if p is t:
                del self.print_reads[i]
                return True
        return False

    def print_done(self) -> None:
        """``print`` returned: reads of its tensors count as reads again."""
        self.print_reads.clear()

    def on_data_read(self, t: Tensor, what: str) -> None:
        if self.print_reads and what == "repr()" and self._print_read(t):
            return  # print of a tensor: a print effect replays it
        where = user_frame_line()
        reason = f"{what} reads tensor data into Python at {where}"
        self._note_break_line()
        if reason not in self.breaks:
            self.breaks.append(reason)
        if self.fullgraph:
            raise GraphBreak(reason)

    def on_unsupported(self, what: str) -> None:
        self._unsupported(what)

    def _unsupported(self, what: str) -> None:
        reason = f"{what} at {user_frame_line()}"
        self._note_break_line()
        if reason not in self.unsupported:
            self.unsupported.append(reason)
        if self.fullgraph:
            raise GraphBreak(reason)

    def _note_break_line(self) -> None:
        """Note the line of the compiled function's own frame running now: where the
        first break happened, in the function's body (see :mod:`compiler.split`)."""
        if self.break_line is None and self.root_code is not None:
            self.break_line = line_of(sys._getframe(2), self.root_code)

    def on_inplace(self, target: Tensor, result: Tensor) -> None:
        """``target`` now holds ``result``'s value (its array was written in place)."""
        arr = target._data
        v = self.vals.get(id(result._data))
        if v is None:
            v = self.value_of(result)
        root = self.alias_root.get(id(arr))
        if root is not None:  # other views of the same memory now hold stale values
            for a, r in self.alias_root.items():
                if r == root and a != id(arr):
                    self.stale.add(a)
            if id(arr) != root or id(arr) not in self.origin:
                if id(arr) in self.origin or root in self.origin:
                    self._unsupported("an in-place write through a view of an input or "
                                      "lifted tensor")
        self.vals[id(arr)] = v
        self.stale.discard(id(arr))
        src = self.origin.get(id(arr))
        if src is not None:
            self.writebacks[id(src)] = (src, v)
        leaf = self.grad_origin.get(id(arr))
        if leaf is not None:  # a .grad that existed before the call, changed in place
            self.writebacks[("grad", id(leaf))] = (GradOf(leaf), v)

    def on_requires_grad(self, t: Tensor, requires_grad: bool) -> None:
        """A tensor made during the call may change its flag (the trace records what
        follows); an argument's or a lifted tensor's flag is state the caller sees, which
        a replay does not set."""
        arr = t._data
        if id(arr) in self.origin or id(arr) not in self.vals:
            self._unsupported("requires_grad_() on a tensor the function did not make")

    def on_grad_get(self, leaf: Tensor) -> None:
        if id(leaf) in self.grad_shadow:
            return
        g = leaf._grad
        if g is None:
            self.grad_none.append(leaf)
            self.grad_shadow[id(leaf)] = (leaf, None)
        else:
            v = self.new_value(g._data)
            self.bind(g._data, v)
            self.grad_origin[id(g._data)] = leaf
            self.grad_inputs.append((leaf, v))
            self.grad_shadow[id(leaf)] = (leaf, v)

    def on_grad_set(self, leaf: Tensor, value) -> None:
        if value is not None:
            self.value_of(value)
        # the tensor, not its value now: an in-place write to it later in the call counts
        self.grad_shadow[id(leaf)] = (leaf, value, "written")

    def on_backward(self, roots) -> bool:
        """A backward inside the call.  One that reaches autograd history made before
        the call (the history of an input or of a tensor read from outside) cannot be
        replayed, its saved tensors being this call's: a graph break, and the backward
        runs unrecorded (False).  The statement holding it runs eagerly when the
        function is split there."""
        if self.phase != "forward":
            return True
        self.has_backward = True
        if self.foreign and self._reaches_foreign(roots):
            self._unsupported("backward() into autograd history made before the compiled "
                              "call (a tensor it received was computed with grad outside "
                              "it)")
            return False
        return True

    def _reaches_foreign(self, roots) -> bool:
        stack = [r.grad_fn for r in roots if getattr(r, "grad_fn", None) is not None]
        seen = set()
        while stack:
            n = stack.pop()
            if id(n) in self.foreign:
                return True
            if id(n) not in seen:
                seen.add(id(n))
                stack.extend(x for x in n.next if type(x) is GradNode)
        return False

    def guard_value(self, where: str, getter, value) -> None:
        """Guard a Python value the trace depends on; ``getter()`` re-reads it.  The first
        read of each ``where`` is what the trace depends on."""
        if where not in self._guarded:
            self._guarded.add(where)
            self.py_guards.append(Declared(where, getter, value))

    # -- result ------------------------------------------------------------------------
    def grad_writes(self) -> list:
        """(leaf, Value or None) for each ``.grad`` the function assigned."""
        return [(e[0], None if e[1] is None else self.vals[id(e[1]._data)])
                for e in self.grad_shadow.values() if len(e) == 3]

    def graph(self, outputs: list) -> Graph:
        ins = self.inputs + [v for _, v in self.lifted] + [v for _, v in self.grad_inputs] + \
            [v for _, v, _ in self.sym_inputs]
        seen = set()
        uniq = []
        for v in ins:
            if v.id not in seen:
                seen.add(v.id)
                uniq.append(v)
        return Graph(uniq, self.nodes, outputs)
