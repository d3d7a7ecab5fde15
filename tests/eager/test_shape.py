"""Shape ops: forward against NumPy/PyTorch, gradients by finite differences (float64),
views sharing storage and version counters, PyTorch's error messages."""

import re

import numpy as np
import pytest

import eager
from tests.helpers import gradcheck

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape)


def T(a, **kw):
    return eager.from_numpy(np.array(a)) if not kw else eager.tensor(np.array(a), **kw)


# -- gradients ------------------------------------------------------------------------------

UNARY = {
    "reshape": (lambda x: x.reshape(6, -1), [(2, 3, 4), (6, 1)]),
    "reshape-copy": (lambda x: x.transpose(0, 1).reshape(-1), [(2, 3), (3, 4, 2)]),
    "reshape-0d": (lambda x: x.reshape(()), [(1,), (1, 1)]),
    "view": (lambda x: x.view(-1), [(2, 3), (4,)]),
    "view_as": (lambda x: x.view_as(eager.zeros(x.numel(), 1)), [(2, 3)]),
    "flatten": (lambda x: x.flatten(), [(2, 3, 4), (5,)]),
    "flatten-mid": (lambda x: x.flatten(1, 2), [(2, 3, 4), (1, 2, 3, 2)]),
    "flatten-nc": (lambda x: x.permute(2, 0, 1).flatten(0, 1), [(2, 3, 4)]),
    "unflatten": (lambda x: x.unflatten(-1, (2, -1)), [(3, 4), (2, 6)]),
    "ravel": (lambda x: x.t().ravel(), [(2, 3)]),
    "squeeze": (lambda x: x.squeeze(), [(1, 3, 1), (2, 1)]),
    "squeeze-dim": (lambda x: x.squeeze(0), [(1, 3, 1), (2, 1)]),
    "squeeze-tuple": (lambda x: x.squeeze((0, -1)), [(1, 3, 1), (1, 2, 2)]),
    "unsqueeze": (lambda x: x.unsqueeze(-1).unsqueeze(0), [(2, 3), (4,)]),
    "permute": (lambda x: x.permute(2, 0, 1), [(2, 3, 4), (1, 2, 3)]),
    "transpose": (lambda x: x.transpose(0, -1), [(2, 3, 4), (3, 2)]),
    "t": (lambda x: x.t(), [(2, 3), (4,)]),
    "T": (lambda x: x.T, [(2, 3, 4)]),
    "movedim": (lambda x: x.movedim((0, 1), (2, 0)), [(2, 3, 4)]),
    "expand": (lambda x: x.expand(2, 3, 4), [(3, 1), (1, 4), (4,)]),
    "expand-neg": (lambda x: x.expand(5, -1, -1), [(3, 1)]),
    "broadcast_to": (lambda x: eager.broadcast_to(x, (2, 3)), [(1, 3)]),
    "repeat": (lambda x: x.repeat(2, 3), [(2, 3), (3,)]),
    "repeat-more": (lambda x: x.repeat(2, 1, 3), [(2, 3), (4,)]),
    "tile": (lambda x: x.tile((2,)), [(2, 3)]),
    "contiguous": (lambda x: x.t().contiguous(), [(2, 3)]),
    "clone": (lambda x: x.clone() * 2, [(2, 3), ()]),
    "flip": (lambda x: x.flip(0, -1), [(2, 3, 4), (5, 2)]),
    "fliplr": (lambda x: eager.fliplr(x), [(2, 3)]),
    "flipud": (lambda x: eager.flipud(x), [(2, 3)]),
    "roll": (lambda x: x.roll((1, -2), (0, 1)), [(3, 4), (2, 5, 2)]),
    "roll-flat": (lambda x: x.roll(4), [(3, 4)]),
    "roll-same-dim": (lambda x: x.roll((1, 2), (0, 0)), [(5, 2)]),
    "narrow": (lambda x: x.narrow(-1, 1, 2), [(2, 4), (4,)]),
    "select": (lambda x: x.select(1, -1), [(2, 3, 4)]),
    "chunk": (lambda x: eager.cat([c * (i + 1) for i, c in enumerate(x.chunk(3, 1))], 1),
              [(2, 5), (1, 6, 2)]),
    "split-int": (lambda x: x.split(2)[-1], [(5, 2), (4,)]),
    "split-list": (lambda x: eager.stack([c.sum(0) for c in x.split([1, 3], 0)]), [(4, 3)]),
    "unbind": (lambda x: eager.stack(x.unbind(1)[::-1], -1), [(2, 3, 4), (3, 3)]),
    "cat-self": (lambda x: eager.cat([x, x * 2, x], -1), [(2, 3), (3,)]),
    "stack-self": (lambda x: eager.stack([x, x * 3], 1), [(2, 3), (4,)]),
    "stack-0d": (lambda x: eager.stack([x, x * 3]), [()]),
    "hstack": (lambda x: eager.hstack([x, x]), [(2, 3), (3,)]),
    "vstack": (lambda x: eager.vstack([x, x]), [(2, 3), (3,)]),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_gradcheck_unary(name):
    fn, shapes = UNARY[name]
    for shape in shapes:
        gradcheck(fn, arr(*shape))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gradcheck_cat_stack(dim):
    a, b, c = arr(2, 3), arr(2, 3), arr(2, 3)
    gradcheck(lambda x, y, z: eager.cat([x, y, z], dim=dim if dim != 1 else 1), a, b, c)
    gradcheck(lambda x, y: eager.stack([x, y], dim=dim), a, b)
    # uneven sizes along the cat dim
    gradcheck(lambda x, y: eager.cat([x, y], 1), arr(2, 1), arr(2, 4))


def test_double_backward_through_shape_ops():
    x = eager.tensor(arr(2, 3, 4), requires_grad=True)
    y = eager.cat([x.repeat(1, 2, 1), x.flip(0)], 1).roll(1, 2).permute(2, 0, 1)
    (g,) = eager.autograd.grad((y * y).sum(), (x,), create_graph=True)
    (gg,) = eager.autograd.grad((g * g).sum(), (x,))
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    ty = torch.cat([tx.repeat(1, 2, 1), tx.flip(0)], 1).roll(1, 2).permute(2, 0, 1)
    (tg,) = torch.autograd.grad((ty * ty).sum(), (tx,), create_graph=True)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), (tx,))
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-12)


