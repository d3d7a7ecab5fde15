"""Sorting and selection on the device (the stable rank kernel of eager/cuda/kernels_sort.py:
sort, argsort, msort, topk, kthvalue, median), multinomial and normal with tensor
arguments from the CUDA generator, and view(dtype) as a view of the same device bytes.
Tiny shapes: the simulator runs ~170 us a thread."""

from __future__ import annotations

import numpy as np
import pytest

import eager
import eager.cuda.ops as cuda_ops
from eager.cuda import kernels_sort
from tests.gpu.test_cuda_ops_coverage import check
from tests.gpu.test_cuda_random32 import f64_in_ptx

RNG = np.random.default_rng(3)
# ties, NaN and signed zeros along every dimension
XT = np.array([[[1.0, np.nan, -2.0, 1.0], [0.0, -0.0, 3.0, 0.5], [2.0, 2.0, np.nan, -1.0]],
               [[5.0, -3.0, 5.0, np.nan], [1.0, 1.0, 1.0, 1.0], [np.nan, 0.5, -4.0, 0.5]]],
              np.float32)
XF = RNG.standard_normal((2, 3, 4)).astype(np.float32)
XI = np.array([[3, -1, 3, 0, 7], [2, 2, -5, 2, 0]], np.int64)
XB = np.array([[True, False, True, False], [False, False, True, True]])


@pytest.fixture
def no_host_sorts():
    """The ops under test run on the device: no host fallback, no long-row host sort."""
    before, long_rows = dict(cuda_ops.FALLBACK_CALLS), dict(kernels_sort.HOST_SORTS)
    yield
    assert dict(cuda_ops.FALLBACK_CALLS) == before
    assert dict(kernels_sort.HOST_SORTS) == long_rows


_SORTS = {
    "sort": lambda x: x.sort(-1),
    "sort0": lambda x: x.sort(0),
    "sort1_desc": lambda x: x.sort(1, descending=True),
    "sort_stable_desc": lambda x: eager.sort(x, dim=-1, descending=True, stable=True),
    "argsort": lambda x: x.argsort(1),
    "argsort_desc": lambda x: x.argsort(-1, descending=True),
    "msort": lambda x: eager.msort(x),
    "topk": lambda x: x.topk(2),
    "topk_smallest0": lambda x: x.topk(2, 0, largest=False),
    "topk_all": lambda x: x.topk(x.shape[-1], -1),
    "topk_none": lambda x: x.topk(0, 1),
    "kthvalue": lambda x: x.kthvalue(2, -1),
    "kthvalue_keep": lambda x: x.kthvalue(1, 0, keepdim=True),
    "median_dim": lambda x: x.median(1),
    "median_all": lambda x: x.median(),
}


@pytest.mark.parametrize("name", list(_SORTS))
def test_sorts_match_the_cpu_on_device(name, no_host_sorts):
    f = _SORTS[name]
    check(f, XT)
    check(f, XF)


@pytest.mark.parametrize("name", ["sort", "sort1_desc", "argsort_desc", "topk",
                                  "topk_smallest0", "kthvalue", "median_dim", "msort"])
def test_sorts_of_integers_bools_and_halves(name, no_host_sorts):
    f = _SORTS[name]
    x2 = XI if name not in ("topk_smallest0", "kthvalue", "median_dim", "msort") else XI[:, :4]
    check(lambda x: f(x.reshape(2, 1, -1).expand(2, 2, x.shape[-1])), x2)
    check(lambda x: f(x[None].expand(2, 2, 4)), XB)
    check(lambda x: f(x.half()), XT)
    check(lambda x: f(x.bfloat16()), XT)
    check(lambda x: f(x.to(eager.uint8)), XI.astype(np.uint8))


def test_sort_edge_shapes_and_views(no_host_sorts):
    check(lambda x: x.sort(1), np.zeros((2, 0), np.float32))
    check(lambda x: x.sort(0), np.zeros((2, 0), np.float32))
    check(lambda x: x.argsort(0), np.zeros((0,), np.int64))
    check(lambda x: x.sort(), np.array(2.5, np.float32))
    check(lambda x: x.topk(1), np.array(2.5, np.float32))
    check(lambda x: x.kthvalue(1), np.array(2.5, np.float32))
    check(lambda x: x.t().sort(0, descending=True), XF[0])                 # a strided view
    check(lambda x: x[:, ::2].topk(1, 1, largest=False), XF[1])
    check(lambda x: x.topk(5, 1), XF[0])                                   # PyTorch's errors
    check(lambda x: x.kthvalue(0), XF[0])
    check(lambda x: x.sort(3), XF[0])


