"""Code made at run time (file ``<string>``: a dataclass's ``__init__``, a module numba-cuda
``exec``s) that a library runs on behalf of our own code is that code's helper, not the
user's: a CUDA op building its kernel inside a trace (numba-cuda's linker options are a
dataclass whose ``__post_init__`` is compiled code) made every compiled CUDA step break its
graph on a GPU.  The user's own ``<string>`` code stays watched."""

from __future__ import annotations

import copy
import os
import time

import numpy as np

import compiler
import eager
from compiler.pystate.base import OUR_DIRS

_GENERATED = {"_clock": time.perf_counter_ns, "calls": []}
exec("def __copy__(self):\n"           # what a dataclass's generated __init__ is like
     "    _clock()\n"                  # a compiled call the observer cannot see into
     "    return self\n", _GENERATED)
_BOX = type("Box", (), {"__copy__": _GENERATED["__copy__"]})()

# a function of ours (its file lies in runtime/) that has a library (copy.copy) run that
# generated code, as runtime/cuda has numba-cuda build a kernel
_OURS = {"copy": copy, "BOX": _BOX}
exec(compile("def build(x):\n"
             "    copy.copy(BOX)\n"
             "    return x * 2\n",
             os.path.join(OUR_DIRS["runtime"], "_generated_code_test.py"), "exec"), _OURS)
_build = _OURS["build"]


def test_generated_code_a_library_runs_for_our_code_does_not_break_the_graph():
    def f(x):
        return _build(x) + 1

    cf = compiler.compile(f)
    for i in range(4):
        x = eager.tensor(np.full(3, float(i), np.float32))
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
        if i == 1:
            compiler.wait()
    s = cf.stats()
    assert s["traces"] == 1 and s["hits"] == 3, s       # every call after the first replays
    assert not cf.explain().graph_breaks


def test_the_users_generated_code_run_by_a_library_stays_watched():
    ns = {"calls": []}
    exec("def __copy__(self):\n"
         "    calls.append(1)\n"           # a side effect each call must make
         "    return self\n", ns)
    box = type("UserBox", (), {"__copy__": ns["__copy__"]})()

    def f(x):
        copy.copy(box)
        return x * 2 + 1

    cf = compiler.compile(f)
    for i in range(4):
        x = eager.tensor(np.full(3, float(i), np.float32))
        np.testing.assert_array_equal(cf(x).numpy(), (x * 2 + 1).numpy())
        assert len(ns["calls"]) == i + 1        # the copy ran on every call, as in eager
        if i == 1:
            compiler.wait()
