"""Autograd semantics as in PyTorch: accumulation, retain_graph, create_graph, autograd.grad,
hooks, retain_grad, grad_fn introspection, detach, grad modes, in-place checks, version
counters, custom Functions, anomaly detection."""

import math

import numpy as np
import pytest

import eager
from eager.autograd import Function

_DETACH_BUG = pytest.mark.regression(
    "tensor.py: detach()/.data set _base, so inplace.inplace treats the alias as a view of "
    "a graph tensor and refuses in-place ops that PyTorch allows")
_INPLACE_BUG = pytest.mark.regression(
    "inplace.inplace: the op's node saved self, which the write then modifies; backward "
    "raises 'modified by an inplace operation' (PyTorch saves the original)")


def leaf(values, dtype=eager.float64):
    return eager.tensor(values, dtype=dtype, requires_grad=True)


# -- accumulation and broadcasting --------------------------------------------------------

def test_grad_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_grad_accumulation_does_not_alias_user_gradient():
    x = leaf([1.0, 2.0])
    g = eager.tensor([1.0, 1.0], dtype=eager.float64)
    (x * 1).backward(g)
    (x * 1).backward(g)
    assert x.grad.tolist() == [2.0, 2.0]
    assert g.tolist() == [1.0, 1.0]


def test_same_tensor_used_twice_sums_gradients():
    x = leaf([3.0])
    y = x * x + x            # diamond: x feeds three edges
    y.backward(eager.tensor([1.0], dtype=eager.float64))
    assert x.grad.tolist() == [7.0]


def test_broadcast_grads_are_reduced_to_input_shape():
    a = leaf(np.ones((3, 1)))
    b = leaf(np.ones((4,)))
    c = leaf(2.0 * np.ones((2, 3, 4)))
    (a * b * c).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.numpy().ravel().tolist() == [16.0] * 3
    assert b.grad.shape == (4,) and b.grad.tolist() == [12.0] * 4
    assert c.grad.shape == (2, 3, 4)


def test_grad_dtype_matches_leaf():
    x = eager.tensor([1.0, 2.0], requires_grad=True)
    (x.double() * 2).sum().backward()
    assert x.grad.dtype == eager.float32 and x.grad.tolist() == [2.0, 2.0]


# -- retain_graph -------------------------------------------------------------------------

def test_second_backward_raises_and_retain_graph_allows_it():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    x.grad = None
    z = (x.exp() * x).sum()
    z.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)


def test_autograd_grad_frees_graph_too():
    x = leaf([1.0])
    y = (x * x).sum()
    eager.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        eager.autograd.grad(y, x)


# -- non-scalar outputs and explicit gradients --------------------------------------------------

def test_non_scalar_backward_requires_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        (x * 2).backward()


def test_backward_with_gradient_argument():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    y.backward(gradient=eager.tensor([1.0, 0.1, 0.01], dtype=eager.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.4, 0.06])


def test_backward_gradient_shape_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(eager.ones(3, dtype=eager.float64))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        eager.tensor([1.0]).sum().backward()


def test_backward_inputs_restricts_accumulation():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


# -- create_graph: higher-order derivatives -------------------------------------------------

def test_second_derivative_of_cube():
    x0 = np.array([0.5, -1.0, 2.0])
    x = leaf(x0)
    (g,) = eager.autograd.grad((x ** 3).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x0 ** 2)
    assert g.requires_grad and g.grad_fn is not None
    (h,) = eager.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x0)


def test_second_derivative_of_tanh():
    x0 = np.array([-1.5, 0.0, 0.7])
    x = leaf(x0)
    y = eager.tanh(x).sum()
    y.backward(create_graph=True)
    t = np.tanh(x0)
    np.testing.assert_allclose(x.grad.detach().numpy(), 1 - t ** 2)
    assert x.grad.requires_grad
    (h,) = eager.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(h.numpy(), -2 * t * (1 - t ** 2))


