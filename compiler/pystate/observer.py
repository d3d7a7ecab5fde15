"""The observer: watches the Python frames a trace runs, instruction by instruction, and
turns what they read and write into guards and replayable effects.

While the one-time eager trace of a compiled function runs, ``sys.settrace`` reports each
instruction of the user's frames (and of ``nn.Module`` methods) before it executes.  The
observer keeps, beside the real value stack (read through :mod:`.peek`), a stack of
:class:`~.prov.Prov` records: for every value, whether a replay would see the same one
(``det``), whether it was made during the call (``fresh``), and a path to read it again
(``source``).  From them:

* a read from state that outlives the call (an attribute of ``self``, a global, a dict
  item, a closure cell...) becomes a guard on that path (:mod:`.guards`);
* a container whose items the code consumes (iterates, unpacks, tests, passes to C code)
  is guarded on its items;
* a write to such state is recorded as an effect (:mod:`.effects`) to replay on every call
  or makes the function run eagerly;
* anything the observer cannot follow (an unknown built-in such as ``random.random``, a
  value whose origin it lost) is a reason to run eagerly, named with its source line.

Frames of eager's own code (tensor ops, functional, optimizers, the compiler) are not
watched: they read only their arguments and declare the state they depend on
(``eager._state.guarded``).  Methods of ``nn.Module`` objects are watched like user code.
"""

from __future__ import annotations

import collections
import dis
import functools
import gc
import os
import sys
import types
import weakref

import numpy as np

from eager.amp.grad_scaler import GradScaler
from eager.nn.module import Module
from eager.ops.base import OPS
from eager.optim.lr_base import LRScheduler
from eager.tensor import Tensor

from . import bytecode, peek

if sys.version_info >= (3, 12):
    from . import bytecode_312  # noqa: F401  (registers 3.12's and 3.13's instructions)
from .base import (
    OUR_DIRS,
    Unsure,
    UnsureThisCall,
    library_file,
    line_of,
    our_file,
    trusted_file,
    where,
)
from .guards import (
    Content,
    Equals,
    Is,
    Len,
    TooLarge,
    TypeIs,
    is_immutable_value,
    snapshot,
    snapshot_objects,
)
from .params import CO_VARARGS, bind, param_names, star_params, varargs_provs
from .prov import DET, FRESH, Prov, persistent
from .sources import Arg, Attr, Fixed, Item, rooted_at_arg
from .symbolic import is_sym, specialize

_NOT_WATCHED_METHODS = {"__getattr__", "__setattr__", "__delattr__"}
#: code never watched whatever its frame holds (eager's own code outside the module layer,
#: op forwards/backwards, ``__del__``): the trace function's first test, since it is called
#: for every Python call while a trace records (thousands per training step).  Keyed by
#: id (a code object's hash reads its whole contents), holding the code so the id stays its
_NEVER_WATCHED: dict = {}
_NO_VALUE = object()


class FrameState:
    """What the observer knows about one frame: its stack and variables' provenance."""

    __slots__ = ("frame", "code", "instrs", "following", "handlers", "stack", "locals",
                 "cells", "finish", "kwnames", "child", "func", "fresh_func", "parent", "ret",
                 "yielded", "exc", "hints")

    def __init__(self, frame, parent):
        self.frame = frame
        self.code = frame.f_code
        self.instrs, self.following, self.handlers = _code_info(self.code)
        self.stack: list[Prov] = []
        self.locals: dict[str, Prov] = {}
        self.cells: dict[str, Prov] = {}     # cell variables this frame made: what they hold
        self.finish = None                   # completes the previous instruction
        self.kwnames: tuple = ()
        self.child: Prov | None = None       # what the frame it last called returned
        self.func = None                     # the function object running here
        self.fresh_func = False              # that function was made during the call
        self.parent = parent                 # the watched frame that called this one
        self.ret: Prov | None = None         # what RETURN_VALUE / YIELD_VALUE handed back
        self.yielded = False
        self.exc = False                     # an exception is unwinding through this frame
        self.hints: list = []                # (object, Prov) an instruction hands to the
        #                                      Python code it runs (self of __enter__, ...)


_CODE_INFO: dict = {}


def _code_info(code):
    info = _CODE_INFO.get(id(code))  # (by id: a code object hashes all its bytecode)
    if info is None or info[0] is not code:
        instrs = {i.offset: i for i in dis.get_instructions(code)}
        offsets = list(instrs)
        handlers = {e.target: e.depth + (1 if e.lasti else 0)
                    for e in dis._parse_exception_table(code)}
        info = _CODE_INFO[id(code)] = (code, instrs, dict(zip(offsets, offsets[1:])),
                                       handlers)
    return info[1:]


