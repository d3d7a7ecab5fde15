"""Reading a running frame's value stack and function object (CPython 3.11).

The observer sees each instruction before it runs (``sys.settrace`` opcode events); to
know *which* object an instruction reads (the object whose attribute is loaded, the
callable about to be called) it reads the frame's value stack.  CPython keeps that stack
in the frame's ``_PyInterpreterFrame`` and sets ``stacktop`` before it calls a trace
function.  Python gives no API for it, so it is read here through ``ctypes``, and every
read is validated against what Python *does* expose (the frame's code, globals, and the
frame object itself must be where the layout says, and ``stacktop`` must lie between the
locals and the code's stack size) — a failed check means the layout is not what this
module knows, and the caller stops trusting its view (the compiled function then runs
eagerly), never reads garbage.
"""

from __future__ import annotations

import ctypes
import sys

_PTR = ctypes.sizeof(ctypes.c_void_p)
_NULL = object()   # a NULL slot on the value stack (pushed before a function call)

# word offsets in _PyInterpreterFrame: f_code, f_func, f_globals, frame_obj, stacktop,
# localsplus; the frame object's f_frame pointer is its 4th word.
_LAYOUTS = {(3, 11): (4, 0, 1, 5, 8, 9)}
_LAYOUT = _LAYOUTS.get(sys.version_info[:2])
SUPPORTED = _LAYOUT is not None


class LayoutError(RuntimeError):
    """The frame does not look as this module expects: do not trust any read."""


def _word(addr: int) -> int:
    return ctypes.c_void_p.from_address(addr).value or 0


def _obj(addr: int):
    return ctypes.cast(addr, ctypes.py_object).value


def _iframe(frame) -> int:
    if _LAYOUT is None:
        raise LayoutError(f"Python {sys.version_info[0]}.{sys.version_info[1]}")
    code_at, _, glb_at, fobj_at, _, _ = _LAYOUT
    base = _word(id(frame) + 3 * _PTR)
    if not base or _word(base + code_at * _PTR) != id(frame.f_code) \
            or _word(base + glb_at * _PTR) != id(frame.f_globals) \
            or _word(base + fobj_at * _PTR) != id(frame):
        raise LayoutError("frame layout")
    return base


def _n_localsplus(code) -> int:
    # an argument that is also a cell variable has one slot, not two
    names = set(code.co_varnames)
    return len(code.co_varnames) + sum(c not in names for c in code.co_cellvars) + \
        len(code.co_freevars)


def stack(frame) -> list:
    """The values on ``frame``'s stack, bottom first (:data:`NULL` for NULL slots).

    Valid only inside a trace function called for this frame."""
    _, _, _, _, top_at, lp_at = _LAYOUT if _LAYOUT else (0,) * 6
    base = _iframe(frame)
    code = frame.f_code
    nlp = _n_localsplus(code)
    top = ctypes.c_int.from_address(base + top_at * _PTR).value
    if not nlp <= top <= nlp + code.co_stacksize:
        raise LayoutError(f"stack top {top} outside [{nlp}, {nlp + code.co_stacksize}]")
    out = []
    for i in range(nlp, top):
        p = _word(base + (lp_at + i) * _PTR)
        out.append(_obj(p) if p else _NULL)
    return out


def depth(frame) -> int:
    """The number of values on ``frame``'s stack (same validity as :func:`stack`)."""
    _, _, _, _, top_at, _ = _LAYOUT if _LAYOUT else (0,) * 6
    base = _iframe(frame)
    code = frame.f_code
    nlp = _n_localsplus(code)
    top = ctypes.c_int.from_address(base + top_at * _PTR).value
    if not nlp <= top <= nlp + code.co_stacksize:
        raise LayoutError(f"stack top {top} outside [{nlp}, {nlp + code.co_stacksize}]")
    return top - nlp


def function(frame):
    """The function object running in ``frame`` (its closure cells, defaults...)."""
    _, func_at, _, _, _, _ = _LAYOUT if _LAYOUT else (0,) * 6
    p = _word(_iframe(frame) + func_at * _PTR)
    fn = _obj(p) if p else None
    if fn is None or getattr(fn, "__code__", None) is not frame.f_code:
        raise LayoutError("frame function")
    return fn


def is_null(v) -> bool:
    return v is _NULL


NULL = _NULL
