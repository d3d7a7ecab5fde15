"""Every registered op, from the one op table (``tests/optable.py``: elementwise rows there,
the others in ``tests/optable_ops.py``), on the CPU: each op has a row (or a reason in
``UNTABLED``), each row's public call reaches its op, float64 gradients against finite
differences, compiled (the Python backend; numba for the rows marked ``numba``) against
eager on outputs and gradients, and ``vmap`` over a leading batch dimension against a
Python loop.  A row's ``xfail`` names the bug a check hits (strict: a fix fails the test
until the mark goes).  PyTorch parity: ``tests/ops/test_optable_parity.py``."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import compiler
import eager
from eager.func import vmap
from eager.ops import OPS
from tests.helpers import gradcheck
from tests.opinfo import CHECKS, F32, F64, call, library_ops, outputs, samples
from tests.optable import BY_NAME, ELEMENTWISE, ROWS, UNTABLED


def rows_for(check, keep=lambda r: True):
    """``ROWS`` as pytest params for ``check``, xfailed (strictly) where a row says so."""
    out = []
    for r in ROWS:
        if not keep(r):
            continue
        marks = [pytest.mark.xfail(reason=r.xfail[check], strict=True)] \
            if check in r.xfail else []
        out.append(pytest.param(r, id=r.name, marks=marks))
    return out


# -- coverage --------------------------------------------------------------------------------

def test_every_op_has_a_row():
    ops = library_ops()  # (ops that tests define themselves have no row)
    missing = sorted(set(ops) - set(BY_NAME) - set(UNTABLED))
    assert not missing, f"ops without a row in tests/optable*.py (or UNTABLED): {missing}"
    assert len(BY_NAME) == len(ROWS), "two rows for one op"
    stale = sorted((set(UNTABLED) & set(BY_NAME)) | (set(UNTABLED) - set(ops)))
    assert not stale, f"UNTABLED names ops that have a row or are not registered: {stale}"
    unknown = sorted(n for n in BY_NAME if n not in ops)
    assert not unknown, f"rows for ops that are not registered: {unknown}"
    assert all(r.lib for r in ROWS if not ops[r.name].elementwise)
    assert {r.name for r in ELEMENTWISE} == {n for n, o in ops.items() if o.elementwise}


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_row_is_consistent(row):
    """A row's flags agree with its op, its xfails name known checks, and its samples' shapes
    do not depend on the seed (vmap stacks samples of several seeds)."""
    op = OPS[row.name]
    assert set(row.xfail) <= set(CHECKS), row.xfail
    assert row.random == op.random
    assert "cpu" in row.devices
    for dt in row.dtypes:
        ss = samples(row, dt)
        assert ss, f"{row.name}: no samples"
        again = samples(row, dt, seed=1)
        assert [(tuple(a.shape for a in s.arrays), s.kwargs) for s in ss] == \
            [(tuple(a.shape for a in s.arrays), s.kwargs) for s in again], \
            "a sample's shapes or keywords depend on the seed"


@contextlib.contextmanager
def _spy():
    """The names of the ops whose forward (or forward_aux) runs while inside."""
    seen = set()
    fns = ("forward", "forward_aux")
    saved = {(n, f): cls.__dict__.get(f) for n, cls in OPS.items() for f in fns}

    def wrap(name, forward):
        def run(*args, **params):
            seen.add(name)
            return forward(*args, **params)
        return staticmethod(run)

    for n, cls in OPS.items():
        for f in fns:
            if getattr(cls, f) is not None:
                setattr(cls, f, wrap(n, getattr(cls, f)))
    try:
        yield seen
    finally:
        for (n, f), fn in saved.items():
            if fn is None:
                if f in OPS[n].__dict__:
                    delattr(OPS[n], f)
            else:
                setattr(OPS[n], f, fn)


def _dtype(row):
    """The dtype most checks run in: float32 where the row has it."""
    return F32 if F32 in row.dtypes else row.dtypes[0]


@pytest.mark.parametrize("row", rows_for("reaches"))
def test_row_reaches_its_op(row):
    """The row's public call dispatches the op it stands for (in some sample)."""
    dt = F64 if row.grad else row.dtypes[0]
    seen = set()
    for s in samples(row, dt):
        eager.manual_seed(0)
        with _quiet(), _spy() as ops:
            call(row, *_tensors(s, row.grad), **s.kwargs)
        seen |= ops
    assert row.name in seen, f"{row.name} not reached; the call ran {sorted(seen)}"


