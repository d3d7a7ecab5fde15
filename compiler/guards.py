"""Guards: the cache key of a call, and explanations of why a key changed.

The key holds, per flattened argument, a tensor's (shape, dtype, requires_grad, storage
type: the device) or a
hashable Python value, plus the grad mode: one dict lookup finds the traces for a call.
Guards on tensors the function reads but does not receive (lifted tensors, ``.grad``)
and on Python values (``Module.training``, ``lr``) are checked per trace: see
:class:`Preconditions`.
"""

from __future__ import annotations

import weakref

import numpy as np

from eager._state import STATE
from eager.amp.autocast_mode import autocast_key
from eager.tensor import Tensor
from runtime import device as runtime_device

from .ir import FloatBits
from .refs import HeldTensor

_TENSOR = "T"


SELF = ("self",)  # in a key: the instance of a per-instance cache (a compiled method)


def flatten(args: tuple, kwargs: dict, dynamic=(), instance: bool = False):
    """(tensors, key): tensors of the call in order, and a hashable key of the call.
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
                         memory_pattern(tensors) if len(tensors) > 1 else (), autocast_key())
    k = _key_of(args, tensors)
    if dynamic:
        k = ("tuple", tuple((type(args[i]).__name__, DYNAMIC) if i in dynamic and
                           dynamic_value(args[i]) else p for i, p in enumerate(k[1])))
    if instance:
        k = ("tuple", (SELF,) + k[1][1:])
    kw = tuple((n, _key_of(v, tensors)) for n, v in sorted(kwargs.items())) if kwargs else ()
    return tensors, (k, kw, STATE.grad_enabled,
                     memory_pattern(tensors) if len(tensors) > 1 else (), autocast_key())


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


def memory_pattern(tensors) -> tuple:
    """Which tensors of the call share memory: () when none do, else for each tensor the
    index of the first one over the same memory (part of the key: a trace recorded without
    aliasing never replays with it)."""
    roots = []
    for t in tensors:
        d = t._data
        b = d.base
        roots.append(id(d) if b is None else id(b))
    if len(set(roots)) == len(roots):
        return ()
    return tuple(roots.index(r) for r in roots)


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
    (old_args, old_kw, old_grad, old_alias, old_ac), \
        (new_args, new_kw, new_grad, new_alias, new_ac) = old_key, new_key
    if old_grad != new_grad:
        return f"grad mode: {old_grad} != {new_grad}"
    if old_ac != new_ac:
        return f"autocast: {old_ac} != {new_ac}"
    if old_alias != new_alias:
        return f"tensors sharing memory: {_alias_text(old_alias)} != {_alias_text(new_alias)}"
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


def _alias_text(pattern) -> str:
    if not pattern:
        return "none"
    groups = {}
    for i, g in enumerate(pattern):
        groups.setdefault(g, []).append(i)
    return ", ".join("tensors " + "/".join(map(str, v)) for v in groups.values() if len(v) > 1)


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


def _gone():
    return None


class Preconditions:
    """Per-trace guards checked before replay: lifted tensors' metadata, ``.grad`` state
    at entry, Python values declared by eager (``guarded``), the Python state the trace
    read (``pystate``, a compiled :class:`~compiler.pystate.guards.GuardSet`), and
    arguments that were the same tensor when traced."""

    __slots__ = ("lifted", "lifted_storage", "lifted_ids", "grad_inputs", "grad_none", "py",
                 "same_args", "pystate", "memory", "empty", "_simple", "_check")

    def __init__(self, lifted, grad_inputs, grad_none, py_guards, same_args, pystate=None,
                 memory=None):
        self.lifted = [(t, t._data.shape, t._data.dtype, rg) for t, rg in lifted]
        self.lifted_storage = [type(t._data) for t, _ in lifted]   # the device
        self.lifted_ids = {id(t) for t, _ in lifted}
        self.grad_inputs = []  # (TensorRef, shape, dtype): an argument or a held tensor
        for r in grad_inputs:
            g = r.tensor._grad if isinstance(r, HeldTensor) else None
            self.grad_inputs.append((r, None if g is None else g._data.shape,
                                     None if g is None else g._data.dtype))
        self.grad_none = list(grad_none)
        self.py = list(py_guards)
        self.same_args = list(same_args)
        self.pystate = pystate if pystate is not None and len(pystate) else None
        # for a trace that writes in place: which of (arguments, lifted tensors) share memory
        self.memory = memory
        self._simple = not (self.lifted or self.grad_inputs or self.grad_none or self.py
                            or self.same_args or memory is not None)
        self.empty = self._simple and self.pystate is None
        self._check = None if self._simple else self._generate_check()

    def holds(self, tensors, args, kwargs) -> bool:
        """Whether every guard holds (the fast check before a replay)."""
        if self.pystate is not None and not self.pystate.check(args, kwargs):
            return False
        return self._simple or self._check(tensors)

    def _generate_check(self):
        """The tensor guards of :meth:`_tensor_failure` as one generated function
        ``check(tensors) -> bool`` with the expected values bound as constants (no loops
        or tuple unpacking per call); :meth:`_tensor_failure` says which guard failed.

        Fast path: while every lifted tensor still holds the very array it held when
        traced (an optimizer's parameters and state are written in place), its device,
        shape, dtype and memory are those of the trace; only the arguments' memory is
        compared with theirs, not the whole memory pattern."""
        env = {"memory_pattern": memory_pattern, "MEMORY": self.memory,
               "LIFTED_IDS": frozenset(self.lifted_ids)}
        body = []
        same = []
        for k, ((t, shape, dtype, rg), storage) in enumerate(zip(self.lifted,
                                                                  self.lifted_storage)):
            # (a weak reference: a trace must not keep an array the tensor let go of)
            try:
                ref = weakref.ref(t._data)
            except TypeError:  # a storage without weak references: always the full check
                ref = _gone
            env.update({f"L{k}": t, f"S{k}": storage, f"SH{k}": shape, f"DT{k}": dtype,
                        f"RG{k}": rg, f"D{k}": ref})
            same.append(f"L{k}._data is D{k}()")
        if same:
            body.append(f"same = {' and '.join(same)}")
            body.append("if not same:")
            for k in range(len(self.lifted)):
                body += [f"    d = L{k}._data",
                         f"    if type(d) is not S{k} or d.shape != SH{k} or "
                         f"(d.dtype is not DT{k} and d.dtype != DT{k}): return False"]
            rgs = " or ".join(f"L{k}.requires_grad != RG{k}" for k in range(len(self.lifted)))
            body.append(f"if {rgs}: return False")

        def leaf(r, k):
            return r.expr(env, f"O{k}")
        for k, (r, shape, dtype) in enumerate(self.grad_inputs):
            body += [f"g = {leaf(r, f'g{k}')}._grad", "if g is None: return False"]
            if shape is not None:
                env.update({f"GS{k}": shape, f"GD{k}": dtype})
                body += [f"if g._data.shape != GS{k} or g._data.dtype != GD{k}: return False"]
        for k, r in enumerate(self.grad_none):
            body.append(f"if {leaf(r, f'n{k}')}._grad is not None: return False")
        for k, (_where, getter, value) in enumerate(self.py):
            holds = getattr(getter, "holds", None)
            if holds is not None:  # a cheaper test of getter() == value
                env[f"H{k}"] = holds
                body.append(f"if not H{k}(): return False")
            else:
                env.update({f"P{k}": getter, f"V{k}": value})
                body.append(f"if P{k}() != V{k}: return False")
        for i, j in self.same_args:
            body.append(f"if tensors[{i}] is not tensors[{j}]: return False")
        if self.memory is not None:
            lifted = ", ".join(f"L{k}" for k in range(len(self.lifted)))
            full = (f"if memory_pattern(list(tensors) + [{lifted}]) != MEMORY: "
                    "return False")
            if self.memory == () and same:
                # no sharing when traced, the lifted arrays unchanged: the arguments share
                # memory neither with each other nor with a lifted tensor
                env["LIFTED_ROOTS"] = frozenset(
                    id(t._data) if t._data.base is None else id(t._data.base)
                    for t, *_ in self.lifted)
                body += ["if same:", "    roots = set()", "    for t in tensors:",
                         "        d = t._data", "        b = d.base",
                         "        r = id(d) if b is None else id(b)",
                         "        if r in roots or r in LIFTED_ROOTS: return False",
                         "        roots.add(r)",
                         "else:", "    " + full]
            else:
                body.append(full)
        if self.lifted_ids:
            body += ["for t in tensors:", "    if id(t) in LIFTED_IDS: return False"]
        src = "def check(tensors):\n" + "".join(f"    {line}\n" for line in body) + \
              "    return True\n"
        exec(compile(src, "<dyngraph guards>", "exec"), env)
        return env["check"]

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
        for (t, shape, dtype, rg), storage in zip(self.lifted, self.lifted_storage):
            d = t._data
            if type(d) is not storage:
                return f"lifted tensor {_tname(t)}: moved to another device"
            if d.shape != shape:
                return f"lifted tensor {_tname(t)}: shape {shape} != {d.shape}"
            if d.dtype != dtype:
                return f"lifted tensor {_tname(t)}: dtype {dtype} != {d.dtype}"
            if t.requires_grad != rg:
                return f"lifted tensor {_tname(t)}: requires_grad {rg} != {t.requires_grad}"
        for r, shape, dtype in self.grad_inputs:
            leaf = r.resolve(tensors)
            g = leaf._grad
            if g is None:
                return f".grad of {_tname(leaf)}: was a tensor, is None"
            if shape is not None and (g._data.shape != shape or g._data.dtype != dtype):
                return f".grad of {_tname(leaf)}: {shape} {dtype} != {g._data.shape} " \
                       f"{g._data.dtype}"
        for r in self.grad_none:
            leaf = r.resolve(tensors)
            if leaf._grad is not None:
                return f".grad of {_tname(leaf)}: was None, is a tensor"
        for where, getter, value in self.py:
            now = getter()
            if now != value:
                return f"{where}: {value!r} != {now!r}"
        for i, j in self.same_args:
            if tensors[i] is not tensors[j]:
                return f"arguments {i} and {j} were the same tensor"
        if self.memory is not None:
            now = memory_pattern(list(tensors) + [t for t, _, _, _ in self.lifted])
            if now != self.memory:
                return f"tensors sharing memory (arguments, then lifted tensors): " \
                       f"{_alias_text(self.memory)} != {_alias_text(now)}"
        if self.lifted_ids:
            for i, t in enumerate(tensors):
                if id(t) in self.lifted_ids:
                    return f"argument {i} is a tensor the function also reads directly"
        return None

    def same_as(self, other: "Preconditions") -> bool:
        """Whether a sibling trace depends on exactly the same guards (so it can share
        this variant's tree of branches)."""
        def ids(pre):
            return ([(id(t), shape, dtype, rg) for t, shape, dtype, rg in pre.lifted],
                    pre.lifted_storage,
                    [r.ident() for r, _, _ in pre.grad_inputs],
                    [w for w, _, _ in pre.py], pre.same_args,
                    [g.ident() for g in pre.pystate.guards] if pre.pystate else [])
        return ids(self) == ids(other)


def _tname(t: Tensor) -> str:
    return f"{list(t._data.shape)} {t._data.dtype}"