def test_third_derivative_and_torch_agreement():
    x0 = np.array([0.3, 1.2])
    x = leaf(x0)
    f = lambda v: (v.sin() * v.exp()).sum()
    (g1,) = eager.autograd.grad(f(x), x, create_graph=True)
    (g2,) = eager.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = eager.autograd.grad(g2.sum(), x)
    # d/dx sin*exp = e(s+c); d2 = 2 e c; d3 = 2 e (c - s)
    e, s, c = np.exp(x0), np.sin(x0), np.cos(x0)
    np.testing.assert_allclose(g1.detach().numpy(), e * (s + c))
    np.testing.assert_allclose(g2.detach().numpy(), 2 * e * c)
    np.testing.assert_allclose(g3.numpy(), 2 * e * (c - s))


def test_mixed_partial_derivative():
    x, y = leaf([2.0]), leaf([3.0])
    f = (x * x * y).sum()
    (gx,) = eager.autograd.grad(f, x, create_graph=True)
    (gxy,) = eager.autograd.grad(gx.sum(), y)
    assert gxy.tolist() == [4.0]   # d2/dxdy x^2 y = 2x


# -- autograd.grad ----------------------------------------------------------------------------

def test_autograd_grad_does_not_touch_dot_grad():
    x = leaf([1.0, 2.0])
    (g,) = eager.autograd.grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 4.0] and x.grad is None
    assert not g.requires_grad


def test_autograd_grad_allow_unused():
    x, y = leaf([1.0]), leaf([2.0])
    out = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        eager.autograd.grad(out, [x, y], retain_graph=True)
    gx, gy = eager.autograd.grad(out, [x, y], allow_unused=True, retain_graph=True)
    assert gx.tolist() == [2.0] and gy is None
    gx, gy = eager.autograd.grad(out, [x, y], allow_unused=True, materialize_grads=True)
    assert gy.tolist() == [0.0]


def test_autograd_grad_grad_outputs_and_multiple_outputs():
    x = leaf([1.0, 2.0])
    y1, y2 = x * x, x * 3
    gx, = eager.autograd.grad([y1, y2], x,
                              grad_outputs=[eager.tensor([1.0, 1.0], dtype=eager.float64),
                                            eager.tensor([2.0, 0.0], dtype=eager.float64)])
    assert gx.tolist() == [2.0 + 6.0, 4.0 + 0.0]
    gx, = eager.autograd.grad(x * x, x, grad_outputs=eager.tensor([0.5, 0.5],
                                                                   dtype=eager.float64))
    assert gx.tolist() == [1.0, 2.0]


