"""Per-trace guards on tensors and on values eager declared, checked after the call's key
matched (:class:`compiler.guards.Preconditions` holds them beside the Python-state guards
of :mod:`compiler.pystate.guards`).

Each guard kind is one small class, as in :mod:`compiler.pystate.guards`: it writes its
check into the trace's one generated ``check(tensors) -> bool`` (:meth:`TensorGuard.emit`,
its constants bound in the function's globals), explains its own failure
(:meth:`TensorGuard.failure`: None while it holds), and has an :meth:`TensorGuard.ident`
(two traces depending on equal guards share a variant):

* :class:`LiftedTensor` — a tensor the function read but was not handed (a parameter, a
  global): its device, shape, dtype and ``requires_grad``;
* :class:`GradIs` / :class:`GradNone` — a ``.grad`` read at entry was a tensor (of the
  shape and dtype it had, for a held tensor) / was None;
* :class:`Declared` — a value eager declared through ``Tracer.guard_value``
  (``Module.training``, an optimizer's hyperparameters and state);
* :class:`SameTensor` — arguments ``i`` and ``j`` were the same tensor;
* :class:`Memory` — which tensors (arguments, then lifted tensors) share memory, for a
  trace that writes in place;
* :class:`NotLifted` — no argument is a tensor the function also reads directly.
"""

from __future__ import annotations

import weakref

from runtime import device as runtime_device
from runtime import pycode

from .refs import HeldTensor


def memory_pattern(tensors) -> tuple:
    """Which tensors share memory: () when none do, else for each tensor the index of the
    first one over the same memory (part of the call's key for its arguments, and the
    :class:`Memory` guard for arguments with lifted tensors)."""
    roots = []
    for t in tensors:
        d = t._data
        b = d.base
        roots.append(id(d) if b is None else id(b))
    if len(set(roots)) == len(roots):
        return ()
    return tuple(roots.index(r) for r in roots)


def alias_text(pattern) -> str:
    """A memory pattern in words: ``tensors 0/2, tensors 1/3``, or ``none``."""
    if not pattern:
        return "none"
    groups = {}
    for i, g in enumerate(pattern):
        groups.setdefault(g, []).append(i)
    return ", ".join("tensors " + "/".join(map(str, v)) for v in groups.values() if len(v) > 1)


class CheckWriter:
    """The source of one generated ``check(tensors) -> bool``, written by the guards in
    turn, and the constants it reads (``env``, its globals: no loops or tuple unpacking
    per call).

    Fast path: while every lifted tensor still holds the very array it held when traced
    (an optimizer's parameters and state are written in place), its device, shape, dtype
    and memory are those of the trace.  :class:`LiftedTensor` guards write that identity
    test (``same``, a local of the check), the full test run only when it fails
    (``changed``) and the ``requires_grad`` tests run always (``flags``); every other
    guard writes ``lines``, run after them in the order the guards were written."""

    def __init__(self):
        self.env: dict = {}
        self._by_id: dict = {}
        self._n = 0
        self.same: list[str] = []
        self.changed: list[str] = []
        self.flags: list[str] = []
        self.lines: list[str] = []

    def fresh(self, hint: str) -> str:
        """A new global name (for a :class:`~compiler.refs.TensorRef` to bind)."""
        self._n += 1
        return f"{hint}{self._n}"

    def bind(self, obj, hint: str) -> str:
        """The global name ``obj`` is bound to (one name per object and hint: the
        :class:`Memory` guard names the lifted tensors as their own guards do)."""
        name = self._by_id.get((id(obj), hint))
        if name is None:
            name = self.fresh(hint)
            self.env[name] = obj
            self._by_id[id(obj), hint] = name
        return name

    def function(self):
        body = []
        if self.same:
            body.append(f"same = {' and '.join(self.same)}")
            body.append("if not same:")
            body += ["    " + line for line in self.changed]
        if self.flags:
            body.append(f"if {' or '.join(self.flags)}: return False")
        body += self.lines
        src = "def check(tensors):\n" + "".join(f"    {line}\n" for line in body) + \
              "    return True\n"
        self.source = src
        exec(pycode.code(src, "<dyngraph guards>"), self.env)
        return self.env["check"]


def compile_check(guards: list):
    """The guards' checks as one generated function ``check(tensors) -> bool``."""
    w = CheckWriter()
    for g in guards:
        g.emit(w)
    return w.function()


class TensorGuard:
    """One per-trace guard: ``emit`` writes its check, ``failure`` explains it, ``ident``
    identifies it."""

    __slots__ = ()

    def emit(self, w: CheckWriter) -> None:
        raise NotImplementedError

    def failure(self, tensors) -> str | None:
        """None while the guard holds for a call whose tensors are ``tensors``, else why not."""
        raise NotImplementedError

    def ident(self) -> tuple:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self}>"


def _gone():
    return None


