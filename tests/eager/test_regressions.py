"""Tests for bugs found and fixed; each names the bug it would have caught."""

import numpy as np

import eager


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
