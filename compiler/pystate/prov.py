"""Provenance: what the observer knows about a value on a traced frame's stack or in one
of its variables.

* ``det`` — on a replay that passes the guards, this slot would hold the same object (or
  an equal immutable value): it was read through guarded state, built from such values,
  or made during the call.  A value that is not ``det`` came from somewhere the observer
  lost track of; using it makes the function run eagerly.
* ``fresh`` — True: made during this call, so writing into it is no side effect; False:
  it existed before the call; None: not known (writes are treated as side effects).
* ``source`` — how to read it again at call time (for values whose reads are guarded and
  that may become inputs of the trace), or None.
"""

from __future__ import annotations


class Prov:
    __slots__ = ("det", "fresh", "source")

    def __init__(self, det: bool, fresh, source=None):
        self.det, self.fresh, self.source = det, fresh, source

    def __repr__(self) -> str:
        f = {True: "fresh", False: "old", None: "?"}[self.fresh]
        src = f" {self.source!r}" if self.source else ""
        return f"<{'det' if self.det else 'UNKNOWN'} {f}{src}>"


UNKNOWN = Prov(False, None)
FRESH = Prov(True, True)      # made during the call (constants, new containers, results)
DET = Prov(True, None)        # determined, but it may be an object that existed before
OLD = Prov(True, False)       # determined, existed before the call (no re-readable path)
NULL = Prov(True, True)       # a NULL slot (before a function on the stack)


def persistent(source) -> Prov:
    return Prov(True, False, source)

