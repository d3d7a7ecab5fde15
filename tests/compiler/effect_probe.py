"""``EffectProbe``: an op with an effect that stands in for a collective in compiler tests.

It logs ``(tag, input array)`` on every call, so a test sees exactly which calls a replay
made, without MPI.  It lives in its own module so that a test can mark this file as
library code, as the collectives' own code in ``eager/`` is.
"""

from __future__ import annotations

import numpy as np

from eager.ops.base import Op

CALLS: list = []


class EffectProbe(Op):
    """``x + 1``, logging ``(tag, x)`` on every call, like a collective would talk."""
    differentiable = False
    effect = True

    def forward(x, tag):
        CALLS.append((tag, x))
        return x + 1


def logged() -> list:
    """(tag, sum of the input) of each call so far."""
    return [(tag, float(np.sum(x))) for tag, x in CALLS]
