"""Elementwise ops: gradients (finite differences, float64) with broadcasting, PyTorch's dtype
promotion, broadcasting against NumPy (hypothesis), error messages."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eager
from tests.helpers import gradcheck

rng = np.random.default_rng(1)


def r(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape)


def pos(*shape):
    return r(*shape, low=0.5, high=2.0)


def away0(*shape):
    """Values with |x| in [0.3, 2]: no kinks of abs/relu/clamp within the finite-difference step."""
    return r(*shape, low=0.3, high=2.0) * rng.choice([-1.0, 1.0], size=shape)


def zero_dim(value, dtype=np.float64, requires_grad=False):
    t = eager.from_numpy(np.array(value, dtype=dtype))
    return t.requires_grad_() if requires_grad else t


try:
    import torch as _torch
except ImportError:  # pragma: no cover
    _torch = None


# -- gradients of every differentiable elementwise op ---------------------------------------

BROADCAST = [((3, 1), (1, 4)), ((2, 3), (3,)), ((2, 2), (2, 2))]

BINARY = {
    "add": (lambda a, b: a + b, r, r),
    "add_alpha": (lambda a, b: eager.add(a, b, alpha=2.5), r, r),
    "sub": (lambda a, b: a - b, r, r),
    "sub_alpha": (lambda a, b: eager.sub(a, b, alpha=0.5), r, r),
    "mul": (lambda a, b: a * b, r, r),
    "div": (lambda a, b: a / b, r, away0),
    "remainder": (lambda a, b: eager.remainder(a, b), lambda *s: r(*s, low=0.1, high=0.9) +
              rng.integers(0, 3, size=s), lambda *s: np.ones(s) * 1.0 + r(*s, low=0.0, high=0.05)),
    "pow": (lambda a, b: a ** b, pos, r),
    "maximum": (eager.maximum, r, r),
    "minimum": (eager.minimum, r, r),
}


@pytest.mark.parametrize("sa,sb", BROADCAST)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_gradcheck_broadcast(name, sa, sb):
    fn, ga, gb = BINARY[name]
    assert gradcheck(fn, ga(*sa), gb(*sb))
    assert gradcheck(fn, ga(*sb), gb(*sa))


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_grad_zero_dim_with_matrix(name):
    """() x (2, 2): the 0-dim operand's gradient is the sum, shaped ()."""
    fn, ga, gb = BINARY[name]
    a0, b = ga(1).reshape(()), gb(2, 2)
    a = zero_dim(a0, requires_grad=True)
    bt = eager.tensor(b, requires_grad=True)
    w = r(2, 2)
    (fn(a, bt) * eager.tensor(w)).sum().backward()
    assert a.grad.shape == () and bt.grad.shape == (2, 2)
    eps = 1e-6
    num = ((fn(zero_dim(a0 + eps), eager.tensor(b)).numpy() -
            fn(zero_dim(a0 - eps), eager.tensor(b)).numpy()) * w).sum() / (2 * eps)
    np.testing.assert_allclose(a.grad.item(), num, rtol=1e-5, atol=1e-6)
    # and the other way round
    a = eager.tensor(ga(2, 2), requires_grad=True)
    bt = zero_dim(gb(1).reshape(()), requires_grad=True)
    fn(a, bt).sum().backward()
    assert bt.grad.shape == () and a.grad.shape == (2, 2)


SCALAR_EXPONENTS = [2, 3, 0.5, -1, -2.5, 1, 0]


@pytest.mark.parametrize("p", SCALAR_EXPONENTS)
def test_pow_scalar_exponent_gradcheck(p):
    assert gradcheck(lambda a: a ** p, pos(3, 2))
    assert gradcheck(lambda a: eager.pow(a, p), pos(4))


def test_pow_integer_exponent_negative_base():
    assert gradcheck(lambda a: a ** 3, r(5))
    assert gradcheck(lambda a: a ** 2, r(2, 3))


def test_rpow_scalar_base():
    assert gradcheck(lambda a: 2.0 ** a, r(3))
    assert gradcheck(lambda a: eager.pow(3.0, a), r(2, 2))


def test_pow_zero_base_tensor_exponent_grad_is_finite():
    a = eager.tensor([0.0, 2.0], dtype=eager.float64, requires_grad=True)
    b = eager.tensor([2.0, 3.0], dtype=eager.float64, requires_grad=True)
    (a ** b).sum().backward()
    assert np.isfinite(b.grad.numpy()).all()
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 8 * math.log(2)])
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 12.0])


