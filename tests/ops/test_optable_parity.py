"""Every row of the op table with a PyTorch reference (``ref``), against PyTorch: values
and result dtypes for each of the row's dtypes, and float64 gradients of a fixed
projection of the outputs.  Random rows compare shapes and dtypes only (the streams are
not PyTorch's).  On the CPU; the CUDA rows run where the device tests run."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import eager
from tests.opinfo import F64, call, call_ref, outputs, samples
from tests.optable import ROWS

torch = pytest.importorskip("torch")


def _params(check):
    out = []
    for r in ROWS:
        if r.ref is None or (check == "parity_grad" and not (r.grad and F64 in r.dtypes)):
            continue
        marks = [pytest.mark.xfail(reason=r.xfail[check], strict=True)] \
            if check in r.xfail else []
        out.append(pytest.param(r, id=r.name, marks=marks))
    return out


def _diff(s, i, a, grad):
    return bool(grad and a.dtype.kind == "f" and i not in s.nograd)


def _both(row, s, grad):
    """(eager outputs, torch outputs, eager inputs, torch inputs) of one sample; None
    where PyTorch refuses the call and eager does too."""
    ei = [eager.tensor(a, requires_grad=_diff(s, i, a, grad)) for i, a in enumerate(s.arrays)]
    ti = [torch.tensor(a, requires_grad=_diff(s, i, a, grad)) for i, a in enumerate(s.arrays)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        try:
            to = outputs(call_ref(row, torch, *ti, **s.kwargs))
        except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError) as exc:
            try:
                call(row, *ei, **s.kwargs)
            except Exception:  # noqa: BLE001 - refused as PyTorch refuses it
                return None
            raise AssertionError(f"PyTorch refuses the call ({type(exc).__name__}: {exc}); "
                                 f"eager accepts it") from None
        eager.manual_seed(0)
        eo = outputs(call(row, *ei, **s.kwargs))
    return eo, to, ei, ti


def _tol(row, dtype):
    return (row.ref_rtol, 1e-9) if dtype == F64 else (1e-5, 1e-6)


@pytest.mark.parametrize("row", _params("parity"))
def test_matches_torch(row):
    """Shapes, dtypes and values of every result, for each dtype and sample (all of them
    are run; the failures are reported together)."""
    errors = []
    for dt in row.dtypes:
        for j, s in enumerate(samples(row, dt)):
            what = f"{row.name} {dt} sample {j}"
            try:
                _compare(row, s, what)
            except AssertionError as exc:
                errors.append(f"{what}: {str(exc).strip()[:400]}")
    assert not errors, "\n".join(errors)


def _compare(row, s, what):
    both = _both(row, s, False)
    if both is None:
        return
    eo, to, _, _ = both
    assert len(eo) == len(to), f"{len(eo)} results vs {len(to)}"
    for k, (e, t) in enumerate(zip(eo, to)):
        en, tn = e.detach().numpy(), t.detach().numpy()
        assert en.shape == tn.shape, f"result {k}: shape {en.shape} != {tn.shape}"
        assert en.dtype == tn.dtype, f"result {k}: dtype {en.dtype} != {tn.dtype}"
        if row.random:
            continue
        if en.dtype.kind == "f":
            rtol, atol = _tol(row, en.dtype)
            np.testing.assert_allclose(en, tn, rtol=rtol, atol=atol, err_msg=f"result {k}")
        else:
            np.testing.assert_array_equal(en, tn, err_msg=f"result {k}")


@pytest.mark.parametrize("row", _params("parity_grad"))
def test_gradients_match_torch(row):
    for j, s in enumerate(samples(row, F64)):
        both = _both(row, s, True)
        if both is None:
            continue
        eo, to, ei, ti = both
        rng = np.random.default_rng(7)
        el, tl = 0, 0
        for e, t in zip(eo, to):
            assert e.requires_grad == t.requires_grad, \
                f"{row.name} sample {j}: requires_grad {e.requires_grad} != {t.requires_grad}"
            if e.requires_grad:
                w = rng.standard_normal(tuple(t.shape))
                el = el + (e * eager.tensor(w)).sum()
                tl = tl + (t * torch.tensor(w)).sum()
        if isinstance(el, int):
            continue
        el.backward()
        tl.backward()
        for i, (e, t) in enumerate(zip(ei, ti)):
            if not t.requires_grad:
                continue
            eg = np.zeros(e.shape) if e.grad is None else e.grad.numpy()
            tg = np.zeros(tuple(t.shape)) if t.grad is None else t.grad.numpy()
            np.testing.assert_allclose(eg, tg, rtol=row.ref_rtol, atol=1e-9,
                                       err_msg=f"{row.name} sample {j}: gradient of "
                                               f"argument {i}")