_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>")


class Observer:
    """Watches one traced call; collects ``guards``, ``effects`` and ``unsure`` reasons."""

    def __init__(self, root, args: tuple, kwargs: dict):
        self.module_cls = Module
        self.observed_cls = _observed_classes()
        self.root_code = _root_code(root)
        self.args, self.kwargs = args, kwargs
        self.guards: list = []
        self.effects: list = []
        self.unsure: list[str] = []
        self.unsure_line = None      # the root function's line where it first gave up
        self.states: dict = {}
        self.written: dict = {}      # (id(obj), key) -> Prov of what this call stored there
        self.mutated: set = set()    # ids of containers this call changed
        self.entry: dict = {}        # id -> snapshot at entry of a container it changed
        self.owned: set = set()      # ids of dicts a Module owns (module epoch covers them)
        self.gen_params: dict = {}   # generator frame -> its parameters' provenance
        self.keep: list = []         # objects guards and effects refer to stay alive
        self._idents: set = set()
        self._started = False
        self._installed = False
        self.root_state = None       # the traced call's own frame
        self.this_call_only = False  # the reason to give up concerns this call only
        self.made: dict = {}         # id -> object made by the call that a replay cannot
        #                              remake (functions, objects of user classes)
        self._prev = None
        # code run asynchronously (garbage-collector callbacks, finalizers) is not the call's
        self._async = {id(c): c for c in (getattr(getattr(cb, "__func__", cb), "__code__", None)
                                          for cb in gc.callbacks) if c is not None}

    # -- installation ----------------------------------------------------------------
    def __enter__(self):
        if not peek.SUPPORTED:
            v = sys.version_info
            self.unsure.append(f"the compiler cannot watch Python {v[0]}.{v[1]} frames yet "
                               f"(supported: {', '.join(peek.VERSIONS)})")
        else:
            peek.enable_opcode_events()
            self._prev = sys.gettrace()  # a debugger or coverage tool: chained, not replaced
            sys.settrace(self._on_call if self._prev is None else self._on_call_chained)
            self._installed = True
        return self

    def __exit__(self, *exc):
        if self._installed:
            sys.settrace(self._prev)
            self._installed = False
        self.states.clear()
        return False

    def _on_call_chained(self, frame, event, arg):
        other = self._prev(frame, event, arg)
        ours = self._on_call(frame, event, arg)
        if ours is None:
            return other
        if other is None:
            return ours
        frame.f_trace_lines = True
        return _Chained(ours, other)

    def give_up(self, why: str, frame=None, this_call_only: bool = False) -> None:
        if not self.unsure:
            self.this_call_only = this_call_only
            self.unsure_line = line_of(frame, self.root_code)  # in the root's body
        reason = f"{why} ({where(frame)})" if frame is not None else why
        if reason not in self.unsure:
            self.unsure.append(reason)
        if self._installed:
            sys.settrace(self._prev)
            self._installed = False
        for f in list(self.states):
            try:
                f.f_trace = None
            except Exception:  # noqa: BLE001
                pass
        self.states.clear()

    # -- frame entry -------------------------------------------------------------------
    def _on_call(self, frame, event, arg):
        code = frame.f_code
        if _NEVER_WATCHED.get(id(code)) is code or self.unsure:
            return None
        st = self.states.get(frame)
        if st is not None:  # a generator resumed: the value sent in is on its stack
            if st.yielded:
                st.yielded = False
                st.stack.append(DET)
            return self._on_event
        if not self._watch(frame):
            return None
        st = FrameState(frame, self.states.get(frame.f_back))
        self.states[frame] = st
        try:
            self._enter(st, frame)
        except (Unsure, peek.LayoutError) as e:
            self.give_up(str(e), frame, isinstance(e, UnsureThisCall))
            return None
        # (f_trace first: 3.13 turns opcode events on for the code when both are set)
        frame.f_trace = self._on_event
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return self._on_event

    def _watch(self, frame) -> bool:
        code = frame.f_code
        if self._async.get(id(code)) is code:
            return False
        if code.co_name == "__del__" or _op_codes().get(id(code)) is code \
                or _WEAK_CALLBACKS.get(id(code)) is code:
            _NEVER_WATCHED[id(code)] = code
            return False
        if code.co_name in _COMPREHENSIONS and frame.f_back in self.states:
            return True  # (3.11: a comprehension is a frame of its own; 3.12 inlines it)
        if not trusted_file(code.co_filename):
            # a library helper called by eager's own code belongs to that code
            if frame.f_back in self.states or (code is self.root_code and not self._started):
                return True
            if library_file(code.co_filename):
                return False
            return not self._made_for_our_code(frame)
        # eager's own code is trusted, except where it handles an object of the classes
        # that keep Python state between calls (modules, LR schedulers, grad scalers: their
        # methods and helpers given one): that code reads and writes the object's state
        # as user code would.  Module attribute access itself is read at LOAD_ATTR instead.
        if not _observed_layer(code.co_filename) or code.co_name in _NOT_WATCHED_METHODS:
            _NEVER_WATCHED[id(code)] = code
            return False
        f_locals = frame.f_locals
        return any(isinstance(f_locals.get(n), self.observed_cls) for n in param_names(code))

    def _made_for_our_code(self, frame) -> bool:
        """Whether ``frame`` runs code made at run time (``<string>``: a dataclass's
        ``__init__``, a module a library ``exec``s) that a library called on behalf of eager's
        own code (numba-cuda building a CUDA op's kernel inside a trace): a library frame
        called it, and the callers above reach our code before any watched frame.  The
        user's own generated code (called by the user, or by our code directly: a
        ``forward`` made by ``exec``) stays watched."""
        if frame.f_code.co_filename != "<string>":
            return False
        f = frame.f_back
        if f is None or not library_file(f.f_code.co_filename):
            return False
        while f is not None and f not in self.states:
            if our_file(f.f_code.co_filename):
                return True
            f = f.f_back
        return False

    def _enter(self, st: FrameState, frame) -> None:
        code = frame.f_code
        st.func = _function_or_none(frame)
        params = param_names(code)
        parent = st.parent
        call = getattr(parent.finish, "call", None) if parent is not None else None
        if not self._started and code is self.root_code:
            self._started = True
            self.root_state = st
            st.locals = self._root_params(params, frame.f_locals)
        elif frame in self.gen_params:  # a generator's first step: bound when it was made
            st.locals, st.fresh_func = self.gen_params.pop(frame)
        elif call is not None:
            st.fresh_func = call.fresh_callee
            st.locals = bind(code, params, call, st.func)
        else:  # called from eager's code or from C: what it passes on is determined
            st.locals = {n: DET for n in params}
            if parent is not None and parent.hints:  # a dunder method run by an instruction
                f_locals = frame.f_locals
                for n in params:
                    v = f_locals.get(n)
                    for obj, prov in parent.hints:
                        if obj is v:
                            st.locals[n] = prov
                            break
        for n in star_params(code):  # *args and **kwargs are made by the call
            if st.locals.get(n, DET).det:
                st.locals[n] = FRESH
        if call is not None and code.co_flags & CO_VARARGS:  # what *args holds
            extra = varargs_provs(code, call, st.func)
            if extra:
                self.items_are(frame.f_locals[star_params(code)[0]], extra)
        if st.func is not None and not st.fresh_func and not trusted_file(code.co_filename):
            self._defaults_read(st, frame, code)
        for name in code.co_cellvars:
            st.cells[name] = st.locals.get(name, DET)

    def _defaults_read(self, st: FrameState, frame, code) -> None:
        """A parameter holding its default read ``func.__defaults__`` (or
        ``__kwdefaults__``), state that outlives the call: guard it there."""
        func = st.func
        f_locals = None
        defaults = func.__defaults__ or ()
        first = code.co_argcount - len(defaults)
        slots = [(n, "__defaults__", j - first, defaults[j - first])
                 for j, n in enumerate(code.co_varnames[first:code.co_argcount], first)]
        kw = func.__kwdefaults__ or {}
        slots += [(n, "__kwdefaults__", n, kw[n]) for n in code.co_varnames[
            code.co_argcount:code.co_argcount + code.co_kwonlyargcount] if n in kw]
        for name, attr, key, default in slots:
            if f_locals is None:
                f_locals = frame.f_locals
            if f_locals.get(name, _NO_VALUE) is not default:
                continue  # passed by the call
            self.keep.append(func)
            src = Item(Attr(Fixed(func), attr), key)
            self.guard_read(src, default, False, frame)
            if not st.locals.get(name, DET).fresh:
                st.locals[name] = persistent(src)

    def _root_params(self, params, f_locals) -> dict:
        provs = {}
        for n in params:
            v = f_locals.get(n)
            src = next((Arg(i, label=n) for i, a in enumerate(self.args) if a is v), None)
            if src is None:
                src = next((Arg(name=k) for k, a in self.kwargs.items() if a is v), None)
            if src is None:  # bound self, functools.partial arguments, defaults
                self.keep.append(v)
                src = Fixed(v, label=n)
            provs[n] = persistent(src)
        return provs

    # -- instructions ------------------------------------------------------------------
    def _on_event(self, frame, event, arg):
        if self.unsure:
            return None
        st = self.states.get(frame)
        if st is None:
            return None
        try:
            if event == "opcode":
                self._step(st, frame)
            elif event == "return":
                if st is self.root_state and not st.yielded:
                    self._check_result(arg)
                self._returned(st, frame)
            elif event == "exception":
                st.exc = True
        except (Unsure, peek.LayoutError) as e:
            self.give_up(str(e), frame, isinstance(e, UnsureThisCall))
            return None
        return self._on_event

    def _step(self, st: FrameState, frame) -> None:
        off = frame.f_lasti
        if st.exc and off in st.handlers:
            # now at the handler: the stack was cut to the handler's depth
            st.exc = False
            st.finish = None
            depth = st.handlers[off]
            keep = st.stack[:depth]
            st.stack = keep + [DET] * (peek.depth(frame) - len(keep))
            st.child = None
        else:
            # (an exception can also be one the instruction handled itself, such as the
            # StopIteration that ends a loop over a generator, which 3.12 reports)
            st.exc = False
            if st.finish is not None:
                fin, st.finish = st.finish, None
                fin(st, off)
        st.child = None
        st.hints = []
        ins = st.instrs.get(off)
        if ins is not None and ins.opname == "EXTENDED_ARG" and _EXTENDED_ARG_EVENTS:
            return  # the instruction it extends has an event of its own (3.12+)
        while ins is not None and ins.opname == "EXTENDED_ARG":
            # the instruction it extends runs without an event of its own (3.11)
            ins = st.instrs.get(ins.offset + 2)
        if ins is None:
            raise Unsure("the compiler lost its place in the bytecode")
        handler = bytecode.HANDLERS.get(ins.opname)
        if handler is None:
            raise Unsure(f"the compiler does not know the instruction {ins.opname}")
        n = peek.depth(frame)
        if n != len(st.stack):
            msg = f"the compiler's model of the bytecode lost count ({len(st.stack)} != {n} " \
                  f"values before {ins.opname})"
            if _CHECK:  # the test suite: a bug in the model, not a reason to run eagerly
                raise AssertionError(f"{msg} at {where(frame)}")
            raise Unsure(msg)
        handler(self, st, frame, ins)

    def _returned(self, st: FrameState, frame) -> None:
        parent = st.parent
        if st.ret is not None and parent is not None:
            parent.child = st.ret
        st.ret = None
        st.finish = None
        if not st.yielded:
            self.states.pop(frame, None)

    def _check_result(self, value) -> None:
        """What the call returns is rebuilt by a replay from the graph's outputs (tensors,
        dynamic numbers), constants and containers of those; an object the call made
        otherwise (a generator, a closure, an object of a user class) would be call 0's."""
        todo = [value]
        while todo:
            v = todo.pop()
            t = type(v)
            if isinstance(v, Tensor) or is_sym(v) or is_immutable_value(v):
                continue
            if t in (list, tuple) or (isinstance(v, tuple) and hasattr(t, "_fields")):
                todo.extend(v)
            elif t is dict:
                todo.extend(v.values())
            elif isinstance(v, (types.GeneratorType, types.CoroutineType,
                                types.AsyncGeneratorType)) or self.made.get(id(v)) is v \
                    or hasattr(t, "__next__") or isinstance(v, _MUTABLE_RESULTS):
                # (an iterator: each call needs its own; a NumPy array or a set the call
                # may have made: a replay would hand back call 0's, mutated since)
                raise Unsure(f"returns a {t.__name__} it made (a replay cannot make it "
                             "anew)")

    def made_object(self, obj) -> None:
        self.made[id(obj)] = obj

    def items_are(self, seq, provs) -> None:
        """``seq`` (made during the call) holds values of these provenances."""
        for i, p in enumerate(provs):
            self.written[(id(seq), i)] = p
        self.keep.append(seq)

    # -- helpers for the handlers -------------------------------------------------------
    def guard(self, g) -> None:
        k = g.ident()
        if k not in self._idents:
            self._idents.add(k)
            self.guards.append(g)

    def is_module(self, obj) -> bool:
        return isinstance(obj, self.module_cls)

    def covered(self, obj) -> bool:
        """Whether guards rooted at ``obj`` are covered by the module epoch."""
        return isinstance(obj, self.module_cls) or id(obj) in self.owned

    def source_of(self, prov: Prov, value):
        """A path to read ``value`` again: its own path when it starts at an argument of
        the call, else the object itself (the trace relies on its identity)."""
        src = prov.source
        if src is not None and rooted_at_arg(src):
            return src
        self.keep.append(value)
        return Fixed(value)

    def guard_read(self, src, value, covered: bool, frame) -> None:
        """Guard that ``src`` still gives ``value``: by value or by identity (a dynamic
        number: by type, its value is an input of the trace)."""
        if is_sym(value):
            self.guard(TypeIs(src, float if isinstance(value, float) else int, covered,
                              where(frame)))
        elif is_immutable_value(value):
            self.guard(Equals(src, value, covered, where(frame)))
        else:
            self.keep.append(value)
            self.guard(Is(src, value, covered, where(frame)))

    def declared_read(self, container, key, value) -> None:
        """eager's code read ``container[key]`` and asks for it to be guarded."""
        self.keep.append(container)
        self.guard_read(Item(Fixed(container), key), value, False, None)

    def consume(self, prov: Prov, value, how: str, frame, sym_ok: bool = False) -> None:
        """``value`` is used by an operation the observer does not see into: ``how`` is
        "content" (its items are read, nested containers too), "items" (its items are
        handed to Python as they are: iteration, ``zip``; what Python then reads of them
        is guarded where it reads), "truth" / "len" (its length), or "use".  A dynamic
        number used where its value matters is specialized (guarded on its value) unless
        ``sym_ok`` (arithmetic, tensor ops: it stays an input)."""
        if value is peek.NULL:
            return
        if not prov.det:
            raise Unsure("uses a value whose origin the compiler lost track of")
        if is_sym(value):
            if not sym_ok:
                specialize(value)
            return
        if prov.fresh or is_immutable_value(value) or isinstance(value, (Tensor, tuple,
                                                                           frozenset)):
            return  # (a tuple's items are guarded where they are used)
        if prov.source is not None and _in_key(prov.source):
            return  # arguments' contents are part of the call's key
        if id(value) in self.mutated:  # its items are in part what this call made them:
            self.entry_read(prov, value, frame)  # the rest is what it held at entry
            return
        t = type(value)
        if t.__module__ == "numpy" and hasattr(value, "shape") and how != "use":
            raise Unsure("reads a NumPy array held outside the function")
        if how == "use" or not _is_container(t):
            return
        src = self.source_of(prov, value)
        cov = id(value) in self.owned
        if how in ("truth", "len"):
            self.guard(Len(src, len(value), cov, where(frame)))
            return
        shallow = how == "items"
        try:
            snap = snapshot(value, depth=1 if shallow else -1)
        except TooLarge:
            raise Unsure(f"reads every item of a {t.__name__} too large to guard") from None
        pinned: list = []
        snapshot_objects(snap, pinned)
        self.keep.append(value)
        self.guard(Content(src, snap, cov, where(frame), shallow))

    def before_change(self, target) -> None:
        """A container made before the call is about to change (an item stored, an
        append): keep what it holds now, its state at entry, for :meth:`entry_read`."""
        if id(target) in self.mutated or id(target) in self.entry or \
                not isinstance(target, _CONTAINERS):
            return
        try:
            self.entry[id(target)] = snapshot(target)
        except TooLarge:
            self.entry[id(target)] = None
        self.keep.append(target)

    def entry_read(self, prov: Prov, value, frame) -> None:
        """The call reads (items, length, truth) a container it changed: what it reads
        depends on what the container held at entry (``len(log)`` after
        ``log.append(x)``), so that is guarded."""
        snap = self.entry.get(id(value), _NOTHING)
        if prov.fresh or snap is _NOTHING or \
                (prov.source is not None and _in_key(prov.source)):
            return
        if snap is None:
            raise Unsure(f"reads a {type(value).__name__} it changed, too large to guard")
        pinned: list = []
        snapshot_objects(snap, pinned)
        self.keep.append(pinned)
        self.guard(Content(self.source_of(prov, value), snap, id(value) in self.owned,
                           where(frame)))

    def wrote(self, target, key, prov: Prov) -> None:
        """This call stored ``prov`` into ``target`` (attribute or item ``key``): later
        reads of it are the call's own, not state to guard."""
        self.written[(id(target), key)] = prov
        self.mutated.add(id(target))
        self.keep.append(target)