# -- helpers ---------------------------------------------------------------------------------

@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _diff(s, i, a):
    return a.dtype.kind == "f" and i not in s.nograd


def _tensors(s, grad):
    return [eager.tensor(a, requires_grad=bool(grad and _diff(s, i, a)))
            for i, a in enumerate(s.arrays)]


def _single(out):
    """A call's floating outputs as one flat tensor (what gradcheck differentiates)."""
    flat = [o.reshape(-1) for o in outputs(out) if o.dtype.is_floating_point]
    return flat[0] if len(flat) == 1 else eager.cat(flat)


def _run(fn, s, grad, seed=0):
    """``fn`` on the sample: (outputs as NumPy arrays, gradients of a fixed projection of
    the floating outputs w.r.t. the differentiated inputs)."""
    ts = _tensors(s, grad)
    eager.manual_seed(0)
    with _quiet():
        outs = outputs(fn(*ts))
    values = [o.detach().numpy().copy() for o in outs]
    if not grad:
        return values, []
    rng = np.random.default_rng(seed)
    loss = None
    for o in outs:
        if o.requires_grad:
            term = (o * eager.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)).sum()
            loss = term if loss is None else loss + term
    if loss is None:
        return values, []
    with _quiet():
        loss.backward()
    return values, [None if t.grad is None else t.grad.numpy().copy() for t in ts
                    if t.requires_grad]


def _same(got, want, what, rtol=0.0):
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if g is None or w is None:
            assert g is None and w is None, f"{what} {k}: a gradient is missing"
            continue
        assert g.shape == w.shape and g.dtype == w.dtype, \
            f"{what} {k}: {g.shape} {g.dtype} != {w.shape} {w.dtype}"
        if rtol and g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=f"{what} {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{what} {k}")


# -- gradients -------------------------------------------------------------------------------

@pytest.mark.parametrize("row", rows_for("grad", lambda r: r.grad and r.lib))
def test_gradients(row):
    """float64 gradients of every sample against central differences (the elementwise
    rows' on every device: tests/ops/test_optable.py)."""
    for s in samples(row, F64):
        diff = [i for i, a in enumerate(s.arrays) if _diff(s, i, a)]
        assert diff, f"{row.name}: a differentiable row's sample has no float input"

        def fn(*fs, s=s, diff=diff):
            ts = [eager.tensor(a) for a in s.arrays]
            for i, f in zip(diff, fs):
                ts[i] = f
            return _single(call(row, *ts, **s.kwargs))

        if any(s.arrays[i].size == 0 for i in diff):  # nothing to difference: the shapes
            _, grads = _run(lambda *ts, s=s: call(row, *ts, **s.kwargs), s, True)
            assert [g.shape for g in grads if g is not None] == \
                [s.arrays[i].shape for i in diff][:len(grads)]
            continue
        with _quiet():
            gradcheck(fn, *[s.arrays[i] for i in diff], atol=row.atol)


# -- compiled against eager ------------------------------------------------------------------