# -- forward against NumPy ------------------------------------------------------------------

def test_forward_values():
    a = arr(2, 3, 4)
    x = T(a)
    np.testing.assert_array_equal(x.reshape(4, 6).numpy(), a.reshape(4, 6))
    np.testing.assert_array_equal(x.flatten(1).numpy(), a.reshape(2, 12))
    np.testing.assert_array_equal(x.permute(1, 2, 0).numpy(), a.transpose(1, 2, 0))
    np.testing.assert_array_equal(x.repeat(2, 1, 1, 3).numpy(), np.tile(a, (2, 1, 1, 3)))
    np.testing.assert_array_equal(x.flip(1).numpy(), a[:, ::-1])
    np.testing.assert_array_equal(x.roll(1, 2).numpy(), np.roll(a, 1, 2))
    np.testing.assert_array_equal(x.roll(-3).numpy(), np.roll(a, -3))
    np.testing.assert_array_equal(eager.cat([x, x], 2).numpy(), np.concatenate([a, a], 2))
    np.testing.assert_array_equal(eager.stack([x, x], 3).numpy(), np.stack([a, a], 3))
    np.testing.assert_array_equal(x.narrow(2, 1, 2).numpy(), a[:, :, 1:3])
    np.testing.assert_array_equal(x.select(1, -1).numpy(), a[:, -1])
    np.testing.assert_array_equal(x.movedim(0, -1).numpy(), np.moveaxis(a, 0, -1))
    assert [p.shape[0] for p in T(np.zeros(5)).chunk(3)] == [2, 2, 1]
    assert [p.shape[0] for p in T(np.zeros(6)).chunk(4)] == [2, 2, 2]
    assert [p.shape[0] for p in T(np.zeros(0)).chunk(4)] == [0, 0, 0, 0]
    assert [p.shape[0] for p in T(np.zeros(0)).split(2)] == [0]
    assert [p.shape[1] for p in x.split([1, 0, 2], 1)] == [1, 0, 2]
    assert x.squeeze().shape == (2, 3, 4) and T(np.zeros((1, 3, 1))).squeeze().shape == (3,)
    assert T(np.zeros((2, 1, 3))).squeeze((0, 1)).shape == (2, 3)
    assert eager.zeros(2, 3).squeeze(0).shape == (2, 3)
    assert T(np.float64(2.0)).unsqueeze(-1).shape == (1,)
    assert T(np.float64(2.0)).flatten().shape == (1,)
    assert x.flatten(1, 1) is x  # as PyTorch: start == end is the identity
    assert eager.cat([T(np.zeros((2, 3))), T(np.zeros(0))]).shape == (2, 3)  # legacy skip
    assert eager.cat([T(np.zeros(2, np.int64)), T(np.zeros(2, np.float32))]).dtype == eager.float32
    assert T(np.zeros((2, 4), np.float32)).view(eager.int32).dtype == eager.int32
    assert T(np.zeros((2, 4), np.float32)).view(eager.float64).shape == (2, 2)


