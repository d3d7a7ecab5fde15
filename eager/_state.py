"""Process-wide eager state: grad mode, anomaly mode, and the one "active tracer" slot.

The dispatch point reads these attributes on every op; they live on one object so
that a read is a single attribute lookup.  The compiler sets ``STATE.tracer`` while it
captures a function; nothing else in ``eager`` imports the compiler.
"""


class _State:
    __slots__ = ("grad_enabled", "inference", "anomaly", "tracer")

    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        self.anomaly = False
        self.tracer = None  # compiler.capture.Tracer while a function is being traced


STATE = _State()