def _compiled_check(row, backend):
    """Bitwise on the generated Python; fused kernels may round sums and transcendentals
    differently (``compiler.compile``'s docstring: sums accumulate in float64, math
    functions within 3 ulp), so a few float32 ulp there."""
    rtol = 0.0 if backend == "python" else 1e-6
    dt = _dtype(row)
    grad = row.grad and dt.kind == "f"
    # kernels take seconds to build: the first sample only for numba
    for j, s in enumerate(samples(row, dt)[:1 if backend == "numba" else None]):
        def fn(*ts, s=s):
            return call(row, *ts, **s.kwargs)

        cf = compiler.compile(fn, backend=backend)
        for seed in range(2):
            s_seed = samples(row, dt, seed)[j]
            want = _run(fn, s_seed, grad, seed)
            got = _run(cf, s_seed, grad, seed)
            if backend != "python":
                compiler.wait()
                got = _run(cf, s_seed, grad, seed)
            _same(got[0], want[0], f"{row.name} sample {j} output", rtol)
            _same(got[1], want[1], f"{row.name} sample {j} gradient", rtol)
        if row.compiled:
            assert cf.stats()["hits"] >= 1, f"{row.name}: compiled code served no call " \
                                             f"{cf.stats()}"
        if backend == "numba":
            assert cf.explain().kernels, f"{row.name}: no fused kernel was built"


@pytest.mark.parametrize("row", rows_for("compiled"))
def test_compiled_matches_eager(row):
    """``compile(backend="python")`` gives eager's bits, outputs and gradients, on the
    trace call and on a replay with other values."""
    _compiled_check(row, "python")


@pytest.mark.parametrize("row", rows_for("numba", lambda r: r.numba))
def test_compiled_numba_matches_eager(row):
    """The default backend after its kernels are built (``compiler.wait()``)."""
    _compiled_check(row, "numba")


# -- vmap ------------------------------------------------------------------------------------

B = 3


@pytest.mark.parametrize("row", rows_for("vmap", lambda r: r.vmap))
def test_vmap_matches_loop(row):
    """``vmap`` over a leading batch dimension of every tensor argument equals the call on
    each sample, stacked; so do the gradients through it."""
    dt = F64 if F64 in row.dtypes else row.dtypes[0]
    grad = row.grad and dt.kind == "f"
    per = [samples(row, dt, seed) for seed in range(B)]
    for j, s0 in enumerate(per[0]):
        loop = [_run(lambda *ts, s=s0: call(row, *ts, **s.kwargs), per[b][j], False)
                for b in range(B)]
        batched = type(s0)(tuple(np.stack([per[b][j].arrays[i] for b in range(B)])
                                 for i in range(len(s0.arrays))), s0.kwargs, s0.nograd)
        got = _run(vmap(lambda *ts, s=s0: call(row, *ts, **s.kwargs)), batched, False)
        want_values = [np.stack([loop[b][0][k] for b in range(B)])
                       for k in range(len(loop[0][0]))]
        _same(got[0], want_values, f"{row.name} sample {j} output", rtol=1e-12)
        if grad:
            # one projection of the batched outputs; batch element b's slice of it for the
            # loop
            ts = _tensors(batched, True)
            with _quiet():
                outs = outputs(vmap(lambda *t, s=s0: call(row, *t, **s.kwargs))(*ts))
            rng = np.random.default_rng(3)
            ws = [rng.standard_normal(tuple(o.shape)) for o in outs]
            loss = sum((o * eager.tensor(w, dtype=o.dtype)).sum()
                       for o, w in zip(outs, ws) if o.requires_grad)
            with _quiet():
                loss.backward()
            for b in range(B):
                tb = _tensors(per[b][j], True)
                with _quiet():
                    ob = outputs(call(row, *tb, **s0.kwargs))
                    lb = sum((o * eager.tensor(w[b], dtype=o.dtype)).sum()
                             for o, w in zip(ob, ws) if o.requires_grad)
                    lb.backward()
                for i, (t, u) in enumerate(zip(ts, tb)):
                    if u.requires_grad and u.grad is not None:
                        np.testing.assert_allclose(
                            t.grad.numpy()[b], u.grad.numpy(), rtol=1e-10, atol=1e-12,
                            err_msg=f"{row.name} sample {j}: gradient of argument {i}, "
                                    f"batch element {b}")
