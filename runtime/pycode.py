"""Generated Python compiled once per text.

Guard functions are generated per trace, with the objects they test bound to names in
their namespace: traces of one function that differ only in those objects (a model's
step per batch of sequence lengths, say) generate the same text.  :func:`code`
compiles a text once; ``exec`` of the code object in each trace's namespace defines each
trace's own function.  (CPython's compiler takes ~2.5 ms for a 5 KB guard function.)

Programs are not memoized: their text holds the trace's shapes, so it is new for each, and
a cache would keep the code of every trace ever dropped."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1024)
def code(source: str, filename: str):
    """``compile(source, filename, "exec")``, memoized (code objects are immutable)."""
    return compile(source, filename, "exec")
