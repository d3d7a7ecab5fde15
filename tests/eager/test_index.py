"""Indexing: __getitem__/__setitem__ against NumPy and PyTorch (property tests), views,
gradients (finite differences in float64, repeated indices accumulate), setitem autograd,
gather/scatter/index_select/masked_fill/take_along_dim/nonzero/masked_select, errors."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
import eager
from tests.helpers import gradcheck

RNG = np.random.default_rng(0)
SETTINGS = settings(max_examples=120, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def arr(*shape):
    return RNG.standard_normal(shape)


def E(a):
    """An eager tensor sharing ``a``'s dtype and shape (0-d stays 0-d)."""
    return eager.from_numpy(np.array(a))


def P(a, lib=eager):
    """A float64 leaf requiring grad, 0-d arrays kept 0-d."""
    if lib is eager:
        return E(np.asarray(a, dtype=np.float64)).requires_grad_()
    return lib.tensor(a, requires_grad=True)


def C(a, lib=eager):
    """A constant tensor with ``a``'s shape (0-d stays 0-d)."""
    return E(a) if lib is eager else lib.tensor(a)


def L(*xs):
    return eager.tensor(list(xs))


# -- random index keys ----------------------------------------------------------------------

@st.composite
def index_cases(draw, numpy_compatible: bool):
    """(shape, key spec) where the spec holds ints, slices, None, Ellipsis and NumPy arrays
    (int index arrays, bool masks).  ``numpy_compatible``: no int together with an array
    (NumPy counts such ints as advanced indices, PyTorch does not); otherwise also Python
    bools and empty dimensions."""
    ndim = draw(st.integers(0, 4))
    low = 1 if numpy_compatible else 0
    shape = tuple(draw(st.lists(st.integers(low, 4), min_size=ndim, max_size=ndim)))
    kinds = []
    used = 0
    ell = False
    for _ in range(draw(st.integers(0, ndim + 2))):
        k = draw(st.sampled_from(["int", "slice", "slice", "none", "ell", "arr", "mask"]
                                 + ([] if numpy_compatible else ["bool"])))
        need = {"int": 1, "slice": 1, "arr": 1, "mask": draw(st.integers(1, 2)), "none": 0,
                "ell": 0, "bool": 0}[k]
        if k == "ell" and ell:
            continue
        if used + need > ndim:
            continue
        if k == "mask":
            k = f"mask{need}"
        ell = ell or k == "ell"
        used += need
        kinds.append(k)
    masks = [i for i, k in enumerate(kinds) if k.startswith("mask")]
    if masks:  # a mask's nonzero count need not broadcast with other index arrays
        kinds = [k for i, k in enumerate(kinds) if k != "arr" and (i == masks[0] or i not in masks)]
    adv = [k for k in kinds if k == "arr" or k.startswith("mask")]
    if numpy_compatible and adv:
        kinds = [k for k in kinds if k != "int"]
    if "bool" in kinds and adv:
        kinds = [k for k in kinds if k != "bool"]  # x[False] need not broadcast either
    cons = {"int": 1, "slice": 1, "arr": 1, "mask1": 1, "mask2": 2, "none": 0, "ell": 0,
            "bool": 0}
    total = sum(cons[k] for k in kinds)
    batch = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    key = []
    d = 0
    for k in kinds:
        if k == "ell":
            key.append(Ellipsis)
            d += ndim - total
        elif k == "none":
            key.append(None)
        elif k == "bool":
            key.append(draw(st.booleans()))
        elif k == "int" and shape[d]:
            n = shape[d]
            key.append(draw(st.integers(-n, n - 1)))
            d += 1
        elif k == "int":  # an empty dimension cannot be selected from
            key.append(slice(None))
            d += 1
        elif k == "slice":
            n = shape[d]
            bound = st.none() | st.integers(-n - 2, n + 2)
            key.append(slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3))))
            d += 1
        elif k == "arr" and not shape[d]:
            key.append(slice(None))
            d += 1
        elif k == "arr":
            n = shape[d]
            bs = tuple(1 if draw(st.booleans()) else b for b in batch)
            key.append(RNG.integers(-n, n, size=bs))
            d += 1
        else:
            m = cons[k]
            key.append(RNG.random(shape[d:d + m]) < 0.5)
            d += m
    return shape, tuple(key)


def to_lib(key, lib):
    """The key spec with arrays as ``lib`` tensors (eager or torch)."""
    out = []
    for e in key:
        if isinstance(e, np.ndarray):
            out.append(E(e) if lib is eager else lib.tensor(e))
        else:
            out.append(e)
    return tuple(out)


def has_array(key) -> bool:
    return any(isinstance(e, np.ndarray) for e in key)


