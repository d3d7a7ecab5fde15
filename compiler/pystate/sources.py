"""Sources: how to read a Python value again at call time.

A guard checks that a value read while tracing is still what it was; a dynamic scalar is
read anew on every call.  Both need to say *where* the value lives: a :class:`Source` is
that path, rooted at an argument of the call or at an object the trace holds on to
(:class:`Fixed`), followed by attribute and item reads.  ``expr`` writes the path as
Python source for the generated guard function, binding held objects as its globals.
"""

from __future__ import annotations

import types

_IDENT_OK = str.isidentifier


class Bindings:
    """Names for objects a generated guard function refers to (its globals)."""

    def __init__(self):
        self.glb: dict = {}
        self._by_id: dict = {}

    def bind(self, obj, hint: str = "o") -> str:
        name = self._by_id.get(id(obj))
        if name is None:
            name = f"__{hint}{len(self.glb)}"
            self.glb[name] = obj
            self._by_id[id(obj)] = name
        return name


class Source:
    __slots__ = ()

    def expr(self, b: Bindings) -> str:
        raise NotImplementedError

    def key(self) -> tuple:
        raise NotImplementedError

    def read(self, args, kwargs):
        """The value now (for dynamic scalars and for explaining a failure)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.describe()


class Arg(Source):
    """An argument of the compiled call: positional ``index`` or keyword ``name``."""

    __slots__ = ("index", "name", "label")

    def __init__(self, index=None, name=None, label=None):
        self.index, self.name, self.label = index, name, label

    def expr(self, b):
        return f"args[{self.index}]" if self.name is None else f"kwargs[{self.name!r}]"

    def key(self):
        return ("arg", self.index, self.name)

    def read(self, args, kwargs):
        return args[self.index] if self.name is None else kwargs[self.name]

    def describe(self):
        if self.name is not None:
            return f"argument {self.name}"
        return f"argument {self.index}" + (f" ({self.label})" if self.label else "")


class Fixed(Source):
    """An object whose identity the trace relies on (held by the guard)."""

    __slots__ = ("obj", "label")

    def __init__(self, obj, label=None):
        self.obj, self.label = obj, label

    def expr(self, b):
        return b.bind(self.obj)

    def key(self):
        return ("obj", id(self.obj))

    def read(self, args, kwargs):
        return self.obj

    def describe(self):
        return self.label or _label(self.obj)


class Attr(Source):
    __slots__ = ("base", "name")

    def __init__(self, base: Source, name: str):
        self.base, self.name = base, name

    def expr(self, b):
        base = self.base.expr(b)
        if _IDENT_OK(self.name) and not self.name.startswith("__"):
            return f"{base}.{self.name}"
        return f"getattr({base}, {self.name!r})"

    def key(self):
        return ("attr", self.base.key(), self.name)

    def read(self, args, kwargs):
        return getattr(self.base.read(args, kwargs), self.name)

    def describe(self):
        return f"{self.base.describe()}.{self.name}"


class Item(Source):
    __slots__ = ("base", "item")

    def __init__(self, base: Source, item):
        self.base, self.item = base, item

    def expr(self, b):
        k = self.item
        lit = repr(k) if type(k) in (str, int, bool) or k is None else b.bind(k, "k")
        return f"{self.base.expr(b)}[{lit}]"

    def key(self):
        return ("item", self.base.key(), type(self.item).__name__, _hashable(self.item))

    def read(self, args, kwargs):
        return self.base.read(args, kwargs)[self.item]

    def describe(self):
        return f"{self.base.describe()}[{self.item!r}]"


class Global(Source):
    """``name`` in a module's globals (or builtins, when the module does not define it)."""

    __slots__ = ("globals", "name", "builtins")

    def __init__(self, globals_: dict, name: str, builtins: dict | None = None):
        self.globals, self.name, self.builtins = globals_, name, builtins

    def expr(self, b):
        g = b.bind(self.globals, "g")
        if self.builtins is None:
            return f"{g}[{self.name!r}]"
        bi = b.bind(self.builtins, "b")
        return f"({g}[{self.name!r}] if {self.name!r} in {g} else {bi}[{self.name!r}])"

    def key(self):
        return ("global", id(self.globals), self.name)

    def read(self, args, kwargs):
        if self.name in self.globals or self.builtins is None:
            return self.globals[self.name]
        return self.builtins[self.name]

    def describe(self):
        return f"global {self.name}"


class Cell(Source):
    """A closure variable (a cell of a function that existed before the call)."""

    __slots__ = ("cell", "name")

    def __init__(self, cell, name: str):
        self.cell, self.name = cell, name

    def expr(self, b):
        return f"{b.bind(self.cell, 'c')}.cell_contents"

    def key(self):
        return ("cell", id(self.cell))

    def read(self, args, kwargs):
        return self.cell.cell_contents

    def describe(self):
        return f"closure variable {self.name}"


def rooted_at_arg(src) -> bool:
    """Whether a source starts at an argument of the call (read anew on each call)."""
    while hasattr(src, "base"):
        src = src.base
    return isinstance(src, Arg)


def _hashable(x):
    try:
        hash(x)
        return x
    except TypeError:
        return id(x)


def _label(obj) -> str:
    if isinstance(obj, types.ModuleType):
        return f"module {obj.__name__}"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(name, str) and (isinstance(obj, type) or callable(obj)):
        return name
    return f"{type(obj).__name__}@{id(obj):x}"
