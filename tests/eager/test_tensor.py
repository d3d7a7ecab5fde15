"""The Tensor object: construction (tensor/from_numpy), reads (numpy/item/tolist),
metadata (shape/size/numel/T), dtype conversions and .to(), repr in PyTorch's format."""

import copy
import pickle

import numpy as np
import pytest

import eager

try:
    import torch as _torch
except ImportError:  # pragma: no cover
    _torch = None


# -- tensor() ---------------------------------------------------------------------------------

@pytest.mark.parametrize("data,dtype", [
    ([1.0, 2.0], eager.float32),
    ([1, 2], eager.int64),
    ([True, False], eager.bool),
    ([[1, 2.5], [3, 4]], eager.float32),     # any float makes the default float dtype
    ([True, 2], eager.int64),
    ([], eager.float32),
    (np.array([1.0, 2.0]), eager.float64),    # a NumPy array keeps its dtype
    (np.array([1, 2], dtype=np.int32), eager.int32),
    (np.array([1, 2], dtype=np.uint8), eager.uint8),
])
def test_tensor_dtype_inference(data, dtype):
    t = eager.tensor(data)
    assert t.dtype == dtype
    if _torch is not None:
        assert str(_torch.tensor(data).dtype) == str(dtype).replace("eager.", "torch.")


def test_tensor_explicit_dtype_and_requires_grad():
    t = eager.tensor([1, 2], dtype=eager.float64, requires_grad=True)
    assert t.dtype == eager.float64 and t.requires_grad and t.is_leaf and t.grad is None
    assert eager.tensor([1.7], dtype=eager.int64).tolist() == [1]
    assert eager.tensor([1.0], dtype="float64").dtype == eager.float64
    assert eager.tensor([1], dtype=float).dtype == eager.float32


def test_tensor_copies_its_input():
    a = np.array([1.0, 2.0])
    t = eager.tensor(a)
    a[0] = 100.0
    assert t.tolist() == [1.0, 2.0]
    u = eager.tensor(t)
    t.add_(1.0)
    assert u.tolist() == [1.0, 2.0]


def test_tensor_nested_shapes():
    assert eager.tensor([[1, 2, 3], [4, 5, 6]]).shape == (2, 3)
    assert eager.tensor([[]]).shape == (1, 0)
    assert eager.tensor([]).shape == (0,)
    with pytest.raises((ValueError, TypeError)):
        eager.tensor([[1, 2], [3]])


def test_tensor_of_python_scalar_is_zero_dim():
    for v, dt in ((3.5, eager.float32), (3, eager.int64), (True, eager.bool)):
        t = eager.tensor(v)
        assert t.shape == () and t.ndim == 0 and t.dtype == dt
        assert t.item() == v


def test_tensor_of_zero_dim_array_is_zero_dim():
    assert eager.tensor(np.array(2.0)).shape == ()


def test_tensor_rejects_unsupported_dtypes():
    with pytest.raises(TypeError, match="unsupported dtype"):
        eager.tensor(np.array([1 + 2j]))
    with pytest.raises(TypeError, match="could not infer dtype"):
        eager.tensor(["a"])
    with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
        eager.tensor([1, 2], requires_grad=True)


def test_tensor_device_argument():
    assert eager.tensor([1.0], device="cpu").device == "cpu"
    with pytest.raises(RuntimeError, match="cpu"):
        eager.tensor([1.0], device="cuda")


# -- from_numpy / numpy() ----------------------------------------------------------------------

def test_from_numpy_shares_memory_both_ways():
    a = np.array([1.0, 2.0, 3.0])
    t = eager.from_numpy(a)
    assert t.dtype == eager.float64
    a[0] = 10.0
    assert t.tolist()[0] == 10.0
    t.mul_(2.0)
    assert a.tolist() == [20.0, 4.0, 6.0]
    assert t.numpy() is a or np.shares_memory(t.numpy(), a)


def test_from_numpy_keeps_zero_dim_and_dtype():
    t = eager.from_numpy(np.array(5, dtype=np.int32))
    assert t.shape == () and t.dtype == eager.int32 and t.item() == 5


def test_from_numpy_errors():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        eager.from_numpy([1, 2])
    with pytest.raises(TypeError, match="unsupported dtype"):
        eager.from_numpy(np.array(["a"]))


