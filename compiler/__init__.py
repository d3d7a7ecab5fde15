"""compiler: ``@compile`` traces eager code into a small IR, fuses elementwise chains into
Numba kernels, caches them behind guards, and falls back to eager when control flow goes
somewhere it has not seen.

    from compiler import compile

    @compile
    def f(x):
        return torch.tanh(x * 1.01 + 0.1)

``compile`` takes ``torch.compile``'s arguments (``fullgraph``, ``dynamic``, ``backend``,
``mode``, ``options``, ``disable``); ``reset()``, ``disable(fn)`` and ``is_compiling()``
are ``torch.compiler``'s; ``eager.compile`` and ``eager.compiler`` are the same objects.
"""

from .api import (
                  CompiledFunction,
                  CompileWarning,
                  GraphBreakError,
                  compile,
                  disable,
                  explain,
                  is_compiling,
                  reset,
                  wait,
)
from .check import CheckError

__all__ = ["compile", "explain", "reset", "wait", "disable", "is_compiling",
           "CompiledFunction", "GraphBreakError", "CompileWarning", "CheckError"]