def test_autograd_grad_with_respect_to_intermediate():
    x = leaf([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    (gh,) = eager.autograd.grad(y, h)
    assert gh.tolist() == [6.0, 12.0]


def test_autograd_grad_input_not_requiring_grad():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        eager.autograd.grad((x * 2).sum(), eager.tensor([1.0]))


# -- retain_grad and hooks --------------------------------------------------------------------

def test_retain_grad_on_non_leaf():
    x = leaf([1.0, 2.0])
    h = x * 2
    h.retain_grad()
    assert h.retains_grad and not x.retains_grad
    out = (h * h).sum()
    out.backward()
    assert h.grad.tolist() == [4.0, 8.0]
    assert x.grad.tolist() == [8.0, 16.0]
    h2 = x * 2
    (h2 * h2).sum().backward()
    assert h2.grad is None   # no retain_grad: non-leaf grads are not kept


def test_retain_grad_accumulates_with_retain_graph():
    x = leaf([1.0])
    h = x * 2
    h.retain_grad()
    y = (h * 3).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert h.grad.tolist() == [6.0]


def test_hook_on_leaf_modifies_grad():
    x = leaf([1.0, 2.0])
    seen = []

    def hook(g):
        seen.append(g.tolist())
        return g * 2

    handle = x.register_hook(hook)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [6.0, 6.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and len(seen) == 1


def test_hook_on_non_leaf_modifies_upstream_grad():
    x = leaf([1.0, 2.0])
    h = x * x
    h.register_hook(lambda g: g * 10)
    observed = []
    h.register_hook(lambda g: observed.append(g.tolist()))   # returns None: keeps g
    h.sum().backward()
    assert observed == [[10.0, 10.0]]
    assert x.grad.tolist() == [20.0, 40.0]


def test_hook_and_retain_grad_see_hooked_value():
    x = leaf([1.0])
    h = x * 1
    h.retain_grad()
    h.register_hook(lambda g: g + 1)
    (h * 2).sum().backward()
    assert h.grad.tolist() == [3.0] and x.grad.tolist() == [3.0]


def test_hook_requires_grad():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        eager.tensor([1.0]).register_hook(lambda g: g)


def test_hook_must_return_tensor_or_none():
    x = leaf([1.0])
    x.register_hook(lambda g: 3.0)
    with pytest.raises(TypeError, match="hook"):
        (x * 2).sum().backward()


def test_hooks_run_under_create_graph():
    x = leaf([2.0])
    y = x * x
    y.register_hook(lambda g: g * 3)
    (gx,) = eager.autograd.grad(y.sum(), x, create_graph=True)
    assert gx.tolist() == [12.0] and gx.requires_grad


# -- graph introspection --------------------------------------------------------------------

def test_grad_fn_name_and_next_functions():
    a, b = leaf([1.0]), leaf([2.0])
    c = a * b
    d = c.exp() + 1.0
    assert c.grad_fn.name() == "MulBackward0"
    assert d.grad_fn.name() == "AddBackward0"
    (n0, i0), (n1, _i1) = c.grad_fn.next_functions
    assert n0.name() == "AccumulateGrad" and n0.variable is a and i0 == 0
    assert n1.variable is b
    nf = d.grad_fn.next_functions
    assert nf[0][0].name() == "ExpBackward0"
    assert nf[0][0].next_functions[0][0] is c.grad_fn
    assert nf[1][0] is None          # the Python scalar
    assert "MulBackward0" in repr(c.grad_fn)


def test_next_functions_none_for_inputs_without_grad():
    a = leaf([1.0])
    c = a * eager.tensor([2.0], dtype=eager.float64)
    assert c.grad_fn.next_functions[1][0] is None


def test_is_leaf_and_requires_grad_propagation():
    a = leaf([1.0])
    b = eager.tensor([2.0], dtype=eager.float64)
    assert a.is_leaf and b.is_leaf
    assert (b * 2).is_leaf and not (b * 2).requires_grad
    c = a * b
    assert not c.is_leaf and c.requires_grad
    assert c.detach().is_leaf
    with eager.no_grad():
        d = a * 2
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None


def test_requires_grad_flag_changes():
    a = eager.tensor([1.0])
    assert a.requires_grad_() is a and a.requires_grad
    c = a * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        c.requires_grad_(False)
    with pytest.raises(RuntimeError, match="floating point"):
        eager.tensor([1]).requires_grad_()


# -- detach -----------------------------------------------------------------------------------

@_DETACH_BUG
def test_detach_shares_storage_and_version():
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert d.data_ptr() == y.data_ptr()
    d.add_(100.0)
    assert y.tolist() == d.tolist() == [102.0, 104.0]
    assert y._version_value == d._version_value == 1


@_DETACH_BUG
def test_detach_inplace_changes_visible_to_base():
    x = leaf([1.0, 2.0])
    d = x.detach()
    d.add_(1.0)
    assert x.tolist() == [2.0, 3.0]
    assert x._version_value == 1


@_DETACH_BUG
def test_detached_modification_detected_by_backward():
    x = leaf([1.0, 2.0])
    y = x.exp()              # saves its output
    y.detach().mul_(0.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@_DETACH_BUG
def test_data_attribute_is_detached_alias():
    x = leaf([1.0])
    assert not x.data.requires_grad
    x.data.mul_(3.0)
    assert x.tolist() == [3.0]


# -- grad modes -------------------------------------------------------------------------------

def test_no_grad_context_and_decorator():
    x = leaf([1.0])
    with eager.no_grad():
        assert not eager.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert eager.is_grad_enabled()

    @eager.no_grad()
    def f(v):
        assert not eager.is_grad_enabled()
        return v * 2

    assert not f(x).requires_grad
    assert eager.is_grad_enabled()
    assert (x * 2).requires_grad


def test_enable_grad_inside_no_grad():
    x = leaf([1.0])
    with eager.no_grad():
        with eager.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad

    @eager.enable_grad()
    def f(v):
        return v * 2

    with eager.no_grad():
        assert f(x).requires_grad


def test_set_grad_enabled_call_context_and_decorator():
    x = leaf([1.0])
    eager.set_grad_enabled(False)
    try:
        assert not eager.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        eager.set_grad_enabled(True)
    assert eager.is_grad_enabled()
    with eager.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with eager.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not eager.is_grad_enabled()
    assert eager.is_grad_enabled()

    @eager.set_grad_enabled(False)
    def f(v):
        return v * 2

    assert eager.is_grad_enabled()   # the decorator does not switch grad off at definition
    assert not f(x).requires_grad
    assert eager.is_grad_enabled()


def test_inference_mode_context_and_decorator():
    x = leaf([1.0])
    with eager.inference_mode():
        assert eager.is_inference_mode_enabled() and not eager.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert not eager.is_inference_mode_enabled() and eager.is_grad_enabled()
    with eager.inference_mode(False):
        assert (x * 2).requires_grad

    @eager.inference_mode()
    def f(v):
        assert eager.is_inference_mode_enabled()
        return v * 2

    assert not f(x).requires_grad
    assert not eager.is_inference_mode_enabled()


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError), eager.no_grad():
        raise ValueError
    assert eager.is_grad_enabled()

    @eager.no_grad()
    def boom():
        raise KeyError

    with pytest.raises(KeyError):
        boom()
    assert eager.is_grad_enabled()


def test_backward_inside_no_grad_still_works():
    x = leaf([2.0])
    y = (x * x).sum()
    with eager.no_grad():
        y.backward()
    assert x.grad.tolist() == [4.0]


# -- in-place ops and version counters ---------------------------------------------------------

def test_inplace_on_leaf_requiring_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x *= 2
    with eager.no_grad():
        x.add_(1.0)      # allowed without grad recording (optimizer updates)
    assert x.tolist() == [2.0] and x.requires_grad and x.is_leaf


def test_modified_saved_tensor_raises_on_backward():
    x = leaf([1.0, 2.0])
    h = x * 1
    y = h * h             # saves h
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
        y.sum().backward()
    assert "version 1" in str(e.value) and "expected version 0" in str(e.value)


def test_modified_saved_output_raises_on_backward():
    x = leaf([1.0])
    y = x.exp()           # saves its output
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


INPLACE_ON_INTERMEDIATE = {   # h = x + 1 (x = [1, 2]); expected d(sum h')/dx
    "add_": (lambda h: h.add_(1.0), [1.0, 1.0]),
    "mul_": (lambda h: h.mul_(3.0), [3.0, 3.0]),
    "div_": (lambda h: h.div_(2.0), [0.5, 0.5]),
    "pow_": (lambda h: h.pow_(2), [4.0, 6.0]),
    "exp_": (lambda h: h.exp_(), [math.exp(2.0), math.exp(3.0)]),
    "sigmoid_": (lambda h: h.sigmoid_(), [0.10499358540350662, 0.045176659730912]),
    "relu_": (lambda h: h.relu_(), [1.0, 1.0]),
    "abs_": (lambda h: h.abs_(), [1.0, 1.0]),
    "log_": (lambda h: h.log_(), [0.5, 1 / 3]),
    "clamp_": (lambda h: h.clamp_(0.0, 2.5), [1.0, 0.0]),
    "imul": (lambda h: h.__imul__(2.0), [2.0, 2.0]),
}


_SAVES_SELF = {"mul_", "div_", "pow_", "abs_", "log_", "clamp_", "imul"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=_INPLACE_BUG) if n in _SAVES_SELF else n
                                  for n in INPLACE_ON_INTERMEDIATE])
def test_inplace_on_intermediate_is_differentiable(name):
    """As PyTorch: an in-place op on a non-leaf continues the graph, and its own backward
    uses the value from before the write."""
    f, expected = INPLACE_ON_INTERMEDIATE[name]
    x = leaf([1.0, 2.0])
    h = x + 1
    assert f(h) is h
    assert h._version_value == 1 and not h.is_leaf
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


@_INPLACE_BUG
def test_inplace_mul_by_tensor_requiring_grad():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    h = x * 1
    h.mul_(w)
    h.sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]
    assert w.grad.tolist() == [1.0, 2.0]   # the value of h before the write


