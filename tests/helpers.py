"""Reference helpers shared by the tests: finite-difference gradient checks (float64),
the optional comparison against PyTorch, threads, and calls whose output is captured."""

from __future__ import annotations

import contextlib
import io
import threading
import warnings

import numpy as np

import compiler
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


def check_like_torch(ours, theirs, *arrays, rtol=1e-7, atol=1e-9, **kwargs):
    """Call ``ours(*tensors, **kwargs)`` and ``theirs(*torch_tensors, **kwargs)`` on the
    same float64 ``arrays``; assert equal shapes and values, then equal gradients of every
    array for the same random projection of the output.  Tuple results (values, indices)
    compare every element; only the first is differentiated."""
    import torch
    ti = [torch.tensor(np.asarray(a), requires_grad=np.asarray(a).dtype.kind == "f")
          for a in arrays]
    ei = [eager.tensor(np.asarray(a), requires_grad=np.asarray(a).dtype.kind == "f")
          for a in arrays]
    eo, to = ours(*ei, **kwargs), theirs(*ti, **kwargs)
    eos = eo if isinstance(eo, tuple) else (eo,)
    tos = to if isinstance(to, tuple) else (to,)
    assert len(eos) == len(tos)
    for e, t in zip(eos, tos):
        assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
        np.testing.assert_allclose(e._data, t.detach().numpy(), rtol=rtol, atol=atol)
    if not eos[0].requires_grad:
        return eo
    w = np.random.default_rng(7).standard_normal(tuple(tos[0].shape))
    (eos[0] * eager.tensor(w)).sum().backward()
    (tos[0] * torch.tensor(w)).sum().backward()
    for i, (e, t) in enumerate(zip(ei, ti)):
        if t.grad is None:
            continue
        np.testing.assert_allclose(e.grad._data, t.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"gradient of argument {i}")
    return eo


def run_threads(*targets, timeout=60.0):
    """Run each target in its own thread; re-raise the first exception one raised."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported to the test
                errors.append(e)
        return run

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in targets]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout)
        assert not th.is_alive(), "a thread did not finish"
    if errors:
        raise errors[0]


def quiet_call(fn, *args):
    """``(fn(*args), what it printed)``, the compiler's warnings (graph breaks) silenced."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore", compiler.CompileWarning)
        res = fn(*args)
    return res, out.getvalue()
