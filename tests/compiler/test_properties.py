"""Property-based: random programs, compiled and eager, give the same outputs, gradients
and final input state, call after call.

A program is a chain of ops on a running value ``h`` (starting from an input ``x``),
drawn from: add, sub, mul, div by (|.|+1), tanh, sigmoid, exp of a clamped value, relu,
neg, where(h > 0, h, other), sum/mean over a dim (keepdim or not), broadcasting against a
parameter (a closed-over tensor that requires grad) or a second input ``y``, reshape,
transpose, matmul with a parameter, an in-place ``add_``, and a branch on the sign of a
sum.  Ops adapt to the shape they meet at run time (a dim is taken modulo the rank, an
operand that does not broadcast is skipped), so one program is valid for every input
shape and a call plan can change shapes, dtypes, requires_grad, grad mode, parameter
values and (through the data) branch outcomes between calls.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
import eager as torch
from compiler import CompileWarning, compile
from eager.tensor import Tensor

UNARY = ["tanh", "sigmoid", "exp_clamped", "relu", "neg"]
BINARY = ["add", "sub", "mul", "div_abs1", "where"]
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-10}


# -- programs ---------------------------------------------------------------------------------

def _operand(h, spec, params, y):
    """The second operand of a binary op: a parameter, the input y, or a scalar; None when
    it does not broadcast against h."""
    kind, arg = spec
    if kind == "scalar":
        return arg
    other = params[arg] if kind == "param" else y
    try:
        np.broadcast_shapes(tuple(h.shape), tuple(other.shape))
    except ValueError:
        return None
    return other


def _unary(h, name):
    if name == "tanh":
        return torch.tanh(h)
    if name == "sigmoid":
        return torch.sigmoid(h)
    if name == "exp_clamped":
        return torch.exp(torch.clamp(h, -3.0, 3.0))
    if name == "relu":
        return torch.relu(h)
    return -h


def _binary(h, name, o):
    if name == "add":
        return h + o
    if name == "sub":
        return o - h
    if name == "mul":
        return h * o
    if name == "div_abs1":
        d = o.abs() + 1 if isinstance(o, Tensor) else abs(o) + 1
        return h / d
    return torch.where(h > 0, h, o)


def apply_op(h, op, params, y):
    kind = op[0]
    if kind == "unary":
        return _unary(h, op[1])
    if kind == "binary":
        o = _operand(h, op[2], params, y)
        return h if o is None else _binary(h, op[1], o)
    if kind in ("sum", "mean"):
        if h.ndim == 0:
            return h.sum() if kind == "sum" else h.mean()
        d = op[1] % h.ndim
        return h.sum(dim=d, keepdim=op[2]) if kind == "sum" else h.mean(dim=d, keepdim=op[2])
    if kind == "reshape":
        how = op[1]
        if how == "flatten":
            return h.reshape(-1)
        if how == "unsqueeze":
            return h.reshape((1,) + tuple(h.shape))
        if h.ndim >= 2:  # merge the last two dims
            return h.reshape(tuple(h.shape[:-2]) + (-1,))
        return h
    if kind == "transpose":
        if h.ndim < 2:
            return h
        return h.transpose(op[1] % h.ndim, op[2] % h.ndim)
    if kind == "matmul":
        p = params[op[1]]
        if h.ndim == 0 or h.shape[-1] != p.shape[0]:
            return h
        return h @ p.to(h.dtype)  # matmul does not promote (as in PyTorch)
    if kind == "inplace_add":
        o = _operand(h, op[1], params, y)
        if o is None:
            return h
        if isinstance(o, Tensor) and tuple(np.broadcast_shapes(tuple(h.shape),
                                                                tuple(o.shape))) != tuple(h.shape):
            return h
        if h.requires_grad or h._base is not None:
            h = h * 1.0  # in place on a fresh intermediate (eager forbids it on views/leaves)
        h.add_(o)
        return h
    if kind == "branch":
        if h.sum() > 0:
            return _unary(h, op[1])
        return _unary(h, op[2])
    raise AssertionError(op)


def make_program(ops, param_arrays):
    """(fn, params): fn(x, y) runs the ops; params are fresh leaves that require grad."""
    params = [torch.tensor(a.copy(), requires_grad=True) for a in param_arrays]

    def program(x, y):
        h = x
        for op in ops:
            h = apply_op(h, op, params, y)
        return h, h.sum()
    return program, params


# -- strategies -------------------------------------------------------------------------------

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


def compatible(draw, shape):
    """A shape that broadcasts against ``shape`` to ``shape`` (a suffix, dims kept or 1)."""
    k = draw(st.integers(0, len(shape)))
    tail = shape[len(shape) - k:]
    return tuple(draw(st.sampled_from([d, 1])) for d in tail)


@st.composite
def programs(draw, max_ops=6):
    dtype = np.dtype(draw(st.sampled_from([np.float32, np.float64])))
    x_shape = draw(shapes)
    y_shape = compatible(draw, x_shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    params = []
    ops = []
    # track the running shape on the first input shape, to draw fitting parameters
    h = torch.tensor(np.zeros(x_shape, dtype))
    y0 = torch.tensor(np.zeros(y_shape, dtype))

    def new_param(shape):
        params.append(rng.uniform(-1.5, 1.5, size=shape).astype(dtype))
        return len(params) - 1

    def operand():
        kind = draw(st.sampled_from(["param", "param", "y", "scalar"]))
        if kind == "scalar":
            return ("scalar", draw(st.sampled_from([0.5, -1.25, 2.0])))
        if kind == "y":
            return ("y", None)
        return ("param", new_param(compatible(draw, tuple(h.shape))))

    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "reduce",
                                     "reshape", "transpose", "matmul", "inplace_add",
                                     "branch"]))
        if kind == "unary":
            op = ("unary", draw(st.sampled_from(UNARY)))
        elif kind == "binary":
            op = ("binary", draw(st.sampled_from(BINARY)), operand())
        elif kind == "reduce":
            op = (draw(st.sampled_from(["sum", "mean"])), draw(st.integers(0, 2)),
                  draw(st.booleans()))
        elif kind == "reshape":
            op = ("reshape", draw(st.sampled_from(["flatten", "unsqueeze", "merge"])))
        elif kind == "transpose":
            op = ("transpose", draw(st.integers(0, 2)), draw(st.integers(0, 2)))
        elif kind == "matmul":
            if h.ndim == 0:
                continue
            op = ("matmul", new_param((h.shape[-1], draw(st.integers(1, 4)))))
        elif kind == "inplace_add":
            op = ("inplace_add", operand())
        else:
            op = ("branch", draw(st.sampled_from(UNARY)), draw(st.sampled_from(UNARY)))
        ops.append(op)
        ps = [Tensor(a) for a in params]
        h = apply_op(h, op, ps, y0)
        if h.numel() > 64:  # keep tensors tiny
            break

    # the call plan
    alt_shape = draw(shapes)
    calls = []
    for i in range(draw(st.integers(3, 6))):
        calls.append({
            "seed": draw(st.integers(0, 2**31 - 1)),
            "shape": x_shape if i < 2 else draw(st.sampled_from([x_shape, x_shape, alt_shape])),
            "dtype": dtype if i < 2 or draw(st.integers(0, 4)) else
            np.dtype(np.float64 if dtype == np.float32 else np.float32),
            "x_grad": draw(st.booleans()) if i else True,
            "no_grad": i >= 2 and draw(st.integers(0, 5)) == 0,
            "mutate": i >= 1 and draw(st.integers(0, 3)) == 0,
            "sign": draw(st.sampled_from([1.0, -1.0])),
        })
    return {"dtype": dtype, "x_shape": x_shape, "y_shape": y_shape, "params": params,
            "ops": ops, "calls": calls}


# -- the check ------------------------------------------------------------------------------

def _close(got: Tensor, want: Tensor, what: str, rtol=None):
    assert got._data.shape == want._data.shape, f"{what}: shape {got._data.shape} != " \
                                                f"{want._data.shape}"
    assert got._data.dtype == want._data.dtype, f"{what}: dtype"
    if rtol is None:
        rtol = RTOL.get(want._data.dtype, 1e-5)
    scale = max(1.0, float(np.abs(want._data).max())) if want._data.size else 1.0
    np.testing.assert_allclose(got._data, want._data, rtol=rtol, atol=rtol * scale,
                               err_msg=what)


def _grads(got, want, what, rtol=None):
    if want.grad is None:
        assert got.grad is None, f"{what}: expected no gradient"
    else:
        assert got.grad is not None, f"{what}: missing gradient"
        _close(got.grad, want.grad, what, rtol)


def check_program(spec, backend):
    ops = spec["ops"]
    fc, pc = make_program(ops, spec["params"])
    fe, pe = make_program(ops, spec["params"])
    cf = compile(fc, backend=backend, max_traces=16)
    for i, call in enumerate(spec["calls"]):
        rng = np.random.default_rng(call["seed"])
        dt = call["dtype"]
        shape = call["shape"]
        y_shape = spec["y_shape"] if len(spec["y_shape"]) <= len(shape) else ()
        xa = (call["sign"] * np.abs(rng.standard_normal(shape)) +
              0.5 * rng.standard_normal(shape)).astype(dt)
        ya = rng.standard_normal(y_shape).astype(dt)
        ins = []
        for _ in range(2):
            ins.append((torch.tensor(xa.copy(), requires_grad=call["x_grad"]),
                        torch.tensor(ya.copy(), requires_grad=True)))
        (xc, yc), (xe, ye) = ins
        for p in pc + pe:
            p.grad = None
        ctx = f"call {i} {call} ops {ops}"
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always", CompileWarning)
            try:
                if call["no_grad"]:
                    with torch.no_grad():
                        (hc, sc), (he, se) = cf(xc, yc), fe(xe, ye)
                else:
                    (hc, sc), (he, se) = cf(xc, yc), fe(xe, ye)
            except Exception as e:
                raise AssertionError(f"{ctx}: {type(e).__name__}: {e}") from e
        fell_back = [str(w.message) for w in rec if issubclass(w.category, CompileWarning)]
        assert not fell_back, f"{ctx}: the compiler fell back: {fell_back}"
        if backend == "numba":  # later calls run the fused kernels, not tier 1
            compiler.wait()
            failed = [r for r in cf.explain().fallbacks if "kernel" in r]
            assert not failed, f"{ctx}: fused kernels failed to build: {failed}"
        # a float64 value computed through float32 ops is float32-accurate only
        mixed = RTOL[np.dtype(np.float32)] if dt != spec["dtype"] else None
        _close(hc, he, f"output h, {ctx}", mixed)
        _close(sc, se, f"output sum, {ctx}", mixed)
        assert hc.requires_grad == he.requires_grad, f"requires_grad of h, {ctx}"
        _close(xc, xe, f"x after the call, {ctx}")
        _close(yc, ye, f"y after the call, {ctx}")
        if he.requires_grad:
            w = torch.tensor(np.random.default_rng(i).standard_normal(he._data.shape)
                       .astype(he._data.dtype))
            ((hc * w).sum() + sc * 0.5).backward()
            ((he * w).sum() + se * 0.5).backward()
            _grads(xc, xe, f"x.grad, {ctx}", mixed)
            _grads(yc, ye, f"y.grad, {ctx}", mixed)
            for k, (a, b) in enumerate(zip(pc, pe)):
                _grads(a, b, f"param {k} grad, {ctx}", mixed)
        if call["mutate"]:
            with torch.no_grad():
                for p in pc + pe:
                    p.mul_(0.75)
                    p.add_(0.125)
        for k, (a, b) in enumerate(zip(pc, pe)):
            _close(a, b, f"param {k} after the call, {ctx}", mixed)
    s = cf.stats()
    assert s["calls"] == len(spec["calls"])
    return s


PROPS = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("backend", ["eager", "python"])
@PROPS
@given(spec=programs())
def test_random_programs_match_eager(backend, spec):
    check_program(spec, backend)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spec=programs(max_ops=5))
def test_random_programs_match_eager_numba(spec):
    check_program(spec, "numba")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=programs(max_ops=4), backend=st.sampled_from(["eager", "python"]))
def test_repeated_calls_are_served_by_compiled_code(spec, backend):
    """Same key, same branch outcomes: from the second call on, every call is a hit."""
    fc, _ = make_program(spec["ops"], spec["params"])
    cf = compile(fc, backend=backend)
    xa = np.abs(np.random.default_rng(0).standard_normal(spec["x_shape"])).astype(spec["dtype"])
    ya = np.zeros(spec["y_shape"], spec["dtype"])
    for _ in range(3):
        cf(torch.tensor(xa.copy(), requires_grad=True), torch.tensor(ya.copy(), requires_grad=True))
    s = cf.stats()
    assert s["traces"] == 1 and s["hits"] == 2, (s, spec["ops"], str(cf.explain()))
