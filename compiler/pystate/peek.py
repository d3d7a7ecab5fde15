"""Reading a running frame's value stack and function object (CPython 3.11, 3.12, 3.13).

The observer sees each instruction before it runs (``sys.settrace`` opcode events); to
know *which* object an instruction reads (the object whose attribute is loaded, the
callable about to be called) it reads the frame's value stack.  CPython keeps that stack
right after the frame's local variables in its ``_PyInterpreterFrame``; Python gives no
API for it, so it is read here through ``ctypes``.

What this module needs from a CPython release is one row of :data:`_LAYOUTS`: the word
offsets of a few fields of ``_PyInterpreterFrame``.  The stack's *depth* is not read from
the frame (3.12 and 3.13 keep the stack pointer in a C local while the frame runs): it is
computed from the bytecode, the way CPython's compiler computes ``co_stacksize``, with
``dis.stack_effect`` and the exception table.  CPython guarantees that every instruction
of a code object runs at one stack depth whatever path reaches it, so the depth at the
instruction a trace event reports is exact; a code object whose depths disagree is
refused.  Every read is validated against what Python *does* expose (the frame's code,
globals and frame object must be where the layout says; on 3.11 the frame's own stack
pointer must equal the computed depth): a failed check means the layout is not what this
module knows, and the caller stops trusting its view (the compiled function then runs
eagerly), never reads garbage.
"""

from __future__ import annotations

import ctypes
import dis
import sys
from typing import NamedTuple

_PTR = ctypes.sizeof(ctypes.c_void_p)
_NULL = object()   # a NULL slot on the value stack (pushed before a function call)


class _Layout(NamedTuple):
    """Word offsets in ``_PyInterpreterFrame`` (``stacktop``: None where it is not kept
    while the frame runs)."""

    code: int
    func: int
    globals: int
    frame_obj: int
    localsplus: int
    stacktop: int | None


#: one row per CPython release (Include/internal/pycore_frame.h); a frame object's
#: ``f_frame`` pointer is its 4th word in all of them
_LAYOUTS = {
    (3, 11): _Layout(code=4, func=0, globals=1, frame_obj=5, localsplus=9, stacktop=8),
    (3, 12): _Layout(code=0, func=2, globals=3, frame_obj=6, localsplus=9, stacktop=None),
    (3, 13): _Layout(code=0, func=2, globals=3, frame_obj=6, localsplus=9, stacktop=None),
}
_LAYOUT = _LAYOUTS.get(sys.version_info[:2])
SUPPORTED = _LAYOUT is not None
VERSIONS = tuple(f"{a}.{b}" for a, b in _LAYOUTS)


class LayoutError(RuntimeError):
    """The frame does not look as this module expects: do not trust any read."""


def _word(addr: int) -> int:
    return ctypes.c_void_p.from_address(addr).value or 0


def _obj(addr: int):
    return ctypes.cast(addr, ctypes.py_object).value


def _iframe(frame) -> int:
    if _LAYOUT is None:
        raise LayoutError(f"Python {sys.version_info[0]}.{sys.version_info[1]}")
    base = _word(id(frame) + 3 * _PTR)
    if not base or _word(base + _LAYOUT.code * _PTR) != id(frame.f_code) \
            or _word(base + _LAYOUT.globals * _PTR) != id(frame.f_globals) \
            or _word(base + _LAYOUT.frame_obj * _PTR) != id(frame):
        raise LayoutError("frame layout")
    return base


def _n_localsplus(code) -> int:
    # an argument that is also a cell variable has one slot, not two
    names = set(code.co_varnames)
    return len(code.co_varnames) + sum(c not in names for c in code.co_cellvars) + \
        len(code.co_freevars)


# -- stack depths from the bytecode -------------------------------------------------------