UNARY = {
    "neg": (lambda x: -x, r),
    "abs": (eager.abs, away0),
    "reciprocal": (eager.reciprocal, away0),
    "exp": (eager.exp, r),
    "expm1": (eager.expm1, r),
    "log": (eager.log, pos),
    "log1p": (eager.log1p, lambda *s: r(*s, low=-0.5, high=2.0)),
    "sqrt": (eager.sqrt, pos),
    "rsqrt": (eager.rsqrt, pos),
    "sin": (eager.sin, r),
    "cos": (eager.cos, r),
    "tanh": (eager.tanh, r),
    "sigmoid": (eager.sigmoid, lambda *s: r(*s, low=-30, high=30)),
    "erf": (eager.erf, r),
    "relu": (eager.relu, away0),
    "gelu": (eager.gelu, r),
    "gelu_tanh": (lambda x: eager.gelu(x, approximate="tanh"), r),
    "silu": (eager.silu, r),
    "softplus": (eager.softplus, r),
    "softplus_beta": (lambda x: eager.softplus(x, beta=2.0, threshold=3.0), away0),
    "clamp_min": (lambda x: eager.clamp(x, min=0.0), away0),
    "clamp_max": (lambda x: eager.clamp(x, max=0.0), away0),
    "clamp_both": (lambda x: eager.clamp(x, -1.0, 1.0),
                   lambda *s: np.array([-1.7, -0.5, 0.2, 0.9, 1.5, 1.9])[:int(np.prod(s))]
                   .reshape(s)),
    "clamp_tensor": (lambda x: eager.clamp(x, eager.tensor(np.full(x.shape, -0.1)),
                                           eager.tensor(np.full(x.shape, 0.1))), away0),
    "square": (eager.square, r),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_gradcheck(name):
    fn, gen = UNARY[name]
    assert gradcheck(fn, gen(2, 3))


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_matches_torch(name):
    torch = pytest.importorskip("torch")
    fn, gen = UNARY[name]
    x = gen(2, 3)
    tfns = {"gelu_tanh": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
            "softplus": torch.nn.functional.softplus,
            "softplus_beta": lambda t: torch.nn.functional.softplus(t, beta=2.0, threshold=3.0),
            "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu,
            "clamp_min": lambda t: torch.clamp(t, min=0.0),
            "clamp_max": lambda t: torch.clamp(t, max=0.0),
            "clamp_both": lambda t: torch.clamp(t, -1.0, 1.0),
            "clamp_tensor": lambda t: torch.clamp(t, torch.full(t.shape, -0.1, dtype=t.dtype),
                                                  torch.full(t.shape, 0.1, dtype=t.dtype)),
            "neg": torch.neg}
    tfn = tfns.get(name) or getattr(torch, name)
    e = eager.tensor(x, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    eo, to = fn(e), tfn(tt)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    eo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), tt.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_gelu_rejects_unknown_approximation():
    with pytest.raises((ValueError, RuntimeError), match="approximate"):
        eager.gelu(eager.ones(2), approximate="fast")


def test_softplus_threshold_is_linear():
    x = eager.tensor([30.0, -30.0], dtype=eager.float64, requires_grad=True)
    y = eager.softplus(x)
    np.testing.assert_allclose(y.detach().numpy(), [30.0, math.log1p(math.exp(-30.0))])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1 / (1 + math.exp(30.0))], rtol=1e-6)


def test_sigmoid_extreme_values_are_finite():
    x = eager.tensor([-1000.0, 0.0, 1000.0], requires_grad=True)
    y = eager.sigmoid(x)
    assert y.tolist() == [0.0, 0.5, 1.0]
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


@pytest.mark.parametrize("fn", [eager.maximum, eager.minimum])
def test_maximum_minimum_ties_split_gradient(fn):
    a = eager.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = eager.tensor([1.0, 0.0, 5.0], requires_grad=True)
    fn(a, b).sum().backward()
    if fn is eager.maximum:
        assert a.grad.tolist() == [0.5, 1.0, 0.0] and b.grad.tolist() == [0.5, 0.0, 1.0]
    else:
        assert a.grad.tolist() == [0.5, 0.0, 1.0] and b.grad.tolist() == [0.5, 1.0, 0.0]
    # finite differences agree at the tie as well (both sides move the max by eps/2)
    assert gradcheck(fn, np.array([1.0, 2.0]), np.array([1.0, -1.0]))


