"""Python side effects a trace made, replayed on every call of the compiled path.

A traced frame that writes state which existed before the call — an attribute
(``self.count = 3``), an item (``cfg["seen"] = True``), a global, a closure variable,
``list.append`` / ``extend`` / ``insert``, ``dict.update``, ``set.add``, ``print`` — gets
that write replayed after the compiled path has run, in the order the trace made them.
A write is replayable when the value is known at replay: an immutable constant, an object
the trace holds (by identity), a new list/tuple/dict of such (rebuilt fresh each call), or
a dynamic scalar (computed by the graph).  Anything else makes the observer give up: the
function then runs eagerly and ``explain()`` names the line.
"""

from __future__ import annotations

from eager._state import STATE
from eager.printing import array_repr, repr_facts
from eager.tensor import Tensor

from .base import Unsure, UnsureThisCall, where
from .guards import is_immutable_value
from .sources import rooted_at_arg
from .symbolic import is_sym, specialize


class Effect:
    """A write to replay.  ``source``: where its target is found on each call, when the
    target was reached from an argument (a list passed in is a new list each call); None
    when the trace holds the target itself."""

    __slots__ = ("value", "where", "source")

    def target(self, args, kwargs):
        return self.obj if self.source is None else self.source.read(args, kwargs)

    def apply(self, value, target) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{self.describe()}  ({self.where})"


class SetAttr(Effect):
    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        self.obj, self.name, self.source = obj, name, None

    def apply(self, value, target):
        setattr(target, self.name, value)

    def describe(self):
        return f"{_label(self.obj)}.{self.name} = {_short(self.value)}"


class SetItem(Effect):
    __slots__ = ("obj", "key", "label")

    def __init__(self, obj, key, label=None):
        self.obj, self.key, self.label, self.source = obj, key, label, None

    def apply(self, value, target):
        target[self.key] = value

    def describe(self):
        target = self.label or f"{_label(self.obj)}[{self.key!r}]"
        return f"{target} = {_short(self.value)}"


class SetCell(Effect):
    __slots__ = ("cell", "name")

    def __init__(self, cell, name):
        self.cell, self.name, self.source = cell, name, None

    def target(self, args, kwargs):
        return self.cell

    def apply(self, value, target):
        target.cell_contents = value

    def describe(self):
        return f"nonlocal {self.name} = {_short(self.value)}"


class CallMethod(Effect):
    """``obj.method(*args)`` on a built-in container (append, extend, update, add...)."""

    __slots__ = ("obj", "method")

    def __init__(self, obj, method):
        self.obj, self.method, self.source = obj, method, None

    def apply(self, value, target):
        getattr(target, self.method)(*value)

    def describe(self):
        args = ", ".join(_short(v) for v in self.value.items) \
            if isinstance(self.value, Rebuild) else _short(self.value)
        return f"{_label(self.obj)}.{self.method}({args})"


class SetGradMode(Effect):
    """The call left grad mode switched (``torch.set_grad_enabled(False)`` as a function):
    each replay leaves it so too."""

    def __init__(self, enabled: bool):
        self.value, self.where, self.source = enabled, "set_grad_enabled", None

    def target(self, args, kwargs):
        return None

    def apply(self, value, target):
        STATE.grad_enabled = value

    def describe(self):
        return f"grad mode = {self.value}"


class Print(Effect):
    __slots__ = ("kwargs",)

    def __init__(self, kwargs):
        self.kwargs, self.source = kwargs, None

    def target(self, args, kwargs):
        return None

    def apply(self, value, target):
        print(*value, **self.kwargs)

    def describe(self):
        return "print(" + ", ".join(_short(v) for v in self.value.items) + ")"


class Rebuild:
    """A value made fresh on every replay: a list, tuple or dict of replayable values."""

    __slots__ = ("kind", "items", "keys")

    def __init__(self, kind, items, keys=None):
        self.kind, self.items, self.keys = kind, items, keys

    def build(self, outs=None, args=(), kwargs=None):
        items = [materialize(v, outs, args, kwargs) for v in self.items]
        if self.kind is dict:
            return dict(zip(self.keys, items))
        return self.kind(items)


