"""``nn.EmbeddingBag`` / ``F.embedding_bag`` (modes, offsets, 2-D input, padding_idx,
per_sample_weights, include_last_offset, max_norm, scale_grad_by_freq), ``F.gumbel_softmax``
and ``nn.DataParallel`` (PyTorch's behaviour without GPUs): against PyTorch where it is
importable, and gradients against finite differences in float64."""

import warnings

import numpy as np
import pytest

import eager
import eager.nn as nn
import eager.nn.functional as F
from tests.helpers import check_like_torch, gradcheck

RNG = np.random.default_rng(3)
W = RNG.standard_normal((10, 4))
IX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 7])


def _bag_like_torch(ix, offsets=None, psw=None, rtol=1e-12, **kw):
    """embedding_bag of the weight (and per-sample weights) against PyTorch, float64."""
    torch = pytest.importorskip("torch")
    arrays = [W] if psw is None else [W, psw]

    def ours(w, p=None):
        return F.embedding_bag(eager.tensor(ix), w,
                               None if offsets is None else eager.tensor(offsets),
                               per_sample_weights=p, **kw)

    def theirs(w, p=None):
        return torch.nn.functional.embedding_bag(
            torch.tensor(ix), w, None if offsets is None else torch.tensor(offsets),
            per_sample_weights=p, **kw)

    return check_like_torch(ours, theirs, *arrays, rtol=rtol, atol=1e-14)


OFFSETS = [[0, 4], [0, 0, 3, 3, 10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [0], [0, 5, 10, 10]]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets", OFFSETS, ids=[str(i) for i in range(len(OFFSETS))])
def test_offsets_match_torch(mode, offsets):
    _bag_like_torch(IX, offsets, mode=mode)
    _bag_like_torch(IX, offsets + [10], mode=mode, include_last_offset=True)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4, -6, 2])
def test_padding_idx_matches_torch(mode, padding_idx):
    _bag_like_torch(IX, [0, 0, 3, 3, 6], mode=mode, padding_idx=padding_idx)
    # a bag made only of padding is empty (zeros)
    _bag_like_torch(np.array([4, 4, 1, 4]), [0, 2], mode=mode, padding_idx=padding_idx)
    _bag_like_torch(IX.reshape(5, 2), mode=mode, padding_idx=padding_idx)
    _bag_like_torch(np.array([[4, 4], [4, 1]]), mode=mode, padding_idx=padding_idx)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_2d_input_matches_torch(mode):
    _bag_like_torch(IX.reshape(2, 5), mode=mode)
    _bag_like_torch(IX.reshape(10, 1), mode=mode)
    _bag_like_torch(np.array([[3, 3, 3], [1, 2, 1]]), mode=mode)   # repeated rows: ties


def test_per_sample_weights_match_torch():
    psw = RNG.standard_normal(10)
    _bag_like_torch(IX, [0, 3, 3, 7], psw, mode="sum")
    _bag_like_torch(IX, [0, 3, 3, 7], psw, mode="sum", padding_idx=2)
    _bag_like_torch(IX.reshape(2, 5), None, psw.reshape(2, 5), mode="sum")
    _bag_like_torch(IX, [0, 3, 3, 7, 10], psw, mode="sum", include_last_offset=True)


def test_int32_indices_and_empty_input():
    torch = pytest.importorskip("torch")
    for idx_dt, off_dt in [(np.int32, np.int32), (np.int32, np.int64), (np.int64, np.int32)]:
        _bag_like_torch(IX.astype(idx_dt), np.array([0, 6], dtype=off_dt), mode="mean")
    for mode in ("sum", "mean", "max"):
        got = F.embedding_bag(eager.tensor([], dtype=eager.int64), eager.tensor(W),
                              eager.tensor([0, 0]), mode=mode)
        want = torch.nn.functional.embedding_bag(torch.tensor([], dtype=torch.int64),
                                                 torch.tensor(W), torch.tensor([0, 0]),
                                                 mode=mode)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        got = F.embedding_bag(eager.tensor([1, 2]), eager.tensor(W),
                              eager.tensor([], dtype=eager.int64), mode=mode)
        assert tuple(got.shape) == (0, 4)