def test_numpy_shares_memory_and_refuses_grad_tensors():
    t = eager.tensor([1.0, 2.0])
    n = t.numpy()
    n[1] = 7.0
    assert t.tolist() == [1.0, 7.0]
    g = eager.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        g.numpy()
    assert g.detach().numpy().tolist() == [1.0]
    assert g.numpy(force=True).tolist() == [1.0]
    assert np.asarray(t).tolist() == [1.0, 7.0]


# -- item / tolist / Python conversions --------------------------------------------------------

def test_item_types_and_errors():
    assert type(eager.tensor([1.5]).item()) is float
    assert type(eager.tensor([[3]]).item()) is int
    assert type(eager.tensor([True]).item()) is bool
    assert eager.ones(2).sum().item() == 2.0
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to "
                                           "Scalar"):
        eager.ones(2).item()
    x = eager.tensor([2.0], requires_grad=True)
    assert (x * 3).item() == 6.0     # item() works on tensors requiring grad


def test_tolist():
    assert eager.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert eager.ones(2, 0).tolist() == [[], []]
    assert eager.ones(3).sum().tolist() == 3.0
    assert type(eager.tensor([1.5]).tolist()[0]) is float


def test_python_scalar_conversions():
    assert float(eager.tensor([2.5])) == 2.5
    assert int(eager.tensor([3.7])) == 3
    assert bool(eager.tensor([0.0])) is False
    assert [10, 20][eager.tensor([1]).sum()] == 20
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with .* ambiguous"):
        bool(eager.ones(2))
    with pytest.raises((RuntimeError, ValueError), match="only one element tensors can be "
                                                         "converted to Python scalars"):
        float(eager.ones(2))
    with pytest.raises(TypeError):
        [1, 2][eager.tensor([1.0])]
    assert f"{eager.tensor([1.23456]).sum():.2f}" == "1.23"


# -- metadata ----------------------------------------------------------------------------------

def test_shape_size_numel_dim():
    t = eager.ones(2, 3, 4)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
    assert isinstance(t.shape, eager.Size) and repr(t.shape) == "eager.Size([2, 3, 4])"
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.numel() == 24 and t.nelement() == 24 and t.shape.numel() == 24
    assert t.dim() == 3 and t.ndim == 3 and len(t) == 2
    with pytest.raises(IndexError, match=r"(?i)dimension out of range \(expected to be in range "
                                         r"of \[-3, 2\], but got 3\)"):
        t.size(3)
    s = eager.ones(3).sum()
    assert s.shape == () and s.dim() == 0 and s.numel() == 1
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(s)


def test_misc_metadata():
    t = eager.ones(2, 3)
    assert t.device == eager.device("cpu") and str(t.device) == "cpu"
    assert t.is_floating_point() and not eager.ones(2, dtype=eager.int32).is_floating_point()
    assert t.element_size() == 4 and eager.ones(1, dtype=eager.float64).element_size() == 8
    assert t.stride() == (3, 1) and t.stride(0) == 3
    assert t.is_contiguous() and not t.T.is_contiguous()
    assert eager.is_tensor(t) and not eager.is_tensor(np.ones(2))