def test_version_counter_bumps():
    x = eager.tensor([1.0, 2.0])
    assert x._version_value == 0
    x.add_(1.0)
    assert x._version_value == 1
    x.mul_(2.0)
    x += 1
    assert x._version_value == 3
    _ = x + 1           # out of place: no bump
    assert x._version_value == 3


def test_version_counter_shared_by_views():
    x = eager.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = x.view(4)
    v.add_(1.0)
    assert x._version_value == v._version_value == 1
    assert x.tolist() == [[2.0, 3.0], [4.0, 5.0]]


# -- custom autograd.Function -------------------------------------------------------------------

class Cube(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.scale, None


def test_custom_function_forward_backward():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x, 2.0)
    assert y.tolist() == [2.0, 16.0]
    assert y.requires_grad and y.grad_fn is not None and "Cube" in y.grad_fn.name()
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]


def test_custom_function_needs_input_grad():
    seen = {}

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return (g * b if ctx.needs_input_grad[0] else None,
                    g * a if ctx.needs_input_grad[1] else None)

    a, b = leaf([2.0]), eager.tensor([5.0], dtype=eager.float64)
    out = Mul.apply(a, b)
    assert seen["needs"] == (True, False)
    assert out.grad_fn is not None
    out.sum().backward()
    assert a.grad.tolist() == [5.0]