def test_maximum_ties_match_torch():
    torch = pytest.importorskip("torch")
    x = [1.0, 2.0, 2.0]
    y = [1.0, 3.0, 2.0]
    e1, e2 = eager.tensor(x, requires_grad=True), eager.tensor(y, requires_grad=True)
    t1, t2 = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    eager.maximum(e1, e2).sum().backward()
    torch.maximum(t1, t2).sum().backward()
    assert e1.grad.tolist() == t1.grad.tolist() and e2.grad.tolist() == t2.grad.tolist()


@pytest.mark.parametrize("sc,sa,sb", [((3, 1), (1, 4), (3, 4)), ((2, 3), (3,), (2, 3)),
                                      ((2, 2), (), (2, 2)), ((4,), (4,), ())])
def test_where_gradcheck_broadcast(sc, sa, sb):
    cond = eager.tensor(rng.random(sc) > 0.5)
    assert gradcheck(lambda a, b: eager.where(cond, a, b), r(*sa), r(*sb))


def test_where_scalar_branches():
    cond = eager.tensor([True, False, True])
    x = eager.tensor([1.0, 2.0, 3.0], dtype=eager.float64, requires_grad=True)
    y = eager.where(cond, x, 0.0)
    assert y.dtype == eager.float64 and y.tolist() == [1.0, 0.0, 3.0]
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="bool"):
        eager.where(eager.tensor([1, 0]), eager.ones(2), eager.zeros(2))


def test_piecewise_constant_ops_have_zero_grad():
    x = eager.tensor([0.3, -1.7, 2.5], requires_grad=True)
    for f in (eager.floor, eager.ceil, eager.round, eager.trunc, eager.sign):
        x.grad = None
        f(x).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_composite_gradcheck():
    f = lambda a, b: eager.tanh(a * b + eager.exp(-a)) / (1.0 + b * b) - eager.sqrt(a * a + 1.0)
    assert gradcheck(f, r(3, 1), r(1, 4))


# -- dtype promotion (PyTorch's rules) --------------------------------------------------------

def _e(x):
    """Build eager inputs: ('t', data, dtype) tensors, ('z', value, dtype) 0-dim tensors."""
    kind, v, dt = x
    if kind == "s":
        return v
    if kind == "z":
        return eager.from_numpy(np.array(v, dtype=np.dtype(dt)))
    return eager.tensor(v, dtype=getattr(eager, dt))


def _t(x):
    kind, v, dt = x
    if kind == "s":
        return v
    return _torch.tensor(v, dtype=getattr(_torch, dt))


I64 = ("t", [1, 2], "int64")
I32 = ("t", [1, 2], "int32")
U8 = ("t", [1, 2], "uint8")
I8 = ("t", [1, 2], "int8")
F32 = ("t", [1.5, 2.0], "float32")
F64 = ("t", [1.5, 2.0], "float64")
F16 = ("t", [1.5, 2.0], "float16")
B = ("t", [True, False], "bool")
Z_F64 = ("z", 2.0, "float64")
Z_F32 = ("z", 2.0, "float32")
Z_I64 = ("z", 2, "int64")
Z_B = ("z", True, "bool")

_DIV_BUG = pytest.mark.regression("ops/elementwise.py Div: int tensor / Python "
                             "int gives float64 (the int scalar is taken for a float)")

