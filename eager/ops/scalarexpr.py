"""The vocabulary an op's scalar expression is written in (``Op.scalar``).

A fused kernel's body is its *scalar core*: the group's nodes in order, each turned into
one line of source that Numba compiles for the device (``t3 = t1 * np.float32(0.5)``).
Each elementwise op writes its own line, in its class next to its forward::

    class Mul(Binary):
        def scalar(S, args, p, out):
            rt, a, b = S.binary(args)
            return (f"{a} & {b}" if rt == BOOL else f"{a} * {b}"), rt

``args`` are :class:`Arg` s (a variable of a dtype and rank, or a Python literal), ``p``
the node's params, ``out`` its result dtype (the op's ``out_dtype``).  The expression
returns ``(source, dtype)``, or ``(lines, dtype)`` where ``lines`` are ``(target, source)``
pairs ending with ``(None, result)``.  ``S`` (a :class:`Scalar`) gives temporaries and
the device's math: ``S.fn("tanh", x, dtype)`` is ``mathlib.tanh(x)`` on the CPU and
``math.tanh(x)`` on CUDA, so a device differs only by its table (and its loop
templates).  An expression raises :class:`Unsupported` (``S.need(cond)``) for dtypes or
params it cannot write; that node then runs unfused.

The source computes what eager computes on arrays of the same dtypes:

* every literal is written typed (``np.float32(0.5)``) so float32 code stays float32;
* every value has exactly its IR dtype (the driver casts where Numba's own scalar typing
  differs, e.g. int8 + int8 is int64 in Numba);
* promotion is :func:`eager.dtypes.result_type` (a Python scalar, or a variable flagged
  ``weak``, never widens a tensor: NEP 50);
* NaN, signed zeros and ties follow NumPy (``maximum`` propagates NaN and returns its
  second operand on ties).
"""

from __future__ import annotations

import numpy as np

from runtime.source import BOOL, F32, F64, I64, cast, literal  # noqa: F401 (re-exported)

from ..dtypes import result_type


class Unsupported(Exception):
    """This op cannot be written as a scalar expression for these dtypes or params."""


class Arg:
    """An argument of a node inside the core: a variable (``name``) of ``dtype`` and rank
    ``ndim`` (the rank matters for promotion: 0-d tensors are weaker; ``weak``: a Python
    scalar passed as a graph input, promoted like a literal), or a literal ``value``;
    ``nonzero``: known to hold no zero (a nonzero literal, or a value the caller checked:
    an integer division by it needs no zero-divisor check)."""

    __slots__ = ("dtype", "name", "ndim", "nonzero", "value", "weak")

    def __init__(self, name=None, dtype=None, ndim=0, value=None, weak=False, nonzero=False):
        self.name = name
        self.dtype = dtype
        self.ndim = ndim
        self.value = value
        self.weak = weak
        self.nonzero = nonzero or (name is None and value is not None and value != 0)

    @property
    def is_lit(self) -> bool:
        return self.name is None

    def promotes_as(self):
        """What the promotion rule sees: this variable, or the literal's Python value."""
        return self.value if self.is_lit else self


# -- literals and casts (runtime.source: literal, cast) -----------------------------------

def floating(dt: np.dtype) -> np.dtype:
    return dt if dt.kind == "f" else F32


class Scalar:
    """What a scalar expression is written with: temporaries (``tmp``), the device's math
    table (``fn``), typed literals, casts and promotion."""

    __slots__ = ("math", "n", "prefix")

    literal = staticmethod(literal)
    cast = staticmethod(cast)
    floating = staticmethod(floating)

    def __init__(self, prefix: str, math: dict):
        self.prefix = prefix
        self.math = math
        self.n = 0

    def tmp(self) -> str:
        """A fresh name for a helper temporary."""
        self.n += 1
        return f"{self.prefix}_{self.n}"

    def fn(self, name: str, x: str, dtype: np.dtype) -> str:
        """The device's ``name`` (``exp``, ``sqrt``, ``floor``...) applied to ``x`` of a
        float ``dtype``; :class:`Unsupported` when the device has no such function."""
        entry = self.math.get(name)
        if isinstance(entry, dict):
            entry = entry.get(np.dtype(dtype).char, entry.get("*"))
        if entry is None:
            raise Unsupported
        return entry.format(x)

    @staticmethod
    def need(cond) -> None:
        if not cond:
            raise Unsupported

    @staticmethod
    def arg(a: Arg, dtype: np.dtype) -> str:
        """The argument as a scalar of ``dtype`` (literals typed, variables cast)."""
        if a.is_lit:
            return literal(a.value, dtype)
        return cast(a.name, a.dtype, dtype)

    @staticmethod
    def truth(a: Arg) -> str:
        if a.is_lit:
            return "True" if bool(a.value) else "False"
        return a.name if a.dtype == BOOL else f"({a.name} != 0)"

    @staticmethod
    def promoted(*args: Arg) -> np.dtype:
        """eager's promotion of the arguments (:func:`eager.dtypes.result_type`)."""
        return np.dtype(result_type(*[a.promotes_as() for a in args]))

    def binary(self, args) -> tuple:
        """(promoted dtype, first argument, second argument) in the promoted dtype."""
        rt = self.promoted(*args)
        return rt, self.arg(args[0], rt), self.arg(args[1], rt)

    @staticmethod
    def max_nan(a: str, b: str) -> str:
        """NumPy's maximum: ``a`` if ``a > b`` or ``a`` is nan, else ``b``: nan wins, and
        on a tie (``-0.0`` against ``0.0``) the second operand is the result, as NumPy."""
        return f"({a} if ({a} > {b} or {a} != {a}) else {b})"

    @staticmethod
    def min_nan(a: str, b: str) -> str:
        """NumPy's minimum: ``a`` if ``a < b`` or ``a`` is nan, else ``b`` (ties: ``b``)."""
        return f"({a} if ({a} < {b} or {a} != {a}) else {b})"


