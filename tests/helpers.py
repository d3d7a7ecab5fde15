"""Reference helpers shared by the tests: finite-difference gradient checks (float64) and
the optional comparison against PyTorch."""

from __future__ import annotations

import numpy as np

import eager


def numeric_grad(fn, arrays, i, eps=1e-6):
    """Central differences of ``sum(fn(*tensors) * weight)`` w.r.t. ``arrays[i]``."""
    base = [a.copy() for a in arrays]
    out0 = fn(*[eager.tensor(a) for a in base])
    weight = np.random.default_rng(0).standard_normal(out0.shape)
    grad = np.zeros_like(base[i])
    it = np.nditer(base[i], flags=["multi_index"])
    for _ in it:
        idx = it.multi_index
        old = base[i][idx]
        base[i][idx] = old + eps
        fp = (fn(*[eager.tensor(a) for a in base])._data * weight).sum()
        base[i][idx] = old - eps
        fm = (fn(*[eager.tensor(a) for a in base])._data * weight).sum()
        base[i][idx] = old
        grad[idx] = (fp - fm) / (2 * eps)
    return grad, weight


def gradcheck(fn, *arrays, atol=1e-6, rtol=1e-5, eps=1e-6):
    """Check eager's gradients of ``fn`` at float64 ``arrays`` against finite differences.

    ``fn`` takes tensors and returns one tensor.  Every array argument is differentiated.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    tensors = [eager.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    _, weight = numeric_grad(fn, arrays, 0, eps)
    (out * eager.tensor(weight)).sum().backward()
    for i, t in enumerate(tensors):
        expected, _ = numeric_grad(fn, arrays, i, eps)
        got = np.zeros_like(arrays[i]) if t.grad is None else t.grad._data
        np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol,
                                   err_msg=f"gradient of argument {i}")
    return True


def to_torch(x, requires_grad=False):
    import torch
    return torch.tensor(np.asarray(x), requires_grad=requires_grad)
