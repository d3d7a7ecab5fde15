"""The tracer contract (eager.tracing): every Tensor method that reads tensor data into
Python tells the tracer, and a stand-in tracer needs only TracerHooks' defaults."""

from __future__ import annotations

import numpy as np
import pytest

import eager
from eager._state import STATE
from eager.tensor import Tensor
from eager.tracing import TracerHooks


class Recorder(TracerHooks):
    def __init__(self):
        self.reads = []

    def on_data_read(self, t, what):
        self.reads.append(what)

    def on_branch(self, t, value, what):
        self.reads.append(what)


# each method that hands tensor data to Python, with a call that does it
READS = {
    "numpy": lambda t: t.numpy(),
    "tolist": lambda t: t.tolist(),
    "__array__": lambda t: np.asarray(t),
    "__iter__": lambda t: list(t),
    "__repr__": lambda t: repr(t),
    "__str__": lambda t: str(t),
    "__format__": lambda t: format(t[0], ".2f"),
    "item": lambda t: t[0].item(),
    "__bool__": lambda t: bool(t[0]),
    "__float__": lambda t: float(t[0]),
    "__int__": lambda t: int(t[0]),
    "__index__": lambda t: [1, 2, 3][eager.tensor(1)],
}


@pytest.mark.parametrize("name", sorted(READS))
def test_each_data_read_tells_the_tracer(name):
    t = eager.tensor([1.0, 2.0])
    rec = Recorder()
    STATE.tracer = rec
    try:
        READS[name](t)
    finally:
        STATE.tracer = None
    assert rec.reads, f"Tensor.{name} read data without telling the tracer"


def test_the_list_covers_every_data_reading_method():
    """A new Tensor method that converts to a Python value must join READS."""
    converting = {n for n in dir(Tensor) if n in (
        "numpy", "tolist", "item", "__array__", "__iter__", "__repr__", "__str__",
        "__format__", "__bool__", "__float__", "__int__", "__index__", "__complex__")}
    assert converting - {"__complex__"} <= set(READS)


def test_hooks_have_defaults():
    class Minimal(TracerHooks):
        pass

    STATE.tracer = Minimal()
    try:
        x = eager.tensor([1.0, -2.0], requires_grad=True)
        y = (x * 2).sum()
        y.backward()
        assert y.item() == -2.0
    finally:
        STATE.tracer = None