def _tname(t) -> str:
    return f"{list(t._data.shape)} {t._data.dtype}"


class LiftedTensor(TensorGuard):
    """A lifted tensor still has the device, shape, dtype and ``requires_grad`` it had
    when traced (checked in full only when it no longer holds the array it held then)."""

    __slots__ = ("tensor", "storage", "shape", "dtype", "requires_grad", "_array")

    def __init__(self, tensor, requires_grad: bool):
        d = tensor._data
        self.tensor, self.requires_grad = tensor, requires_grad
        self.storage, self.shape, self.dtype = type(d), d.shape, d.dtype  # storage: the device
        # (a weak reference: a trace must not keep an array the tensor let go of)
        try:
            self._array = weakref.ref(d)
        except TypeError:  # a storage without weak references: always the full check
            self._array = _gone

    def emit(self, w):
        t, arr = w.bind(self.tensor, "L"), w.bind(self._array, "D")
        s, sh, dt = w.bind(self.storage, "S"), w.bind(self.shape, "SH"), w.bind(self.dtype, "DT")
        w.same.append(f"{t}._data is {arr}()")
        w.changed += [f"d = {t}._data",
                      f"if type(d) is not {s} or d.shape != {sh} or "
                      f"(d.dtype is not {dt} and d.dtype != {dt}): return False"]
        w.flags.append(f"{t}.requires_grad != {w.bind(self.requires_grad, 'RG')}")

    def failure(self, tensors):
        t = self.tensor
        d = t._data
        if type(d) is not self.storage:
            return f"lifted tensor {_tname(t)}: moved to another device"
        if d.shape != self.shape:
            return f"lifted tensor {_tname(t)}: shape {self.shape} != {d.shape}"
        if d.dtype != self.dtype:
            return f"lifted tensor {_tname(t)}: dtype {self.dtype} != {d.dtype}"
        if t.requires_grad != self.requires_grad:
            return f"lifted tensor {_tname(t)}: requires_grad {self.requires_grad} != " \
                   f"{t.requires_grad}"
        return None

    def ident(self):
        return ("LiftedTensor", id(self.tensor), self.shape, self.dtype, self.requires_grad,
                self.storage)

    def __str__(self):
        device = runtime_device.of_type(self.storage).type
        return f"lifted tensor {list(self.shape)} {self.dtype} on {device}, " \
               f"requires_grad={self.requires_grad}"


class GradIs(TensorGuard):
    """``.grad`` of a tensor (an argument or a held tensor) is a tensor at entry; of a held
    tensor, also of the shape and dtype it had when traced."""

    __slots__ = ("ref", "shape", "dtype")

    def __init__(self, ref):
        g = ref.tensor._grad if isinstance(ref, HeldTensor) else None
        self.ref = ref
        self.shape = None if g is None else g._data.shape
        self.dtype = None if g is None else g._data.dtype

    def emit(self, w):
        w.lines += [f"g = {self.ref.expr(w.env, w.fresh('O'))}._grad",
                    "if g is None: return False"]
        if self.shape is not None:
            w.lines.append(f"if g._data.shape != {w.bind(self.shape, 'GS')} or "
                           f"g._data.dtype != {w.bind(self.dtype, 'GD')}: return False")

    def failure(self, tensors):
        leaf = self.ref.resolve(tensors)
        g = leaf._grad
        if g is None:
            return f".grad of {_tname(leaf)}: was a tensor, is None"
        if self.shape is not None and (g._data.shape != self.shape or
                                       g._data.dtype != self.dtype):
            return f".grad of {_tname(leaf)}: {self.shape} {self.dtype} != " \
                   f"{g._data.shape} {g._data.dtype}"
        return None

    def ident(self):
        return ("GradIs", self.ref.ident())

    def __str__(self):
        what = "" if self.shape is None else f" {list(self.shape)} {self.dtype}"
        return f".grad of {self.ref.describe()} is a tensor{what}"


class GradNone(TensorGuard):
    """``.grad`` of a tensor (an argument or a held tensor) is None at entry."""

    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref

    def emit(self, w):
        w.lines.append(f"if {self.ref.expr(w.env, w.fresh('O'))}._grad is not None: "
                       "return False")

    def failure(self, tensors):
        leaf = self.ref.resolve(tensors)
        if leaf._grad is not None:
            return f".grad of {_tname(leaf)}: was None, is a tensor"
        return None

    def ident(self):
        return ("GradNone", self.ref.ident())

    def __str__(self):
        return f".grad of {self.ref.describe()} is None"


