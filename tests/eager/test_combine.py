"""Tensors built from tensors: meshgrid, cartesian_prod, combinations, block_diag, kron,
cdist, tril_indices/triu_indices; against NumPy/itertools, finite differences (float64)
and PyTorch; PyTorch's errors; compiled replay."""

import itertools

import numpy as np
import pytest

import compiler
import eager
from tests.helpers import gradcheck

rng = np.random.default_rng(8)


def r(*shape):
    return rng.standard_normal(shape)


def t(a):
    return eager.tensor(np.asarray(a))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_numpy(indexing):
    xs = [r(2), r(3), r(4)]
    got = eager.meshgrid(*[t(x) for x in xs], indexing=indexing)
    for g, w in zip(got, np.meshgrid(*xs, indexing=indexing)):
        np.testing.assert_array_equal(g.numpy(), w)
    listed = eager.meshgrid([t(x) for x in xs[:2]], indexing=indexing)
    assert listed[0].shape == ((2, 3) if indexing == "ij" else (3, 2))
    assert gradcheck(lambda a, b: eager.stack(eager.meshgrid(a, b, indexing=indexing)), xs[0],
                     xs[1])


def test_meshgrid_default_is_ij_without_a_warning(recwarn):
    a, b = eager.meshgrid(eager.arange(2), eager.arange(3))
    assert a.shape == (2, 3) and b.tolist() == [[0, 1, 2], [0, 1, 2]]
    assert not [w for w in recwarn if "meshgrid" in str(w.message)]
    scalar = eager.meshgrid(eager.tensor(1.0), eager.ones(2), indexing="ij")
    assert scalar[0].shape == (1, 2)


def test_cartesian_prod_and_combinations():
    a, b = r(2), r(3)
    got = eager.cartesian_prod(t(a), t(b)).numpy()
    np.testing.assert_array_equal(got, np.array(list(itertools.product(a, b))))
    single = t(a)
    assert eager.cartesian_prod(single) is single
    v = r(4)
    for k, rep in [(2, False), (3, False), (2, True), (3, True)]:
        pick = itertools.combinations_with_replacement if rep else itertools.combinations
        got = eager.combinations(t(v), k, with_replacement=rep).numpy()
        np.testing.assert_array_equal(got, np.array(list(pick(v, k))))
    assert eager.combinations(t(v), 0).shape == (0,)
    assert eager.combinations(t(v[:3]), 4).shape == (0, 4)
    assert gradcheck(lambda x: eager.combinations(x, 3, with_replacement=True), v)
    assert gradcheck(lambda x, y: eager.cartesian_prod(x, y), a, b)


def test_block_diag_and_kron():
    m1, m2, m3 = r(2, 3), r(1, 1), r(2)
    got = eager.block_diag(t(m1), t(m2), t(m3), eager.tensor(5.0, dtype=eager.float64))
    want = np.zeros((5, 7))
    want[:2, :3], want[2, 3], want[3, 4:6], want[4, 6] = m1, m2[0, 0], m3, 5.0
    np.testing.assert_array_equal(got.numpy(), want)
    assert eager.block_diag(eager.ones(1), eager.ones(1, dtype=eager.float64)).dtype == \
        eager.float64
    assert eager.block_diag().shape == (1, 0)
    assert gradcheck(lambda x, y: eager.block_diag(x, y), m1, m3)
    for sa, sb in [((2, 3), (4, 2)), ((2, 3), (4,)), ((2, 1, 3), (3, 2)), ((), (3,))]:
        a, b = r(*sa), r(*sb)
        np.testing.assert_allclose(eager.kron(t(a), t(b)).numpy(), np.kron(a, b))
        assert gradcheck(eager.kron, a, b)
    assert t(r(2, 2)).kron(eager.ones(2, dtype=eager.int64)).dtype == eager.float64


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_cdist_matches_numpy_and_gradcheck(p):
    x1, x2 = r(2, 5, 3), r(4, 3)
    d = x1[..., :, None, :] - x2[None, None, :, :]
    if p == 0:
        want = (d != 0).sum(-1).astype(float)
    elif np.isinf(p):
        want = np.abs(d).max(-1)
    else:
        want = (np.abs(d) ** p).sum(-1) ** (1 / p)
    np.testing.assert_allclose(eager.cdist(t(x1), t(x2), p=p).numpy(), want, rtol=1e-12)
    if p >= 1:
        assert gradcheck(lambda a, b: eager.cdist(a, b, p=p), x1, x2)


