"""A hash of the compiler's code generation source (``compiler/codegen``, ``compiler/passes``,
``compiler/ir.py``): notes in the kernel cache (which program a trace gets, whether its
kernels can load at its first replay) are keyed on it, so editing code generation never
reuses a decision made by the old code."""

from __future__ import annotations

import hashlib
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _tag() -> str:
    h = hashlib.sha256()
    paths = [os.path.join(_HERE, "ir.py")]
    for folder in ("codegen", "passes"):
        d = os.path.join(_HERE, folder)
        paths += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".py")]
    for p in paths:
        h.update(os.path.relpath(p, _HERE).encode())
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


#: the hash, computed once per process (about a millisecond)
SOURCE_TAG = _tag()