def test_float32_matches_torch():
    torch = pytest.importorskip("torch")
    w = W.astype(np.float32)
    for mode in ("sum", "mean", "max"):
        got = F.embedding_bag(eager.tensor(IX), eager.tensor(w), eager.tensor([0, 3, 7]),
                              mode=mode)
        want = torch.nn.functional.embedding_bag(torch.tensor(IX), torch.tensor(w),
                                                 torch.tensor([0, 3, 7]), mode=mode)
        assert got.dtype == eager.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_trailing_indices_after_the_last_offset_belong_to_no_bag():
    # the documented semantics (the last offset ends the last bag); PyTorch's CPU kernels
    # disagree among themselves (float32 sum agrees; float32 mean divides by the length up
    # to the end of the input, float32 max and float64 fold the tail into the last bag)
    torch = pytest.importorskip("torch")
    w = W.astype(np.float32)
    bags = [IX[:3], IX[3:6]]
    for mode, reduce in (("sum", np.sum), ("mean", np.mean), ("max", np.max)):
        got = F.embedding_bag(eager.tensor(IX), eager.tensor(w), eager.tensor([0, 3, 6]),
                              mode=mode, include_last_offset=True)
        np.testing.assert_allclose(got.numpy(), [reduce(w[b], 0) for b in bags], rtol=1e-6)
    want = torch.nn.functional.embedding_bag(torch.tensor(IX), torch.tensor(w),
                                             torch.tensor([0, 3, 6]), mode="sum",
                                             include_last_offset=True)
    got = F.embedding_bag(eager.tensor(IX), eager.tensor(w), eager.tensor([0, 3, 6]),
                          mode="sum", include_last_offset=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    psw = eager.tensor(RNG.standard_normal(10), requires_grad=True)
    F.embedding_bag(eager.tensor(IX), eager.tensor(W), eager.tensor([0, 3, 6]), mode="sum",
                    per_sample_weights=psw, include_last_offset=True).sum().backward()
    np.testing.assert_array_equal(psw.grad.numpy()[6:], 0.0)


def test_scale_grad_by_freq():
    # where PyTorch's CPU kernel is right (every index equally frequent) it is the reference
    for mode in ("sum", "mean"):
        _bag_like_torch(np.array([[1, 1, 3], [3, 2, 2]]), mode=mode, scale_grad_by_freq=True)
        _bag_like_torch(np.array([5, 1, 3, 0]), [0, 2], mode=mode, scale_grad_by_freq=True)
    # mixed frequencies: each row's gradient divided by its index's count (pytorch#190063:
    # PyTorch 2.13's CPU kernel divides some rows by another index's count)
    w = eager.tensor(W, requires_grad=True)
    ix = eager.tensor([1, 1, 3, 1, 9])
    F.embedding_bag(ix, w, eager.tensor([0, 2]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    expected = np.zeros_like(W)
    expected[[1, 3, 9]] = 1.0                      # 3 * (1/3), 1 * (1/1), 1 * (1/1)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-12)
    out = F.embedding_bag(ix, eager.tensor(W), eager.tensor([0, 2]), mode="sum",
                          scale_grad_by_freq=True)
    np.testing.assert_array_equal(out.numpy(), F.embedding_bag(
        ix, eager.tensor(W), eager.tensor([0, 2]), mode="sum").numpy())


def test_max_norm_renormalizes_the_used_rows_like_torch():
    torch = pytest.importorskip("torch")
    for norm_type in (2.0, 1.0):
        w, tw = eager.tensor(W * 2), torch.tensor(W * 2)
        got = F.embedding_bag(eager.tensor([1, 2, 2, 7]), w, eager.tensor([0, 2]),
                              max_norm=1.5, norm_type=norm_type)
        want = torch.nn.functional.embedding_bag(torch.tensor([1, 2, 2, 7]), tw,
                                                 torch.tensor([0, 2]), max_norm=1.5,
                                                 norm_type=norm_type)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-12)   # in place, as torch


def test_embedding_bag_gradcheck():
    psw = RNG.standard_normal(10)
    for mode in ("sum", "mean", "max"):
        gradcheck(lambda w: F.embedding_bag(eager.tensor(IX), w, eager.tensor([0, 0, 4, 9]),
                                            mode=mode, padding_idx=2), W)
        gradcheck(lambda w: F.embedding_bag(eager.tensor(IX.reshape(5, 2)), w, mode=mode), W)
    gradcheck(lambda w, p: F.embedding_bag(eager.tensor(IX), w, eager.tensor([0, 4]),
                                           mode="sum", per_sample_weights=p, padding_idx=4),
              W, psw)


# -- errors as PyTorch ---------------------------------------------------------------------

L = np.array


def _torchify(v, torch):
    return torch.tensor(v) if isinstance(v, np.ndarray) else v


def _eagerify(v):
    return eager.tensor(v) if isinstance(v, np.ndarray) else v


BAG_ERRORS = [
    ((L([1, 2, 3, 4]), W, L([1, 2])), {}),
    ((L([1, 2, 3, 4]), W, L([0, 5])), {}),
    ((L([1, 2, 3, 4]), W, L([0, 2, 5])), dict(include_last_offset=True)),
    ((L([1, 2, 3, 40]), W, L([0, 2])), {}),
    ((L([1, 2, 3, -1]), W, L([0, 2])), dict(mode="max")),
    ((L([1.0, 2, 3, 4]), W, L([0, 2])), {}),
    ((L([1, 2, 3, 4]), W, L([0, 2.0])), {}),
    ((L([1, 2, 3, 4]), W, L([[0, 2]])), {}),
    ((L([1, 2, 3, 4]), W, None), {}),
    ((L([[1, 2], [3, 4]]), W, L([0, 2])), {}),
    ((L([[[1, 2], [3, 4]]]), W, None), {}),
    ((L([1, 2, 3, 4]), W, L([0, 2])), dict(mode="foo")),
    ((L([1, 2, 3, 4]), W, L([0, 2])), dict(mode="max", per_sample_weights=L([1.0] * 4))),
    ((L([1, 2, 3, 4]), W, L([0, 2])), dict(mode="sum", per_sample_weights=L([1.0] * 3))),
    ((L([1, 2, 3, 4]), W, L([0, 2])),
     dict(mode="sum", per_sample_weights=L([1.0] * 4, dtype=np.float32))),
    ((L([1, 2, 3, 4]), W, L([0, 2])), dict(padding_idx=10)),
    ((L([1, 2, 3, 4]), W, L([0, 2])), dict(padding_idx=-11)),
    ((L([1, 2, 3, 4]), W[0], L([0, 2])), {}),
    ((L([1, 2]), W, L([], dtype=np.int64)), dict(include_last_offset=True)),
    ((L([1, 2, 3, 4]), W, L([0, 2])), dict(mode="max", scale_grad_by_freq=True)),
    ((L([1, 2, 3, 4]), W, L([0, 2])), dict(mode="max", sparse=True)),
    ((L([1, 2, 3, 4]), W.astype(np.int64), L([0, 2])), {}),
]


@pytest.mark.parametrize("args,kw", BAG_ERRORS, ids=[str(i) for i in range(len(BAG_ERRORS))])
def test_errors_match_torch(args, kw):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        torch.nn.functional.embedding_bag(*[_torchify(a, torch) for a in args],
                                          **{k: _torchify(v, torch) for k, v in kw.items()})
    with pytest.raises(Exception) as ours:
        F.embedding_bag(*[_eagerify(a) for a in args],
                        **{k: _eagerify(v) for k, v in kw.items()})
    assert type(ours.value) is type(theirs.value)
    want = str(theirs.value).split("\n[ torch.")[0].replace("torch.", "eager.")
    assert str(ours.value).replace("eager.tensor.Tensor", "eager.Tensor") == want


def test_decreasing_offsets_and_sparse_raise():
    with pytest.raises(RuntimeError, match="offsets have to be non-decreasing"):
        F.embedding_bag(eager.tensor([1, 2, 3, 4]), eager.tensor(W), eager.tensor([0, 3, 2]))
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding_bag(eager.tensor([[1, 2]]), eager.tensor(W), sparse=True)


def test_swapped_arguments_warn_and_work():
    with pytest.warns(UserWarning, match="Argument order of nn.functional.embedding_bag was "
                                         "changed"):
        out = F.embedding_bag(eager.tensor(W), eager.tensor([[1, 2]]))
    np.testing.assert_allclose(out.numpy(), W[[1, 2]].mean(0, keepdims=True), rtol=1e-12)


# -- the module ----------------------------------------------------------------------------

def test_module_matches_torch():
    torch = pytest.importorskip("torch")
    for kw in (dict(mode="sum"), dict(mode="max", padding_idx=3),
               dict(mode="mean", include_last_offset=True, padding_idx=-1)):
        m = nn.EmbeddingBag(10, 4, **kw)
        tm = torch.nn.EmbeddingBag(10, 4, **kw)
        assert repr(m) == repr(tm)
        assert m.padding_idx == tm.padding_idx
        if m.padding_idx is not None:
            np.testing.assert_array_equal(m.weight.detach().numpy()[m.padding_idx], 0.0)
        with torch.no_grad():
            tm.weight.copy_(torch.tensor(m.weight.detach().numpy()))
        offsets = [0, 3, 3, 10] if kw.get("include_last_offset") else [0, 3, 3]
        got = m(eager.tensor(IX), eager.tensor(offsets))
        want = tm(torch.tensor(IX), torch.tensor(offsets))
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    m = nn.EmbeddingBag(10, 4, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)
    assert repr(m) == repr(torch.nn.EmbeddingBag(10, 4, max_norm=1.0, norm_type=1.0,
                                                 scale_grad_by_freq=True))


def test_module_weight_init_state_dict_and_per_sample_weights():
    eager.manual_seed(0)
    m = nn.EmbeddingBag(50, 8, mode="sum", dtype=eager.float64)
    assert m.weight.dtype == eager.float64 and m.weight.requires_grad
    assert list(m.state_dict()) == ["weight"]
    w = m.weight.detach().numpy()
    assert abs(w.mean()) < 0.2 and 0.8 < w.std() < 1.2           # N(0, 1)
    psw = eager.tensor(RNG.standard_normal(10), requires_grad=True)
    out = m(eager.tensor(IX), eager.tensor([0, 5]), per_sample_weights=psw)
    out.sum().backward()
    assert psw.grad is not None and m.weight.grad is not None
    from eager.nn.modules.sparse import EmbeddingBag
    assert EmbeddingBag is nn.EmbeddingBag


def test_from_pretrained():
    emb = eager.tensor(W)
    m = nn.EmbeddingBag.from_pretrained(emb, mode="max")
    assert not m.weight.requires_grad and m.mode == "max"
    np.testing.assert_array_equal(m(eager.tensor([[1, 2]])).numpy(), W[[1, 2]].max(0)[None])
    assert nn.EmbeddingBag.from_pretrained(emb, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.EmbeddingBag.from_pretrained(eager.tensor(W[0]))
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(5, 2, padding_idx=5)
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        nn.EmbeddingBag(5, 2, _weight=eager.tensor(W))


# -- gumbel_softmax ------------------------------------------------------------------------

def test_gumbel_softmax_is_softmax_of_perturbed_logits():
    logits = eager.tensor(RNG.standard_normal((4, 6)))
    eager.manual_seed(7)
    y = F.gumbel_softmax(logits, tau=0.7)
    eager.manual_seed(7)
    e = eager.empty_like(logits).exponential_()
    want = ((logits - e.log()) / 0.7).softmax(-1)
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.sum(-1).numpy(), 1.0, rtol=1e-12)


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    logits = RNG.standard_normal((5, 3, 4))
    for dim in (-1, 1):
        a = eager.tensor(logits, requires_grad=True)
        b = eager.tensor(logits, requires_grad=True)
        eager.manual_seed(3)
        hard = F.gumbel_softmax(a, tau=0.5, hard=True, dim=dim)
        eager.manual_seed(3)
        soft = F.gumbel_softmax(b, tau=0.5, dim=dim)
        h = hard.detach().numpy()
        assert set(np.unique(h)) <= {0.0, 1.0}
        np.testing.assert_array_equal(h.sum(dim), 1.0)
        np.testing.assert_array_equal(h.argmax(dim), soft.detach().numpy().argmax(dim))
        w = eager.tensor(RNG.standard_normal(logits.shape))
        (hard * w).sum().backward()
        (soft * w).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_gumbel_softmax_samples_the_categorical_distribution():
    eager.manual_seed(0)
    logits = eager.tensor([[1.0, 0.0, -1.0]]).expand(6000, 3)
    y = F.gumbel_softmax(logits, hard=True)
    freq = y.mean(0).numpy()
    np.testing.assert_allclose(freq, logits[0].softmax(-1).numpy(), atol=0.03)


def test_gumbel_softmax_eps_warns():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        F.gumbel_softmax(eager.randn(2, 3), eps=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.gumbel_softmax(eager.randn(2, 3))


# -- DataParallel --------------------------------------------------------------------------

def test_data_parallel_wraps_the_module():
    eager.manual_seed(0)
    inner = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    dp = nn.DataParallel(inner, device_ids=[0, 1], output_device=0, dim=0)
    assert dp.module is inner and dp.device_ids == []
    x = eager.randn(5, 4)
    np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    assert [p is q for p, q in zip(dp.parameters(), inner.parameters())] == [True] * 4
    keys = list(dp.state_dict())
    assert keys == ["module." + k for k in inner.state_dict()]
    dp(x).sum().backward()
    assert inner[0].weight.grad is not None
    # a checkpoint of the wrapper loads into it; the inner state loads into the module
    fresh = nn.DataParallel(nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)))
    fresh.load_state_dict(dp.state_dict())
    np.testing.assert_array_equal(fresh(x).detach().numpy(), dp(x).detach().numpy())
    kw_module = nn.DataParallel(nn.MultiheadAttention(4, 2, batch_first=True))
    q = eager.randn(2, 3, 4)
    out, _ = kw_module(q, q, q, need_weights=False)
    assert tuple(out.shape) == (2, 3, 4)


def test_data_parallel_like_torch_without_gpus():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("PyTorch's DataParallel splits batches when it finds GPUs")
    tdp = torch.nn.DataParallel(torch.nn.Linear(4, 2))
    dp = nn.DataParallel(nn.Linear(4, 2))
    assert list(dp.state_dict()) == list(tdp.state_dict())
    assert dp.device_ids == tdp.device_ids
    assert repr(dp) == repr(tdp)
