"""What a call into C code does to Python state, for callables the observer cannot trace.

A Python function runs in a frame the observer watches; a built-in does not.  Each
built-in the observer lets through is classified here:

* ``PURE`` — reads only its arguments (their contents included) and returns a value
  determined by them: ``len``, ``sorted``, ``math.sqrt``, ``str.format``, ``dict.get``...
* ``MUTATES_SELF`` — also changes the object it is a method of (``list.append``,
  ``dict.update``): fine on a container made during the call, a side effect otherwise;
* ``PRINT`` — writes to a stream: replayed on every call;
* anything else (``random.random``, ``time.time``, ``next`` on a shared iterator, C
  extensions) is unknown, and a function calling it runs eagerly.
"""

from __future__ import annotations

import builtins
import itertools
import math
import operator
import types
from collections import OrderedDict, deque

import numpy as np

PURE, MUTATES_SELF, PRINT, UNKNOWN = "pure", "mutates", "print", "unknown"

_PURE_BUILTINS = {getattr(builtins, n) for n in (
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex",
    "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "getattr",
    "hasattr", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len", "list",
    "map", "max", "min", "oct", "ord", "pow", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "str", "sum", "tuple", "type", "zip", "object", "super", "property",
    "staticmethod", "classmethod", "__build_class__")}

_PURE_MODULES = (math, operator, itertools)

# methods of built-in types that only read their object
_READS = {
    list: {"index", "count", "copy", "__getitem__", "__len__", "__contains__", "__iter__",
           "__reversed__"},
    tuple: None, str: None, bytes: None, int: None, float: None, bool: None, complex: None,
    frozenset: None, range: None, slice: None, type(None): None,
    dict: {"get", "keys", "values", "items", "copy", "__getitem__", "__contains__",
           "__len__", "__iter__", "fromkeys"},
    OrderedDict: {"get", "keys", "values", "items", "copy", "__getitem__", "__contains__",
                  "__len__", "__iter__"},
    set: {"copy", "union", "intersection", "difference", "symmetric_difference",
          "issubset", "issuperset", "isdisjoint", "__contains__", "__len__"},
    deque: {"index", "count", "copy", "__getitem__", "__len__", "__contains__"},
}
# methods that change their object (replayable or not is the observer's business)
_WRITES = {
    list: {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
           "__setitem__", "__delitem__", "__iadd__"},
    dict: {"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__"},
    OrderedDict: {"update", "pop", "popitem", "setdefault", "clear", "__setitem__",
                  "__delitem__", "move_to_end"},
    set: {"add", "discard", "remove", "pop", "clear", "update", "intersection_update",
          "difference_update", "symmetric_difference_update"},
    deque: {"append", "appendleft", "extend", "extendleft", "pop", "popleft", "remove",
            "rotate", "clear"},
}

_NUMPY_IMPURE = ("random",)  # np.random.* draws from NumPy's global generator


def classify(fn) -> str:
    """How a built-in callable treats Python state (see the module docstring)."""
    if fn is print:
        return PRINT
    try:
        if fn in _PURE_BUILTINS:
            return PURE
    except TypeError:  # unhashable callable
        return UNKNOWN
    self_obj = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", None)
    if isinstance(self_obj, type) and self_obj.__module__ == "builtins":
        return PURE  # tuple.__new__, object.__new__, dict.fromkeys...: make new objects
    if isinstance(fn, (types.BuiltinMethodType, types.MethodWrapperType)) and \
            self_obj is not None and not isinstance(self_obj, types.ModuleType):
        return _method_kind(type(self_obj), name)
    if isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType,
                       types.ClassMethodDescriptorType)):
        return _method_kind(fn.__objclass__, name)
    module = getattr(fn, "__module__", None) or getattr(self_obj, "__name__", None)
    if isinstance(fn, np.ufunc):
        return PURE
    if isinstance(module, str):
        if module.startswith("numpy"):
            return UNKNOWN if any(p in module for p in _NUMPY_IMPURE) else PURE
        if module in {m.__name__ for m in _PURE_MODULES}:
            return PURE
    if isinstance(fn, type) and fn.__module__ in ("builtins", "numpy", "collections"):
        return PURE  # constructing a new built-in object
    return UNKNOWN


def _method_kind(cls, name) -> str:
    for base in cls.__mro__:
        if base in _WRITES and name in _WRITES[base]:
            return MUTATES_SELF
        if base in _READS:
            reads = _READS[base]
            if reads is None or name in reads:
                return PURE
    if cls.__module__ == "numpy" or issubclass(cls, np.generic):
        return PURE  # methods of NumPy scalars
    return UNKNOWN


def returns_new(fn) -> bool:
    """Whether the call's result is a new object (so writing into it is no side effect)."""
    return fn in (list, dict, set, tuple, sorted, OrderedDict, deque, frozenset, str,
                  bytes, range, zip, enumerate, map, filter, reversed)
