"""Guards on Python values a trace read, compiled into one check function per trace.

Each guard kind is one small class that writes its check as a Python expression, and
explains its own failure (Dynamo's guard-builder idea):

* :class:`Equals` — an immutable value (number, string, None, tuple of such): same type,
  same value, same sign of zero, NaN stays NaN;
* :class:`Is` — an object the trace used (module, function, tensor, container): the
  same object;
* :class:`Missing` — an attribute the trace found absent is still absent;
* :class:`Len` — a container's length (its truth value, ``len()``);
* :class:`Content` — a container consumed whole (iterated, unpacked, passed to code the
  observer does not see into): its items, recursively;
* :class:`TypeIs` — a dynamic scalar: only its type is fixed, its value is an input.

A :class:`GuardSet` compiles its guards into one generated function.  Guards on the
structure of ``nn.Module`` objects (their attributes, parameters, submodules, hooks) are
*covered* by a process-wide module epoch that every structural change through the Module
API bumps: while the epoch is the one seen at the last successful check, they are not
re-evaluated, so a model with many modules costs one integer comparison per call.
"""

from __future__ import annotations

import math

import numpy as np

from runtime import pycode

from .sources import Bindings, Source

_SCALARS = (int, float, bool, str, bytes, type(None), complex)


def is_immutable_value(v) -> bool:
    """A value compared by equality: Python scalars, strings, NumPy scalars, and tuples
    or frozensets of such."""
    t = type(v)
    if t in _SCALARS or isinstance(v, np.generic):
        return True
    if isinstance(v, (tuple, frozenset)):  # tuple subclasses too (Size, namedtuples)
        return len(v) <= 64 and all(is_immutable_value(x) for x in v)
    return False