def test_cdist_gradient_is_zero_at_zero_distance():
    x = eager.tensor(r(3, 2), requires_grad=True)
    eager.cdist(x, x).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_tri_indices():
    for row, col, off in [(3, 4, 0), (4, 3, 1), (3, 3, -1), (0, 3, 0)]:
        np.testing.assert_array_equal(eager.tril_indices(row, col, off).numpy(),
                                      np.stack(np.tril_indices(row, off, col)))
        np.testing.assert_array_equal(eager.triu_indices(row, col, off).numpy(),
                                      np.stack(np.triu_indices(row, off, col)))
    assert eager.tril_indices(3, 3, dtype=eager.int32).dtype == eager.int32
    with pytest.raises(RuntimeError, match="row must be non-negative, got-1"):
        eager.tril_indices(-1, 3)


def test_combine_errors():
    with pytest.raises(RuntimeError, match="torch.meshgrid: indexing must be one of \"xy\" or "
                                           "\"ij\", but received: foo"):
        eager.meshgrid(eager.ones(2), indexing="foo")
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same "
                                           "dtype"):
        eager.meshgrid(eager.ones(2), eager.ones(2, dtype=eager.int64), indexing="ij")
    with pytest.raises(RuntimeError, match="torch.meshgrid: Expected 0D or 1D tensor in the "
                                           "tensor list"):
        eager.meshgrid(eager.ones(2, 2), indexing="ij")
    with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
        eager.meshgrid(indexing="ij")
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
        eager.combinations(eager.ones(2, 2))
    with pytest.raises(RuntimeError, match="Expect a non-negative number, but got -1"):
        eager.combinations(eager.ones(2), -1)
    with pytest.raises(RuntimeError, match="torch.block_diag: Input tensors must have 2 or fewer "
                                           "dimensions. Input 0 has 3 dimensions"):
        eager.block_diag(eager.ones(2, 3, 1))
    with pytest.raises(RuntimeError, match="cdist only supports floating-point dtypes, X1 got: "
                                           "Long"):
        eager.cdist(eager.ones(2, 3, dtype=eager.int64), eager.ones(2, 3, dtype=eager.int64))
    with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns. X1: "
                                           "3 X2: 4"):
        eager.cdist(eager.ones(2, 3), eager.ones(2, 4))
    with pytest.raises(RuntimeError, match="cdist only supports at least 2D tensors, X1 got: "
                                           "1D"):
        eager.cdist(eager.ones(3), eager.ones(2, 3))
    with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
        eager.cdist(eager.ones(2, 3), eager.ones(2, 3), p=-1)


def test_combine_against_torch():
    torch = pytest.importorskip("torch")
    x1, x2, v = r(2, 6, 3), r(2, 4, 3), r(4)
    cases = [
        (lambda a, b: eager.cdist(a, b, p=1.5), lambda a, b: torch.cdist(a, b, p=1.5), (x1, x2)),
        (lambda a, b: eager.cdist(a, b), lambda a, b: torch.cdist(a, b), (x1, x2)),
        (eager.kron, torch.kron, (r(2, 3), r(3, 2))),
        (lambda a, b: eager.block_diag(a, b), lambda a, b: torch.block_diag(a, b),
         (r(2, 3), r(3))),
        (lambda a: eager.combinations(a, 3), lambda a: torch.combinations(a, 3), (v,)),
        (lambda a, b: eager.cartesian_prod(a, b), lambda a, b: torch.cartesian_prod(a, b),
         (v, r(3))),
        (lambda a, b: eager.stack(eager.meshgrid(a, b, indexing="xy")),
         lambda a, b: torch.stack(torch.meshgrid(a, b, indexing="xy")), (v, r(3))),
    ]
    for ours, theirs, arrays in cases:
        ei = [eager.tensor(a, requires_grad=True) for a in arrays]
        ti = [torch.tensor(a, requires_grad=True) for a in arrays]
        eo, to = ours(*ei), theirs(*ti)
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-10)
        w = r(*to.shape)
        (eo * eager.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        for e, tt in zip(ei, ti):
            np.testing.assert_allclose(e.grad.numpy(), tt.grad.numpy(), rtol=1e-9, atol=1e-12)
    for row, col, off in [(4, 5, 1), (5, 3, -2)]:
        np.testing.assert_array_equal(eager.triu_indices(row, col, off).numpy(),
                                      torch.triu_indices(row, col, off).numpy())


def test_compiled_combinations_replay():
    def f(a, b):
        return (eager.cdist(a, b).sum() + eager.kron(a[0], b[:2]).sum()
                + eager.block_diag(a, b).sum() + eager.combinations(a[0], 2).prod(1).sum()
                + eager.stack(eager.meshgrid(a[0], b[0], indexing="xy")).sum()
                + a[eager.tril_indices(3, 3)[0]].sum())
    cf = compiler.compile(f)
    for i in range(5):
        a, b = r(3, 3), r(4, 3)
        x = [eager.tensor(v, requires_grad=True) for v in (a, b)]
        y = [eager.tensor(v, requires_grad=True) for v in (a, b)]
        got, want = cf(*x), f(*y)
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
        got.backward()
        want.backward()
        for p, q in zip(x, y):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] >= 3