#: instructions after which control never falls through to the next one
_NO_FALLTHROUGH = frozenset({
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "RETURN_VALUE",
    "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "INTERPRETER_EXIT"})
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_DEPTHS: dict = {}
_PRECALL = "PRECALL" in dis.opmap


def _effect(ins, jump: bool | None) -> int:
    if ins.opname == "RETURN_GENERATOR":
        return 1  # the value sent at the first resume (dis counts it 0 before 3.13)
    if ins.opname == "PRECALL":
        return 0  # (3.11: dis counts a call's pops on PRECALL, CALL makes them)
    if ins.opname == "CALL" and _PRECALL:
        return -ins.arg - 1
    arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(ins.opcode, arg, jump=jump)


def _compute_depths(code) -> dict:
    """The stack depth before each instruction of ``code``, by offset."""
    instrs = list(dis.get_instructions(code))
    index = {ins.offset: k for k, ins in enumerate(instrs)}
    out: dict = {}
    work = [(0, 0)]
    for e in dis._parse_exception_table(code):
        # a handler starts with the entry's depth, the offset of the raising instruction
        # when ``lasti``, and the exception
        work.append((index[e.target], e.depth + (1 if e.lasti else 0) + 1))
    while work:
        k, depth = work.pop()
        while k < len(instrs):
            ins = instrs[k]
            seen = out.get(ins.offset)
            if seen is not None:
                if seen != depth:
                    raise LayoutError(f"stack depths disagree at {ins.opname} "
                                      f"({seen} != {depth}) in {code.co_name}")
                break
            out[ins.offset] = depth
            if ins.opcode in _JUMPS:
                work.append((index[ins.argval], depth + _effect(ins, True)))
                if ins.opname in _NO_FALLTHROUGH:
                    break
                depth += _effect(ins, False)
            else:
                if ins.opname in _NO_FALLTHROUGH:
                    break
                depth += _effect(ins, None)
            k += 1
    return out


def _code_facts(code) -> tuple:
    """(stack depth by offset, number of local slots) of ``code``."""
    entry = _DEPTHS.get(id(code))  # (by id: a code object hashes all its bytecode)
    if entry is None or entry[0] is not code:
        entry = _DEPTHS[id(code)] = (code, _compute_depths(code), _n_localsplus(code))
    return entry[1], entry[2]


def _depth(frame) -> tuple:
    base = _iframe(frame)
    code = frame.f_code
    depths, nlp = _code_facts(code)
    d = depths.get(frame.f_lasti)
    if d is None or not 0 <= d <= code.co_stacksize:
        raise LayoutError(f"no stack depth for offset {frame.f_lasti} of {code.co_name}")
    if _LAYOUT.stacktop is not None:
        top = ctypes.c_int.from_address(base + _LAYOUT.stacktop * _PTR).value - nlp
        if top != d:
            raise LayoutError(f"stack top {top} != depth {d} in {code.co_name}")
    return d, base + (_LAYOUT.localsplus + nlp) * _PTR


def depth(frame) -> int:
    """The number of values on ``frame``'s stack before the instruction it is about to
    run.  Valid only inside an ``opcode`` trace event for this frame."""
    return _depth(frame)[0]


def stack(frame) -> list:
    """The values on ``frame``'s stack, bottom first (:data:`NULL` for NULL slots).

    Valid only inside an ``opcode`` trace event for this frame."""
    n, first = _depth(frame)
    out = []
    for i in range(n):
        p = _word(first + i * _PTR)
        out.append(_obj(p) if p else _NULL)
    return out


def function(frame):
    """The function object running in ``frame`` (its closure cells, defaults...)."""
    p = _word(_iframe(frame) + _LAYOUT.func * _PTR)
    fn = _obj(p) if p else None
    if fn is None or getattr(fn, "__code__", None) is not frame.f_code:
        raise LayoutError("frame function")
    return fn


def enable_opcode_events() -> None:
    """Make ``sys.settrace`` deliver opcode events.  On 3.12 ``settrace`` asks for them
    only once some frame has set ``f_trace_opcodes``; setting it on this frame (and
    clearing it) does that, before the caller installs its trace function."""
    f = sys._getframe()
    f.f_trace_opcodes = True
    f.f_trace_opcodes = False


def is_null(v) -> bool:
    return v is _NULL


NULL = _NULL
