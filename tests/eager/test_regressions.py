"""Tests for bugs found and fixed; each names the bug it would have caught."""

import numpy as np

import eager
from eager.ops.factory import device_params


def test_zero_dim_float64_backward_stays_float64():
    """In plain backward, NumPy returns 0-d results as NumPy scalars; result_type once took
    them for Python scalars and computed where's gradient in float32."""
    x = eager.tensor(np.array(0.345584192064786), requires_grad=True)
    p = eager.tensor(np.array(0.41), requires_grad=True)
    h = eager.where(x > 0, x, p).tanh().tanh()
    h.backward()
    h1 = np.tanh(0.345584192064786)
    h2 = np.tanh(h1)
    expected = (1 - h2 * h2) * (1 - h1 * h1)
    assert x.grad.dtype == eager.float64
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)


def test_numpy_scalars_promote_like_zero_dim_tensors():
    from eager.dtypes import result_type
    assert result_type(np.float64(1.0), 0.0) == np.float64
    assert result_type(np.float32(1.0), np.array([1.0], np.float64)) == np.float64
    assert result_type(np.int32(1), 2.5) == np.float32


def test_dropout_under_vmap_draws_on_the_cpu():
    """A vmap-batched CPU tensor's storage is no ndarray; dropout once took it for a device
    tensor and passed ``device=`` to the CPU bernoulli forward (TypeError, not vmap's error)."""
    import pytest

    from eager.func import vmap
    from eager.nn import functional as F

    x = eager.ones(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: F.dropout(a, 0.5))(x)
    out = vmap(lambda a: F.dropout(a, 0.5), randomness="same")(x).numpy()
    assert out.shape == (4, 3) and set(np.unique(out)) <= {0.0, 2.0}
    assert (out == out[0]).all()        # one draw shared by every sample


def test_device_errors_match_pytorch():
    """PyTorch raises AssertionError for a device it was not built for (ours is also a
    RuntimeError), 'Invalid device, must be cuda device' for cuda('cpu'), and moves a module
    with no tensors to any device without a word."""
    import pytest

    from runtime import device as runtime_device

    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device"):
        eager.ones(2).cuda("cpu")
    assert repr(eager.nn.Module().to("cuda")) == "Module()"
    if not runtime_device.available("cuda"):
        for call in (lambda: eager.zeros(2, device="cuda"), lambda: eager.ones(2).to("cuda"),
                     lambda: eager.nn.Linear(2, 2).to("cuda")):
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                call()


def _loop(f, *arrays):
    """``f`` on each sample (the leading dimension of every array), stacked."""
    return np.stack([f(*[eager.tensor(a[b]) for a in arrays]).numpy()
                     for b in range(arrays[0].shape[0])])


def test_setitem_inside_vmap_without_grad():
    """``y[key] = v`` inside vmap (no grad) once raised ``TypeError: SetItem.forward() got an
    unexpected keyword argument 'out'``: batched storage is no ndarray, so setitem took the
    device branch; ``set_item`` had no batching rule either.  Basic keys, an unbatched and a
    batched index, at the first dimension, a later one and dimensions apart."""
    from eager.func import vmap

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 3, 4, 5))
    v = rng.standard_normal((3, 2, 5))
    i = np.stack([rng.permutation(4)[:2] for _ in range(3)])   # no repeats: one write each
    j = np.stack([rng.permutation(3)[:2] for _ in range(3)])

    def basic(x, v):
        y = x.clone()
        y[1, 1:3] = v
        return y

    def batched_index(x, v, i):
        y = x.clone()
        y[1:, i] = v[:, :1]          # indexed dimension 1 of the view: not the first
        return y

    def unbatched_index(x, v):
        y = x.clone()
        y[:, eager.tensor([3, 0])] = v[0]
        return y

    def apart(x, j, i):
        y = x.clone()
        y[j, :, i] = 7.0              # index dimensions apart: the index dimensions first
        return y

    for f, arrays in [(basic, (x, v)), (batched_index, (x, v, i)), (unbatched_index, (x, v)),
                      (apart, (x, j, i))]:
        got = vmap(f)(*[eager.tensor(a) for a in arrays]).numpy()
        np.testing.assert_array_equal(got, _loop(f, *arrays), err_msg=f.__name__)


def test_setitem_inside_vmap_errors_name_per_sample_shapes():
    """A value that does not fit the written region: PyTorch's message on the per-sample
    shapes (not the physical ones with the batch dimension)."""
    import pytest

    from eager.func import vmap

    def f(x, v):
        y = x.clone()
        y[0] = v
        return y

    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match "
                                           r"the existing size \(3\) at non-singleton dimension "
                                           r"0.  Target sizes: \[4\].  Tensor sizes: \[3\]"):
        vmap(f)(eager.zeros(2, 3, 4), eager.zeros(2, 3))