class GraphScalar:
    """A dynamic Python number (pystate.symbolic) the effect stores: computed by the graph
    on every replay; ``k`` is its output slot, set when the trace is compiled."""

    __slots__ = ("sym", "k", "kind")

    def __init__(self, sym):
        self.sym, self.k = sym, None
        self.kind = float if isinstance(sym, float) else int

    def graph_value(self, tracer):
        """The IR value the compiled trace outputs for this."""
        return tracer.value_of(self.sym._t)

    def make(self, out):
        """The Python value of a replay, from its output ``out``."""
        return self.kind(out)


class PrintedTensor(GraphScalar):
    """A tensor given to ``print``: its value when printed is an output of the trace, and a
    replay prints ``tensor(...)`` of it with the device and autograd text the traced tensor
    had (the trace's key fixes both)."""

    __slots__ = ("value", "facts", "prefix")

    def __init__(self, tracer, t: Tensor):
        self.k, self.sym = None, None
        self.value = tracer.value_of(t)   # now: a later in-place write makes a new value
        self.facts = repr_facts(t)
        self.prefix = tracer.printable(t)

    def graph_value(self, tracer):
        return self.value

    def make(self, out):
        return _Text(self.prefix + array_repr(out, *self.facts))


class _Text:
    """What ``print`` gets for a printed tensor: its text as ``str()`` and ``repr()``."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    __repr__ = __str__


class ArgValue:
    """A value the effect stores that was reached from an argument: read on each call."""

    __slots__ = ("source",)

    def __init__(self, source):
        self.source = source


def materialize(v, outs=None, args=(), kwargs=None):
    if isinstance(v, Rebuild):
        return v.build(outs, args, kwargs)
    if isinstance(v, GraphScalar):
        return v.make(outs[v.k])
    if isinstance(v, ArgValue):
        return v.source.read(args, kwargs or {})
    return v


def graph_scalars(effects) -> list:
    """Every :class:`GraphScalar` the effects store (the compiler gives each an output)."""
    found = []

    def walk(v):
        if isinstance(v, GraphScalar):
            found.append(v)
        elif isinstance(v, Rebuild):
            for x in v.items:
                walk(x)
    for e in effects:
        walk(e.value)
    return found


_MUTABLE_BUILTINS = (list, dict, set, bytearray)


def replay_value(value, prov, depth=0):
    """How to produce ``value`` on each replay, or None when that is not possible."""
    if not prov.det:
        return None
    if is_sym(value):
        return GraphScalar(value)
    if is_immutable_value(value):
        return value
    if isinstance(value, Tensor):
        return None  # a tensor made by the trace would need to be an output
    if prov.source is not None and rooted_at_arg(prov.source):
        return ArgValue(prov.source)
    if prov.fresh:
        t = type(value)
        if depth < 4 and t in (list, tuple):
            items = [replay_value(v, _ITEM, depth + 1) for v in value]
            if any(i is None and v is not None for i, v in zip(items, value)):
                return None
            return Rebuild(t, items)
        if depth < 4 and t is dict:
            items = [replay_value(v, _ITEM, depth + 1) for v in value.values()]
            if any(i is None and v is not None for i, v in zip(items, value.values())):
                return None
            return Rebuild(dict, items, list(value.keys()))
        return None  # a new object of another type: cannot be remade without running
    if prov.fresh is None and _holds_call_values(value):
        return None  # maybe made by code the observer did not watch, from this call's values
    return value


def _holds_call_values(value, depth=0) -> bool:
    """Whether a container of unknown origin holds tensors or dynamic numbers: stored as
    the same object on every replay, it would hold the traced call's values."""
    if isinstance(value, Tensor) or is_sym(value):
        return True
    if depth < 4 and isinstance(value, (list, tuple)):  # (namedtuples: return_types)
        return any(_holds_call_values(v, depth + 1) for v in value)
    if depth < 4 and isinstance(value, dict):
        return any(_holds_call_values(v, depth + 1) for v in value.values())
    return False


class _ItemProv:
    det = True
    fresh = True


_ITEM = _ItemProv()


