"""The workload families, in report order.  Adding one: write ``families/<name>.py``
defining ``FAMILY = harness.Family(...)`` and add its name to :data:`FAMILIES`.

Families are imported by name when they run, so that ``--threads`` is set before NumPy,
torch or Numba are imported, and so that one family's missing import only stops it.
"""

from __future__ import annotations

import importlib

FAMILIES = [
    "gelu",
    "chain",
    "mlp",
    "gru",
    "cnn",
    "transformer",
    "transformer_ready",
    "lstm",
    "realprograms",
    "cache_hit",
    "first_call",
    "cuda",
]


def load(name: str):
    """The :class:`~benchmarks.harness.Family` defined by ``families/<name>.py``."""
    if name not in FAMILIES:
        raise KeyError(f"no benchmark family {name!r}; families: {', '.join(FAMILIES)}")
    return importlib.import_module(f"{__name__}.{name}").FAMILY
