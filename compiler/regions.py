"""Regions: when whole-function traces keep diverging (a loop whose trip count is data,
a sequence length that changes every call), the function body runs eagerly and each
``nn.Module`` it calls is compiled on its own.

Each module gets a :class:`~compiler.api.CompiledFunction` over its ``__call__`` path
(hooks included); their outputs hang in eager's autograd graph under compiled backward
nodes, so the regions are chained by eager autograd.  A loop over a recurrent cell then
runs the cell's compiled code at every step, whatever the number of steps.
"""

from __future__ import annotations

import weakref

from eager._state import STATE


class Regions:
    """Routes Module calls to per-module compiled functions while a body runs eagerly."""

    def __init__(self, make_compiled):
        self.make_compiled = make_compiled
        self.compiled = weakref.WeakKeyDictionary()  # module -> CompiledFunction

    def __call__(self, module, args, kwargs):
        cf = self.compiled.get(module)
        if cf is None:
            cf = self.compiled[module] = self.make_compiled(ModuleCall(module))
        return cf(*args, **kwargs)

    def run(self, fn, args, kwargs):
        """``fn(*args, **kwargs)`` with Module calls routed here."""
        saved, STATE.regions = STATE.regions, self
        try:
            return fn(*args, **kwargs)
        finally:
            STATE.regions = saved

    def summary(self, prefix: str = "") -> list:
        """(name, stats) of each region, and of the regions inside a region that itself
        reached ``max_traces`` (named ``outer/inner``)."""
        out = []
        for m, cf in list(self.compiled.items()):
            name = prefix + type(m).__name__
            out.append((name, cf.stats()))
            if cf._regions is not None:
                out += cf._regions.summary(name + "/")
        return out


class ModuleCall:
    """A module's call (hooks and forward) as a plain function to compile: a region, and
    ``compile(module)``.  Calls ``forward`` without asking the region router (this *is*
    the module's compiled region)."""

    def __init__(self, module):
        self.module = module
        self.__name__ = f"{type(module).__name__}.__call__"

    def __call__(self, *args, **kwargs):
        # always through the Module's own hook runner, even without hooks: the observer
        # watches eager.nn's code handling a Module (so the hook dicts it reads are
        # guarded, and hooks registered or removed later take effect), not this file's
        return self.module._call_with_hooks(args, kwargs)


_Call = ModuleCall  # the former name
