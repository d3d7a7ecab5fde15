"""Activations added for PyTorch programs (hardtanh, relu6, selu, ...), in-place forms that
keep backward working, channel dropout, pixel shuffle, Conv without bias under an in-place
activation, and indexing with ``range``; compared with PyTorch where it is importable."""

import numpy as np
import pytest

import eager
import eager.nn as nn
import eager.nn.functional as F

X = np.array([[-4.0, -3.0, -2.5, -1.0, -0.5, -0.1, 0.0, 0.2, 0.7, 1.0, 2.9, 3.0, 3.5, 6.0,
               7.0, 0.45]], dtype=np.float64)

# (name, kwargs): functional name in both libraries
FUNCS = [("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 3.0}), ("relu6", {}),
         ("selu", {}), ("celu", {"alpha": 1.5}), ("hardswish", {}), ("hardsigmoid", {}),
         ("threshold", {"threshold": 0.3, "value": -1.0}), ("mish", {}), ("softsign", {}),
         ("tanhshrink", {}), ("hardshrink", {"lambd": 0.6}), ("softshrink", {"lambd": 0.6}),
         ("logsigmoid", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.7}),
         ("rrelu", {"training": False}), ("glu", {"dim": -1}), ("softmin", {"dim": -1})]

INPLACE_MODULES = [
    ("LeakyReLU", (0.1,)), ("ReLU", ()), ("ELU", ()), ("SELU", ()), ("CELU", ()),
    ("SiLU", ()), ("Hardswish", ()), ("Hardsigmoid", ()), ("Hardtanh", ()), ("ReLU6", ()),
    ("Threshold", (0.1, 0.0)), ("Mish", ()), ("RReLU", ()),
]


@pytest.mark.parametrize("name,kw", FUNCS)
def test_functional_matches_torch(name, kw):
    torch = pytest.importorskip("torch")
    x = eager.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    y = getattr(F, name)(x, **kw)
    ty = getattr(torch.nn.functional, name)(tx, **kw)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-7, atol=1e-9)
    w = np.linspace(-1, 1, y.numel()).reshape(y.shape)
    (y * eager.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name,args", INPLACE_MODULES)
def test_inplace_module_backward_matches_torch(name, args):
    torch = pytest.importorskip("torch")
    m = getattr(nn, name)(*args, inplace=True).eval()
    tm = getattr(torch.nn, name)(*args, inplace=True).eval()
    x = eager.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    y = m(x * 2.0)
    ty = tm(tx * 2.0)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-7, atol=1e-9)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name,args", INPLACE_MODULES)
def test_inplace_module_backward_equals_out_of_place(name, args):
    m_in = getattr(nn, name)(*args, inplace=True).eval()
    m_out = getattr(nn, name)(*args).eval()
    x1 = eager.tensor(X, requires_grad=True)
    x2 = eager.tensor(X, requires_grad=True)
    h = x1 * 2.0
    y1 = m_in(h)
    assert y1 is h
    y2 = m_out(x2 * 2.0)
    (y1 * y1).sum().backward()
    (y2 * y2).sum().backward()
    np.testing.assert_array_equal(y1.detach().numpy(), y2.detach().numpy())
    np.testing.assert_array_equal(x1.grad.numpy(), x2.grad.numpy())


def test_inplace_on_leaf_requiring_grad_still_raises():
    x = eager.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        F.leaky_relu(x, 0.1, inplace=True)


