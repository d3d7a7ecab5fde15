"""The observer's view of a frame's value stack (compiler/pystate/peek.py) on this CPython.

The stack depth before each instruction is computed from the bytecode; these tests check
it against what the frame really holds: after every instruction that pushes an object
the test knows (a local, a constant, a global), the top of the stack read through
:func:`peek.stack` must be that very object, on every path the corpus takes (loops,
comprehensions, generators, ``with``, exceptions, calls with keywords).  On 3.11 every
read is also checked against the frame's own stack pointer.
"""

from __future__ import annotations

import dis
import sys
import types

import pytest

from compiler.pystate import peek

pytestmark = pytest.mark.skipif(not peek.SUPPORTED, reason="no frame layout for this Python")

_PUSHES_LOCAL = {"LOAD_FAST", "LOAD_FAST_CHECK"}


class _Box:
    attr = 3

    def method(self, a, b=2):
        return a + b


def _gen(n):
    for i in range(n):
        yield i * 2


class _Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True  # swallows the exception raised in the block


def corpus(xs, box, scale=2.0):
    total = 0
    ys = [x * scale for x in xs if x > 0]
    d = {k: v for k, v in zip("abc", xs)}
    total += sum(ys) + len(d)
    for v in _gen(3):
        total += v
    try:
        {}["missing"]
    except KeyError as e:
        total += len(str(e))
    with _Ctx():
        raise ValueError("swallowed")
    s = xs[1:3]
    s[0:1] = [7]
    total += box.method(1, b=total) + box.attr
    name = f"{total:.1f}-{box!r}"
    closure = (lambda: total + scale)
    total += closure()
    while total > 100:
        total //= 2
    return total, name, s, not xs, (box.attr if xs else None)


def _observe(fn, *args):
    """Run ``fn`` under an opcode tracer; return the number of checked pushes."""
    code = fn.__code__
    instrs = {i.offset: i for i in dis.get_instructions(code)}
    pending = []   # the object the last instruction pushed, when known
    checked = [0]

    def local(frame, event, arg):
        if event != "opcode":
            pending.clear()
            return local
        if pending:
            want = pending.pop()
            top = peek.stack(frame)[-1]
            assert top is want, (f"offset {frame.f_lasti}: the stack's top is {top!r}, "
                                 f"expected {want!r}")
            checked[0] += 1
        peek.depth(frame)  # (3.11: checks the frame's own stack pointer too)
        ins = instrs[frame.f_lasti]
        if ins.opname in _PUSHES_LOCAL and ins.argval in frame.f_locals and \
                ins.argval not in code.co_cellvars + code.co_freevars:  # (3.13: a cell)
            pending.append(frame.f_locals[ins.argval])
        elif ins.opname == "LOAD_CONST":
            pending.append(ins.argval)
        return local

    def on_call(frame, event, arg):
        if frame.f_code is not code:
            return None
        frame.f_trace = local
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return local

    peek.enable_opcode_events()
    old = sys.gettrace()
    sys.settrace(on_call)
    try:
        result = fn(*args)
    finally:
        sys.settrace(old)
    return checked[0], result


def test_stack_reads_match_the_values_pushed():
    box = _Box()
    n, result = _observe(corpus, [1.0, -2.0, 3.0, 4.0], box)
    assert result == corpus([1.0, -2.0, 3.0, 4.0], box)
    assert n > 30


def test_depths_agree_on_every_path_of_library_code():
    # every code object of a few standard modules has one depth per instruction
    import collections
    import json
    import unittest

    seen = 0
    for mod in (collections, json, unittest.case):
        for obj in vars(mod).values():
            fns = [obj] if isinstance(obj, types.FunctionType) else [
                v for v in getattr(obj, "__dict__", {}).values()
                if isinstance(v, types.FunctionType)]
            for f in fns:
                todo = [f.__code__]
                while todo:
                    c = todo.pop()
                    depths = peek._compute_depths(c)
                    assert all(0 <= d <= c.co_stacksize for d in depths.values()), c
                    seen += 1
                    todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    assert seen > 200


def test_function_is_the_running_function():
    got = []

    def f():
        got.append(peek.function(sys._getframe()))

    f()
    assert got == [f]
