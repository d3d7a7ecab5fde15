"""Automatic dynamic scalars: a Python number that changes between calls becomes an input
of the next trace instead of a constant (as ``torch.compile`` does with sizes).

A trace first bakes every Python number it reads and guards it by value.  When a call
misses because such a number changed — a float/int argument (the cache key), or a
number read from Python state (an ``Equals`` guard: ``self.alpha``, ``cfg["lr"]``, a
global) — its place is marked dynamic.  The next trace of the function reads it as a
:class:`~compiler.pystate.symbolic.SymFloat` / ``SymInt`` (an argument is passed as one;
state is temporarily set to one while the trace runs, and restored after), so the trace
takes it as a graph input, read from the same place on every replay.

Python code that needs the concrete value (a comparison in an ``if``, ``int()``, an
index, ``math.sqrt``) still specializes the trace on it with a guard.

``compile(dynamic=...)``: ``None`` is the automatic behaviour above; ``True`` makes every
positional int/float argument (other than a zero or NaN float) an input from the first
trace; ``False`` never makes anything dynamic (every number is a guard, as a trace first
bakes it).  Tensor sizes are static either way (a trace is per shape).
"""

from __future__ import annotations

from .guards import dynamic_value
from .pystate import symbolic
from .pystate.effects import CallMethod, SetAttr, SetCell, SetItem
from .pystate.guards import Equals
from .pystate.sources import Arg, Attr, Cell, Global, Item

_NUMBERS = (int, float)


class DynamicScalars:
    """The places of one compiled function marked dynamic, and their handling while a
    trace runs."""

    def __init__(self, mode: bool | None = None):
        self.mode = mode             # compile(dynamic=...): None automatic, True, False
        self.args: set = set()       # positional indices and keyword names of arguments
        self.sources: dict = {}      # Source.key() -> Source of state read as a number

    # -- marking ---------------------------------------------------------------------
    def mark_from_guard(self, guard) -> bool:
        """A failed guard on a number read from state: its place becomes dynamic."""
        if self.mode is False:
            return False
        if not isinstance(guard, Equals) or type(guard.value) not in _NUMBERS:
            return False
        src = guard.source
        if not isinstance(src, (Attr, Item, Global, Cell)):
            return False
        self.sources[src.key()] = src
        return True

    def mark_args(self, old_key, new_key) -> bool:
        """Top-level positional numbers that differ between two keys become dynamic."""
        if self.mode is False:
            return False
        (old_args, *_), (new_args, *_) = old_key, new_key
        changed = False
        if old_args[0] != "tuple" or new_args[0] != "tuple":
            return False
        for i, (a, b) in enumerate(zip(old_args[1], new_args[1])):
            if a != b and a[0] in ("int", "float") and a[0] == b[0] and len(a) == 2:
                self.args.add(i)
                changed = True
        return changed

    def mark_all(self, args: tuple) -> bool:
        """``dynamic=True``, at the first call: every positional number argument becomes
        dynamic (a new set: other threads may be reading the old one)."""
        if self.mode is not True:
            return False
        new = {i for i, a in enumerate(args) if dynamic_value(a)} - self.args
        if new:
            self.args = self.args | new
        return bool(new)

    # -- while tracing ----------------------------------------------------------------
    def inject(self, tracer, args: tuple, kwargs: dict):
        """(args, restore): the call's arguments with dynamic ones as symbolic scalars, and
        a function putting state back after the trace."""
        if self.args:
            args = list(args)
            for i in self.args:
                if i < len(args) and dynamic_value(args[i]):
                    args[i] = tracer.new_sym(args[i], Arg(i))
            args = tuple(args)
        placed = []
        for src in self.sources.values():
            try:
                value = src.read(args, kwargs)
            except Exception:  # noqa: BLE001 - gone: the trace reads what is there
                continue
            if type(value) not in _NUMBERS:
                continue
            try:
                _write(src, value, args, kwargs)
            except (TypeError, AttributeError):  # a place that cannot hold it (a tuple
                continue                          # item: __defaults__): stays specialized
            sym = tracer.new_sym(value, src)
            _write(src, sym, args, kwargs)
            placed.append((src, value, sym))

        def restore():
            for src, value, sym in placed:
                try:
                    now = src.read(args, kwargs)
                except Exception:  # noqa: BLE001
                    continue
                if now is sym:
                    _write(src, value, args, kwargs)
                elif symbolic.is_sym(now):  # the function stored a new dynamic value
                    _write(src, symbolic.plain(now), args, kwargs)
        return args, restore


def _write(src, value, args, kwargs) -> None:
    if isinstance(src, Attr):
        setattr(src.base.read(args, kwargs), src.name, value)
    elif isinstance(src, Item):
        src.base.read(args, kwargs)[src.item] = value
    elif isinstance(src, Global):
        src.globals[src.name] = value
    elif isinstance(src, Cell):
        src.cell.cell_contents = value


def deep_plain(obj):
    """``obj`` with dynamic scalars replaced by their values (results leaving a trace)."""
    if symbolic.is_sym(obj):
        return symbolic.plain(obj)
    t = type(obj)
    if t in (list, tuple):
        new = [deep_plain(x) for x in obj]
        return new if t is list else tuple(new)
    if t is dict:
        return {k: deep_plain(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
        return t(*[deep_plain(x) for x in obj])
    return obj


def unsym_state(effects) -> None:
    """After a trace: state the function wrote with dynamic scalars gets plain values."""
    for e in effects:
        if isinstance(e, SetAttr):
            v = getattr(e.obj, e.name, None)
            if _has_sym(v):
                setattr(e.obj, e.name, deep_plain(v))
        elif isinstance(e, SetItem):
            try:
                v = e.obj[e.key]
            except Exception:  # noqa: BLE001
                continue
            if _has_sym(v):
                e.obj[e.key] = deep_plain(v)
        elif isinstance(e, SetCell):
            v = e.cell.cell_contents
            if _has_sym(v):
                e.cell.cell_contents = deep_plain(v)
        elif isinstance(e, CallMethod) and isinstance(e.obj, list):
            for i, v in enumerate(e.obj):
                if _has_sym(v):
                    e.obj[i] = deep_plain(v)


def _has_sym(v) -> bool:
    if symbolic.is_sym(v):
        return True
    if type(v) in (list, tuple):
        return any(_has_sym(x) for x in v)
    if type(v) is dict:
        return any(_has_sym(x) for x in v.values())
    return False
