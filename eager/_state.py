"""Per-thread eager state: grad mode, autocast, the default device, and the compiler's
"active tracer" and regions slots; plus anomaly mode, which is process-wide (as in
PyTorch).

The dispatch point reads these attributes on every op, so they live on one object,
``STATE``, and a read is a single attribute lookup.  ``STATE`` is a ``threading.local``:
each thread sees its own values, and a thread that never set one sees the class
attribute, the default (so a new thread starts with grad mode on, not in inference mode,
autocast off, no tracer), as in PyTorch, where grad mode is thread-local.  So ``no_grad``
in one thread, or the autograd engine switching grad mode off while it runs a backward,
does not change what another thread records, and a trace the compiler records in one
thread never captures another thread's ops.  Writers simply assign
(``STATE.grad_enabled = False``): that sets the value for the current thread only.

Anomaly mode (``STATE.anomaly``) is the one process-wide flag: it is a class attribute,
written only through :func:`set_anomaly` (never ``STATE.anomaly = ...``, which would make
it per-thread for the writing thread).

The compiler sets ``STATE.tracer`` while it captures a function; nothing else in
``eager`` imports the compiler.
"""

import threading


class _State(threading.local):
    """One instance, ``STATE``; its attributes are per thread.  The class attributes are
    the values of a thread that has not set them (``anomaly``: the process-wide flag)."""

    grad_enabled = True
    inference = False
    # process-wide: read through the instance, written on the class (set_anomaly)
    anomaly = False
    tracer = None  # compiler.capture.Tracer while this thread traces a function
    # a compiled function running its body eagerly with each Module call compiled on
    # its own (compiler.regions): Module.__call__ hands the call to it
    regions = None
    # eager.amp.autocast's policy while autocast is on: dispatch calls it as
    # ``args = autocast(op, args)`` before running any op (None: autocast off)
    autocast = None
    # the eager.device factories use when given no ``device`` (``set_default_device``,
    # ``with eager.device(...)``); None: the CPU
    default_device = None


STATE = _State()


def set_anomaly(mode: bool) -> None:
    """Turn anomaly mode on or off for every thread (PyTorch's is process-wide too)."""
    _State.anomaly = bool(mode)


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
