"""The tracer contract: everything eager tells a compiler tracer, in one place.

While ``STATE.tracer`` is set (the compiler records a function), eager calls these hooks;
``compiler.capture.Tracer`` implements them.  Each has a do-nothing default here, so a
test stand-in (or another tool) subclasses :class:`TracerHooks` and overrides what it
needs.  Every Tensor method that reads tensor data into Python calls :func:`data_read`
(``tests/eager/test_tracing.py`` checks that each one does).
"""

from __future__ import annotations

from ._state import STATE


class TracerHooks:
    """What eager tells a tracer.  ``has_syms`` is True while dynamic Python numbers
    (the compiler's symbolic scalars) are in play: ``dispatch`` then asks ``unwrap``."""

    has_syms = False
    phase = "forward"      # "backward" while the compiler records a backward graph

    # ops and tensors
    def record(self, op, args, params, out) -> None:
        """``out = op(*args, **params)`` ran through dispatch."""

    def unwrap(self, args, params):
        """(args, params) with dynamic numbers replaced by their values."""
        return args, params

    def on_new_tensor(self, t) -> None:
        """``t`` was made from Python data (a constant of the trace)."""

    def plain_data(self, data):
        """Python data about to become a tensor (numbers in it become constants)."""
        return data

    def on_alias(self, src, t) -> None:
        """``t`` shares ``src``'s array (``detach()``)."""

    def on_inplace(self, target, result) -> None:
        """``target``'s storage now holds ``result``."""

    def on_requires_grad(self, t, requires_grad: bool) -> None:
        """``t.requires_grad_(requires_grad)`` changes ``t``'s flag."""

    # reads into Python
    def on_branch(self, t, value, what: str) -> None:
        """Python read ``value`` from ``t`` as ``what`` (``bool()``, ``float()``...)."""

    def on_item(self, t, value):
        """``t.item()``; returns what the caller gets."""
        self.on_branch(t, value, "item()")
        return value

    def on_data_read(self, t, what: str) -> None:
        """Tensor data left the graph (``numpy()``, ``repr``, iteration)."""

    def on_unsupported(self, what: str) -> None:
        """Something the tracer cannot replay happened (a hook, a custom Function)."""

    # autograd
    def on_grad_get(self, leaf) -> None:
        """``leaf.grad`` was read."""

    def on_grad_set(self, leaf, value) -> None:
        """``leaf.grad`` was assigned."""

    def on_backward(self, roots) -> bool:
        """A backward pass from ``roots`` starts; False: it is not to be recorded (it
        runs on arrays, as outside a trace)."""
        return True

    # Python state eager's own code depends on
    def guard_value(self, where: str, getter, value) -> None:
        """``getter()`` gave ``value``; a replay must see the same."""

    def on_python_read(self, container, key, value) -> None:
        """eager's code read ``container[key]`` (guarded like the user's reads)."""


def data_read(t, what: str) -> None:
    """A read of ``t``'s data that leaves the graph: a tracer must stop replaying."""
    if STATE.tracer is not None:
        STATE.tracer.on_data_read(t, what)
