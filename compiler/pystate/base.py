"""What the observer's parts share: the reason to give up, where a frame is, and which
code is trusted (eager's own code, NumPy, Numba: not watched, taken to read only its
arguments)."""

from __future__ import annotations

import os
import re
import sysconfig

#: where our own code lives, defined once: the directory of each of the project's packages
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
OUR_DIRS = {p: os.path.join(ROOT, p) + os.sep for p in ("eager", "compiler", "runtime")}
_TRUSTED_DIRS = tuple(OUR_DIRS.values())
_TRUSTED_PKGS = tuple(os.sep + p + os.sep for p in ("numpy", "numba", "numba_cuda", "llvmlite"))
# the import machinery and generated kernel modules (runtime.cache) run when a device's
# eager op builds its kernel inside a trace: eager's own doing, not the user's
_TRUSTED_FROZEN = ("<frozen importlib", "<dyngraph")  # and code dyngraph generates
_GENERATED = re.compile(r"dg[a-z]*_[0-9a-f]{20}\.py$")
_TRUSTED: dict = {}
_LIBRARY: dict = {}
_LIB_DIRS = tuple({os.path.realpath(p) + os.sep for k in ("stdlib", "platstdlib", "purelib",
                                                           "platlib")
                   if (p := sysconfig.get_paths().get(k))})


class Unsure(Exception):
    """The observer cannot follow what the code does: the function must run eagerly."""


class UnsureThisCall(Unsure):
    """This call did something a replay cannot redo, which later calls need not do again
    (a buffer registered lazily at the first call): its trace is dropped, not the
    function: the next call records a trace of its own."""


def line_of(frame, code):
    """The line that the nearest frame running ``code`` (``frame`` or one of its callers)
    is at, or None when none is."""
    while frame is not None and frame.f_code is not code:
        frame = frame.f_back
    return frame.f_lineno if frame is not None else None


def where(frame) -> str:
    """``file:line in function`` of a frame, for messages."""
    if frame is None:
        return "?"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno} in " \
           f"{frame.f_code.co_name}"


def trusted_file(filename: str) -> bool:
    t = _TRUSTED.get(filename)
    if t is None:
        if filename.startswith("<"):
            t = filename.startswith(_TRUSTED_FROZEN)
        else:  # (the path as given first: realpath costs a system call per component)
            t = filename.startswith(_TRUSTED_DIRS) or any(p in filename for p in _TRUSTED_PKGS)
            if not t:
                full = os.path.realpath(os.path.abspath(filename))
                t = full.startswith(_TRUSTED_DIRS) or any(p in full for p in _TRUSTED_PKGS) \
                    or bool(_GENERATED.search(full))
        _TRUSTED[filename] = t
    return t


def our_file(filename: str) -> bool:
    """Whether a code file belongs to eager/, compiler/ or runtime/ (paths may be
    relative or go through links)."""
    t = _OURS.get(filename)
    if t is None:
        t = _OURS[filename] = os.path.realpath(os.path.abspath(filename)).startswith(
            _TRUSTED_DIRS)
    return t


_OURS: dict = {}


def library_file(filename: str) -> bool:
    """Code of the standard library or an installed package: when eager's own code calls
    it, it is a helper of that code, not the user's."""
    t = _LIBRARY.get(filename)
    if t is None:
        if filename.startswith("<"):
            t = filename.startswith("<frozen")
        else:
            t = os.path.realpath(os.path.abspath(filename)).startswith(_LIB_DIRS)
        _LIBRARY[filename] = t
    return t