def test_broadcast_helpers():
    a, b = eager.broadcast_tensors(eager.zeros(2, 1), eager.zeros(3))
    assert a.shape == b.shape == (2, 3)
    assert eager.broadcast_shapes((2, 1), (3,)) == (2, 3)


def test_contiguous_and_clone():
    x = T(arr(2, 3))
    assert x.contiguous() is x
    y = x.t()
    assert not y.is_contiguous()
    c = y.contiguous()
    assert c.is_contiguous() and c._base is None
    np.testing.assert_array_equal(c.numpy(), y.numpy())
    k = x.clone()
    assert k._base is None and not np.shares_memory(k.numpy(), x.numpy())
    k.add_(1)
    assert not np.array_equal(k.numpy(), x.numpy())


# -- views ----------------------------------------------------------------------------------

def _root(t):
    return t if t._base is None else t._base


VIEWS = {
    "view": lambda x: x.view(4, 6),
    "reshape": lambda x: x.reshape(-1),
    "flatten": lambda x: x.flatten(0, 1),
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "permute": lambda x: x.permute(2, 0, 1),
    "transpose": lambda x: x.transpose(0, 1),
    "t-of-2d": lambda x: x[0].t(),
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "squeeze": lambda x: x[:1].squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(2, 3),
    "chunk": lambda x: x.chunk(2, 2)[1],
    "split": lambda x: x.split([1, 2], 1)[1],
    "unbind": lambda x: x.unbind(0)[1],
    "movedim": lambda x: x.movedim(0, 2),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views_share_storage_and_version(name):
    base = T(np.arange(24.0).reshape(2, 3, 4))
    v = VIEWS[name](base)
    assert np.shares_memory(v.numpy(), base.numpy())
    assert _root(v) is base and v._version is base._version
    before = v.numpy().copy()
    base.add_(1.0)                          # base modified: the view sees it
    np.testing.assert_array_equal(v.numpy(), before + 1)
    if name != "expand":                    # in place on the view bumps the base's version
        ver = base._version_value
        v.mul_(2.0)
        assert base._version_value == ver + 1
        assert v._version_value == base._version_value


def test_reshape_copy_is_not_a_view():
    base = T(np.arange(6.0).reshape(2, 3))
    c = base.t().reshape(-1)                # strides do not allow a view: a copy
    assert c._base is None and c._version is not base._version
    assert not np.shares_memory(c.numpy(), base.numpy())
    c.add_(1.0)
    assert base._version_value == 0
    np.testing.assert_array_equal(base.numpy(), np.arange(6.0).reshape(2, 3))
    # a copy of a tensor that requires grad can be modified in place
    w = eager.tensor(arr(2, 3), requires_grad=True)
    y = w.t().reshape(-1)
    y.add_(2.0)
    (y * y).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * (w.detach().numpy() + 2))


def test_copies_are_not_views():
    base = T(np.arange(6.0).reshape(2, 3))
    for out in (base.flip(0), base.roll(1), base.repeat(2, 1), base.clone(),
                eager.cat([base, base]), eager.stack([base])):
        assert out._base is None and not np.shares_memory(out.numpy(), base.numpy())


def test_view_of_saved_tensor_invalidates_backward():
    w = eager.tensor(arr(2, 3), requires_grad=True)
    a = w * 1.0
    s = a.sigmoid()                         # saves its output
    with eager.no_grad():
        s.view(-1).mul_(2.0)                # in place through a view: bumps s's version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


# -- errors ---------------------------------------------------------------------------------

def Z(*s):
    return eager.zeros(*s)


