"""The one dispatch point every op goes through.

``dispatch(op, *args, **params)`` promotes dtypes, runs the op's forward on the
arguments' arrays, wraps the result in a Tensor, records a grad node when grad mode
is on and an argument requires grad, and, while a compiler tracer is active, tells
the tracer so that it appends an IR node.  Nothing else creates op results.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from ._state import STATE
from .autograd.node import Node
from .tensor import Tensor

_ndarray = np.ndarray
_make = Tensor._make


def dispatch(op, *args, **params):
    tracer = STATE.tracer
    if tracer is not None and tracer.has_syms:  # dynamic scalars: compute on their values
        traced_args = args
        args, params = tracer.unwrap(args, params)
    else:
        traced_args = args
    arrays = []
    rg = False
    for a in args:
        if isinstance(a, Tensor):
            arrays.append(a._data)
            if a.requires_grad:
                rg = True
        else:
            arrays.append(a)
    if op.promotes:
        arrays = promote(arrays)
    try:
        out = op.forward(*arrays, **params)
    except Exception as exc:
        raise _explain(op, args, exc) from exc
    if type(out) is not _ndarray:
        out = np.asarray(out)
    t = _make(out)
    if op.view:
        base = args[0]
        t._version = base._version
        t._base = base if base._base is None else base._base
    if rg and STATE.grad_enabled and op.differentiable and out.dtype.kind == "f":
        t.requires_grad = True
        # (a traced dynamic number is saved as itself: a traced backward uses it as such)
        t.grad_fn = Node(op, traced_args, params, t)
    if tracer is not None:
        tracer.record(op, traced_args, params, t)
    return t


def promote(arrays: list) -> list:
    """Cast array arguments to PyTorch's result dtype; Python scalars stay weak."""
    if len(arrays) == 2:  # fast path: the common binary cases need no cast
        a, b = arrays
        if type(a) is _ndarray:
            tb = type(b)
            if tb is _ndarray:
                if a.dtype is b.dtype:
                    return arrays
            elif tb is float:
                if a.dtype.kind == "f":
                    return arrays
            elif tb is int and a.dtype.kind in "fiu":
                return arrays
        elif type(b) is _ndarray and b.dtype.kind == "f" and type(a) in (float, int):
            return arrays
    first = None
    mixed = False
    for a in arrays:
        if type(a) is _ndarray:
            if first is None:
                first = a.dtype
            elif a.dtype != first:
                mixed = True
        elif a is not None:
            if first is None or _dt.scalar_category(a) > _cat(first):
                mixed = True
    if not mixed:
        return arrays
    rt = _dt.result_type(*arrays)
    out = []
    for a in arrays:
        if type(a) is _ndarray:
            if a.dtype != rt:
                a = a.astype(rt)
        elif a is not None and _dt.scalar_category(a) > _cat(rt):
            a = np.asarray(a, dtype=rt)
        out.append(a)
    return out


def _cat(np_dtype) -> int:
    k = np_dtype.kind
    return 2 if k == "f" else (0 if k == "b" else 1)


def _explain(op, args, exc: Exception) -> Exception:
    """Turn a NumPy error into one that names the op and the shapes involved."""
    if isinstance(exc, (RuntimeError, IndexError, TypeError)) and not isinstance(exc, _NumpyErrors):
        return exc
    shapes = [tuple(a.shape) if isinstance(a, Tensor) else type(a).__name__ for a in args]
    msg = str(exc)
    if op.elementwise and "broadcast" in msg:
        tshapes = [s for s in shapes if isinstance(s, tuple)]
        detail = _broadcast_detail(tshapes)
        return RuntimeError(f"{op.name}: {detail}")
    cls = RuntimeError if isinstance(exc, ValueError) else type(exc)
    try:
        return cls(f"{op.name}: {msg} (argument shapes {shapes})")
    except Exception:
        return RuntimeError(f"{op.name}: {msg} (argument shapes {shapes})")


_NumpyErrors = (np.exceptions.AxisError,)


def _broadcast_detail(shapes: list) -> str:
    a = shapes[0] if shapes else ()
    for b in shapes[1:]:
        n = max(len(a), len(b))
        pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
        for d in range(n - 1, -1, -1):
            if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
                return (f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                        f"({pb[d]}) at non-singleton dimension {d} (shapes {a} and {b})")
        a = tuple(max(x, y) for x, y in zip(pa, pb))
    return f"shapes {shapes} cannot be broadcast together"
