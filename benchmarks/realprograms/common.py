"""Helpers shared by the programs: NumPy initial weights and the digits data."""

from __future__ import annotations

import numpy as np


def init_params(torch, model, seed: int) -> None:
    """Overwrite ``model``'s parameters with NumPy draws (same for every library):
    matrices and kernels uniform in +-1/sqrt(fan_in), 1-D ``weight`` ones (norms),
    other 1-D parameters (biases) small uniform."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if len(shape) >= 2:
                b = 1.0 / np.sqrt(np.prod(shape[1:]))
                v = rng.uniform(-b, b, shape)
            elif name.endswith("weight"):
                v = np.ones(shape)
            else:
                v = rng.uniform(-0.05, 0.05, shape)
            p.copy_(torch.tensor(v.astype(np.float32)))


def digits(n: int, seed: int):
    """``n`` 8x8 images in [0, 1] as float32 ``(n, 64)`` and their labels: scikit-learn's
    handwritten digits when importable, else random blobs."""
    rng = np.random.default_rng(seed)
    try:
        from sklearn.datasets import load_digits
        d = load_digits()
        idx = rng.choice(len(d.target), n, replace=False)
        return (d.data[idx] / 16.0).astype(np.float32), d.target[idx].astype(np.int64)
    except ImportError:
        y = rng.integers(0, 10, n)
        x = rng.uniform(0, 1, (n, 64)) * (rng.uniform(0, 1, (10, 64)) > 0.5)[y]
        return x.astype(np.float32), y.astype(np.int64)