ERRORS = [
    (lambda: eager.cat([Z(2, 3), Z(2, 4)]), RuntimeError,
     ("Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
     "tensor number 1 in the list.")),
    (lambda: eager.cat([Z(2, 3), Z(2, 3, 1)]), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 3"),
    (lambda: eager.cat([]), ValueError, "expected a non-empty list of Tensors"),
    (lambda: eager.cat([Z(2, 3)], dim=2), IndexError,
     r"out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda: eager.cat([Z(1).reshape(()), Z(1).reshape(())]), RuntimeError,
     r"zero-dimensional tensor \(at position 0\) cannot be concatenated"),
    (lambda: eager.cat(Z(2, 3)), TypeError, "must be tuple of Tensors, not Tensor"),
    (lambda: eager.stack([Z(2, 3), Z(2, 4)]), RuntimeError,
     (r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[2, 4\] "
     "at entry 1")),
    (lambda: eager.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda: Z(2, 3).chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda: Z(2, 3).split(0), RuntimeError,
     "split_size can only be 0 if dimension size is 0, but got dimension size of 2"),
    (lambda: Z(5).split([2, 2]), RuntimeError,
     (r"split_with_sizes expects split_sizes to sum exactly to 5 \(input tensor's size at "
     r"dimension 0\), but got split_sizes=\[2, 2\]")),
    (lambda: Z(5).narrow(0, 3, 3), RuntimeError,
     r"start \(3\) \+ length \(3\) exceeds dimension size \(5\)."),
    (lambda: Z(5).narrow(0, 6, 0), IndexError,
     r"start out of range \(expected to be in range of \[-5, 5\], but got 6\)"),
    (lambda: Z(5).narrow(0, 0, -1), RuntimeError, "narrow\\(\\): length must be non-negative."),
    (lambda: Z(2, 3).select(1, 5), IndexError,
     r"select\(\): index 5 out of range for tensor of size \[2, 3\] at dimension 1"),
    (lambda: Z(2, 3).squeeze(5), IndexError, r"expected to be in range of \[-2, 1\], but got 5"),
    (lambda: Z(2, 3).unsqueeze(3), IndexError, r"expected to be in range of \[-3, 2\], but got 3"),
    (lambda: Z(2, 3).repeat(2), RuntimeError,
     ("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
     "tensor")),
    (lambda: Z(2, 3).repeat(-1, 2), RuntimeError,
     r"Trying to create tensor with negative dimension -2: \[-2, 6\]"),
    (lambda: Z(2, 3).flatten(1, 0), RuntimeError,
     "flatten\\(\\) has invalid args: start_dim cannot come after end_dim"),
    (lambda: Z(2, 12).unflatten(1, (3, 5)), RuntimeError,
     (r"unflatten: Provided sizes \[3, 5\] don't multiply up to the size of dim 1 \(12\) in the "
     "input tensor")),
    (lambda: Z(2, 12).unflatten(1, ()), RuntimeError, "unflatten: sizes must be non-empty"),
    (lambda: Z(2, 3).flip(0, 0), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: Z(2, 3).roll((1, 2), (0,)), RuntimeError,
     "shifts and dimensions must align. shifts: 2, dims:1"),
    (lambda: Z(2, 3).t().view(6), RuntimeError,
     "view size is not compatible with input tensor's size and stride"),
    (lambda: Z(2, 3).view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda: Z(2, 3).reshape(4), RuntimeError, r"shape '\[4\]' is invalid for input of size 6"),
    (lambda: Z(2, 3).view(eager.float64), RuntimeError,
     r"self.size\(-1\) must be divisible by 2 to view"),
    # PyTorch's: no offset or stride that is a fraction of the larger element (NumPy allows)
    (lambda: Z(2, 4)[:, 1:3].view(eager.float64), RuntimeError,
     r"self.storage_offset\(\) must be divisible by 2 to view float32 as float64 "
     r"\(different element sizes\), but got 1"),
    (lambda: Z(2, 5)[:, :2].view(eager.float64), RuntimeError,
     r"self.stride\(0\) must be divisible by 2 to view float32 as float64 "
     r"\(different element sizes\), but got 5"),
    (lambda: Z(2, 3).expand(3, 3), RuntimeError,
     (r"The expanded size of the tensor \(3\) must match the existing size \(2\) at "
     "non-singleton dimension 0")),
    (lambda: Z(2, 3).permute(0, 0), RuntimeError, "duplicate dims are not allowed"),
    (lambda: Z(2, 3).permute(0), RuntimeError, "is not equal to len\\(dims\\) = 1"),
    (lambda: Z(2, 3, 4).t(), RuntimeError, ("t\\(\\) expects a tensor with <= 2 dimensions, but "
     "self is 3D")),
    (lambda: eager.fliplr(Z(3)), RuntimeError, "Input must be >= 2-d."),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, msg = ERRORS[i]
    with pytest.raises(exc, match=msg):
        fn()


def test_error_messages_match_torch():
    torch = pytest.importorskip("torch")

    def msg(lib, f):
        try:
            f(lib)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).splitlines()[0]
        return None

    same = [
        lambda M: M.cat([M.zeros(2, 3), M.zeros(2, 4)]),
        lambda M: M.stack([M.zeros(2, 3), M.zeros(2, 4)]),
        lambda M: M.zeros(2, 3).chunk(0),
        lambda M: M.zeros(5).split([2, 2]),
        lambda M: M.zeros(5).narrow(0, 3, 3),
        lambda M: M.zeros(2, 3).repeat(-1, 2),
        lambda M: M.zeros(2, 12).unflatten(1, (3, 5)),
        lambda M: M.zeros(2, 3).expand(3, 3),
        lambda M: M.zeros(2, 3).permute(0, 0),
        lambda M: M.zeros(2, 3).select(1, 5),
    ]
    for f in same:
        assert msg(eager, f) == msg(torch, f)


# -- against PyTorch: forward and gradient --------------------------------------------------

TORCH_CASES = [
    lambda M, x: x.reshape(3, 8).t().reshape(4, 6),
    lambda M, x: x.flatten(1).unflatten(1, (3, 4)).squeeze().unsqueeze(1),
    lambda M, x: M.cat(list(x.chunk(3, 2)), 2) * M.cat(list(x.split([1, 1], 0)[::-1]), 0),
    lambda M, x: M.stack(x.unbind(2), 1).repeat(1, 2, 1, 2),
    lambda M, x: x.flip(0, 2).roll((1, 3), (1, 2)).narrow(2, 1, 3),
    lambda M, x: x.expand(3, 2, 3, 4).movedim(0, 3).contiguous(),
    lambda M, x: M.hstack([x[0], x[1]]) * M.vstack([x[0, 0], x[1, 1], x[0, 2]]).repeat(1, 2),
    lambda M, x: x.tile((2, 1)).select(0, -1).transpose(0, 1),
]


@pytest.mark.parametrize("i", range(len(TORCH_CASES)))
def test_against_torch(i):
    torch = pytest.importorskip("torch")
    f = TORCH_CASES[i]
    a = arr(2, 3, 4)
    x = eager.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    y, ty = f(eager, x), f(torch, tx)
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    w = RNG.standard_normal(tuple(ty.shape))
    (y * eager.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_grad_fn_names_and_params_are_canonical():
    x = eager.tensor(arr(2, 3), requires_grad=True)
    ys = [x[0], x[:, 1:], x.narrow(1, 0, 2), x.chunk(3, 1)[2], x.unbind(1)[0],
          x.squeeze(), x.unsqueeze(0), x.roll(-1, 1), x.flip(1, 0)]
    for y in ys:
        params = y.grad_fn.params
        hash(tuple(sorted(params.items())))  # params are hashable
    assert x.narrow(1, 0, 2).grad_fn.params == x[:, 0:2].grad_fn.params == x[:, :2].grad_fn.params
    assert x[:, ::2].grad_fn.params == x[:, 0:3:2].grad_fn.params
    assert x.roll(-1, 1).grad_fn.params == x.roll(2, -1).grad_fn.params
    assert re.match(r"\w+Backward0", x.reshape(-1).grad_fn.name())


def test_rot90():
    a = np.arange(24.0).reshape(2, 3, 4)
    for k in range(-3, 6):
        for dims in [(0, 1), (1, 2), (2, 0), (-1, 1)]:
            got = eager.rot90(eager.tensor(a), k, dims)
            np.testing.assert_array_equal(got.numpy(), np.rot90(a, k, dims))
    assert gradcheck(lambda x: eager.rot90(x, 1, (0, 2)), a)
    assert gradcheck(lambda x: eager.tensor(1.0) * x.rot90(3), a)
    with pytest.raises(RuntimeError, match="expected total rotation dims == 2, but got dims = 3"):
        eager.rot90(eager.ones(2, 2, 2), 1, (0, 1, 2))
    with pytest.raises(RuntimeError, match="expected total dims >= 2, but got total dims = 1"):
        eager.rot90(eager.ones(2), 1, (0, 1))
    with pytest.raises(RuntimeError, match="expected rotation dims to be different, but got dim0 "
                                           "= 1 and dim1 = -1"):
        eager.rot90(eager.ones(2, 2), 1, (1, -1))