def test_prelu_matches_torch():
    torch = pytest.importorskip("torch")
    xs = np.random.default_rng(0).standard_normal((2, 3, 4))
    m = nn.PReLU(3, init=0.1)
    tm = torch.nn.PReLU(3, init=0.1).double()
    m.weight.data = eager.tensor([0.1, 0.2, -0.3], dtype=eager.float64)
    with torch.no_grad():
        tm.weight.copy_(torch.tensor([0.1, 0.2, -0.3], dtype=torch.float64))
    x = eager.tensor(xs, requires_grad=True)
    tx = torch.tensor(xs, requires_grad=True)
    y, ty = m(x), tm(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(m.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("r", [2, 3])
def test_pixel_shuffle_matches_torch(r):
    torch = pytest.importorskip("torch")
    xs = np.random.default_rng(1).standard_normal((2, 2 * r * r, 3, 4))
    y = nn.PixelShuffle(r)(eager.tensor(xs))
    ty = torch.nn.PixelShuffle(r)(torch.tensor(xs))
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    z = nn.PixelUnshuffle(r)(y)
    tz = torch.nn.PixelUnshuffle(r)(ty)
    np.testing.assert_array_equal(z.numpy(), tz.numpy())
    np.testing.assert_array_equal(z.numpy(), xs)


@pytest.mark.parametrize("cls,shape", [("Dropout1d", (4, 6, 5)), ("Dropout2d", (4, 6, 3, 3)),
                                       ("Dropout3d", (2, 6, 2, 2, 2)), ("Dropout2d", (6, 3, 3))])
def test_channel_dropout_zeroes_whole_channels(cls, shape):
    import warnings
    eager.manual_seed(0)
    m = getattr(nn, cls)(p=0.5)
    x = eager.ones(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = m(x).numpy()
    nsp = {"Dropout1d": 1, "Dropout2d": 2, "Dropout3d": 3}[cls] if len(shape) > 3 or \
        cls == "Dropout1d" else 1
    flat = y.reshape(y.shape[:y.ndim - nsp] + (-1,))
    assert set(np.unique(flat)) <= {0.0, 2.0}
    assert (flat.min(-1) == flat.max(-1)).all()  # one value per channel
    assert 0 < (flat[..., 0] == 0).sum() < flat[..., 0].size
    m.eval()
    assert m(x) is x


def test_alpha_dropout_keeps_moments_and_matches_torch_formula():
    eager.manual_seed(0)
    x = eager.randn(200000, dtype=eager.float64)
    y = F.alpha_dropout(x, 0.3, training=True)
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1.0) < 0.02
    assert F.alpha_dropout(x, 0.3, training=False) is x


def test_conv_without_bias_takes_inplace_activation():
    for conv in [nn.Conv2d(2, 3, 3, bias=False), nn.ConvTranspose2d(2, 3, 3, bias=False),
                 nn.Conv1d(2, 3, 1, bias=False), nn.Conv2d(2, 3, 3)]:
        x = eager.randn(1, 2, 5, 5, requires_grad=True) if not isinstance(conv, nn.Conv1d) \
            else eager.randn(2, 5, requires_grad=True)
        y = conv(x)
        ref = F.relu(y.detach())
        out = nn.ReLU(inplace=True)(y)
        np.testing.assert_array_equal(out.detach().numpy(), ref.numpy())
        out.sum().backward()
        assert x.grad is not None and conv.weight.grad is not None


def test_conv_without_bias_inplace_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    w = rng.standard_normal((3, 2, 3, 3))
    xs = rng.standard_normal((2, 2, 5, 5))
    conv = nn.Conv2d(2, 3, 3, bias=False).double()
    conv.weight.data = eager.tensor(w)
    tconv = torch.nn.Conv2d(2, 3, 3, bias=False).double()
    with torch.no_grad():
        tconv.weight.copy_(torch.tensor(w))
    y = nn.LeakyReLU(0.1, inplace=True)(conv(eager.tensor(xs)))
    ty = torch.nn.LeakyReLU(0.1, inplace=True)(tconv(torch.tensor(xs)))
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(conv.weight.grad.numpy(), tconv.weight.grad.numpy(), rtol=1e-10)


def test_range_index_read_and_write():
    x = eager.zeros(3, 4)
    idx = eager.tensor([0, 2, 1])
    x[range(3), idx] = 1.0
    expect = np.zeros((3, 4), np.float32)
    expect[range(3), [0, 2, 1]] = 1.0
    np.testing.assert_array_equal(x.numpy(), expect)
    np.testing.assert_array_equal(x[range(3), idx].numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(x[range(1, 3)].numpy(), expect[1:3])
    np.testing.assert_array_equal(x[:, range(0, 4, 2)].numpy(), expect[:, 0:4:2])


def test_range_index_matches_torch():
    torch = pytest.importorskip("torch")
    x = eager.zeros(3, 4)
    tx = torch.zeros(3, 4)
    x[range(3), eager.tensor([3, 0, 1])] = 2.0
    tx[range(3), torch.tensor([3, 0, 1])] = 2.0
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    np.testing.assert_array_equal(x[range(2), range(1, 3)].numpy(),
                                  tx[range(2), range(1, 3)].numpy())