@SETTINGS
@given(index_cases(numpy_compatible=True))
def test_getitem_matches_numpy(case):
    shape, key = case
    a = RNG.standard_normal(shape)
    x = P(a)
    y = x[to_lib(key, eager)]
    expected = a[key]
    assert tuple(y.shape) == expected.shape
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    if not has_array(key):
        assert np.shares_memory(y._data, x._data) or y.numel() == 0
        assert y._version is x._version
    w = RNG.standard_normal(expected.shape)
    (y * C(w)).sum().backward()
    g = np.zeros(shape)
    np.add.at(g, key, w)                       # repeated indices accumulate
    np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(index_cases(numpy_compatible=False))
def test_getitem_matches_torch(case):
    torch = pytest.importorskip("torch")
    shape, key = case
    a = RNG.standard_normal(shape)
    x = P(a)
    tx = P(a, torch)
    y = x[to_lib(key, eager)]
    ty = tx[to_lib(key, torch)]
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    w = RNG.standard_normal(tuple(ty.shape))
    (y * C(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(index_cases(numpy_compatible=True), st.booleans())
def test_setitem_matches_numpy(case, broadcast_value):
    shape, key = case
    a = RNG.standard_normal(shape)
    region = a[key].shape
    vshape = region[1:] if broadcast_value and region else region
    v = RNG.standard_normal(vshape)
    expected = a.copy()
    expected[key] = v
    x = C(a.copy())
    ver = x._version_value
    x[to_lib(key, eager)] = C(v)
    np.testing.assert_array_equal(x.numpy(), expected)
    assert x._version_value == ver + 1
    # scalar value
    x[to_lib(key, eager)] = 7.0
    expected[key] = 7.0
    np.testing.assert_array_equal(x.numpy(), expected)


@SETTINGS
@given(index_cases(numpy_compatible=False))
def test_setitem_autograd_matches_torch(case):
    torch = pytest.importorskip("torch")
    shape, key = case
    a = RNG.standard_normal(shape)
    region = tuple(torch.zeros(shape)[to_lib(key, torch)].shape)
    v = RNG.standard_normal(region)
    w = RNG.standard_normal(shape)
    grads = []
    for lib in (eager, torch):
        leaf = P(a, lib)
        val = P(v, lib)
        x = leaf * 2.0
        x[to_lib(key, lib)] = val * 3.0
        (x * C(w, lib)).sum().backward()
        grads.append((leaf.grad.numpy(), val.grad.numpy()))
    (g1, v1), (g2, v2) = grads
    np.testing.assert_allclose(g1, g2, rtol=1e-12)
    np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-12)


# -- getitem details ------------------------------------------------------------------------

def test_getitem_pytorch_semantics_differ_from_numpy():
    x = E(np.zeros((2, 3, 4, 5)))
    # ints are applied first (a view), so [0] and [0, 1] are not "separated" advanced indices
    assert x[0, :, [0, 1]].shape == (3, 2, 5)           # NumPy: (2, 3, 5)
    assert x[[0, 1], :, [0, 1]].shape == (2, 3, 5)
    assert x[:, [0, 1], :, 0].shape == (2, 2, 4)
    assert x[True].shape == (1, 2, 3, 4, 5) and x[False].shape == (0, 2, 3, 4, 5)
    assert x[[]].shape == (0, 3, 4, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert x[[0, slice(None)]].shape == (3, 4, 5)   # a list with a slice is a tuple
        assert x[[[0, 1]]].shape == (2, 3, 4, 5)
    assert x[L(0, 1)].shape == (2, 3, 4, 5)
    assert x[E(np.int64(1))].shape == (3, 4, 5)          # a 0-d int tensor selects (a view)
    assert x[E(np.int64(1))]._version is x._version
    assert x[None, ..., None, 0].shape == (1, 2, 3, 4, 1)
    assert x[..., E(np.ones((4, 5), bool))].shape == (2, 3, 20)
    assert x[:, E(np.array([0, 1], np.int32))].shape == (2, 2, 4, 5)


def test_getitem_views_and_copies():
    base = E(np.arange(24.0).reshape(2, 3, 4))
    for v in (base[1], base[:, 1:3], base[..., ::2], base[None, 1, :, None], base[1, 2, 3],
              base[()]):
        assert np.shares_memory(v.numpy(), base.numpy()) and v._version is base._version
    v = base[1, :, ::2]
    base.add_(1.0)
    np.testing.assert_array_equal(v.numpy(), np.arange(24.0).reshape(2, 3, 4)[1, :, ::2] + 1)
    ver = base._version_value
    v.mul_(0.0)
    assert base._version_value == ver + 1 and base.numpy()[1, :, ::2].sum() == 0
    for c in (base[L(0, 1)], base[base > 3], base[:, [0]]):
        assert c._base is None and not np.shares_memory(c.numpy(), base.numpy())
    assert base[0, 0, 0].shape == () and base[0, 0, 0].item() == 1.0


def test_getitem_repeated_indices_accumulate():
    x = eager.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[L(0, 0, 2, 0)].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 1.0])
    m = eager.tensor(arr(3, 2), requires_grad=True)
    (m[[0, 0, 1], [1, 1, 0]] * eager.tensor([1.0, 2.0, 4.0], dtype=eager.float64)).sum().backward()
    np.testing.assert_array_equal(m.grad.numpy(), [[0.0, 3.0], [4.0, 0.0], [0.0, 0.0]])