def test_nll_loss_inside_vmap_with_weight_none_reduction_or_spatial_input():
    """``F.nll_loss`` inside vmap with a weight, ``reduction='none'`` or an ``(N, C, d)``
    input once raised ``AttributeError: 'Batched' object has no attribute 'min'``
    (``_needs_mask`` read the batched target's storage as an array); out-of-range targets
    still raise PyTorch's error."""
    import pytest

    from eager.func import vmap
    from eager.nn import functional as F

    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5))
    t = rng.integers(0, 5, (3, 4))
    t[1, 2] = 1
    w = rng.random((3, 5))
    xs = rng.standard_normal((3, 4, 5, 2))
    ts = rng.integers(0, 5, (3, 4, 2))
    for red in ("mean", "sum", "none"):
        def weighted(x, t, w, red=red):
            return F.nll_loss(x, t, w, reduction=red, ignore_index=1)

        def spatial(x, t, red=red):
            return F.nll_loss(x, t, reduction=red)

        for f, arrays in [(weighted, (x, t, w)), (spatial, (xs, ts))]:
            got = vmap(f)(*[eager.tensor(a) for a in arrays]).numpy()
            np.testing.assert_allclose(got, _loop(f, *arrays), rtol=1e-12,
                                       err_msg=f"{f.__name__} {red}")
    t[0, 0] = 7
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        vmap(lambda a, b: F.nll_loss(a, b, reduction="none"))(eager.tensor(x), eager.tensor(t))


def test_gradients_through_vmap_of_diagonal():
    """Gradients through ``vmap(diagonal)`` once raised: diagonal had a batching rule but its
    backward op, ``diagonal_scatter``, had none."""
    from eager.func import vmap

    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 2, 4))
    x = eager.tensor(a, requires_grad=True)
    out = vmap(lambda m: eager.diagonal(m, offset=1))(x)
    out.backward(eager.ones(3, 2))
    want = np.zeros_like(a)
    want[:, 0, 1] = want[:, 1, 2] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), want)
    emb = vmap(lambda d: eager.diag_embed(d, offset=1))(eager.tensor(a[:, 0]))
    np.testing.assert_array_equal(emb.numpy(), _loop(lambda d: eager.diag_embed(d, offset=1),
                                                     a[:, 0]))


def test_abs_refuses_bool_as_pytorch():
    """``eager.abs`` once returned a bool tensor as it was; PyTorch refuses it:
    ``NotImplementedError: "abs_cpu" not implemented for 'Bool'``."""
    import pytest

    b = eager.tensor([True, False])
    for f in (eager.abs, eager.absolute, lambda t: t.abs(), lambda t: t.abs_(), abs):
        with pytest.raises(NotImplementedError, match="^\"abs_cpu\" not implemented for "
                                                      "'Bool'$"):
            f(b)
    np.testing.assert_array_equal(eager.abs(eager.tensor([-3], dtype=eager.int8)).numpy(),
                                  [3])


def test_vmap_of_index_with_a_batched_index_at_a_later_dimension():
    """``x[:, idx]`` inside vmap with a batched ``idx`` was refused ('only when the indexed
    dimensions come first'), as were index dimensions apart; PyTorch supports both.  Values
    and per-sample gradients against a loop."""
    from eager.func import grad, vmap

    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 2, 4, 5))
    i = rng.integers(0, 4, (3, 2, 2))          # repeats: the gradient adds them up
    j = rng.integers(0, 2, (3, 2, 2))
    w = rng.standard_normal((3, 2, 2, 2, 5))

    def later(x, i):
        return x[:, i]

    def apart(x, j, i):
        return x[j, :, i]

    for f, arrays in [(later, (x, i)), (apart, (x, j, i))]:
        got = vmap(f)(*[eager.tensor(a) for a in arrays]).numpy()
        np.testing.assert_array_equal(got, _loop(f, *arrays), err_msg=f.__name__)

    def loss(x, i, w):
        return (x[:, i] * w).sum()

    g = vmap(grad(loss))(eager.tensor(x), eager.tensor(i), eager.tensor(w)).numpy()
    want = np.zeros_like(x)
    for b in range(3):
        for p in range(2):
            for q in range(2):
                want[b][:, i[b, p, q]] += w[b, :, p, q]
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_vmap_of_dim_ops_on_per_sample_0d_tensors():
    """softmax, log_softmax, cumsum (and cumprod, logcumsumexp) inside vmap of a per-sample
    0-d tensor were refused ('needs per-sample tensors of at least one dimension'); PyTorch
    treats the 0-d tensor as one element along ``dim`` 0 / -1."""
    from eager.func import grad, vmap

    a = np.array([0.5, -1.0, 2.0])
    fs = [lambda t: t.softmax(0), lambda t: t.log_softmax(-1), lambda t: t.cumsum(0),
          lambda t: t.cumprod(-1), lambda t: t.logcumsumexp(0)]
    for k, f in enumerate(fs):
        got = vmap(f)(eager.tensor(a))
        assert tuple(got.shape) == (3,), k
        np.testing.assert_allclose(got.numpy(), _loop(f, a), rtol=1e-15, err_msg=str(k))
    g = vmap(grad(lambda t: t.cumsum(0) * t))(eager.tensor(a)).numpy()
    np.testing.assert_allclose(g, 2 * a)
    ints = vmap(lambda t: t.cumsum(0))(eager.tensor([1, 2, 3]))
    assert ints.dtype == eager.int64


def test_adam_refuses_a_tensor_lr_of_several_elements():
    """Adam lacked PyTorch's 'Tensor lr must be 1-element' check (Adamax/NAdam/RAdam had
    it); the Adam family's checks now live in one function."""
    import pytest

    w = eager.zeros(2, requires_grad=True)
    for cls in (eager.optim.Adam, eager.optim.AdamW, eager.optim.NAdam):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            cls([w], lr=eager.tensor([1.0, 2.0]))


def test_device_params_of_numpy_scalars_and_arrays_is_the_cpu():
    # NumPy 2's scalars carry the array API's .device == "cpu" (a string): device_params
    # read its .type and raised AttributeError
    for like in (np.float32(1.0), np.int64(2), np.zeros(2), eager.zeros(2), 3.0):
        assert device_params(like) == {}
