"""The CUDA random generator: counter-based (a hash of seed and element counter), so a
seed reproduces a run and nothing is stored per element."""

from __future__ import annotations

import numpy as np


class CudaGenerator:
    def __init__(self):
        self.seed(int(np.random.SeedSequence().entropy % (1 << 62)))

    def seed(self, seed: int) -> None:
        self.initial = seed & ((1 << 63) - 1)
        self.offset = 0

    def take(self, n: int) -> tuple:
        """(seed, first counter) for ``n`` numbers; the next draw starts after them."""
        start = self.offset
        self.offset += max(int(n), 1)
        return self.initial, start


GENERATOR = CudaGenerator()
