"""Every elementwise op, from the op table (``tests/optable.py``, its elementwise rows), on
every device this machine has: the dtype rule against the forward, eager gradients against
finite differences, the op's kernel against ``run_graph``, and compiled against eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compiler
import eager
from compiler.codegen import numba_backend
from compiler.ir import run_graph
from runtime import device as runtime_device
from tests.graphs import trace
from tests.helpers import gradcheck
from tests.opinfo import library_ops
from tests.optable import BY_NAME, ELEMENTWISE, F32, F64, call, inputs

# every device type (runtime/<type>/) usable here: a new device needs no edit in this file
DEVICES = [d for d in runtime_device.types() if runtime_device.available(d)]
#: the elementwise rows of the op table (every op's rows: tests/ops/test_optable_all.py)
ROWS = ELEMENTWISE
ROW_IDS = [r.name for r in ROWS]


def test_every_elementwise_op_has_a_row():
    missing = sorted(n for n, op in library_ops().items() if op.elementwise and n not in BY_NAME)
    assert not missing, f"elementwise ops without a row in tests/optable.py: {missing}"


def _kernel_dtype(row):
    return F32 if F32 in row.dtypes else row.dtypes[0]


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_dtype_rule_matches_forward(row):
    """``op.out_dtype`` of each traced node is the dtype its forward produced."""
    for dt in row.dtypes:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            g, _ = trace(lambda *ts: call(row, *ts), *inputs(row, dt))
        ops = [n for n in g.nodes if n.op.elementwise]
        assert any(n.op.name == row.name for n in ops), f"{row.name} not traced for {dt}"
        for n in ops:
            got = n.op.out_dtype(*n.inputs, **n.params)
            assert got == n.out.dtype, f"{n.op.name} on {dt}: rule {got} != {n.out.dtype}"


def _to(device, t):
    return t if device == "cpu" else t.to(device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("row", [r for r in ROWS if r.grad], ids=[r.name for r in ROWS
                                                                   if r.grad])
def test_gradients(row, device):
    def fn(*ts):
        out = call(row, *[_to(device, t) for t in ts])
        return out if device == "cpu" else out.cpu()
    gradcheck(fn, *inputs(row, F64))


def _program(device, graph):
    """The device's fused-kernel program (``compiler/codegen/numba_<device>.py``), every op
    a kernel (on the CPU a lone op would stay a NumPy call)."""
    return numba_backend(device)(graph, singleton_min=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_kernel_matches_run_graph(row, device):
    """The op's scalar expression in the device's kernel template computes what the op's
    forward computes: bitwise, or within the row's tolerance for transcendentals."""
    arrays = inputs(row, _kernel_dtype(row))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g, _ = trace(lambda *ts: call(row, *ts), *arrays, device=device)
        want = run_graph(g, *[_to_storage(device, a) for a in arrays])
        prog = _program(device, g)
        got = prog(*[_to_storage(device, a) for a in arrays])
    assert prog.kernels, f"{row.name}: no kernel was generated"
    for w, o in zip(want, got):
        w, o = _host(w), _host(o)
        assert w.dtype == o.dtype and w.shape == o.shape
        if row.rtol and o.dtype == F32:
            np.testing.assert_allclose(o, w, rtol=row.rtol, atol=1e-30)
        else:
            np.testing.assert_array_equal(o, w)


def _to_storage(device, a):
    return a if device == "cpu" else runtime_device.get(device).from_host(a)


def _host(a):
    return a if isinstance(a, np.ndarray) else runtime_device.of(a).to_host(a)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_compiled_matches_eager(row, device):
    fn = lambda *ts: call(row, *ts)
    cf = compiler.compile(fn)
    for seed in range(3):
        ts = [_to(device, eager.tensor(a)) for a in inputs(row, _kernel_dtype(row), seed)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want, got = fn(*ts), cf(*ts)
            compiler.wait()
        assert got.device == want.device
        got, want = got.cpu().numpy(), want.cpu().numpy()
        if row.rtol and got.dtype == F32 and getattr(library_ops().get(row.name), "multipass",
                                                     False):
            # fused at any size on the CPU (Op.multipass): mathlib's few ulp, as the numba
            # rows above allow; every other op alone this small stays eager's NumPy call
            np.testing.assert_allclose(got, want, rtol=row.rtol, atol=1e-30)
        else:
            np.testing.assert_array_equal(got, want)
    assert cf.stats()["hits"] >= 1
