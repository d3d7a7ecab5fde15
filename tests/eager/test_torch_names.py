"""Names PyTorch programs use (eager/compat.py, backends, accelerator, sparse COO, keyword
aliases, logging), compared with PyTorch where numbers are involved."""

import logging

import numpy as np
import pytest

import eager


def test_version_and_py_typed():
    import importlib.metadata
    import pathlib
    assert eager.__version__ == importlib.metadata.version("dyngraph")
    assert (pathlib.Path(eager.__file__).parent / "py.typed").exists()


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_finfo_matches_torch(name):
    torch = pytest.importorskip("torch")
    a, b = eager.finfo(getattr(eager, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(a, attr) == getattr(b, attr), attr


@pytest.mark.parametrize("name", ["int64", "int32", "int16", "int8", "uint8"])
def test_iinfo_matches_torch(name):
    torch = pytest.importorskip("torch")
    a, b = eager.iinfo(getattr(eager, name)), torch.iinfo(getattr(torch, name))
    assert (a.bits, a.min, a.max) == (b.bits, b.min, b.max)


def test_new_factories_match_torch():
    torch = pytest.importorskip("torch")
    x, tx = eager.ones(2, dtype=eager.float64), torch.ones(2, dtype=torch.float64)
    for call in (lambda t: t.new_zeros(2, 3), lambda t: t.new_ones((1, 2)),
                 lambda t: t.new_full((2,), 3.5), lambda t: t.new_tensor([1, 2]),
                 lambda t: t.new_empty(0), lambda t: t.new_zeros(2, dtype=t.dtype)):
        a, b = call(x), call(tx)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_device_predicates_and_legacy_types():
    x = eager.ones(2)
    for name in ("is_xpu", "is_mps", "is_meta", "is_quantized", "is_sparse", "is_mkldnn",
                 "is_nested"):
        assert getattr(x, name) is False
    assert not x.is_cuda and x.is_cpu
    assert eager.FloatTensor(2, 3).shape == (2, 3)
    assert eager.LongTensor([1, 2]).dtype == eager.int64
    assert isinstance(x, eager.FloatTensor) and not isinstance(x, eager.LongTensor)
    assert isinstance(eager.tensor([1]), eager.LongTensor)
    v = eager.autograd.Variable(x, requires_grad=True)
    assert v.requires_grad and v.is_leaf and isinstance(v, eager.autograd.Variable)


def test_flags_and_memory_formats():
    import eager.backends.cudnn as cudnn
    cudnn.benchmark = True
    cudnn.deterministic = True
    eager.backends.cuda.matmul.allow_tf32 = True
    assert eager.backends.mps.is_available() is False
    assert eager.accelerator.is_available() == eager.cuda.is_available()
    eager.set_float32_matmul_precision("high")
    assert eager.get_float32_matmul_precision() == "high"
    eager.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError):
        eager.set_float32_matmul_precision("fast")
    x = eager.randn(2, 3, 4, 5)
    for fmt in (eager.channels_last, eager.contiguous_format, eager.preserve_format):
        np.testing.assert_array_equal(x.contiguous(memory_format=fmt).numpy(), x.numpy())
        np.testing.assert_array_equal(x.to(memory_format=fmt).numpy(), x.numpy())
    assert eager.cuda.amp.autocast is not None and eager.cuda.amp.GradScaler is not None


def test_keyword_aliases_match_torch():
    torch = pytest.importorskip("torch")
    assert eager.empty(size=(2, 3)).shape == torch.empty(size=(2, 3)).shape
    assert eager.zeros(size=[4]).shape == torch.zeros(size=[4]).shape
    xs = np.arange(1.0, 7.0).reshape(2, 3)
    x, tx = eager.tensor(xs), torch.tensor(xs)
    np.testing.assert_array_equal(eager.cumprod(x, axis=1).numpy(),
                                  torch.cumprod(tx, axis=1).numpy())
    np.testing.assert_array_equal(x.cumprod(axis=0).numpy(), tx.cumprod(axis=0).numpy())
    for dims in ((0,), [1], (0, 1)):
        np.testing.assert_array_equal(x.flip(dims=dims).numpy(), tx.flip(dims=dims).numpy())
        np.testing.assert_array_equal(eager.flip(x, dims=dims).numpy(),
                                      torch.flip(tx, dims=dims).numpy())


def test_sparse_coo_dense_backed_matches_torch():
    torch = pytest.importorskip("torch")
    idx = [[0, 1, 1, 2], [2, 0, 2, 1]]
    vals = np.array([3.0, 4.0, 5.0, 6.0])
    feats = np.random.default_rng(0).standard_normal((3, 2))
    v = eager.tensor(vals, requires_grad=True)
    tv = torch.tensor(vals, requires_grad=True)
    a = eager.sparse_coo_tensor(eager.tensor(idx), v, (3, 3))
    ta = torch.sparse_coo_tensor(torch.tensor(idx), tv, (3, 3))
    np.testing.assert_array_equal(a.to_dense().detach().numpy(), ta.to_dense().detach().numpy())
    y = eager.sparse.mm(a, eager.tensor(feats))
    ty = torch.sparse.mm(ta, torch.tensor(feats))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(eager.spmm(a, eager.tensor(feats)).detach().numpy(),
                               torch.spmm(ta, torch.tensor(feats)).detach().numpy())
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy(), rtol=1e-12)
    d = eager.tensor([[0.0, 2.0], [3.0, 0.0]])
    td = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    np.testing.assert_array_equal(d.to_sparse().indices().numpy(), td.indices().numpy())
    np.testing.assert_array_equal(d.to_sparse().values().numpy(), td.values().numpy())


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_lu_matches_torch(shape):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal(shape)
    LU, piv = eager.tensor(a).lu()
    tLU, tpiv = torch.tensor(a).lu()
    np.testing.assert_allclose(LU.numpy(), tLU.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
    P, L, U = eager.lu_unpack(LU, piv)
    tP, tL, tU = torch.lu_unpack(tLU, tpiv)
    for x, y in ((P, tP), (L, tL), (U, tU)):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, rtol=1e-10, atol=1e-12)


def test_logging_prints_once_with_basic_config(capsys):
    import compiler.log as log
    root = logging.getLogger()
    h = logging.StreamHandler()
    root.addHandler(h)
    try:
        log.configure("guards")
        log.guards.info("hello-once")
    finally:
        log.configure("")
        root.removeHandler(h)
    err = capsys.readouterr().err
    assert err.count("hello-once") == 1
    assert any(isinstance(x, logging.NullHandler)
               for x in logging.getLogger("dyngraph").handlers)
