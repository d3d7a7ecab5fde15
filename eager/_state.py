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