class _Chained:
    """A frame's local trace function when another tool traces too: opcode events are
    ours, the rest go to both."""

    __slots__ = ("ours", "other")

    def __init__(self, ours, other):
        self.ours, self.other = ours, other

    def __call__(self, frame, event, arg):
        if self.ours is not None:
            self.ours = self.ours(frame, event, arg)
        if event != "opcode" and self.other is not None:
            self.other = self.other(frame, event, arg)
        return self if self.ours is not None or self.other is not None else None


_CHECK = os.environ.get("DYNGRAPH_CHECK_OBSERVER") == "1"
_EXTENDED_ARG_EVENTS = sys.version_info >= (3, 12)


def _function_or_none(frame):
    try:
        return peek.function(frame)
    except peek.LayoutError:
        return None


def _is_container(t) -> bool:
    return issubclass(t, (list, tuple, dict, set, frozenset))


def _observed_classes() -> tuple:
    """eager's classes whose objects keep Python state between calls: their methods (and
    eager's helpers given one) are watched like user code, so what they read is guarded
    and what they write is replayed (a scheduler's ``step()`` inside a compiled step)."""
    return Module, LRScheduler, GradScaler


#: where the observed classes' code lives (the layers above the ops)
_OBSERVED_DIRS = tuple(OUR_DIRS["eager"] + d + os.sep for d in ("nn", "optim", "amp"))
_OBSERVED_LAYER: dict = {}