def test_gradients_through_sort_topk_kthvalue_median(no_host_sorts):
    x = XF.copy()
    x[0, 0, :2] = 0.5                                  # a tie: the gradient goes to each slot
    check(lambda x: x.sort(1), x, grad=True)
    check(lambda x: x.sort(-1, descending=True)[0] * 2, x, grad=True)
    check(lambda x: x.topk(2, 2), x, grad=True)
    check(lambda x: x.kthvalue(2, 1), x, grad=True)
    check(lambda x: x.median(2), x, grad=True)
    check(lambda x: x.median(), x, grad=True)


def test_rows_longer_than_the_bound_sort_on_the_host(monkeypatch):
    monkeypatch.setattr(kernels_sort, "MAX_ROW", 3)
    before = dict(kernels_sort.HOST_SORTS)
    check(lambda x: (x.sort(-1), x.topk(2), x.kthvalue(3)), XT)
    check(lambda x: x.sort(1), XT)                     # rows of 3: on the device
    assert kernels_sort.HOST_SORTS["argsort"] == before.get("argsort", 0) + 1
    assert kernels_sort.HOST_SORTS["topk_indices"] == before.get("topk_indices", 0) + 1
    assert kernels_sort.HOST_SORTS["kthvalue_index"] == before.get("kthvalue_index", 0) + 1


# -- multinomial -----------------------------------------------------------------------------

