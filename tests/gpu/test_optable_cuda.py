"""The op table's CUDA column: every row of ``tests/optable.py`` (elementwise and every
other op) run on CUDA tensors against the same call on CPU tensors: the same values,
dtypes and shapes (or the same error), and the same gradients of a fixed projection of
the outputs.  The call runs under ``with eager.device("cuda")``, so the tensors a row's
call makes itself (``eager.eye``, ``eager.ones``) are made on the device as a user's code
under that context would.  Random rows compare shapes and dtypes only (the CUDA generator
is not the CPU's).  A row whose op has no CUDA implementation is marked so in the table
(``NOT_ON_CUDA`` in ``tests/optable_ops.py``, with the reason): ``test_every_row_has_a_cuda_column``
fails for an op that has neither.  Tiny shapes, one dtype per row (float32 where it has
it, and its first integer or bool dtype): the simulator runs ~170 us per thread."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import eager
import eager.cuda.ops as cuda_ops
from tests.opinfo import F32, call, library_ops, outputs, samples
from tests.optable import ROWS
from tests.optable_ops import NOT_ON_CUDA

CUDA_ROWS = [r for r in ROWS if "cuda" in r.devices]


def test_every_row_has_a_cuda_column():
    """Each row runs on CUDA unless its op is in ``NOT_ON_CUDA``; every op there lacks a
    CUDA implementation (the list shrinks as kernels are written: a listed op that gained
    one fails here)."""
    ops = library_ops()
    off = sorted(r.name for r in ROWS if "cuda" not in r.devices)
    assert off == sorted(n for n in NOT_ON_CUDA if n in {r.name for r in ROWS}), off
    table = cuda_ops.TABLE
    implemented = sorted(n for n in NOT_ON_CUDA if n in ops and
                         (ops[n] in table or ops[n].any_device))
    assert not implemented, f"in NOT_ON_CUDA but implemented on CUDA: {implemented}"
    missing = sorted(r.name for r in CUDA_ROWS if ops[r.name] not in table and
                     not ops[r.name].any_device and not ops[r.name].elementwise)
    assert not missing, f"rows claiming CUDA for ops without a CUDA implementation: {missing}"


def _dtypes(row):
    """float32 (or the row's first dtype), and its first integer/bool dtype if any."""
    first = F32 if F32 in row.dtypes else row.dtypes[0]
    ints = [d for d in row.dtypes if d.kind in "biu" and d != first]
    return [first] + ints[:1]


def _run(row, s, device):
    """(outputs, gradients) of one sample on ``device``, or the exception raised."""
    grad = row.grad
    ts = [eager.tensor(a, device=device,
                       requires_grad=bool(grad and a.dtype.kind == "f" and i not in s.nograd))
          for i, a in enumerate(s.arrays)]
    eager.manual_seed(0)
    with warnings.catch_warnings(), np.errstate(all="ignore"), eager.device(device):
        warnings.simplefilter("ignore")
        try:
            outs = outputs(call(row, *ts, **s.kwargs))
        except (RuntimeError, ValueError, IndexError, TypeError) as exc:
            return exc      # the error a user gets: compared with the other device's
        grads = []
        diff = [o for o in outs if isinstance(o, eager.Tensor) and o.requires_grad]
        if diff:
            rng = np.random.default_rng(3)
            loss = sum((o * eager.tensor(rng.standard_normal(tuple(o.shape)),
                                         dtype=o.dtype)).sum() for o in diff)
            loss.backward()
            grads = [t.grad for t in ts if t.requires_grad]
    return outs, grads


def _host(t):
    return t.detach().cpu().numpy() if isinstance(t, eager.Tensor) else t


def _same(want, got, what, exact, random):
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for k, (w, g) in enumerate(zip(want, got)):
        if not isinstance(w, eager.Tensor) or w is None:
            assert w == g if not isinstance(w, float) or w == w else g != g, \
                f"{what} {k}: {g!r} != {w!r}"
            continue
        assert g is not None, f"{what} {k}: missing on CUDA"
        assert g.device.type == "cuda", f"{what} {k}: on {g.device}, not on CUDA"
        assert (g.dtype, tuple(g.shape)) == (w.dtype, tuple(w.shape)), \
            f"{what} {k}: {g.dtype} {tuple(g.shape)} != {w.dtype} {tuple(w.shape)}"
        if random:
            continue
        a, b = _host(w), _host(g)
        if exact or a.dtype.kind in "biu":
            np.testing.assert_array_equal(b, a, err_msg=f"{what} {k}")
        else:
            np.testing.assert_allclose(b.astype(np.float64), a.astype(np.float64),
                                       rtol=1e-4, atol=1e-5, equal_nan=True,
                                       err_msg=f"{what} {k}")


@pytest.mark.parametrize("row", CUDA_ROWS, ids=[r.name for r in CUDA_ROWS])
def test_row_on_cuda_matches_cpu(row):
    for dt in _dtypes(row):
        for j, s in enumerate(samples(row, dt)):
            what = f"{row.name} {dt} sample {j}"
            want = _run(row, s, "cpu")
            got = _run(row, s, "cuda")
            if isinstance(want, Exception):
                assert isinstance(got, type(want)) and str(got) == str(want), \
                    f"{what}: the CPU raises {type(want).__name__}: {want}; CUDA gives {got!r}"
                continue
            assert not isinstance(got, Exception), \
                f"{what}: CUDA raises {type(got).__name__}: {got}"
            _same(want[0], got[0], f"{what} output", False, row.random)
            _same(want[1], got[1], f"{what} gradient", False, row.random)