def _observed_layer(filename: str) -> bool:
    t = _OBSERVED_LAYER.get(filename)
    if t is None:
        t = _OBSERVED_LAYER[filename] = (
            filename if filename.startswith(_OBSERVED_DIRS) else
            os.path.realpath(filename)).startswith(_OBSERVED_DIRS)
    return t


def _in_key(src) -> bool:
    while hasattr(src, "item"):
        src = src.base
    return isinstance(src, Arg)


_OP_CODES: dict = {}


def _weak_callbacks() -> dict:
    """Code of the standard weak containers' callbacks (``WeakSet``,
    ``WeakValueDictionary``, ``WeakKeyDictionary``), by id.  Like ``__del__``, they run
    where a reference is dropped or the garbage collector runs, at whatever instruction
    the traced code is on: not a call the code makes.  (A ``WeakSet`` member freed while
    a trace recorded broke the graph at an instruction that called nothing; the LSTM
    test's trace, on CPython 3.13, when a collection ran inside the model's forward.)"""
    codes = {}
    for make in (weakref.WeakSet, weakref.WeakValueDictionary, weakref.WeakKeyDictionary):
        fn = getattr(make(), "_remove", None)
        code = getattr(fn, "__code__", None)
        if code is not None:
            codes[id(code)] = code
    return codes


_WEAK_CALLBACKS = _weak_callbacks()


def _op_codes() -> dict:
    """Code of every op's forward(_aux) and backward (eager's op classes, and ones users define),
    by id (a code object hashes its whole bytecode and constants each time): called by
    dispatch with arrays, they are eager's machinery, not Python state."""
    if _OP_CODES.get("n") != len(OPS):
        codes = {}
        for op in OPS.values():
            for fn in (op.forward, op.forward_aux, op.backward):
                code = getattr(fn, "__code__", None)
                if code is not None:
                    codes[id(code)] = code
        _OP_CODES["n"], _OP_CODES["codes"] = len(OPS), codes
    return _OP_CODES["codes"]


_NOTHING = object()
_CONTAINERS = (list, dict, set, collections.deque)

#: mutable values a call may make without the observer seeing a constructor run
_MUTABLE_RESULTS = (np.ndarray, set, bytearray, collections.deque, collections.OrderedDict,
                    collections.defaultdict)


def _root_code(fn):
    while isinstance(fn, functools.partial):
        fn = fn.func
    f = getattr(fn, "__func__", fn)
    code = getattr(f, "__code__", None)
    if code is None:
        code = getattr(type(fn).__call__, "__code__", None)
    return code
