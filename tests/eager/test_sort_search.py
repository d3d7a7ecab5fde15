"""Sorting, selection, searching and counting: sort/argsort/msort, topk, kthvalue (values,
indices, named tuples, gradients to the selected elements), searchsorted/bucketize,
unique, bincount, histc; against NumPy, finite differences (float64) and PyTorch;
PyTorch's errors; compiled replay (data-dependent shapes run eagerly)."""

import numpy as np
import pytest

import compiler
import eager
from tests.helpers import gradcheck

rng = np.random.default_rng(3)


def distinct(*shape):
    """Values without ties, so that every sort order is unique."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) / 7.0 - 1.0


# -- sort, argsort ---------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_numpy_and_is_a_named_tuple(dim, descending):
    a = distinct(3, 5)
    res = eager.sort(eager.tensor(a), dim=dim, descending=descending)
    order = np.argsort(-a if descending else a, axis=dim)
    assert type(res).__name__ == "sort" and res._fields == ("values", "indices")
    values, indices = res
    np.testing.assert_array_equal(indices.numpy(), order)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, order, dim))
    assert indices.dtype == eager.int64
    np.testing.assert_array_equal(eager.argsort(eager.tensor(a), dim, descending).numpy(), order)
    np.testing.assert_array_equal(eager.tensor(a).sort(dim, descending).values.numpy(),
                                  values.numpy())


def test_sort_is_stable_both_ways_and_puts_nan_last_or_first():
    a = eager.tensor([2.0, 1.0, 2.0, float("nan"), 1.0, 2.0])
    assert eager.sort(a, stable=True).indices.tolist() == [1, 4, 0, 2, 5, 3]
    assert eager.sort(a, descending=True, stable=True).indices.tolist() == [3, 0, 2, 5, 1, 4]
    b = eager.tensor([True, False, True])
    assert eager.sort(b).values.tolist() == [False, True, True]
    ints = eager.tensor([3, -1, 2], dtype=eager.int32)
    assert eager.sort(ints, descending=True).values.tolist() == [3, 2, -1]


def test_sort_zero_dim_and_msort():
    v, i = eager.sort(eager.tensor(2.5))
    assert v.shape == () and v.item() == 2.5 and i.item() == 0
    a = distinct(4, 3)
    np.testing.assert_array_equal(eager.msort(eager.tensor(a)).numpy(), np.sort(a, axis=0))


def test_sort_gradient_goes_to_the_source_positions():
    a = distinct(3, 4)
    assert gradcheck(lambda x: eager.sort(x, dim=0, descending=True).values, a)
    assert gradcheck(lambda x: eager.sort(x.exp(), dim=-1).values, a)


# -- topk, kthvalue ---------------------------------------------------------------------------

@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k,n", [(2, 6), (3, 60), (6, 6), (0, 4)])
def test_topk_matches_a_full_sort(largest, k, n):
    a = distinct(4, n)                       # n=60, k=3: the partition path
    values, indices = eager.topk(eager.tensor(a), k, dim=1, largest=largest)
    order = np.argsort(-a if largest else a, axis=1)[:, :k]
    np.testing.assert_array_equal(indices.numpy(), order)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, order, 1))


def test_topk_ties_and_nan_counts_as_largest():
    for n in (0, 40):  # the full-sort and the partition paths
        a = eager.tensor([1.0, 3.0, 3.0, 0.0, 3.0] + [0.0] * n)
        values, indices = eager.topk(a, 2)  # which of the tied ones: unspecified, as PyTorch
        assert values.tolist() == [3.0, 3.0]
        assert len(set(indices.tolist())) == 2 and set(indices.tolist()) <= {1, 2, 4}
    b = eager.tensor([1.0, float("nan"), 2.0])
    assert eager.topk(b, 1).indices.tolist() == [1]
    assert eager.topk(eager.tensor(5.0), 1).values.item() == 5.0


def test_topk_and_kthvalue_gradients():
    a = distinct(3, 7)
    assert gradcheck(lambda x: eager.topk(x, 3, dim=1).values, a)
    assert gradcheck(lambda x: eager.topk(x, 2, dim=0, largest=False).values, a)
    assert gradcheck(lambda x: eager.kthvalue(x, 4, dim=1).values, a)
    assert gradcheck(lambda x: eager.kthvalue(x, 2, dim=0, keepdim=True).values, a)


def test_kthvalue_values_indices_keepdim():
    a = distinct(3, 5)
    r = eager.kthvalue(eager.tensor(a), 2, dim=1)
    assert type(r).__name__ == "kthvalue"
    order = np.argsort(a, axis=1)[:, 1]
    np.testing.assert_array_equal(r.indices.numpy(), order)
    np.testing.assert_array_equal(r.values.numpy(), a[np.arange(3), order])
    k = eager.tensor(a).kthvalue(3, 0, keepdim=True)
    assert k.values.shape == (1, 5) and k.indices.shape == (1, 5)
    np.testing.assert_array_equal(k.values.numpy()[0], a.max(axis=0))


def test_sort_topk_kthvalue_against_torch():
    torch = pytest.importorskip("torch")
    a = distinct(4, 9)
    ta = torch.tensor(a)
    for ours, theirs in [
        (eager.sort(eager.tensor(a), 0, True), torch.sort(ta, 0, True)),
        (eager.topk(eager.tensor(a), 4), torch.topk(ta, 4)),
        (eager.topk(eager.tensor(a), 2, 0, largest=False), torch.topk(ta, 2, 0, largest=False)),
        (eager.kthvalue(eager.tensor(a), 3), torch.kthvalue(ta, 3)),
    ]:
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    w = rng.standard_normal((4, 3))
    ex, tx = eager.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (eager.topk(ex, 3).values * eager.tensor(w)).sum().backward()
    (torch.topk(tx, 3).values * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())


def test_sort_family_errors():
    x = eager.tensor([3.0, 1.0, 2.0])
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        eager.topk(x, 4)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        eager.topk(x, -1)
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for "
                                           "dimension 0"):
        eager.kthvalue(x, 0)
    with pytest.raises(IndexError, match="Dimension out of range|dimension out of range"):
        eager.sort(x, dim=1)


# -- searchsorted, bucketize -----------------------------------------------------------------

@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_matches_numpy(right):
    seq = np.array([1.0, 2.0, 2.0, 4.0, 7.0])
    vals = np.array([[0.0, 2.0, 3.0], [7.0, 8.0, 2.0]])
    side = "right" if right else "left"
    out = eager.searchsorted(eager.tensor(seq), eager.tensor(vals), right=right)
    np.testing.assert_array_equal(out.numpy(), np.searchsorted(seq, vals, side=side))
    assert out.dtype == eager.int64
    same = eager.searchsorted(eager.tensor(seq), eager.tensor(vals), side=side, out_int32=True)
    assert same.dtype == eager.int32 and same.tolist() == out.tolist()
    b = eager.bucketize(eager.tensor(vals), eager.tensor(seq), right=right)
    assert b.tolist() == out.tolist()


def test_searchsorted_per_row_scalar_and_sorter():
    seq = np.sort(rng.standard_normal((2, 3, 6)), axis=-1)
    vals = rng.standard_normal((2, 3, 4))
    out = eager.searchsorted(eager.tensor(seq), eager.tensor(vals))
    want = np.stack([np.searchsorted(s, v) for s, v in zip(seq.reshape(6, 6),
                                                             vals.reshape(6, 4))])
    np.testing.assert_array_equal(out.numpy(), want.reshape(2, 3, 4))
    scalar = eager.searchsorted(eager.tensor([1.0, 2.0, 3.0]), 2.5)
    assert scalar.shape == () and scalar.item() == 2
    unsorted = eager.tensor([3.0, 1.0, 2.0])
    got = eager.searchsorted(unsorted, eager.tensor([2.5, 0.0]), sorter=eager.tensor([1, 2, 0]))
    assert got.tolist() == [2, 0]
    assert eager.bucketize(2.0, eager.tensor([1.0, 3.0])).item() == 1


def test_searchsorted_errors():
    with pytest.raises(RuntimeError, match=r"boundaries tensor should be 1 dimension or the "
                       r"first N-1 dimensions.*boundaries tensor \[2, 3\] and input value "
                       r"tensor \[3, 3\]"):
        eager.searchsorted(eager.zeros(2, 3), eager.zeros(3, 3))
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        eager.searchsorted(eager.zeros(3), eager.zeros(3), side="left", right=True)
    with pytest.raises(RuntimeError, match="side can only be 'left' or 'right' but got foo"):
        eager.searchsorted(eager.zeros(3), eager.zeros(3), side="foo")
    with pytest.raises(RuntimeError, match=r"boundaries tensor must be 1 dimension, but got "
                                           r"dim\(2\)"):
        eager.bucketize(eager.tensor([1.0]), eager.zeros(2, 2))


def test_searchsorted_against_torch():
    torch = pytest.importorskip("torch")
    seq = np.sort(rng.standard_normal((3, 8)), axis=-1)
    vals = np.concatenate([rng.standard_normal((3, 4)), seq[:, 2:4]], axis=1)
    for right in (False, True):
        ours = eager.searchsorted(eager.tensor(seq), eager.tensor(vals), right=right)
        theirs = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), right=right)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        ours = eager.bucketize(eager.tensor(vals), eager.tensor(seq[0]), right=right)
        theirs = torch.bucketize(torch.tensor(vals), torch.tensor(seq[0]), right=right)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# -- unique, bincount, histc -----------------------------------------------------------------

def test_unique_values_inverse_counts():
    x = eager.tensor([3, 1, 3, 2, 1, 3])
    assert eager.unique(x).tolist() == [1, 2, 3]
    vals, inv, counts = eager.unique(x, return_inverse=True, return_counts=True)
    assert inv.tolist() == [2, 0, 2, 1, 0, 2] and counts.tolist() == [2, 1, 3]
    m = eager.tensor([[1, 2], [1, 2], [0, 5]])
    vals, inv, counts = m.unique(dim=0, return_inverse=True, return_counts=True)
    assert vals.tolist() == [[0, 5], [1, 2]] and inv.tolist() == [1, 1, 0]
    assert counts.tolist() == [1, 2]
    nan = eager.unique(eager.tensor([2.0, float("nan"), float("nan"), 1.0]))
    assert nan.shape == (4,)                 # every NaN is distinct, as in PyTorch
    grid = eager.unique(eager.tensor([[2, 1], [1, 2]]), return_inverse=True)[1]
    assert grid.tolist() == [[1, 0], [0, 1]]


def test_bincount_and_histc():
    x = eager.tensor([0, 2, 2, 5])
    assert eager.bincount(x).tolist() == [1, 0, 2, 0, 0, 1]
    assert eager.bincount(x, minlength=8).shape == (8,)
    w = eager.tensor([0.5, 1.0, 1.5, 2.0])
    b = x.bincount(w)
    assert b.dtype == eager.float32 and b.tolist() == [0.5, 0.0, 2.5, 0.0, 0.0, 2.0]
    assert eager.bincount(x, eager.tensor([1, 1, 1, 1])).dtype == eager.float64
    assert eager.bincount(eager.tensor([], dtype=eager.int64)).shape == (0,)
    h = eager.histc(eager.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=3)
    assert h.tolist() == [0.0, 2.0, 1.0, 0.0] and h.dtype == eager.float32
    assert eager.histc(eager.tensor([1.0, 2.0, 1.0, 4.0]), bins=4).tolist() == [2, 1, 0, 1]
    assert eager.tensor([1.0, 1.0]).histc(bins=4).tolist() == [0, 0, 2, 0]


def test_counting_errors():
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral "
                                           "inputs."):
        eager.bincount(eager.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral"):
        eager.bincount(eager.tensor([[1, 2]]))
    with pytest.raises(NotImplementedError, match="\"bincount_cpu\" not implemented for "
                                                  "'Float'"):
        eager.bincount(eager.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        eager.bincount(eager.tensor([1, 2]), minlength=-1)
    with pytest.raises(RuntimeError, match="weights should be 1-d and have the same length as "
                                           "input"):
        eager.bincount(eager.tensor([1, 2]), weights=eager.ones(3))
    with pytest.raises(NotImplementedError, match="\"histogram_cpu\" not implemented for "
                                                  "'Long'"):
        eager.histc(eager.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="torch.histc: max must be larger than min"):
        eager.histc(eager.tensor([1.0]), bins=4, min=3, max=1)
    with pytest.raises(RuntimeError, match=r"bins must be > 0, but got 0"):
        eager.histc(eager.tensor([1.0]), bins=0)
    with pytest.raises(RuntimeError, match=r"torch.histc: range of \[.*\] is not finite"):
        eager.histc(eager.tensor([1.0, float("nan")]), bins=4)


def test_counting_against_torch():
    torch = pytest.importorskip("torch")
    x = rng.integers(0, 6, size=20)
    w = rng.standard_normal(20)
    np.testing.assert_array_equal(eager.bincount(eager.tensor(x), minlength=9).numpy(),
                                  torch.bincount(torch.tensor(x), minlength=9).numpy())
    np.testing.assert_allclose(eager.bincount(eager.tensor(x), eager.tensor(w)).numpy(),
                               torch.bincount(torch.tensor(x), torch.tensor(w)).numpy())
    f = rng.standard_normal(200).astype(np.float32)
    for bins, lo, hi in [(10, 0, 0), (7, -1.0, 1.5), (3, 0.25, 0.5)]:
        np.testing.assert_array_equal(eager.histc(eager.tensor(f), bins, lo, hi).numpy(),
                                      torch.histc(torch.tensor(f), bins, lo, hi).numpy())
    u = rng.integers(0, 4, size=(5, 3))
    ours = eager.unique(eager.tensor(u), dim=1, return_inverse=True, return_counts=True)
    theirs = torch.unique(torch.tensor(u), dim=1, return_inverse=True, return_counts=True)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.numpy(), t.numpy())


# -- compiled --------------------------------------------------------------------------------

def _compiled_matches_eager(fn, *arrays, grad=False):
    cf = compiler.compile(fn)
    for i in range(5):
        ours = [eager.tensor(a, requires_grad=grad) for a in arrays]
        ref = [eager.tensor(a, requires_grad=grad) for a in arrays]
        got, want = cf(*ours), fn(*ref)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())
        if grad:
            got[0].sum().backward()
            want[0].sum().backward()
            np.testing.assert_array_equal(ours[0].grad.numpy(), ref[0].grad.numpy())
        if i == 1:
            compiler.wait()
    return cf.stats()


def test_compiled_sort_topk_search_replay():
    a = distinct(4, 9)
    stats = _compiled_matches_eager(
        lambda x: (eager.topk(x * 2.0, 3).values, eager.sort(x, 0, True).values,
                   eager.kthvalue(x, 2).values, eager.searchsorted(eager.sort(x).values, x),
                   eager.histc(x, bins=5, min=-1, max=1)), a, grad=True)
    assert stats["hits"] >= 3 and stats["fallbacks"] == 1


def test_compiled_unique_runs_eagerly():
    stats = _compiled_matches_eager(lambda x: (eager.unique(x),), np.array([3, 1, 3, 2]))
    assert stats["hits"] == 0 and stats["fallbacks"] == 5
