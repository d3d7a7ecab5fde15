"""Guards: the cache key of a call, and the per-trace guards checked after it.

The key is the one dict lookup before any guard: it holds, per flattened argument, a
tensor's (shape, dtype, requires_grad, storage type: the device, strides, class,
leafness, hooks) or a hashable Python value, plus the grad mode, which arguments share
memory, the autocast state and the default device (where factories put tensors).
Everything in it is known from the arguments alone, so one lookup finds the traces
recorded for calls like this one, and
:func:`describe_key_change` explains a key that changed.  What is known only after a trace
(the tensors it lifted, the ``.grad`` it read, the Python state it depended on) is
checked per trace, by guard objects that :class:`Preconditions` holds: tensor guards
(:mod:`compiler.tensor_guards`) and Python-state guards (:mod:`compiler.pystate.guards`),
each writing its check into one generated function, explaining its own failure and
identifying itself.
"""

from __future__ import annotations

import numpy as np

from eager._state import STATE
from eager.amp.autocast_mode import autocast_key
from eager.tensor import Tensor
from runtime import device as runtime_device

from .ir import FloatBits
from .tensor_guards import LiftedTensor, alias_text, compile_check, memory_pattern, tensor_guards

_TENSOR = "T"


SELF = ("self",)  # in a key: the instance of a per-instance cache (a compiled method)


def flatten(args: tuple, kwargs: dict, dynamic=(), instance: bool = False):
    """(tensors, key): tensors of the call in order, and a hashable key of the call (a
    key, not a guard: one dict lookup of what the arguments alone determine finds the
    candidate traces, whose own guards are checked after it, see :class:`Preconditions`).
    Positional numbers at the indices in ``dynamic`` enter the key by type only (their
    value is an input of the trace).  ``instance``: ``args[0]`` is the instance a
    compiled method's cache belongs to (:data:`SELF` in the key: the key holds no
    reference to it, and the observer guards what the trace reads through it)."""
    tensors: list[Tensor] = []
    if not kwargs:  # fast path: positional tensors and scalars only
        parts = []
        for a in args:
            if type(a) is Tensor:
                tensors.append(a)
                d = a._data
                h, p = a._hooks, a._post_accumulate_hooks
                parts.append((_TENSOR, d.shape, d.dtype.char, a.requires_grad, type(d),
                              d.strides, Tensor, a.grad_fn is None,
                              hooks_key(h, p) if h or p else None))
            elif type(a) in _PLAIN:
                parts.append((type(a).__name__, a))
            elif type(a) is float:
                parts.append(("float", a if a == a and a != 0.0 else FloatBits(a)))
            else:
                parts.append(_key_of(a, tensors))
        if dynamic:
            for i in dynamic:
                if i < len(args) and dynamic_value(args[i]):
                    parts[i] = (type(args[i]).__name__, DYNAMIC)
        if instance:
            parts[0] = SELF
        return tensors, (("tuple", tuple(parts)), (), STATE.grad_enabled,
                         memory_pattern(tensors) if len(tensors) > 1 else (), autocast_key(),
                         STATE.default_device)
    k = _key_of(args, tensors)
    if dynamic:
        k = ("tuple", tuple((type(args[i]).__name__, DYNAMIC) if i in dynamic and
                           dynamic_value(args[i]) else p for i, p in enumerate(k[1])))
    if instance:
        k = ("tuple", (SELF,) + k[1][1:])
    kw = tuple((n, _key_of(v, tensors)) for n, v in sorted(kwargs.items())) if kwargs else ()
    return tensors, (k, kw, STATE.grad_enabled,
                     memory_pattern(tensors) if len(tensors) > 1 else (), autocast_key(),
                     STATE.default_device)


def hooks_key(hooks, post_accumulate_hooks) -> tuple:
    """A tensor's gradient hooks in a key (the backward eager runs calls them); callers
    pass None for a tensor with neither, the common case, without calling this."""
    return tuple(hooks or ()), tuple(post_accumulate_hooks or ())


#: what a tensor's key holds after its tag, in order (Python can branch on each: strides
#: through ``is_contiguous()``/``stride()``, ``is_leaf``, ``isinstance(x, Parameter)``)
TENSOR_FIELDS = ("shape", "dtype", "requires_grad", "device", "strides", "class", "is_leaf",
                 "hooks")


DYNAMIC = "<dynamic>"  # in a key: this number is an input of the trace