def _assert_frequencies(draws, p, n):
    """Each category's share of the ``n`` draws within 5 standard deviations of its
    probability (sqrt(p (1 - p) / n)); a category without mass never drawn."""
    p = np.asarray(p, np.float64) / np.sum(p)
    freq = np.bincount(draws.reshape(-1), minlength=len(p)) / n
    tol = 5 * np.sqrt(p * (1 - p) / n) + 1e-12
    assert np.all(np.abs(freq - p) <= tol), (freq, p, tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multinomial_with_replacement_follows_the_distribution(dtype):
    w = np.array([1.0, 0.0, 3.0, 6.0, 0.0], dtype)            # unnormalized, zeros in the middle
    n = 2000
    d = eager.multinomial(eager.tensor(w, device="cuda"), n, replacement=True)
    assert d.is_cuda and d.dtype == eager.int64 and tuple(d.shape) == (n,)
    _assert_frequencies(d.cpu().numpy(), w, n)
    rows = np.array([[0.0, 0.0, 2.0], [1.0, 1.0, 0.0]], dtype)
    d2 = eager.multinomial(eager.tensor(rows, device="cuda"), 600, True).cpu().numpy()
    assert d2.shape == (2, 600)
    assert (d2[0] == 2).all()
    _assert_frequencies(d2[1], rows[1], 600)


def test_multinomial_without_replacement():
    w = np.array([[0.5, 0.0, 2.0, 1.0, 0.5], [1.0, 1.0, 1.0, 1.0, 1.0]], np.float32)
    d = eager.multinomial(eager.tensor(w, device="cuda"), 4).cpu().numpy()
    assert d.shape == (2, 4) and d.dtype == np.int64
    for row in d:
        assert len(set(row.tolist())) == 4                   # distinct indices
    assert 1 not in d[0]                                      # four with mass: never the zero
    full = eager.multinomial(eager.tensor(w, device="cuda"), 5).cpu().numpy()
    assert full[0, -1] == 1 and sorted(full[1]) == [0, 1, 2, 3, 4]
    # the first draw of each row follows p, the second the remaining mass
    p = np.array([1.0, 2.0, 5.0], np.float32)
    n = 800
    d = eager.multinomial(eager.tensor(np.tile(p, (n, 1)), device="cuda"), 2).cpu().numpy()
    assert (d[:, 0] != d[:, 1]).all()
    _assert_frequencies(d[:, 0], p, n)
    q = p / p.sum()
    second = [sum(q[i] * q[j] / (1 - q[i]) for i in range(3) if i != j) for j in range(3)]
    _assert_frequencies(d[:, 1], second, n)
    one = eager.multinomial(eager.tensor(w, device="cuda"), 1)             # a single draw
    assert tuple(one.shape) == (2, 1) and one.cpu().numpy()[0, 0] != 1


def test_multinomial_is_reproducible_and_takes_halves():
    w = eager.tensor(np.array([[1.0, 2.0, 3.0, 0.5]], np.float32), device="cuda")
    draws = []
    for seed_fn in (eager.manual_seed, eager.cuda.manual_seed, eager.manual_seed):
        seed_fn(11)
        draws.append([eager.multinomial(w, 6, True).cpu().numpy(),
                      eager.multinomial(w, 3).cpu().numpy()])
    for a, b in zip(draws[0], draws[1]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(draws[0], draws[2]):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(draws[0][0], eager.multinomial(w, 6, True).cpu().numpy()) or \
        not np.array_equal(draws[0][0], eager.multinomial(w, 6, True).cpu().numpy())
    for cast in (lambda t: t.half(), lambda t: t.bfloat16()):
        d = eager.multinomial(cast(w), 3).cpu().numpy()
        assert d.shape == (1, 3) and len(set(d[0].tolist())) == 3


@pytest.mark.parametrize("w, n, repl", [
    (np.array([0.5, -1.0, 0.2], np.float32), 2, True),
    (np.array([[0.5, np.nan], [1.0, 1.0]], np.float32), 1, False),
    (np.array([0.5, np.inf, 0.2], np.float64), 1, True),
    (np.array([[0.0, 0.0], [1.0, 1.0]], np.float32), 1, True),
    (np.zeros((2, 2, 2), np.float32), 1, True),
    (np.array([1, 2], np.int64), 1, True),
    (np.array([1.0, 2.0], np.float32), 3, False),
    (np.array([1.0, 2.0], np.float32), 0, True),
], ids=["negative", "nan", "inf", "zero_row", "3d", "int", "too_many", "none"])
def test_multinomial_errors_are_the_cpus(w, n, repl):
    def draw(p):
        eager.multinomial(p, n, repl)
    check(draw, w)


# -- normal with tensor arguments ----------------------------------------------------------

def test_normal_moments_shapes_and_promotion():
    n = 3000
    mean = eager.full((n,), 2.0, device="cuda")
    std = eager.full((n,), 0.5, device="cuda")
    z = eager.normal(mean, std)
    assert z.is_cuda and z.dtype == eager.float32 and tuple(z.shape) == (n,)
    h = z.cpu().numpy().astype(np.float64)
    assert abs(h.mean() - 2.0) < 5 * 0.5 / np.sqrt(n)
    assert abs(h.std() - 0.5) < 5 * 0.5 / np.sqrt(2 * n)
    b = eager.normal(eager.tensor([[0.0], [100.0]], device="cuda"),
                     eager.tensor([0.0, 1.0, 2.0], dtype=eager.float64, device="cuda"))
    assert b.dtype == eager.float64 and tuple(b.shape) == (2, 3)
    bh = b.cpu().numpy()
    np.testing.assert_array_equal(bh[:, 0], [0.0, 100.0])          # std 0: the mean
    assert np.abs(bh[1] - 100.0).max() < 20
    s = eager.normal(eager.zeros(4, device="cuda"), 3.0)
    f = eager.normal(1.0, eager.ones(2, 3, device="cuda"))
    assert tuple(s.shape) == (4,) and tuple(f.shape) == (2, 3) and s.is_cuda and f.is_cuda
    zero = eager.normal(eager.tensor([1.5, -2.0], device="cuda"), eager.zeros(2, device="cuda"))
    np.testing.assert_array_equal(zero.cpu().numpy(), [1.5, -2.0])
    h16 = eager.normal(eager.zeros(3, device="cuda").half(), eager.ones(3, device="cuda").half())
    assert h16.dtype == eager.float16 and h16.is_cuda


def test_normal_is_reproducible_and_errors_as_the_cpu():
    mean, std = eager.zeros(2, 3, device="cuda"), eager.ones(3, device="cuda")
    eager.manual_seed(4)
    a = eager.normal(mean, std).cpu().numpy()
    b = eager.normal(mean, std).cpu().numpy()
    eager.cuda.manual_seed(4)
    np.testing.assert_array_equal(eager.normal(mean, std).cpu().numpy(), a)
    assert not np.array_equal(a, b)
    for bad in (np.array([1.0, -0.5], np.float32), np.array([1.0, np.nan], np.float32)):
        check(lambda m, s: eager.normal(m, s), np.zeros(2, np.float32), bad)
    check(lambda m: eager.normal(m, -1.0), np.zeros(2, np.float32))
    check(lambda m: eager.normal(m, 1.0), np.zeros(2, np.int64))
    check(lambda m, s: eager.normal(m, s).shape, np.zeros(0, np.float32),
          np.zeros(0, np.float32))


# -- view(dtype) -----------------------------------------------------------------------------

XV = RNG.standard_normal((2, 6)).astype(np.float32)


@pytest.mark.parametrize("dtype", ["int32", "float64", "int16", "uint8", "float16", "bfloat16",
                                   "int64", "bool"])
def test_view_dtype_reads_the_cpus_bits(dtype):
    dt = getattr(eager, dtype)

    def bits(y):          # floats compared by their bits (NaN payloads included)
        if y.dtype in (eager.float16, eager.bfloat16):
            return y.view(eager.int16)
        return y.view(eager.int64) if y.dtype == eager.float64 else y
    src = XV if dtype != "bool" else (XV > 0).astype(np.uint8)
    check(lambda x: bits(x.view(dt)), src)
    check(lambda x: bits(x[:, 2:].view(dt)), src)                       # an offset view
    check(lambda x: bits(x.t().contiguous().t().view(dt)), src)           # strides of x.t()


def test_view_dtype_errors_and_shared_memory():
    check(lambda x: x.view(eager.float64), XV[:, :3].copy())             # size(-1) odd
    check(lambda x: x.t().view(eager.float64), XV)                        # stride(-1) != 1
    check(lambda x: x[0, 0].view(eager.float64), XV)                      # 0-d
    check(lambda x: x[0, 0].view(eager.int32), XV)                        # same size: fine
    check(lambda x: x[:, :1].view(eager.int16), XV)                       # a size-1 last dim
    x = eager.tensor(XV, device="cuda")
    with pytest.raises(RuntimeError, match=r"storage_offset\(\) must be divisible by 2"):
        x[:, 1:3].view(eager.float64)
    with pytest.raises(RuntimeError, match=r"stride\(0\) must be divisible by 2"):
        eager.tensor(XV[:, :5].copy(), device="cuda")[:, :2].view(eager.float64)
    y = x.view(eager.int32)
    assert y.is_cuda and tuple(y.shape) == (2, 6)
    y[0, 0] = 0
    y[1, 2:4] = np.float32(1.5).view(np.int32).item()
    h = x.cpu().numpy()
    assert h[0, 0] == 0.0 and (h[1, 2:4] == 1.5).all()
    w = x.view(eager.uint8)
    assert tuple(w.shape) == (2, 24)
    w[0, 4:8] = 0
    assert x[0, 1].item() == 0.0
    np.testing.assert_array_equal(x.view(eager.float64).view(eager.float32).cpu().numpy(),
                                  x.cpu().numpy())


# -- no float64 in the float32 kernels ---------------------------------------------------------

_A32, _I = ["array", "float32", 1], ["int64"]
_SIG = {"multinomial_sums32": [_A32, _A32, _A32, _I, _I, ["array", "int32", 1]],
        "multinomial_draw32": [_A32, _A32, ["array", "int64", 1], _I, _I, _I, _I, _I],
        "multinomial_keys32": [_A32, _A32, _I, _I, _I]}

def test_no_float64_in_the_ptx_of_float32_multinomial_and_rank():
    """As tests/gpu/test_cuda_random32.py (its f64_in_ptx: sm_80, no simulator)."""
    f64 = f64_in_ptx({**_SIG, "rank": [_A32, ["array", "int64", 1], _I, _I, _I, _I, _I],
                      "multinomial_keys": [["array", "float64", 1]] * 2 + [_I] * 3})
    assert f64.pop("multinomial_keys")       # the check sees float64 where there is some
    assert f64 == {name: [] for name in f64}, f64
    assert set(f64) == set(_SIG) | {"rank"}
