"""Buffer reuse for the outputs of CPU programs.

An output of at least :data:`REUSE_MIN_BYTES` keeps the array it returned last time in
a slot of the program; at the next call the array is reused when ``sys.getrefcount``
shows that the slot holds the only reference: nobody (no tensor, no view: NumPy views
reference their base array, no saved tensor, no pending write-back) can see it any more,
so writing it is indistinguishable from writing a fresh ``np.empty`` that happened to get
the same memory.  If the user kept the previous result, a fresh array is allocated (and
the slot moves to it).  This avoids the page faults of fresh large outputs (128 MB for
32M float32), which otherwise dominate memory-bound kernels.  The reference count the
check expects is measured once at import, the same way the generated code reads it.
"""

from __future__ import annotations

import sys

import numpy as np

#: outputs of at least this many bytes reuse their previous buffer when nobody holds it
REUSE_MIN_BYTES = 1 << 16


def _measure_refcount() -> int:
    """``sys.getrefcount`` of a slot's array read the way generated programs read it."""
    glb = {"__rc": sys.getrefcount}
    exec("def probe(S):\n    o = S[0]\n    return __rc(o)\n", glb)  # noqa: S102
    return glb["probe"]([np.empty(1)])


FREE_RC = _measure_refcount()


def reuse_lines(glb: dict, slot: str, out: str, alloc: str) -> list:
    """Program lines binding ``out`` to the slot's previous array when it is free, else
    to a fresh ``alloc`` kept in the slot (``glb``: the program's globals)."""
    glb["__rc"] = sys.getrefcount
    glb[slot] = [None]
    return [f"{out} = {slot}[0]",
            f"if __rc({out}) != {FREE_RC}: {out} = {slot}[0] = {alloc}"]