class Declared(TensorGuard):
    """A Python value eager declared through ``Tracer.guard_value``: ``getter()`` still
    gives ``value`` (``where`` names it).  A getter with a ``holds()`` method (the lifted
    tensors' facts, an optimizer's signature) has that cheaper test of it."""

    __slots__ = ("where", "getter", "value")

    def __init__(self, where: str, getter, value):
        self.where, self.getter, self.value = where, getter, value

    def emit(self, w):
        holds = getattr(self.getter, "holds", None)
        if holds is not None:
            w.lines.append(f"if not {w.bind(holds, 'H')}(): return False")
        else:
            w.lines.append(f"if {w.bind(self.getter, 'P')}() != {w.bind(self.value, 'V')}: "
                           "return False")

    def failure(self, tensors):
        now = self.getter()
        if now != self.value:
            return f"{self.where}: {self.value!r} != {now!r}"
        return None

    def ident(self):
        return ("Declared", self.where)

    def __str__(self):
        text = repr(self.value)
        return f"{self.where} == {text}" if len(text) <= 60 else f"{self.where} unchanged"


class SameTensor(TensorGuard):
    """Arguments ``i`` and ``j`` (indices among the call's tensors) are the same tensor."""

    __slots__ = ("i", "j")

    def __init__(self, i: int, j: int):
        self.i, self.j = i, j

    def emit(self, w):
        w.lines.append(f"if tensors[{self.i}] is not tensors[{self.j}]: return False")

    def failure(self, tensors):
        if tensors[self.i] is not tensors[self.j]:
            return f"arguments {self.i} and {self.j} were the same tensor"
        return None

    def ident(self):
        return ("SameTensor", self.i, self.j)

    def __str__(self):
        return f"arguments {self.i} and {self.j} are the same tensor"


class Memory(TensorGuard):
    """For a trace that writes in place: which of (the call's tensors, then the lifted
    tensors) share memory, as when traced."""

    __slots__ = ("pattern", "lifted", "_lifted_roots")

    def __init__(self, pattern: tuple, lifted: list):
        self.pattern, self.lifted = pattern, list(lifted)
        self._lifted_roots = frozenset(id(t._data) if t._data.base is None else
                                       id(t._data.base) for t in self.lifted)

    def emit(self, w):
        lifted = ", ".join(w.bind(t, "L") for t in self.lifted)
        full = f"if {w.bind(memory_pattern, 'memory_pattern')}(list(tensors) + [{lifted}]) " \
               f"!= {w.bind(self.pattern, 'MEMORY')}: return False"
        if self.pattern == () and w.same:
            # no sharing when traced, the lifted arrays unchanged (``same``, written by the
            # LiftedTensor guards before this one): the arguments share memory neither with
            # each other nor with a lifted tensor
            roots = w.bind(self._lifted_roots, "LIFTED_ROOTS")
            w.lines += ["if same:", "    roots = set()", "    for t in tensors:",
                        "        d = t._data", "        b = d.base",
                        "        r = id(d) if b is None else id(b)",
                        f"        if r in roots or r in {roots}: return False",
                        "        roots.add(r)",
                        "else:", "    " + full]
        else:
            w.lines.append(full)

    def failure(self, tensors):
        now = memory_pattern(list(tensors) + self.lifted)
        if now != self.pattern:
            return f"tensors sharing memory (arguments, then lifted tensors): " \
                   f"{alias_text(self.pattern)} != {alias_text(now)}"
        return None

    def ident(self):
        return ("Memory", self.pattern)

    def __str__(self):
        return f"tensors sharing memory (arguments, then lifted tensors): " \
               f"{alias_text(self.pattern)}"


class NotLifted(TensorGuard):
    """No argument is a tensor the function also reads directly (a lifted tensor)."""

    __slots__ = ("ids",)

    def __init__(self, lifted: list):
        self.ids = frozenset(id(t) for t in lifted)

    def emit(self, w):
        w.lines += ["for t in tensors:",
                    f"    if id(t) in {w.bind(self.ids, 'LIFTED_IDS')}: return False"]

    def failure(self, tensors):
        for i, t in enumerate(tensors):
            if id(t) in self.ids:
                return f"argument {i} is a tensor the function also reads directly"
        return None

    def ident(self):
        return ("NotLifted", self.ids)

    def __str__(self):
        return "no argument is a tensor the function also reads directly"


def tensor_guards(lifted, grad_inputs, grad_none, declared, same_args, memory=None) -> list:
    """The guards of one trace, in the order they are checked: ``lifted`` (tensor,
    requires_grad at entry) pairs, ``grad_inputs``/``grad_none``
    :class:`~compiler.refs.TensorRef` lists, ``declared`` :class:`Declared` guards,
    ``same_args`` (i, j) pairs, and the memory pattern of a trace that writes in place
    (None otherwise)."""
    tensors = [t for t, _ in lifted]
    guards: list[TensorGuard] = [LiftedTensor(t, rg) for t, rg in lifted]
    guards += [GradIs(r) for r in grad_inputs]
    guards += [GradNone(r) for r in grad_none]
    guards += declared
    guards += [SameTensor(i, j) for i, j in same_args]
    if memory is not None:
        guards.append(Memory(memory, tensors))
    if tensors:
        guards.append(NotLifted(tensors))
    return guards