PROMOTION = [  # (lhs, op, rhs, expected dtype name)
    (I64, "add", F32, "float32"),          # int tensor + float tensor -> float
    (F32, "add", F64, "float64"),
    (I64, "mul", ("s", 2.5, None), "float32"),  # int tensor * python float -> default float
    (F32, "mul", ("s", 2.5, None), "float32"),  # python float never widens a float tensor
    (F16, "mul", ("s", 2.5, None), "float16"),
    (I32, "add", ("s", 5, None), "int32"),      # python int never widens an int tensor
    (Z_F64, "add", F32, "float32"),        # 0-dim of the same category does not decide
    (Z_F64, "add", I64, "float64"),        # 0-dim of a higher category does
    (Z_I64, "add", I32, "int32"),
    (F16, "add", Z_F64, "float16"),
    (Z_F64, "add", Z_F32, "float64"),      # only 0-dim tensors: ordinary promotion
    (B, "add", I64, "int64"),              # bool + int
    (B, "add", ("s", 1, None), "int64"),
    (B, "add", ("s", 1.5, None), "float32"),
    (B, "add", B, "bool"),
    (Z_B, "add", I32, "int32"),
    (B, "add", Z_F64, "float64"),
    (I32, "add", I64, "int64"),
    (U8, "add", I8, "int16"),
    (F16, "add", F32, "float32"),
    (I64, "div", I64, "float32"),          # int / int true division -> default float
    pytest.param(I64, "div", ("s", 2, None), "float32", marks=_DIV_BUG),
    pytest.param(("s", 1, None), "div", I64, "float32", marks=_DIV_BUG),
    (I32, "div", U8, "float32"),
    (I64, "remainder", ("s", 2.5, None), "float32"),
    (I64, "pow", ("s", 2, None), "int64"),
    (I64, "pow", ("s", 0.5, None), "float32"),
    (("s", 2.0, None), "pow", I64, "float32"),
    (I64, "maximum", F32, "float32"),
    (I64, "sub", ("s", 1.0, None), "float32"),
    (F64, "mul", ("s", 2, None), "float64"),
    (I64, "gt", F32, "bool"),
]


def _apply(lib, op, a, b):
    return getattr(lib, op)(a, b)


@pytest.mark.parametrize("lhs,op,rhs,expected", PROMOTION)
def test_promotion_rule(lhs, op, rhs, expected):
    a, b = _e(lhs), _e(rhs)
    if not isinstance(a, eager.Tensor):
        out = {"div": lambda: a / b, "pow": lambda: a ** b}[op]()
    else:
        out = _apply(eager, op, a, b)
    assert out.dtype == getattr(eager, expected), f"{lhs} {op} {rhs}"
    if _torch is not None:
        ta, tb = _t(lhs), _t(rhs)
        if not isinstance(ta, _torch.Tensor):
            tout = {"div": lambda: ta / tb, "pow": lambda: ta ** tb}[op]()
        else:
            tout = _apply(_torch, op, ta, tb)
        assert str(tout.dtype) == f"torch.{expected}"
        np.testing.assert_allclose(out.numpy().astype(np.float64),
                                   tout.numpy().astype(np.float64), rtol=1e-3)


@pytest.mark.parametrize("x,op,expected", [
    (I64, "exp", "float32"), (I32, "sqrt", "float32"), (B, "sigmoid", "float32"),
    (I64, "reciprocal", "float32"), (I64, "abs", "int64"), (I32, "neg", "int32"),
    (I64, "relu", "int64"), (F64, "tanh", "float64"), (F16, "exp", "float16"),
])
def test_unary_result_dtype(x, op, expected):
    out = getattr(eager, op)(_e(x))
    assert out.dtype == getattr(eager, expected)
    if _torch is not None:
        assert str(getattr(_torch, op)(_t(x)).dtype) == f"torch.{expected}"


def test_zero_dim_float64_from_tensor_factory_does_not_widen():
    """The same rule as above, with the 0-dim tensor made by ``eager.tensor``."""
    out = eager.tensor(2.0, dtype=eager.float64) + eager.tensor([1.0, 2.0])
    assert out.dtype == eager.float32


@pytest.mark.regression("ops/elementwise.py Clamp: an int tensor clamped by a "
                   "Python float gives float64 (NumPy promotion), PyTorch float32")
def test_clamp_int_tensor_with_float_bound_is_float32():
    out = eager.clamp(eager.tensor([1, 5]), 2.5)
    assert out.dtype == eager.float32
    assert out.tolist() == [2.5, 5.0]


def test_int_clamp_keeps_dtype():
    out = eager.clamp(eager.tensor([1, 5, 9], dtype=eager.int32), 2, 6)
    assert out.dtype == eager.int32 and out.tolist() == [2, 5, 6]


def test_gradient_dtype_follows_input_after_promotion():
    a = eager.tensor([1.0, 2.0], requires_grad=True)                      # float32
    b = eager.tensor([3.0, 4.0], dtype=eager.float64, requires_grad=True)
    out = a * b
    assert out.dtype == eager.float64
    out.sum().backward()
    assert a.grad.dtype == eager.float32 and b.grad.dtype == eager.float64
    assert a.grad.tolist() == [3.0, 4.0]