def record(obs, effect: Effect, prov, value, frame, target_prov=None) -> None:
    """Record ``effect`` storing ``value`` (of provenance ``prov``) into a target of
    provenance ``target_prov``, or give up."""
    if target_prov is not None and target_prov.source is not None and \
            rooted_at_arg(target_prov.source):
        effect.source = target_prov.source
    rv = replay_value(value, prov)
    if rv is None and value is not None:
        why = Unsure
        if isinstance(value, Tensor) and obs.covered(getattr(effect, "obj", None)):
            why = UnsureThisCall  # a tensor made by the call stored into a module: once
        raise why(f"{type(effect).__name__.lower()} of a value the compiler cannot "
                  f"remake on a replay ({type(value).__name__}): {_what(effect)}")
    effect.value = rv
    effect.where = where(frame)
    obs.keep.append(effect)
    obs.effects.append(effect)


_REPLAYABLE_METHODS = {"append", "extend", "insert", "update", "add", "appendleft",
                       "__setitem__", "setdefault", "clear", "discard"}


def record_method(obs, owner, owner_prov, name, args, arg_provs, frame) -> None:
    if not owner_prov.det:
        raise Unsure(f"calls {name} on an object whose origin the compiler lost track of")
    if name not in _REPLAYABLE_METHODS:
        raise Unsure(f"changes a {type(owner).__name__} made before the call "
                     f"({type(owner).__name__}.{name})")
    provs = arg_provs[-len(args):] if args else []
    items = []
    for v, p in zip(args, provs):
        rv = replay_value(v, p)
        if rv is None and v is not None:
            raise Unsure(f"{type(owner).__name__}.{name} of a value the compiler cannot "
                         f"remake on a replay ({type(v).__name__})")
        items.append(rv)
    obs.before_change(owner)
    eff = CallMethod(owner, name)
    if owner_prov.source is not None and rooted_at_arg(owner_prov.source):
        eff.source = owner_prov.source
    eff.value = Rebuild(tuple, items)
    eff.where = where(frame)
    obs.keep.append(owner)
    obs.effects.append(eff)
    obs.mutated.add(id(owner))


def record_print(obs, args, kwnames, frame) -> None:
    """``print(...)`` in a watched frame: replayed on every call.  A dynamic number
    (``loss.item()``) or a tensor printed is an output of the trace, printed anew by each
    replay: no guard on its value and no graph break.  ``print`` runs right after this and
    calls ``str()`` of each: the tracer lets exactly those reads pass once (until the call
    returns: ``print_done``)."""
    kw = dict(zip(kwnames, args[len(args) - len(kwnames):])) if kwnames else {}
    pos = args[:len(args) - len(kwnames)] if kwnames else args
    kw = {k: specialize(v) for k, v in kw.items()}
    tracer = STATE.tracer
    items = []
    for v in pos:
        if is_sym(v) and tracer is not None:
            tracer.print_reads.append(v._t)       # its str(): the value, not a guard
            items.append(GraphScalar(v))
        elif isinstance(v, Tensor) and tracer is not None and \
                tracer.printable(v) is not None:
            tracer.print_reads.append(v)          # its repr(): not a graph break
            items.append(PrintedTensor(tracer, v))
        else:
            items.append(specialize(v))
    for v in items + list(kw.values()):
        if isinstance(v, (GraphScalar, Tensor)):
            continue  # (a tensor left over: printing reads its data, a graph break)
        if not (is_immutable_value(v) or v is None):
            raise Unsure(f"prints a {type(v).__name__}, which a replay cannot reproduce")
    if any(isinstance(v, Tensor) for v in items):
        return
    eff = Print(kw)
    eff.value = Rebuild(tuple, items)
    eff.where = where(frame)
    obs.effects.append(eff)


def apply_all(effects, outs=None, args=(), kwargs=None) -> None:
    kwargs = kwargs or {}
    for e in effects:
        e.apply(materialize(e.value, outs, args, kwargs), e.target(args, kwargs))


def _what(effect) -> str:
    try:
        return effect.describe()
    except Exception:  # noqa: BLE001
        return type(effect).__name__


def _label(obj) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(name, str):
        return name
    return f"{type(obj).__name__}@{id(obj):x}"


def _short(v) -> str:
    if isinstance(v, Rebuild):
        return f"<new {v.kind.__name__}>"
    r = repr(v) if is_immutable_value(v) else _label(v)
    return r if len(r) <= 40 else r[:37] + "..."