def same_value(a, b) -> bool:
    """Equality that also tells -0.0 from 0.0 and calls NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if type(a) is float or hasattr(a, "dtype"):
        if a != a:
            return b != b
        return a == b and (a != 0 or math.copysign(1.0, a) == math.copysign(1.0, b))
    return a == b


class PyGuard:
    __slots__ = ("source", "covered", "where")

    def __init__(self, source: Source, covered: bool = False, where: str | None = None):
        self.source, self.covered, self.where = source, covered, where

    def expr(self, b: Bindings) -> str:
        raise NotImplementedError

    def ident(self) -> tuple:
        return (type(self).__name__, self.source.key())

    def check_now(self, args, kwargs) -> bool:
        b = Bindings()
        fn = eval(f"lambda args, kwargs: {self.expr(b)}", _helpers(b.glb))
        try:
            return bool(fn(args, kwargs))
        except Exception:
            return False

    def failure(self, args, kwargs) -> str:
        try:
            now = self.source.read(args, kwargs)
        except Exception as e:  # noqa: BLE001
            return f"{self.source.describe()}: cannot be read now ({type(e).__name__}: {e})"
        return f"{self.source.describe()}: {self.expected()} != {_short(now)}"

    def expected(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        w = f"  (read at {self.where})" if self.where else ""
        return f"{self.source.describe()} {self.text()}{w}"


class Equals(PyGuard):
    __slots__ = ("value",)

    def __init__(self, source, value, covered=False, where=None):
        super().__init__(source, covered, where)
        self.value = value

    def expr(self, b):
        s, v = self.source.expr(b), self.value
        t = type(v)
        if v is None or t is bool:
            return f"{s} is {v!r}"
        tn = b.bind(t, "t")
        if t in (int, str) and (t is str or abs(v) < 2 ** 62):
            return f"(type(__v := {s}) is {tn} and __v == {v!r})"
        if t is float and v == v and v != 0 and not math.isinf(v):
            return f"(type(__v := {s}) is {tn} and __v == {v!r})"
        return f"__same({s}, {b.bind(v, 'v')})"

    def ident(self):
        return ("Equals", self.source.key())

    def expected(self):
        return repr(self.value)

    def text(self):
        return f"== {self.value!r}"


class Is(PyGuard):
    __slots__ = ("obj",)

    def __init__(self, source, obj, covered=False, where=None):
        super().__init__(source, covered, where)
        self.obj = obj

    def expr(self, b):
        return f"{self.source.expr(b)} is {b.bind(self.obj)}"

    def expected(self):
        return f"the same object as when traced ({_short(self.obj)})"

    def failure(self, args, kwargs):
        try:
            now = self.source.read(args, kwargs)
        except Exception as e:  # noqa: BLE001
            return f"{self.source.describe()}: cannot be read now ({type(e).__name__}: {e})"
        return f"{self.source.describe()}: was {_short(self.obj)}, is {_short(now)}"

    def text(self):
        return f"is {_short(self.obj)}"


class Missing(PyGuard):
    """``source`` (an attribute read) raised AttributeError when traced."""

    __slots__ = ()

    def expr(self, b):
        base, name = self.source.base.expr(b), self.source.name
        return f"not hasattr({base}, {name!r})"

    def expected(self):
        return "absent"

    def failure(self, args, kwargs):
        return f"{self.source.describe()}: was absent, now exists"

    def text(self):
        return "is absent"


class Len(PyGuard):
    __slots__ = ("n",)

    def __init__(self, source, n, covered=False, where=None):
        super().__init__(source, covered, where)
        self.n = n

    def expr(self, b):
        return f"len({self.source.expr(b)}) == {self.n}"

    def expected(self):
        return f"length {self.n}"

    def failure(self, args, kwargs):
        try:
            now = len(self.source.read(args, kwargs))
        except Exception as e:  # noqa: BLE001
            return f"{self.source.describe()}: cannot be read now ({type(e).__name__})"
        return f"len({self.source.describe()}): {self.n} != {now}"

    def text(self):
        return f"has length {self.n}"


class Content(PyGuard):
    """A container whose items the trace consumed: same type, length, keys and items
    (immutable items by value, others by identity, nested containers recursively)."""

    __slots__ = ("snapshot", "shallow")

    def __init__(self, source, snapshot, covered=False, where=None, shallow=False):
        super().__init__(source, covered, where)
        self.snapshot = snapshot
        self.shallow = shallow  # items by identity (iterated: Python's reads are guarded)

    def ident(self):
        return ("Content", self.source.key(), self.shallow)

    def expr(self, b):
        plain = plain_items(self.snapshot)
        if plain is not None:   # (a list of lengths, of sizes: checked at C speed)
            return f"__plain({self.source.expr(b)}, {b.bind(plain, 'p')})"
        return f"__content({self.source.expr(b)}, {b.bind(self.snapshot, 's')})"

    def expected(self):
        return "the same items"

    def failure(self, args, kwargs):
        return f"{self.source.describe()}: its items changed"

    def text(self):
        kind = self.snapshot[1]
        return f"holds the same {getattr(kind, '__name__', type(kind).__name__)} items"


class TypeIs(PyGuard):
    __slots__ = ("type",)

    def __init__(self, source, typ, covered=False, where=None):
        super().__init__(source, covered, where)
        self.type = typ

    def expr(self, b):
        return f"type({self.source.expr(b)}) is {b.bind(self.type, 't')}"

    def expected(self):
        return f"a {self.type.__name__}"

    def text(self):
        return f"is a {self.type.__name__} (its value is an input)"


# -- container snapshots -------------------------------------------------------------

MAX_ITEMS = 4096


class TooLarge(Exception):
    pass


def snapshot(obj, budget=None, depth: int = -1):
    """A comparable record of a container's items: ("eq", value) for immutable values,
    ("is", obj) for other objects, (kind, type, ...) for nested builtin containers, down
    to ``depth`` levels (-1: all; 1: the container's own items, by value or identity)."""
    if budget is None:
        budget = [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        raise TooLarge
    if is_immutable_value(obj):
        return ("eq", obj)
    if depth == 0:
        return ("is", obj)
    t = type(obj)
    if isinstance(obj, (list, tuple)):
        return ("seq", t, tuple(snapshot(x, budget, depth - 1) for x in obj))
    if isinstance(obj, dict):
        return ("map", t, tuple(obj.keys()),
                tuple(snapshot(v, budget, depth - 1) for v in obj.values()))
    if isinstance(obj, (set, frozenset)):
        items = list(obj)
        if all(is_immutable_value(x) for x in items):
            return ("set", t, frozenset(items))
        return ("idset", t, frozenset(id(x) for x in items), tuple(items))
    return ("is", obj)


def content_equal(obj, snap) -> bool:
    kind = snap[0]
    if kind == "eq":
        return same_value(obj, snap[1])
    if kind == "is":
        return obj is snap[1]
    if type(obj) is not snap[1]:
        return False
    if kind == "seq":
        items = snap[2]
        return len(obj) == len(items) and all(content_equal(x, s) for x, s in zip(obj, items))
    if kind == "map":
        return tuple(obj.keys()) == snap[2] and \
            all(content_equal(v, s) for v, s in zip(obj.values(), snap[3]))
    if kind == "set":
        return obj == snap[2]
    return len(obj) == len(snap[2]) and all(id(x) in snap[2] for x in obj)


#: types whose ``==`` tells apart any two values of the type (no -0.0, no NaN)
_EXACT = (int, bool, str, bytes, type(None))


def plain_items(snap):
    """``(container type, items, their types)`` when ``snap`` is a list or tuple whose
    items are all values of :data:`_EXACT` types, else None: then :func:`same_plain_items`
    is :func:`content_equal`, without a Python call per item."""
    if snap[0] != "seq" or (snap[1] is not list and snap[1] is not tuple):
        return None
    items = snap[2]
    if not all(s[0] == "eq" and type(s[1]) in _EXACT for s in items):
        return None
    values = [s[1] for s in items]
    return snap[1], snap[1](values), [type(v) for v in values]


def same_plain_items(obj, plain) -> bool:
    """:func:`content_equal` for a snapshot :func:`plain_items` reduced (items by value
    and by type: ``True`` is not ``1``)."""
    typ, values, types = plain
    return type(obj) is typ and obj == values and list(map(type, obj)) == types


def snapshot_objects(snap, out: list) -> None:
    """The non-immutable objects a snapshot pins by identity."""
    kind = snap[0]
    if kind == "is":
        out.append(snap[1])
    elif kind == "seq":
        for s in snap[2]:
            snapshot_objects(s, out)
    elif kind == "map":
        for s in snap[3]:
            snapshot_objects(s, out)
    elif kind == "idset":
        out.extend(snap[3])


# -- the compiled check ------------------------------------------------------------------

def _helpers(glb: dict) -> dict:
    glb = dict(glb)
    glb["__same"] = same_value
    glb["__content"] = content_equal
    glb["__plain"] = same_plain_items
    return glb


class GuardSet:
    """The Python-state guards of one trace, compiled into ``check(args, kwargs)``."""

    def __init__(self, guards: list, epoch_cell: list | None):
        seen, uniq = set(), []
        for g in guards:
            k = g.ident()
            if k not in seen:
                seen.add(k)
                uniq.append(g)
        self.guards = uniq
        self.epoch_cell = epoch_cell
        self.seen_epoch = [epoch_cell[0] if epoch_cell is not None else 0]
        self.check = self._compile()

    def __len__(self) -> int:
        return len(self.guards)

    def _compile(self):
        b = Bindings()
        covered = [g.expr(b) for g in self.guards if g.covered and self.epoch_cell is not None]
        rest = [g.expr(b) for g in self.guards if not (g.covered and self.epoch_cell is not None)]
        lines = ["def check(args, kwargs):", "    try:"]
        if covered:
            b.glb["__epoch"] = self.epoch_cell
            b.glb["__seen"] = self.seen_epoch
            lines.append("        if __epoch[0] != __seen[0]:")
            lines.append("            if not (" + "\n                    and ".join(covered)
                         + "):")
            lines.append("                return False")
            lines.append("            __seen[0] = __epoch[0]")
        lines.append("        return " + ("(" + "\n            and ".join(rest) + ")"
                                          if rest else "True"))
        lines.append("    except Exception:")
        lines.append("        return False")
        self.source = "\n".join(lines) + "\n"
        glb = _helpers(b.glb)
        exec(pycode.code(self.source, "<dyngraph guards>"), glb)
        return glb["check"]

    def failure(self, args, kwargs) -> str | None:
        """None when every guard holds, else the first that fails, in words."""
        for g in self.guards:
            if not g.check_now(args, kwargs):
                return g.failure(args, kwargs)
        return None

    def failing(self, args, kwargs):
        for g in self.guards:
            if not g.check_now(args, kwargs):
                return g
        return None

    def all_failing(self, args, kwargs) -> list:
        return [g for g in self.guards if not g.check_now(args, kwargs)]


def _short(obj) -> str:
    if is_immutable_value(obj):
        r = repr(obj)
        return r if len(r) <= 60 else r[:57] + "..."
    name = getattr(obj, "__qualname__", None)
    if isinstance(name, str):
        return name
    return f"{type(obj).__name__} object at {id(obj):#x}"