def test_T_reverses_dimensions_and_is_a_view():
    a = np.arange(6.0).reshape(2, 3)
    t = eager.from_numpy(a)
    assert t.T.shape == (3, 2)
    assert t.T.tolist() == a.T.tolist()
    t.T.add_(1.0)                     # shares storage with t (and a)
    assert a[0, 0] == 1.0 and t.tolist() == a.tolist()
    assert eager.ones(2, 3, 4).T.shape == (4, 3, 2)
    assert eager.ones(3).T.shape == (3,)
    x = eager.tensor(a, requires_grad=True)
    (x.T * eager.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
    assert x.grad.tolist() == np.arange(6.0).reshape(3, 2).T.tolist()


def test_iteration_yields_rows():
    rows = list(eager.tensor([[1, 2], [3, 4]]))
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(eager.ones(2).sum())


# -- dtype conversions and .to() -----------------------------------------------------------------

@pytest.mark.parametrize("method,dtype", [("float", eager.float32), ("double", eager.float64),
                                          ("half", eager.float16), ("long", eager.int64),
                                          ("int", eager.int32), ("bool", eager.bool)])
def test_conversion_methods(method, dtype):
    t = eager.tensor([1.7, -1.7, 0.0])
    out = getattr(t, method)()
    assert out.dtype == dtype
    if _torch is not None:
        expected = getattr(_torch.tensor([1.7, -1.7, 0.0]), method)().tolist()
        assert out.tolist() == expected
    assert t.dtype == eager.float32   # out of place


def test_float_to_int_truncates_toward_zero():
    assert eager.tensor([1.7, -1.7, 2.5]).long().tolist() == [1, -1, 2]


def test_to_variants():
    t = eager.tensor([1, 2])
    assert t.to(eager.float64).dtype == eager.float64
    assert t.to(dtype=eager.float32).dtype == eager.float32
    assert t.to("cpu") is t
    assert t.to("cpu", eager.float16).dtype == eager.float16
    assert t.to(eager.ones(2, dtype=eager.float64)).dtype == eager.float64
    assert t.to(device="cpu", dtype=eager.float32).dtype == eager.float32
    assert t.to(eager.int64) is t                       # no change: same tensor, as PyTorch
    c = t.to(eager.int64, copy=True)
    assert c is not t and c.tolist() == t.tolist()
    with pytest.raises(RuntimeError):
        t.to("cuda")
    assert t.type(eager.float32).dtype == eager.float32
    assert t.type_as(eager.ones(1, dtype=eager.float64)).dtype == eager.float64
    assert t.cpu() is t


@pytest.mark.regression("methods.py: Tensor.type() returns 'eager.int64', "
                   "PyTorch returns the legacy name 'torch.LongTensor'")
def test_legacy_type_string():
    assert eager.tensor([1, 2]).type() == "eager.LongTensor"
    assert eager.tensor([1.0]).type() == "eager.FloatTensor"
    assert eager.tensor([1.0]).double().type() == "eager.DoubleTensor"


def test_conversion_is_differentiable():
    x = eager.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.grad_fn is not None
    (y * y).sum().backward()
    assert x.grad.dtype == eager.float32 and x.grad.tolist() == [2.0, 4.0]
    assert x.float() is x                 # same dtype: no new node


# -- copying -------------------------------------------------------------------------------------

def test_clone_deepcopy_pickle():
    x = eager.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn is not None and c.data_ptr() != x.data_ptr()
    d = copy.deepcopy(x)
    assert d.requires_grad and d.is_leaf and d.tolist() == [1.0, 2.0]
    assert d.data_ptr() != x.data_ptr()
    p = pickle.loads(pickle.dumps(x))
    assert p.requires_grad and p.tolist() == [1.0, 2.0] and p.dtype == eager.float32
    with pytest.raises(RuntimeError, match="deepcopy"):
        copy.deepcopy(x * 2)


# -- repr ------------------------------------------------------------------------------------------

def _mk(lib, spec):
    kind, data, kw = spec
    if kind == "tensor":
        kw = {k: (getattr(lib, v) if k == "dtype" else v) for k, v in kw.items()}
        return lib.tensor(data, **kw)
    if kind == "mul2":
        return lib.tensor(data, requires_grad=True) * 2
    if kind == "exp64":
        return lib.tensor(data, dtype=lib.float64, requires_grad=True).exp()
    if kind == "arange":
        return lib.arange(data, dtype=lib.float32)
    if kind == "sum":
        return lib.tensor(data).sum()
    raise AssertionError(kind)


_PRINTING_ALIGN = "printing: elements are not right-aligned to a common width as PyTorch does"

REPRS = [
    (("tensor", [1.0, 2.0], {}), "tensor([1., 2.])"),
    (("tensor", [[1.0, 2.0], [3.0, 4.0]], {}), "tensor([[1., 2.],\n        [3., 4.]])"),
    (("tensor", [0.5, 2.25], {}), "tensor([0.5000, 2.2500])"),
    (("tensor", [1, 2, 3], {}), "tensor([1, 2, 3])"),
    (("tensor", [1, 2], {"dtype": "int32"}), "tensor([1, 2], dtype=eager.int32)"),
    (("tensor", [1.0, 2.0], {"dtype": "float64"}), "tensor([1., 2.], dtype=eager.float64)"),
    (("tensor", [1.0, 2.0], {"requires_grad": True}), "tensor([1., 2.], requires_grad=True)"),
    (("mul2", [1.0, 2.0], {}), "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    (("exp64", [1.5, 2.0], {}),
     "tensor([4.4817, 7.3891], dtype=eager.float64, grad_fn=<ExpBackward0>)"),
    (("tensor", [1e-5, 1.0], {}), "tensor([1.0000e-05, 1.0000e+00])"),
    (("tensor", [float("nan"), float("inf"), 1.0], {}), "tensor([nan, inf, 1.])"),
    (("tensor", [], {}), "tensor([])"),
    (("sum", [1.0, 2.0], {}), "tensor(3.)"),
    (("tensor", [1, 2], {"dtype": "uint8"}), "tensor([1, 2], dtype=eager.uint8)"),
    pytest.param(("tensor", [1.0, 2.5, -3.0], {}), "tensor([ 1.0000,  2.5000, -3.0000])",
                 marks=pytest.mark.regression(_PRINTING_ALIGN)),
    pytest.param(("tensor", [True, False], {}), "tensor([ True, False])",
                 marks=pytest.mark.regression(_PRINTING_ALIGN)),
    (("tensor", [-1, 10], {}), "tensor([-1, 10])"),
    (("tensor", [1, -10], {}), "tensor([  1, -10])"),
    pytest.param(("tensor", [0.1, 123.456], {}), "tensor([1.0000e-01, 1.2346e+02])",
                 marks=pytest.mark.regression("printing: PyTorch switches to "
                                         "scientific notation when max/min > 1000")),
    pytest.param(("arange", 20, {}),
                 "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,"
                 "\n        14., 15., 16., 17., 18., 19.])",
                 marks=pytest.mark.regression(_PRINTING_ALIGN)),
    (("tensor", 3.5, {}), "tensor(3.5000)"),
    (("tensor", 3, {}), "tensor(3)"),
]


@pytest.mark.parametrize("spec,expected", REPRS)
def test_repr_format(spec, expected):
    assert repr(_mk(eager, spec)) == expected
    if _torch is not None:
        assert repr(_mk(_torch, spec)).replace("torch.", "eager.") == expected


def test_str_is_repr():
    t = eager.tensor([1.0, 2.0])
    assert str(t) == repr(t)


@pytest.mark.regression("Tensor([1.0]) gave float64, PyTorch float32")
def test_legacy_tensor_constructor_uses_the_default_dtype():
    assert eager.Tensor([1.0]).dtype == eager.float32
    assert eager.Tensor([1, 2]).dtype == eager.float32
    assert eager.Tensor(np.array([1.0, 2.0])).dtype == eager.float32
    assert eager.Tensor(2, 3).shape == (2, 3) and eager.Tensor(2, 3).dtype == eager.float32
    assert eager.Tensor(eager.Size([4])).shape == (4,)
    assert eager.Tensor().shape == (0,)
    a = eager.tensor([1, 2])
    alias = eager.Tensor(a)
    assert alias.dtype == eager.int64 and alias._data is a._data
    with pytest.raises(TypeError, match="data must be a sequence"):
        eager.Tensor(2.0)
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        eager.Tensor("a")
    with pytest.raises(RuntimeError, match="negative dimension"):
        eager.Tensor(2, -1)


def test_legacy_tensor_constructor_matches_torch():
    torch = pytest.importorskip("torch")
    for args in (([1.0, 2.5],), ([1, 2],), ([[True, False]],), (3, 2)):
        ours, theirs = eager.Tensor(*args), torch.Tensor(*args)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert tuple(ours.shape) == tuple(theirs.shape)
        if not all(type(a) is int for a in args):
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.regression("tensor(np.float64(x)) gave float32; PyTorch keeps NumPy scalars' dtype")
def test_tensor_keeps_numpy_scalar_dtypes():
    assert eager.tensor(np.float64(1.5)).dtype == eager.float64
    assert eager.tensor(np.int32(3)).dtype == eager.int32
    assert eager.tensor([np.float64(1.0), 2.0]).dtype == eager.float64
    assert eager.tensor([np.int8(1), 2.0]).dtype == eager.float32
    assert eager.tensor([1, np.int32(2)]).dtype == eager.int64
    assert eager.tensor([eager.tensor(1.0, dtype=eager.float64)]).dtype == eager.float64


def test_tensor_dtype_inference_matches_torch():
    torch = pytest.importorskip("torch")
    cases = [np.float64(1.5), np.float32(1.5), np.int32(3), [np.float64(1.0)], [1.0, 2],
             [1, np.int32(2)], [True, False], [], 3, 2.5, [np.int8(1), 2.0], [[1, 2], [3, 4]]]
    for d in cases:
        assert str(eager.tensor(d).dtype).split(".")[-1] == \
            str(torch.tensor(d).dtype).split(".")[-1], d
