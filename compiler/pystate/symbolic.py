"""Dynamic Python scalars: a number the trace takes as an input instead of a constant.

A Python number a compiled function reads (an argument, ``self.alpha``, ``cfg["lr"]``, an
optimizer's learning rate) is first baked into the trace and guarded by value.  When a
call finds it changed, the next trace reads it as a :class:`SymFloat` / :class:`SymInt`:
a real ``float`` / ``int`` (so any Python code using it still runs) that also carries a
0-d tensor holding the same value — a graph input read from the same place on every
replay.

Arithmetic between dynamic scalars and numbers gives dynamic scalars, computed with
Python's semantics (float64 / int64 tensor ops the trace records); a dynamic scalar used
with a tensor enters the graph as that tensor op's scalar operand (cast to the dtype
eager's promotion gave it).  Any other use needs the concrete value — a comparison in an
``if``, ``int()``, indexing, ``math.sqrt`` — and *specializes* it: the trace records a
guard that the value is what it was (as ``.item()`` on a tensor does), so the path
stays valid only for that value.
"""

from __future__ import annotations

import operator

import numpy as np

from eager._state import STATE
from eager.tensor import Tensor


class Sym:
    """Mixin of :class:`SymFloat` and :class:`SymInt` (the tensor is ``_t``)."""

    __slots__ = ()


def _value(x):
    return x._t if isinstance(x, Sym) else x


def _binary(op, py_type_of):
    def f(self, other):
        if isinstance(other, Tensor) or not isinstance(other, (int, float)):
            return NotImplemented
        return _wrap(op(_as_float_if(self, other, py_type_of), _value(other)),
                     op(self._plain(), _plain_of(other)))

    def r(self, other):
        if isinstance(other, Tensor) or not isinstance(other, (int, float)):
            return NotImplemented
        return _wrap(op(_value(other), _as_float_if(self, other, py_type_of)),
                     op(_plain_of(other), self._plain()))
    return f, r


def _plain_of(x):
    return x._plain() if isinstance(x, Sym) else x


def _as_float_if(self, other, py_type_of):
    """The operand tensor, cast to float64 where Python's result would be a float."""
    t = self._t
    if py_type_of(self._plain(), _plain_of(other)) is float and t._data.dtype.kind != "f":
        return t.double()
    return t


def _truediv_type(a, b):
    return float


def _same_type(a, b):
    return float if isinstance(a, float) or isinstance(b, float) else int


def _pow_type(a, b):
    if isinstance(a, float) or isinstance(b, float) or b < 0:
        return float
    return int


def _wrap(t: Tensor, concrete):
    """A dynamic scalar over the result tensor ``t``, or a plain value when the
    operation gave something that is not a number."""
    if type(concrete) is bool:
        return concrete
    if isinstance(concrete, float):
        if t._data.dtype != np.float64:
            t = t.double()
        return SymFloat(concrete, t)
    if isinstance(concrete, int):
        return SymInt(concrete, t)
    return concrete


def _specialize(self):
    """The concrete value, guarded: the trace stays valid for this value only."""
    return self._t.item()


def _as_text(self):
    """The concrete value for formatting (``f"{loss.item():.3f}"``, ``str()``): guarded
    as a *text* guard, which a replay meeting another value turns into a graph break at
    once (a number printed every step has a new value every step: retracing would not
    help)."""
    tracer = STATE.tracer
    if tracer is None:
        return self._plain()
    tracer.text_read = True
    try:
        return _specialize(self)
    finally:
        tracer.text_read = False


class SymFloat(Sym, float):
    __slots__ = ("_t",)

    def __new__(cls, value, tensor):
        obj = float.__new__(cls, value)
        obj._t = tensor
        return obj

    def _plain(self) -> float:
        return float.__float__(self)  # the concrete value (float() would specialize)


class SymInt(Sym, int):
    # int subclasses cannot have non-empty __slots__: the tensor lives in __dict__
    def __new__(cls, value, tensor):
        obj = int.__new__(cls, value)
        obj._t = tensor
        return obj

    def _plain(self) -> int:
        return int.__int__(self)


for _name, _op, _kind in (("add", operator.add, _same_type),
                          ("sub", operator.sub, _same_type),
                          ("mul", operator.mul, _same_type),
                          ("truediv", operator.truediv, _truediv_type),
                          ("floordiv", operator.floordiv, _same_type),
                          ("mod", operator.mod, _same_type),
                          ("pow", operator.pow, _pow_type)):
    _f, _r = _binary(_op, _kind)
    for _cls in (SymFloat, SymInt):
        setattr(_cls, f"__{_name}__", _f)
        setattr(_cls, f"__r{_name}__", _r)


def _unary(fn, plain):
    def f(self):
        return _wrap(fn(self._t), plain(self._plain()))
    return f


def _compare(op):
    def f(self, other):
        if isinstance(other, Tensor) or not isinstance(other, (int, float)):
            return NotImplemented
        tracer = STATE.tracer  # (counted per tracing thread: Tracer.compared)
        if tracer is not None:
            tracer.compared += 1
        return bool(op(self._t, _value(other)))  # the tensor's bool(): a branch guard
    return f


for _cls in (SymFloat, SymInt):
    _cls.__neg__ = _unary(operator.neg, operator.neg)
    _cls.__pos__ = _unary(lambda t: t, operator.pos)
    _cls.__abs__ = _unary(lambda t: t.abs(), abs)
    for _name, _op in (("lt", operator.lt), ("le", operator.le), ("gt", operator.gt),
                       ("ge", operator.ge), ("eq", operator.eq), ("ne", operator.ne)):
        setattr(_cls, f"__{_name}__", _compare(_op))
    _cls.__bool__ = lambda self: bool(self._t != 0)
    _cls.__hash__ = lambda self: hash(_specialize(self))
    _cls.__index__ = lambda self: int(_specialize(self))
    _cls.__int__ = lambda self: int(_specialize(self))
    _cls.__float__ = lambda self: float(_specialize(self))
    _cls.__round__ = lambda self, n=None: round(_specialize(self), n)
    _cls.__trunc__ = lambda self: int(_specialize(self))
    _cls.__floor__ = lambda self: __import__("math").floor(_specialize(self))
    _cls.__ceil__ = lambda self: __import__("math").ceil(_specialize(self))
    _cls.__format__ = lambda self, spec: format(_as_text(self), spec)
    _cls.__repr__ = lambda self: repr(_as_text(self))
    _cls.__str__ = lambda self: str(_as_text(self))
    _cls.__reduce__ = lambda self: (type(_specialize(self)), (_specialize(self),))


def is_sym(x) -> bool:
    return isinstance(x, Sym)


def specialize(x):
    """``x`` as a plain value; a dynamic scalar is guarded on its value."""
    return _specialize(x) if isinstance(x, Sym) else x


def plain(x):
    """``x``'s concrete value, without a guard (for values leaving the trace)."""
    return x._plain() if isinstance(x, Sym) else x