def test_custom_function_forward_runs_without_grad_and_no_graph_without_inputs():
    inside = {}

    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            inside["enabled"] = eager.is_grad_enabled()
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    y = Ident.apply(eager.tensor([1.0]))
    assert inside["enabled"] is False
    assert not y.requires_grad and y.grad_fn is None


def test_custom_function_wrong_number_of_grads():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    out = Bad.apply(leaf([1.0]), leaf([2.0]))
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        out.sum().backward()


def test_custom_function_in_higher_order_graph():
    x = leaf([2.0])
    y = Cube.apply(x, 1.0)
    (g,) = eager.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [12.0]
    (h,) = eager.autograd.grad(g.sum(), x)
    assert h.tolist() == [12.0]      # d/dx 3x^2 = 6x


# -- anomaly detection --------------------------------------------------------------------------

def _make_nan_forward(x):
    return eager.sqrt(x)  # sqrt(-1) = nan, its backward then returns nan


def test_detect_anomaly_reports_nan_with_forward_traceback():
    x = eager.tensor([-1.0, 4.0], requires_grad=True)
    with np.errstate(invalid="ignore", divide="ignore"), eager.autograd.detect_anomaly():
        y = _make_nan_forward(x).sum()
        with pytest.raises(RuntimeError, match="SqrtBackward0' returned nan values in its "
                                               "0th output") as e:
            y.backward()
    msg = str(e.value)
    assert "_make_nan_forward" in msg and "test_autograd.py" in msg
    assert not eager.autograd.is_anomaly_enabled()


def test_without_anomaly_mode_nan_propagates():
    x = eager.tensor([-1.0], requires_grad=True)
    with np.errstate(invalid="ignore"):
        eager.sqrt(x).sum().backward()
    assert math.isnan(x.grad.item())


def test_detect_anomaly_as_decorator_and_setter():
    @eager.autograd.detect_anomaly()
    def f():
        return eager.autograd.is_anomaly_enabled()

    assert f() is True and not eager.autograd.is_anomaly_enabled()
    eager.autograd.set_detect_anomaly(True)
    try:
        assert eager.autograd.is_anomaly_enabled()
    finally:
        eager.autograd.set_detect_anomaly(False)


# -- against torch -----------------------------------------------------------------------------

def test_grads_of_a_small_network_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x0, w0, b0 = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)

    def net(lib, x, w, b):
        h = lib.tanh(x @ w + b)
        return (lib.sigmoid(h) * h - (h * h).exp() / 3.0).sum()

    ex, ew, eb = (eager.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    net(eager, ex, ew, eb).backward()
    net(torch, tx, tw, tb).backward()
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10)