def dynamic_value(v) -> bool:
    """Whether a number argument may be an input of the trace (automatic dynamic): an int,
    or a float other than a zero or a NaN.  Zeros and NaNs stay keys of their own: a use
    that specializes the value (``math.copysign``, an ``if``) guards it with ``==``, which
    cannot tell ``-0.0`` from ``0.0`` or see a NaN equal to itself."""
    t = type(v)
    return t is int or (t is float and v == v and v != 0.0)


_PLAIN = (int, bool, str)  # Python values whose == tells values apart within one type



def _key_of(obj, tensors):
    """The key of one argument (recursively).  Every leaf carries its type, so ``1``,
    ``1.0`` and ``True`` (equal and of equal hash in Python) are different keys wherever
    they appear: arguments, items of tuples/lists, dict keys and values, namedtuple fields;
    floats are compared by bits where ``==`` is not enough (:class:`FloatBits`)."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        d = obj._data
        h, p = obj._hooks, obj._post_accumulate_hooks
        return (_TENSOR, d.shape, d.dtype.char, obj.requires_grad, type(d), d.strides,
                type(obj), obj.grad_fn is None, hooks_key(h, p) if h or p else None)
    t = type(obj)
    if t is float:
        return ("float", obj if obj == obj and obj != 0.0 else FloatBits(obj))
    if t in _PLAIN or obj is None:
        return (t.__name__, obj)
    if t is tuple or t is list:
        return (t.__name__, tuple(_key_of(o, tensors) for o in obj))
    if t is dict:
        return ("dict", tuple((_key_of(k, []), _key_of(v, tensors)) for k, v in obj.items()))
    if isinstance(obj, tuple) and hasattr(t, "_fields"):  # a namedtuple: its fields, typed
        return ("namedtuple", t, tuple(_key_of(o, tensors) for o in obj))
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.shape, obj.dtype.str, obj.tobytes())
    if isinstance(obj, (float, np.floating)):  # np.float64 and float subclasses
        return ("obj", t, obj if obj == obj and obj != 0 else FloatBits(float(obj)))
    if isinstance(obj, (int, np.integer, np.bool_)):
        return ("obj", t, obj)
    try:
        hash(obj)
        return ("obj", t, obj)  # the type itself: equal values of other types differ
    except TypeError:
        return ("id", t.__name__, id(obj))


def describe_key_change(old_key, new_key, names) -> str:
    """The first guard that differs between two keys, e.g. ``arg 0 (x): shape (3,) != (4,)``."""
    (old_args, old_kw, old_grad, old_alias, old_ac, old_dev), \
        (new_args, new_kw, new_grad, new_alias, new_ac, new_dev) = old_key, new_key
    if old_grad != new_grad:
        return f"grad mode: {old_grad} != {new_grad}"
    if old_ac != new_ac:
        return f"autocast: {old_ac} != {new_ac}"
    if old_dev != new_dev:
        return f"default device: {old_dev or 'cpu'} != {new_dev or 'cpu'}"
    if old_alias != new_alias:
        return f"tensors sharing memory: {alias_text(old_alias)} != {alias_text(new_alias)}"
    old_leaves, new_leaves = [], []
    _leaves(old_args, (), old_leaves)
    _leaves(new_args, (), new_leaves)
    for name, sub in old_kw:
        _leaves(sub, (name,), old_leaves)
    for name, sub in new_kw:
        _leaves(sub, (name,), new_leaves)
    for (path, a), (_, b) in zip(old_leaves, new_leaves):
        if a == b:
            continue
        where = _name(path, names)
        if a[0] == _TENSOR and b[0] == _TENSOR:
            for i, what in enumerate(TENSOR_FIELDS, 1):
                if a[i] != b[i]:
                    fmt = _FORMAT.get(what, repr)
                    return f"{where}: {what} {fmt(a[i])} != {fmt(b[i])}"
        return f"{where}: {_short(a)} != {_short(b)}"
    if len(old_leaves) != len(new_leaves):
        return f"number of arguments: {len(old_leaves)} != {len(new_leaves)}"
    return "arguments differ"


def dtype_name(char: str) -> str:
    """A guard key's dtype char as a name (``"E"``, ml_dtypes' bfloat16, is no NumPy char)."""
    return "bfloat16" if char == "E" else str(np.dtype(char))


_FORMAT = {"dtype": dtype_name, "class": lambda c: c.__name__,
           "device": lambda storage_type: runtime_device.of_type(storage_type).type}


def _short(k) -> str:
    if k == SELF:
        return "this instance"
    if k[0] == _TENSOR:
        return f"tensor{list(k[1])}"
    if k[0] == "id":
        return f"{k[1]} object"
    if k[0] == "obj":
        return f"{k[1].__name__} {k[2]!r}"
    if k[0] == "namedtuple":
        return f"{k[1].__name__}{tuple(_short(f) for f in k[2])}"
    return repr(k[1]) if len(k) == 2 else repr(k)


def _leaves(k, path, out):
    """(path, leaf key) for every leaf of an argument key, in argument order."""
    if k[0] in ("tuple", "list"):
        for i, sub in enumerate(k[1]):
            _leaves(sub, path + (i,), out)
    elif k[0] == "namedtuple":
        for name, sub in zip(k[1]._fields, k[2]):
            _leaves(sub, path + ("." + name,), out)
    elif k[0] == "dict":
        for name, sub in k[1]:
            _leaves(sub, path + (name,), out)
    else:
        out.append((path, k))


def _name(path, names) -> str:
    """``arg 0 (x)[1]`` for a path into the arguments (a tuple of indices and names)."""
    if not path:
        return "args"
    head = path[0]
    if isinstance(head, int):
        label = f"arg {head}" + (f" ({names[head]})" if head < len(names) else "")
    else:
        label = f"kwarg {head}"
    return label + "".join(p if isinstance(p, str) and p.startswith(".") else f"[{p}]"
                           for p in path[1:])


class Preconditions:
    """The per-trace guards checked before a replay, after the key matched: tensor guards
    (:mod:`compiler.tensor_guards`: lifted tensors' metadata, ``.grad`` state at entry,
    values declared by eager, arguments that were the same tensor, memory shared with
    lifted tensors) compiled into one ``check(tensors)``, and the Python state the trace
    read (``pystate``, a compiled :class:`~compiler.pystate.guards.GuardSet`)."""

    __slots__ = ("guards", "pystate", "empty", "_simple", "_check")

    def __init__(self, lifted, grad_inputs, grad_none, declared, same_args, pystate=None,
                 memory=None):
        """``lifted``: (tensor, requires_grad at entry) pairs; ``grad_inputs`` and
        ``grad_none``: :class:`~compiler.refs.TensorRef` lists; ``declared``:
        :class:`~compiler.tensor_guards.Declared` guards (``Tracer.py_guards``);
        ``same_args``: (i, j) pairs; ``memory``: for a trace that writes in place, the
        memory pattern of (arguments, lifted tensors)."""
        self.guards = tensor_guards(lifted, grad_inputs, grad_none, list(declared),
                                    same_args, memory)
        self.pystate = pystate if pystate is not None and len(pystate) else None
        self._simple = not self.guards
        self.empty = self._simple and self.pystate is None
        self._check = None if self._simple else compile_check(self.guards)

    @property
    def lifted_tensors(self) -> list:
        """The tensors the trace lifted (read but not handed), in order."""
        return [g.tensor for g in self.guards if type(g) is LiftedTensor]

    def holds(self, tensors, args, kwargs) -> bool:
        """Whether every guard holds (the fast check before a replay)."""
        if self.pystate is not None and not self.pystate.check(args, kwargs):
            return False
        return self._simple or self._check(tensors)

    def failure(self, tensors, args=(), kwargs=None) -> str | None:
        """None when every guard holds, else the first one that fails, in words."""
        if self.pystate is not None and not self.pystate.check(args, kwargs or {}):
            return self.pystate.failure(args, kwargs or {}) or "Python state changed"
        return self._tensor_failure(tensors)

    def failing_guards(self, args, kwargs) -> list:
        """The Python-state guards that fail now (two counters that both changed: each
        becomes an input of the next trace at once, not one per retrace)."""
        if self.pystate is not None and not self.pystate.check(args, kwargs):
            return self.pystate.all_failing(args, kwargs)
        return []

    def _tensor_failure(self, tensors) -> str | None:
        for g in self.guards:
            why = g.failure(tensors)
            if why is not None:
                return why
        return None

    def same_as(self, other: "Preconditions") -> bool:
        """Whether a sibling trace depends on exactly the same guards (so it can share
        this variant's tree of branches)."""
        def ids(pre):
            return ([g.ident() for g in pre.guards],
                    [g.ident() for g in pre.pystate.guards] if pre.pystate else [])
        return ids(self) == ids(other)