GETITEM_GRADS = {
    "int": (lambda x: x[1], (3, 4)),
    "neg-int": (lambda x: x[-1, -2], (3, 4)),
    "slices": (lambda x: x[1:, ::2], (3, 5)),
    "none-ellipsis": (lambda x: x[None, ..., 1:2, None], (2, 3, 4)),
    "int-list": (lambda x: x[[2, 0, 2]], (3, 2)),
    "two-lists": (lambda x: x[[0, 1, 1], [2, 2, 0]], (2, 3)),
    "separated": (lambda x: x[[0, 1], :, [1, 0]], (2, 3, 2)),
    "mask": (lambda x: x[E(np.array([[True, False, True], [False, True, True]]))], (2, 3)),
    "mask-dim1": (lambda x: x[:, E(np.array([True, False, True]))], (2, 3, 2)),
    "mixed": (lambda x: x[1:, None, L(1, 2, 2), ::2], (3, 4, 5)),
    "2d-index": (lambda x: x[L([0, 1], [1, 1])], (2, 3)),
    "non-contiguous": (lambda x: x.t()[[0, 2], 1:], (3, 3)),
    "bool-scalar": (lambda x: x[True, [0, 0]], (2, 3)),
}


@pytest.mark.parametrize("name", list(GETITEM_GRADS))
def test_getitem_gradcheck(name):
    fn, shape = GETITEM_GRADS[name]
    gradcheck(fn, arr(*shape))


def test_getitem_double_backward():
    x = eager.tensor(arr(3, 4), requires_grad=True)
    y = x[[0, 0, 2], 1:]
    (g,) = eager.autograd.grad((y * y * y).sum(), (x,), create_graph=True)
    (gg,) = eager.autograd.grad(g.sum(), (x,))
    a = x.detach().numpy()
    expect = np.zeros((3, 4))
    np.add.at(expect, ([0, 0, 2], slice(1, None)), 6 * a[[0, 0, 2], 1:])
    np.testing.assert_allclose(gg.numpy(), expect, rtol=1e-12)


# -- setitem --------------------------------------------------------------------------------

def test_setitem_basic_no_grad():
    x = E(np.zeros((3, 4)))
    ver = x._version_value
    x[0] = 1.0
    x[1, 1:3] = eager.tensor([2.0, 3.0], dtype=eager.float64)
    x[:, -1] = eager.ones(1, 1, 3, dtype=eager.float64)   # leading 1s are dropped
    x[x == 0] = 5.0
    x[[2, 2], [0, 1]] = eager.tensor([6.0, 7.0], dtype=eager.float64)
    expected = np.array([[1, 1, 1, 1], [5, 2, 3, 1], [6, 7, 5, 1]], dtype=float)
    np.testing.assert_array_equal(x.numpy(), expected)
    assert x._version_value == ver + 5
    i = E(np.zeros(3, np.int64))
    i[1] = 2.7                                   # cast to the tensor's dtype
    assert i.tolist() == [0, 2, 0]


def test_setitem_through_views_and_detach():
    base = E(np.zeros((2, 3)))
    v = base[1]
    v[0] = 4.0
    assert base.numpy()[1, 0] == 4.0 and base._version_value == 1
    w = eager.tensor(arr(2, 3), requires_grad=True)
    d = w.detach()
    d[0, 0] = 9.0                               # allowed, shares storage and version
    assert w.detach().numpy()[0, 0] == 9.0 and w._version_value == 1
    with eager.no_grad():
        w[1] = 0.0                              # a leaf may be written under no_grad
    assert w.detach().numpy()[1].sum() == 0.0


def test_setitem_autograd():
    w = eager.tensor(arr(3, 4), requires_grad=True)
    v = eager.tensor(arr(2), requires_grad=True)
    x = w * 2.0
    x[1, [0, 2]] = v
    assert x.grad_fn.name() == "SetItemBackward0"
    weight = arr(3, 4)
    (x * eager.tensor(weight)).sum().backward()
    gw = 2 * weight
    gw[1, [0, 2]] = 0.0
    np.testing.assert_allclose(w.grad.numpy(), gw)
    np.testing.assert_allclose(v.grad.numpy(), weight[1, [0, 2]])


def test_setitem_value_broadcast_grad_sums():
    w = eager.tensor(arr(3, 4), requires_grad=True)
    v = eager.tensor(arr(1, 4), requires_grad=True)
    s = eager.tensor([2.0], dtype=eager.float64, requires_grad=True)
    x = w * 1.0
    x[1:] = v
    x[0, :2] = s.reshape(())
    x.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), 2 * np.ones((1, 4)))
    np.testing.assert_allclose(s.grad.numpy(), [2.0])
    np.testing.assert_allclose(w.grad.numpy(), [[0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]])