# -- the driver: one node -> source lines ------------------------------------------------

def node_args(node, names: dict) -> list:
    """The :class:`Arg` s of an IR node; ``names`` maps input value ids to variables.
    Inputs with an ``id`` are values (variables); Python scalars are literals."""
    args = []
    for a in node.inputs:
        if hasattr(a, "id"):
            args.append(Arg(names[a.id], a.dtype, len(a.shape), weak=getattr(a, "weak", False),
                            nonzero=getattr(a, "nonzero", False)))
        elif isinstance(a, (bool, int, float)):
            args.append(Arg(value=a))
        else:
            raise Unsupported
    return args


#: :func:`emit`'s answers by what they depend on (:func:`_emit_key`): a trace's fusion asks
#: for each node whether it can be written (:func:`supports`), then writes each fused group
#: (twice for a group storing into its inputs), and traces that differ only in shapes (one
#: per batch of sequence lengths) ask the same questions again
_EMITTED: dict = {}
_UNSUPPORTED = object()
_PLAIN = (bool, int, float, str, type(None), np.dtype)


def _plain(v) -> bool:
    """A value whose type and repr say all of it (an array's repr elides)."""
    if isinstance(v, tuple):
        return all(_plain(x) for x in v)
    return isinstance(v, _PLAIN)


def _emit_key(node, names: dict, target: str, math: dict):
    """What :func:`emit`'s answer depends on: the op and its expression, each input's name,
    dtype, rank and flags (or a literal's type and value), the params, the result dtype,
    the target and the math table; None when a param is not a plain value (no memo)."""
    key = [node.op, node.op.scalar, node.out.dtype, target, id(math)]
    for a in node.inputs:
        if hasattr(a, "id"):
            key.append((names[a.id], a.dtype, len(a.shape), getattr(a, "weak", False),
                        getattr(a, "nonzero", False)))
        else:  # (type and repr: 1, 1.0, True and -0.0, 0.0 are different literals)
            key.append((type(a), repr(a)))
    for k, v in node.params.items():
        if not _plain(v):
            return None
        key.append((k, type(v), repr(v)))
    return tuple(key)


def emit(node, names: dict, target: str, math: dict) -> list:
    """Source lines computing ``node`` into the variable ``target`` with the device math
    table ``math``.  Raises :class:`Unsupported` when the op has no scalar expression for
    these dtypes/params."""
    if node.op.scalar is None or node.out is None:
        raise Unsupported
    key = _emit_key(node, names, target, math)
    lines = _EMITTED.get(key) if key is not None else None
    if lines is None:
        try:
            lines = _emit(node, names, target, math)
        except Unsupported:
            lines = _UNSUPPORTED
        if key is not None:
            if len(_EMITTED) > 100_000:
                _EMITTED.clear()
            _EMITTED[key] = lines
    if lines is _UNSUPPORTED:
        raise Unsupported
    return list(lines)


def _emit(node, names: dict, target: str, math: dict) -> list:
    expr = node.op.scalar   # (not None: emit checked)
    S = Scalar(target, math)
    res, dt = expr(S, node_args(node, names), node.params, node.out.dtype)
    lines = res if isinstance(res, list) else [(None, res)]
    out = [f"{tgt} = {src}" for tgt, src in lines[:-1]]
    src = lines[-1][1]
    want = node.out.dtype
    dt = np.dtype(dt)
    if dt.kind in "iu" and dt.itemsize < 8:
        dt = I64   # Numba computes narrow integers in int64: wrap back to the dtype
    if dt != want:
        src = cast(f"({src})", dt, want)
    out.append(f"{target} = {src}")
    return out


def supports(node, dtypes, math: dict) -> bool:
    """Whether :func:`emit` can write ``node`` on a device computing in ``dtypes`` with the
    math table ``math`` (op known, dtypes supported, params literal)."""
    if node.out is None or node.op.scalar is None or getattr(node.op, "random", False):
        return False
    if node.out.dtype not in dtypes:
        return False
    if any(a.dtype not in dtypes for a in node.inputs if hasattr(a, "id")):
        return False
    try:
        emit(node, {a.id: f"a{i}" for i, a in enumerate(node.inputs) if hasattr(a, "id")},
             "t", math)
    except Unsupported:
        return False
    return True