def test_int_inputs_do_not_require_grad_results():
    x = eager.tensor([1.0, 2.0], requires_grad=True)
    assert (x > 1).requires_grad is False
    assert (x // 1).requires_grad is False


# -- broadcasting vs NumPy (hypothesis) -------------------------------------------------------

_ops = {
    "add": (lambda a, b: a + b, np.add),
    "mul": (lambda a, b: a * b, np.multiply),
    "sub": (lambda a, b: a - b, np.subtract),
    "maximum": (eager.maximum, np.maximum),
}


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                  max_side=4),
       op=st.sampled_from(sorted(_ops)), seed=st.integers(0, 2 ** 16))
def test_broadcasting_matches_numpy(shapes, op, seed):
    sa, sb = shapes.input_shapes
    g = np.random.default_rng(seed)
    a, b = g.standard_normal(sa), g.standard_normal(sb)
    ef, nf = _ops[op]
    ta = eager.from_numpy(np.array(a)).requires_grad_()
    tb = eager.from_numpy(np.array(b)).requires_grad_()
    out = ef(ta, tb)
    expected = nf(a, b)
    assert out.shape == expected.shape == shapes.result_shape
    np.testing.assert_allclose(out.detach().numpy(), expected)
    out.sum().backward()
    assert ta.grad.shape == sa and tb.grad.shape == sb
    if op == "add":
        full = np.ones(shapes.result_shape)
        np.testing.assert_allclose(ta.grad.numpy(),
                                   np.broadcast_to(full.sum(), ()) if sa == () else
                                   _sum_to(full, sa))
        np.testing.assert_allclose(tb.grad.numpy(), _sum_to(full, sb) if sb else full.sum())


def _sum_to(x, shape):
    lead = x.ndim - len(shape)
    x = x.sum(axis=tuple(range(lead))) if lead else x
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and x.shape[i] != 1)
    return x.sum(axis=axes, keepdims=True) if axes else x


# -- errors -----------------------------------------------------------------------------------

def test_broadcast_error_names_both_sizes():
    with pytest.raises(RuntimeError) as e:
        eager.ones(2, 3) + eager.ones(4, 3)
    msg = str(e.value)
    assert "(2)" in msg and "(4)" in msg and "non-singleton dimension 0" in msg
    assert "add" in msg
    with pytest.raises(RuntimeError, match=r"tensor a \(3\).*tensor b \(5\).*dimension 1"):
        eager.ones(2, 3) * eager.ones(5)
    with pytest.raises(RuntimeError, match="(?i)the size of tensor a"):
        eager.maximum(eager.ones(2), eager.ones(3))


@pytest.mark.regression("dispatch.py: the message says 'the size of tensor a', "
                   "PyTorch 'The size of tensor a'")
def test_broadcast_error_contains_torch_message():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as te:
        torch.ones(2, 3) + torch.ones(4, 3)
    with pytest.raises(RuntimeError) as ee:
        eager.ones(2, 3) + eager.ones(4, 3)
    assert str(te.value) in str(ee.value)


def test_bool_negation_and_subtraction_errors():
    b = eager.tensor([True, False])
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not "
                                           "supported"):
        _ = -b
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool "
                                           "tensors is not supported"):
        b - b
    assert (~b).tolist() == [False, True]


def test_integer_negative_power_error():
    with pytest.raises(RuntimeError, match="(?i)integers to negative integer powers are "
                                           "not allowed"):
        eager.tensor([2, 3]) ** eager.tensor([-1, 1])


def test_clamp_requires_a_bound():
    with pytest.raises(RuntimeError, match="(?i)at least one of 'min' or 'max' must not be "
                                           "None"):
        eager.clamp(eager.ones(2))


def test_require_grad_on_int_tensor_error():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require "
                                           "gradients"):
        eager.tensor([1, 2], requires_grad=True)


def test_inplace_result_type_cannot_be_cast():
    x = eager.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type"):
        x.add_(1.5)
    x.add_(2)
    assert x.tolist() == [3, 4]


# -- lerp, nan_to_num, clamp_min / clamp_max ---------------------------------------------------