def test_setitem_into_tensor_without_grad_takes_grad_fn():
    v = eager.tensor(arr(3), requires_grad=True)
    out = eager.zeros(2, 3, dtype=eager.float64)
    out[1] = v * 2.0
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("key", [(1, slice(1, 3)), ([0, 2],), (slice(None), [3, 1]), (None, 0)])
def test_setitem_gradcheck(key):
    def f(x, v):
        y = x * 1.0
        y[key] = v
        return y * y
    region = np.zeros((3, 4))[key].shape
    gradcheck(f, arr(3, 4), arr(*region))


def test_setitem_bumps_version_and_invalidates_saved():
    w = eager.tensor(arr(3), requires_grad=True)
    a = w * 1.0
    s = a.sigmoid()          # saves its output
    s[0] = 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


def test_setitem_leaf_error():
    w = eager.tensor(arr(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation."):
        w[0] = 1.0


def test_setitem_expanded_is_an_error():
    e = E(np.zeros((1, 3))).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e[0, 0] = 1.0


# -- gather / scatter / index_select / masks ------------------------------------------------

IDX = E(RNG.integers(0, 3, (2, 4, 5)))
IDX2 = E(np.array([[[0], [1]], [[2], [3]], [[3], [0]]]))
MASK = E(RNG.random((3, 4, 5)) > 0.5)
TAD = E(RNG.integers(0, 5, (3, 1, 2)))
SEL = E(RNG.random((4, 5)) > 0.5)

OP_GRADS = {
    "gather": (lambda x: x.gather(0, IDX), [(3, 4, 5)]),
    "gather-dim": (lambda x: eager.gather(x, -1, IDX2), [(3, 2, 4)]),
    "scatter_add": (lambda x, s: x.scatter_add(0, IDX, s), [(3, 4, 5), (2, 4, 6)]),
    "scatter": (lambda x, s: x.scatter(1, IDX2, s), [(3, 4, 5), (3, 2, 2)]),
    "scatter-value": (lambda x: x.scatter(1, IDX2, 2.5), [(3, 4, 5)]),
    "index_select": (lambda x: x.index_select(1, L(3, 0, 3)), [(3, 4, 5)]),
    "masked_fill": (lambda x: x.masked_fill(MASK, 2.0), [(3, 4, 5)]),
    "masked_fill-tensor": (lambda x, v: x.masked_fill(MASK, v.reshape(())), [(3, 4, 5), (1,)]),
    "masked_fill-bcast": (lambda x: x.masked_fill(MASK, -1.0), [(4, 5)]),
    "take_along_dim": (lambda x: eager.take_along_dim(x, TAD, 2), [(3, 4, 5)]),
    "take_along_dim-flat": (lambda x: eager.take_along_dim(x, L(0, 59, 3)), [(3, 4, 5)]),
    "masked_select": (lambda x: x.masked_select(SEL), [(3, 4, 5)]),
    "take": (lambda x: x.take(L([0, 59], [-1, 0])), [(3, 4, 5)]),
}


@pytest.mark.parametrize("name", list(OP_GRADS))
def test_op_gradcheck(name):
    fn, shapes = OP_GRADS[name]
    gradcheck(fn, *[arr(*s) for s in shapes])


def test_ops_forward():
    a = arr(3, 4, 5)
    x = E(a)
    idx = IDX.numpy()
    np.testing.assert_array_equal(x.gather(0, IDX).numpy(),
                                  np.take_along_axis(a, idx, 0))
    src = arr(2, 4, 5)
    out = a.copy()
    np.add.at(out, (idx, np.arange(4)[:, None], np.arange(5)), src)
    np.testing.assert_allclose(x.scatter_add(0, IDX, E(src)).numpy(), out)
    np.testing.assert_array_equal(x.index_select(2, L(4, 0)).numpy(), a[:, :, [4, 0]])
    m = MASK.numpy()
    np.testing.assert_array_equal(x.masked_fill(MASK, 0.5).numpy(), np.where(m, 0.5, a))
    np.testing.assert_array_equal(x.masked_select(MASK).numpy(), a[m])
    np.testing.assert_array_equal(eager.nonzero(MASK).numpy(), np.argwhere(m))
    np.testing.assert_array_equal(eager.argwhere(MASK).numpy(), np.argwhere(m))
    for got, want in zip(MASK.nonzero(as_tuple=True), np.nonzero(m)):
        np.testing.assert_array_equal(got.numpy(), want)
    assert eager.nonzero(E(np.float64(5.0))).shape == (1, 0)
    assert MASK.nonzero().dtype == eager.int64
    # in-place forms
    y = E(a.copy())
    y.masked_fill_(MASK, 0.0)
    np.testing.assert_array_equal(y.numpy(), np.where(m, 0.0, a))
    y.scatter_add_(0, IDX, E(src))
    y.scatter_(2, E(np.zeros((3, 4, 1), np.int64)), 9.0)
    assert (y.numpy()[:, :, 0] == 9.0).all() and y._version_value == 3
    # other call forms
    z = E(np.zeros(3))
    np.testing.assert_array_equal(z.scatter(0, L(0, 0, 2), 1.5, reduce="add").numpy(),
                                  [3.0, 0.0, 1.5])
    assert eager.gather(E(np.float64(2.0)), 0, E(np.int64(0))).shape == ()
    np.testing.assert_array_equal(E(np.arange(3.0)).index_select(0, E(np.int64(2))).numpy(),
                                  [2.0])


def test_ops_against_torch():
    torch = pytest.importorskip("torch")
    # (a src larger than the index is differentiated by gradcheck above; PyTorch's
    # backward rejects it)
    a, src = arr(3, 4, 5), arr(2, 4, 5)

    def run(lib, x, s):
        idx = lib.tensor(IDX.numpy())
        mask = lib.tensor(MASK.numpy())
        i2 = lib.tensor(IDX2.numpy())
        tad = lib.tensor(TAD.numpy())
        return (x.gather(0, idx) * 2).sum() + x.scatter_add(0, idx, s).pow(2).sum() \
            + x.index_select(1, lib.tensor([3, 0, 3])).exp().sum() \
            + x.masked_fill(mask, 0.5).sin().sum() + x.scatter(1, i2, s[:1, :2, :1].expand(
                3, 2, 1)).pow(3).sum() + lib.take_along_dim(x, tad, 2).cos().sum() \
            + x.masked_select(mask).pow(2).sum() + x.scatter(1, i2, -1.0).sum()

    x, s = eager.tensor(a, requires_grad=True), eager.tensor(src, requires_grad=True)
    tx, ts = torch.tensor(a, requires_grad=True), torch.tensor(src, requires_grad=True)
    y, ty = run(eager, x, s), run(torch, tx, ts)
    np.testing.assert_allclose(y.item(), ty.item(), rtol=1e-12)
    y.backward()
    ty.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_ops_double_backward():
    x = eager.tensor(arr(3, 4, 5), requires_grad=True)
    s = eager.tensor(arr(2, 4, 5), requires_grad=True)
    y = x.gather(0, IDX).pow(2).sum() + x.scatter_add(0, IDX, s).pow(2).sum() \
        + x.masked_fill(MASK, 1.0).pow(2).sum()
    gx, gs = eager.autograd.grad(y, (x, s), create_graph=True)
    hx, hs = eager.autograd.grad((gx * gx).sum() + (gs * gs).sum(), (x, s))
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    ts = torch.tensor(s.detach().numpy(), requires_grad=True)
    ti, tm = torch.tensor(IDX.numpy()), torch.tensor(MASK.numpy())
    ty = tx.gather(0, ti).pow(2).sum() + tx.scatter_add(0, ti, ts).pow(2).sum() \
        + tx.masked_fill(tm, 1.0).pow(2).sum()
    tgx, tgs = torch.autograd.grad(ty, (tx, ts), create_graph=True)
    thx, ths = torch.autograd.grad((tgx * tgx).sum() + (tgs * tgs).sum(), (tx, ts))
    np.testing.assert_allclose(hx.numpy(), thx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(hs.numpy(), ths.numpy(), rtol=1e-12)


def test_index_ops_params_are_canonical_and_indices_are_arguments():
    x = eager.tensor(arr(3, 4), requires_grad=True)
    i = L(0, 2)
    y = x[:, i]
    assert y.grad_fn.name() == "IndexBackward0"
    hash(tuple(sorted(y.grad_fn.params.items())))
    assert x[1:, ::2].grad_fn.params == x[1:3, 0:4:2].grad_fn.params
    assert x[-1].grad_fn.params == x[2].grad_fn.params
    assert x[..., 1].grad_fn.params == x[:, 1].grad_fn.params


# -- errors ---------------------------------------------------------------------------------

def Z(*s, **kw):
    return eager.zeros(*s, **kw)


ERRORS = [
    (lambda: Z(3)[::-1], ValueError, "step must be greater than zero"),
    (lambda: Z(3)[::0], ValueError, "slice step cannot be zero"),
    (lambda: Z(2, 3)[0, 7], IndexError, "index 7 is out of bounds for dimension 1 with size 3"),
    (lambda: Z(2, 3)[-3], IndexError, "index -3 is out of bounds for dimension 0 with size 2"),
    (lambda: Z(2, 3)[:, L(7)], IndexError,
     "index 7 is out of bounds for dimension 0 with size 3"),
    (lambda: Z(2, 3)[L(0.0)], IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda: Z(2, 3)[:, L(True, False)], IndexError,
     (r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor "
     r"\[2, 3\] at index 1")),
    (lambda: Z(2)[0, 0], IndexError, "too many indices for tensor of dimension 1"),
    (lambda: Z(2, 3)[..., ...], IndexError, "an index can only have a single ellipsis"),
    (lambda: Z(2, 3)[[0, 1], [0, 1, 2]], IndexError,
     (r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], "
     r"\[3\]")),
    (lambda: Z(2, 3)[1.5], IndexError, "only integers, slices"),
    (lambda: Z(3).gather(0, L(0.0)), RuntimeError, ("gather\\(\\): Expected dtype int32/int64 "
     "for index")),
    (lambda: Z(3).gather(0, L(5)), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: Z(2, 2).gather(0, L(0, 1)), RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    (lambda: Z(2, 2).gather(0, E(np.zeros((2, 3), np.int64))), RuntimeError,
     (r"Size does not match at dimension 1 expected index \[2, 3\] to be no larger than self "
     r"\[2, 2\] apart from dimension 0")),
    (lambda: Z(3).scatter_add(0, L(0, 1), Z(1)), RuntimeError,
     (r"Expected index \[2\] to be no larger than self \[3\] apart from dimension 0 and to be no "
     r"larger size than src \[1\]")),
    (lambda: Z(3).scatter_add(0, L(0), Z(1, dtype=eager.float64)), RuntimeError,
     "scatter\\(\\): Expected self.dtype to be equal to src.dtype"),
    (lambda: Z(3).scatter(0, L(-1), 1.0), RuntimeError,
     "index -1 is out of bounds for dimension 0 with size 3"),
    (lambda: Z(3).index_select(0, L(0.0)), RuntimeError,
     "index_select\\(\\): Expected dtype int32 or int64 for index"),
    (lambda: Z(3).index_select(0, L(3)), IndexError, "index out of range in self"),
    (lambda: Z(3).index_select(0, L([0])), IndexError,
     "index_select\\(\\): Index is supposed to be a vector"),
    (lambda: Z(3).masked_fill(L(1, 0, 1), 1.0), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
    (lambda: Z(3).masked_fill(L(True), L(1.0)), RuntimeError,
     (r"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
     r"dimension\(s\).")),
    (lambda: Z(3).masked_fill(eager.ones(2, dtype=eager.bool), 1.0), RuntimeError,
     (r"The size of tensor a \(2\) must match the size of tensor b \(3\) at non-singleton "
     "dimension 0")),
    (lambda: Z(3).masked_fill_(eager.ones(2, 3, dtype=eager.bool), 1.0), RuntimeError,
     r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"),
    (lambda: Z(3).take_along_dim(L(0.0), 0), RuntimeError,
     "take_along_dim\\(\\): dtype of indices should be Long but got Float"),
    (lambda: Z(2, 3).take_along_dim(E(np.zeros((2, 3, 1), np.int64)), 1), RuntimeError,
     "input and indices should have the same number of dimensions"),
    (lambda: Z(2, 3).masked_select(Z(3)), RuntimeError,
     "masked_select: expected BoolTensor for mask"),
    (lambda: Z(2, 3).take(L(6)), IndexError,
     "out of range: tried to access index 6 on a tensor of 6 elements."),
]


def _set(key, value, shape=(3, 4)):
    x = Z(*shape)
    x[key] = value


SET_ERRORS = [
    (lambda: _set(0, Z(5)), RuntimeError,
     (r"The expanded size of the tensor \(4\) must match the existing size \(5\) at "
     r"non-singleton dimension 0.  Target sizes: \[4\].  Tensor sizes: \[5\]")),
    (lambda: _set([0, 1], Z(3, 4)), RuntimeError,
     (r"shape mismatch: value tensor of shape \[3, 4\] cannot be broadcast to indexing result "
     r"of shape \[2, 4\]")),
    (lambda: _set(0, Z(2, 4)), RuntimeError,
     (r"the number of sizes provided \(1\) must be greater or equal to the number of dimensions "
     r"in the tensor \(2\)")),
    (lambda: _set(slice(None, None, -1), 1.0), ValueError, "step must be greater than zero"),
    (lambda: _set(5, 1.0), IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
]


@pytest.mark.parametrize("i", range(len(ERRORS) + len(SET_ERRORS)))
def test_errors(i):
    fn, exc, msg = (ERRORS + SET_ERRORS)[i]
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

    cases = [
        lambda M: M.zeros(3)[::-1],
        lambda M: M.zeros(2, 3)[0, 7],
        lambda M: M.zeros(2, 3, 4)[None, 0, 9],
        lambda M: M.zeros(2, 3)[M.tensor([0]), M.tensor([9])],
        lambda M: M.zeros(2, 3)[:, M.tensor([True, False])],
        lambda M: M.zeros(2, 3)[M.tensor([0.0])],
        lambda M: M.zeros(3).gather(0, M.tensor([5])),
        lambda M: M.zeros(2, 2).gather(0, M.zeros(2, 3, dtype=M.int64)),
        lambda M: M.zeros(3).scatter_add(0, M.tensor([0, 1]), M.ones(1)),
        lambda M: M.zeros(3).index_select(0, M.tensor([3])),
        lambda M: M.zeros(3).masked_fill(M.tensor([1, 0, 1]), 1.0),
        lambda M: M.zeros(3).take_along_dim(M.tensor([0.0]), 0),
    ]
    for f in cases:
        assert msg(eager, f) == msg(torch, f)


# -- index_add, index_copy, index_fill, masked_scatter ------------------------------------------

def test_index_add_copy_fill_values():
    a, s = arr(3, 4), arr(3, 3)
    ix = np.array([2, 0, 2])
    want = a.copy()
    np.add.at(want, (slice(None), ix), 2.0 * s)
    got = eager.index_add(E(a), 1, E(ix), E(s), alpha=2.0)
    np.testing.assert_allclose(got.numpy(), want)
    copy_ix = np.array([3, 0, 1])
    want = a.copy()
    want[:, copy_ix] = s
    np.testing.assert_array_equal(E(a).index_copy(1, E(copy_ix), E(s)).numpy(), want)
    want = a.copy()
    want[[0, 2]] = -1.0
    np.testing.assert_array_equal(E(a).index_fill(0, E(np.array([0, 2])), -1.0).numpy(), want)
    assert eager.tensor(1.0).index_add(0, eager.tensor([0]), eager.tensor(2.0)).item() == 3.0
    x = eager.zeros(3)
    assert x.index_add_(0, eager.tensor([0, 0]), eager.ones(2), alpha=2) is x
    assert x.tolist() == [4.0, 0.0, 0.0]
    x.index_copy_(0, eager.tensor([1]), eager.tensor([5.0]))
    x.index_fill_(0, eager.tensor([2]), 7.0)
    assert x.tolist() == [4.0, 5.0, 7.0]


def test_index_updates_gradcheck():
    a, s = arr(3, 4), arr(3, 3)
    ix = eager.tensor([2, 0, 2])
    assert gradcheck(lambda x, y: eager.index_add(x, 1, ix, y, alpha=-1.5), a, s)
    assert gradcheck(lambda x, y: x.index_copy(1, eager.tensor([3, 0, 1]), y), a, s)
    assert gradcheck(lambda x, v: x.index_fill(0, eager.tensor([1]), v.sum()), a, arr(2))


def test_masked_scatter():
    a = arr(3, 4)
    mask = a > 0
    src = arr(12)
    want = a.copy()
    want[mask] = src[:mask.sum()]
    np.testing.assert_array_equal(E(a).masked_scatter(E(mask), E(src)).numpy(), want)
    b = eager.zeros(2, 3).masked_scatter(eager.tensor([True, False, True]), eager.arange(6.0))
    assert b.tolist() == [[0.0, 0.0, 1.0], [2.0, 0.0, 3.0]]
    m = eager.tensor(mask)
    assert gradcheck(lambda x, y: x.masked_scatter(m, y), a, src)
    assert gradcheck(lambda x, y: x.masked_scatter(m, y * y).exp(), a, src)
    x = E(a)
    x.masked_scatter_(m, E(src))
    np.testing.assert_array_equal(x.numpy(), want)


def test_index_update_errors():
    z = eager.zeros(3)
    with pytest.raises(RuntimeError, match=r"index_add_\(\): self \(Float\) and source "
                                           r"\(Double\) must have the same scalar type"):
        z.index_add(0, eager.tensor([0]), eager.ones(1, dtype=eager.float64))
    with pytest.raises(IndexError, match="index out of range in self"):
        z.index_add(0, eager.tensor([5]), eager.ones(1))
    with pytest.raises(IndexError, match="index out of range in self"):
        z.index_add(0, eager.tensor([-1]), eager.ones(1))
    with pytest.raises(RuntimeError, match=r"Number of indices \(2\) should be equal to "
                                           r"source.size\(dim\): \(1\), for dim: 0"):
        z.index_add(0, eager.tensor([0, 1]), eager.ones(1))
    with pytest.raises(RuntimeError, match=r"source tensor shape must match self tensor shape, "
                                           r"excluding the specified dimension. Got self.shape = "
                                           r"\[3, 2\] source.shape = \[1, 3\]"):
        eager.zeros(3, 2).index_add(0, eager.tensor([0]), eager.ones(1, 3))
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index but got: Float"):
        z.index_add(0, eager.tensor([0.0]), eager.ones(1))
    with pytest.raises(IndexError, match=r"index_copy_\(\): index 5 is out of bounds for "
                                         r"dimension 0 with size 3"):
        z.index_copy(0, eager.tensor([5]), eager.ones(1))
    with pytest.raises(RuntimeError, match=r"index_copy_\(\): Expected a long tensor for index, "
                                           "but got Int"):
        z.index_copy(0, eager.tensor([0], dtype=eager.int32), eager.ones(1))
    with pytest.raises(RuntimeError, match="Source/destination tensor must have same slice "
                                           "shapes. Destination slice shape: 2 at dimension 0 "
                                           "and source slice shape: 3 at dimension 0."):
        eager.zeros(3, 2).index_copy(0, eager.tensor([0]), eager.ones(1, 3))
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        z.index_fill(0, eager.tensor([5]), 1.0)
    with pytest.raises(RuntimeError, match="index_fill_ only supports a 0-dimensional value "
                                           "tensor, but got tensor with 1 dimension"):
        z.index_fill(0, eager.tensor([0]), eager.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in "
                                           "mask"):
        z.masked_scatter(eager.tensor([True, True, False]), eager.ones(1))
    with pytest.raises(RuntimeError, match="masked_scatter_ only supports boolean masks, but got "
                                           "mask with dtype Long"):
        z.masked_scatter(eager.tensor([1, 1, 0]), eager.ones(4))


def test_index_updates_against_torch():
    torch = pytest.importorskip("torch")
    a, s, src = arr(3, 4), arr(3, 2), arr(12)
    mask = a > 0
    ops = [
        (lambda x, y: x.index_add(1, _ix(x, [3, 3]), y, alpha=0.5), (a, s)),
        (lambda x, y: x.index_copy(1, _ix(x, [0, 2]), y), (a, s)),
        (lambda x, y: x.masked_scatter(_mask(x, mask), y), (a, src)),
    ]
    for fn, arrays in ops:
        ei = [eager.tensor(v, requires_grad=True) for v in arrays]
        ti = [torch.tensor(v, requires_grad=True) for v in arrays]
        eo, to = fn(*ei), fn(*ti)
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy())
        w = arr(*to.shape)
        (eo * eager.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        for e, t in zip(ei, ti):
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())


def _lib(like):
    """The library ``like`` belongs to (eager or torch), to build index tensors with it."""
    if isinstance(like, eager.Tensor):
        return eager
    import torch
    return torch


def _ix(like, values):
    return _lib(like).tensor(values)


def _mask(like, m):
    return _lib(like).tensor(m)


def test_index_fill_negative_indices_and_compiled_index_checks():
    assert eager.zeros(3).index_fill(0, eager.tensor([-1]), 2.0).tolist() == [0.0, 0.0, 2.0]

    def f(x, ix):
        return x.index_add(0, ix, x[:2] * 2.0) + x.index_copy(0, ix, x[1:3])

    cf = compiler.compile(f)
    x = eager.tensor(arr(4, 2))
    for i in range(3):
        np.testing.assert_array_equal(cf(x, eager.tensor([3, 0])).numpy(),
                                      f(x, eager.tensor([3, 0])).numpy())
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] >= 1
    for bad in ([4, 0], [-1, 0]):  # checked on a replay too, not wrapped around
        with pytest.raises(IndexError, match="out of (range|bounds)"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the failed replay says it reruns eagerly
            cf(x, eager.tensor(bad))


def test_index_put_writes_or_accumulates_as_numpy():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    rows = np.array([0, 2, 0])
    vals = np.array([1.0, 2.0, 4.0], np.float32)
    want = x.copy()
    np.add.at(want, (rows, 1), vals)
    got = eager.tensor(x).index_put((eager.tensor(rows), eager.tensor([1])), eager.tensor(vals),
                                    accumulate=True)
    np.testing.assert_array_equal(got.numpy(), want)
    want = x.copy()
    want[[1, 3]] = 7.0                                       # a bool index, one value broadcast
    got = eager.tensor(x).index_put((eager.tensor([False, True, False, True]),),
                                    eager.tensor(7.0))
    np.testing.assert_array_equal(got.numpy(), want)
    y = eager.tensor(x)
    assert y.index_put_((eager.tensor([3]),), eager.zeros(3), accumulate=False) is y
    assert y.numpy()[3].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                                           "dtypes match, got Float for the destination and "
                                           "Double for the source"):
        eager.zeros(3).index_put((eager.tensor([0]),), eager.zeros(1, dtype=eager.float64))
    with pytest.raises(TypeError, match="must be tuple of Tensors"):
        eager.zeros(3).index_put(eager.tensor([0]), eager.zeros(1))


def test_index_put_gradients():
    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    idx = (eager.tensor([0, 2, 0]),)
    gradcheck(lambda a, v: a.index_put(idx, v, accumulate=True), x, np.ones((3, 2)))
    distinct = (eager.tensor([0, 2]),)      # written once each: one gradient
    gradcheck(lambda a, v: a.index_put(distinct, v), x, np.ones(2))
