"""Process-wide eager state: grad mode, anomaly mode, and the one "active tracer" slot.

The dispatch point reads these attributes on every op; they live on one object so
that a read is a single attribute lookup.  The compiler sets ``STATE.tracer`` while it
captures a function; nothing else in ``eager`` imports the compiler.
"""


class _State:
    __slots__ = ("grad_enabled", "inference", "anomaly", "tracer", "regions", "autocast")

    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        self.anomaly = False
        self.tracer = None  # compiler.capture.Tracer while a function is being traced
        # a compiled function running its body eagerly with each Module call compiled on
        # its own (compiler.regions): Module.__call__ hands the call to it
        self.regions = None
        # eager.amp.autocast's policy while autocast is on: dispatch calls it as
        # ``args = autocast(op, args)`` before running any op (None: autocast off)
        self.autocast = None


STATE = _State()


def region_router():
    """Where ``Module.__call__`` hands a module call: the compiled-regions router of a
    compiled function running its body eagerly, or None (no router, or a trace is being
    recorded: the module's ops go into that trace).  A function here, not reads in
    ``Module.__call__``, so the compiler's observer does not guard on these slots: a
    region tracing a module with submodules would otherwise guard on its own tracer and
    never replay."""
    regions = STATE.regions
    return regions if regions is not None and STATE.tracer is None else None


def guarded(where: str, getter):
    """Read a Python value that a compiled trace must not bake in silently.

    Returns ``getter()``; while a compiler tracer is active it also records a guard, so a
    replay whose value differs (``Module.training`` flipped, an LR scheduler changed
    ``lr``) retraces instead of reusing stale code.
    """
    value = getter()
    if STATE.tracer is not None:
        STATE.tracer.guard_value(where, getter, value)
    return value
