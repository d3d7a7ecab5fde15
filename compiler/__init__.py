"""compiler: ``@compile`` traces eager code into a small IR, fuses elementwise chains into
Numba kernels, caches them behind guards, and falls back to eager when control flow goes
somewhere it has not seen.

    from compiler import compile

    @compile
    def f(x):
        return torch.tanh(x * 1.01 + 0.1)
"""

from .api import CompiledFunction, CompileWarning, GraphBreakError, compile, explain, reset, wait
from .check import CheckError

__all__ = ["compile", "explain", "reset", "wait", "CompiledFunction", "GraphBreakError",
           "CompileWarning", "CheckError"]