def test_lerp_values_gradients_and_errors():
    a, b = r(3, 4), r(3, 4)
    w = rng.uniform(-0.5, 1.5, size=(3, 4))       # both sides of PyTorch's 0.5 switch
    want = a + w * (b - a)
    np.testing.assert_allclose(eager.lerp(eager.tensor(a), eager.tensor(b),
                                          eager.tensor(w)).numpy(), want, rtol=1e-12)
    for s in (0.0, 0.25, 0.75, 1.0):
        got = eager.tensor(a).lerp(eager.tensor(b), s).numpy()
        np.testing.assert_allclose(got, a + s * (b - a), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(eager.lerp(eager.tensor(a), eager.tensor(b), 1.0).numpy(), b)
    assert gradcheck(eager.lerp, a, b, w)
    assert gradcheck(lambda x, y: eager.lerp(x, y, 0.7), a, b)
    assert gradcheck(lambda x, y, z: eager.lerp(x, y, z), r(4), r(3, 1), r(2, 1, 1))
    x = eager.zeros(3)
    x.lerp_(eager.ones(3), 0.25)
    assert x.tolist() == [0.25, 0.25, 0.25]
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype double"):
        eager.lerp(eager.ones(2), eager.ones(2, dtype=eager.float64), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype float for `weight` but got dtype "
                                           "double"):
        eager.lerp(eager.ones(2), eager.ones(2), eager.ones(2, dtype=eager.float64))
    with pytest.raises(NotImplementedError, match="\"lerp_kernel_scalar\" not implemented for "
                                                  "'Long'"):
        eager.lerp(eager.tensor([1, 2]), eager.tensor([3, 4]), 0.5)


def test_nan_to_num_values_and_gradient():
    x = eager.tensor([1.0, float("nan"), float("inf"), -float("inf")], requires_grad=True)
    y = eager.nan_to_num(x)
    f32 = np.finfo(np.float32)
    assert y.tolist() == [1.0, 0.0, float(f32.max), float(f32.min)] and y.dtype == eager.float32
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert eager.nan_to_num(x, 1.0, 2.0, -3.0).tolist() == [1.0, 1.0, 2.0, -3.0]
    h = eager.tensor([float("inf")], dtype=eager.float16)
    assert eager.nan_to_num(h).tolist() == [65504.0]
    ints = eager.tensor([1, 2])
    assert eager.nan_to_num(ints).tolist() == [1, 2] and ints.nan_to_num() is not ints
    z = eager.tensor([float("nan"), 2.0])
    z.nan_to_num_(nan=-1.0)
    assert z.tolist() == [-1.0, 2.0]


def test_clamp_min_max_and_inplace_forms():
    a = r(5)
    np.testing.assert_array_equal(eager.clamp_min(eager.tensor(a), 0.5).numpy(),
                                  np.maximum(a, 0.5))
    np.testing.assert_array_equal(eager.tensor(a).clamp_max(eager.zeros(5)).numpy(),
                                  np.minimum(a, 0.0))
    assert gradcheck(lambda x: eager.clamp_min(x, 0.1), a)
    for name, want in (("clamp_min_", np.maximum(a, 0.0)), ("clamp_max_", np.minimum(a, 0.0)),
                       ("clip_", np.clip(a, -0.5, 0.5))):
        x = eager.tensor(a)
        args = (-0.5, 0.5) if name == "clip_" else (0.0,)
        assert getattr(x, name)(*args) is x
        np.testing.assert_array_equal(x.numpy(), want)


def test_lerp_nan_to_num_against_torch():
    torch = pytest.importorskip("torch")
    a, b, w = r(3, 4), r(3, 4), rng.uniform(-0.5, 1.5, size=(3, 4))
    ours = [eager.tensor(v, requires_grad=True) for v in (a, b, w)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b, w)]
    eo, to = eager.lerp(*ours), torch.lerp(*theirs)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-14)
    eo.sum().backward()
    to.sum().backward()
    for e, t in zip(ours, theirs):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-14)
    v = np.array([1.0, np.nan, np.inf, -np.inf, -2.0], dtype=np.float32)
    np.testing.assert_array_equal(eager.nan_to_num(eager.tensor(v), posinf=9.0).numpy(),
                                  torch.nan_to_num(torch.tensor(v), posinf=9.0).numpy())
