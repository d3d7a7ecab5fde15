"""F.scaled_dot_product_attention, F.multi_head_attention_forward and
nn.MultiheadAttention: values and gradients against PyTorch (weights copied across),
finite differences in float64 for the masked paths, names, reprs and errors."""

from __future__ import annotations

import numpy as np
import pytest

import eager
from eager import nn
from eager.nn import functional as F
from tests.helpers import gradcheck

RNG = np.random.default_rng(11)


def rnd(*shape):
    return RNG.standard_normal(shape)


def close(ours, theirs, atol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=atol,
                               rtol=1e-7)


def _bool_mask(shape, row_masked=None):
    m = RNG.random(shape) > 0.4
    m[..., 0] = True
    if row_masked is not None:
        m[..., row_masked, :] = False          # a query that sees no key at all
    return m


SDPA_CASES = {
    "plain": {},
    "causal": {"is_causal": True},
    "bool mask, a row fully masked": {"attn_mask": _bool_mask((4, 6), row_masked=1)},
    "float mask broadcast over heads": {"attn_mask": rnd(2, 1, 4, 6)},
    "float mask with a -inf row": {"attn_mask": np.where(np.arange(4)[:, None] == 2, -np.inf,
                                                         rnd(4, 6))},
    "scale": {"scale": 0.3},
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case):
    torch = pytest.importorskip("torch")
    kw = SDPA_CASES[case]
    arrays = [rnd(2, 3, 4, 5), rnd(2, 3, 6, 5), rnd(2, 3, 6, 7)]
    ti = [torch.tensor(a, requires_grad=True) for a in arrays]
    ei = [eager.tensor(a, requires_grad=True) for a in arrays]
    tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    ekw = {k: eager.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    to = torch.nn.functional.scaled_dot_product_attention(*ti, **tkw)
    eo = F.scaled_dot_product_attention(*ei, **ekw)
    close(eo, to)
    assert np.isfinite(eo.detach().numpy()).all()
    w = rnd(*to.shape)
    (to * torch.tensor(w)).sum().backward()
    (eo * eager.tensor(w)).sum().backward()
    for e, t in zip(ei, ti):
        assert np.isfinite(e.grad.numpy()).all()
        close(e.grad, t.grad)


def test_sdpa_gqa_and_unbatched():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    q, k, v = rnd(2, 4, 3, 5), rnd(2, 2, 6, 5), rnd(2, 2, 6, 7)
    t = tf.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                                        is_causal=True, enable_gqa=True)
    e = F.scaled_dot_product_attention(eager.tensor(q), eager.tensor(k), eager.tensor(v),
                                       is_causal=True, enable_gqa=True)
    close(e, t)
    t = tf.scaled_dot_product_attention(*(torch.tensor(a[0, 0]) for a in (q, k, v)))
    e = F.scaled_dot_product_attention(*(eager.tensor(a[0, 0]) for a in (q, k, v)))
    close(e, t)


@pytest.mark.parametrize("mask", ["bool", "float", "causal"])
def test_sdpa_gradcheck(mask):
    kw = {}
    if mask == "bool":
        kw["attn_mask"] = eager.tensor(_bool_mask((3, 4), row_masked=2))
    elif mask == "float":
        kw["attn_mask"] = eager.tensor(rnd(3, 4))
    else:
        kw["is_causal"] = True

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kw)
    assert gradcheck(fn, rnd(2, 3, 2), rnd(2, 4, 2), rnd(2, 4, 3))


def test_sdpa_dropout_uses_global_generator():
    q, k, v = (eager.tensor(rnd(2, 4, 5).astype(np.float32)) for _ in range(3))
    eager.manual_seed(5)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    eager.manual_seed(5)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, F.scaled_dot_product_attention(q, k, v).numpy())
    # p=1 drops every weight
    np.testing.assert_array_equal(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
                                  .numpy(), 0)


def test_sdpa_errors():
    q, k, v = eager.randn(2, 3, 4), eager.randn(2, 5, 4), eager.randn(2, 5, 6)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when "
                                           "is_causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=eager.ones(3, 5, dtype=eager.bool),
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same "
                                           "dtype, but got query.dtype: float key.dtype: "
                                           "double and value.dtype: float instead."):
        F.scaled_dot_product_attention(q, k.double(), v)
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 "
                                           r"tensor to be: \[2, 4\] but got: \[2, 3\]."):
        F.scaled_dot_product_attention(q, k[..., :3], v)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=eager.ones(3, 5, dtype=eager.int64))
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(eager.randn(1, 4, 3, 4), eager.randn(1, 3, 5, 4),
                                       eager.randn(1, 3, 5, 4), enable_gqa=True)


# -- MultiheadAttention ------------------------------------------------------------------------

MHA_CONFIGS = [{}, {"batch_first": True}, {"bias": False}, {"kdim": 3, "vdim": 5},
               {"add_bias_kv": True, "add_zero_attn": True}]


def mha_pair(torch, **kwargs):
    theirs = torch.nn.MultiheadAttention(8, 2, **kwargs).double()
    ours = nn.MultiheadAttention(8, 2, **kwargs).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("kwargs", MHA_CONFIGS)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", ["none", "key_padding", "both"])
def test_mha_matches_torch(kwargs, need_weights, masks):
    torch = pytest.importorskip("torch")
    ours, theirs = mha_pair(torch, **kwargs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    bf = kwargs.get("batch_first", False)
    cross = "kdim" in kwargs
    N, L = 3, 4
    S = 5 if cross else L
    shape = (lambda T, E: (N, T, E)) if bf else (lambda T, E: (T, N, E))
    x = rnd(*shape(L, 8))
    tx, ex = torch.tensor(x, requires_grad=True), eager.tensor(x, requires_grad=True)
    if cross:
        kv = [rnd(*shape(S, kwargs["kdim"])), rnd(*shape(S, kwargs["vdim"]))]
        targs, eargs = (tx, *map(torch.tensor, kv)), (ex, *map(eager.tensor, kv))
    else:
        targs, eargs = (tx, tx, tx), (ex, ex, ex)
    mk = {}
    if masks != "none":
        kpm = RNG.random((N, S)) > 0.6
        kpm[:, 0] = False
        mk["key_padding_mask"] = kpm
    if masks == "both":
        am = RNG.random((L, S)) > 0.7
        am[:, 0] = False
        mk["attn_mask"] = am
    to, tw = theirs(*targs, need_weights=need_weights,
                    **{k: torch.tensor(v) for k, v in mk.items()})
    eo, ew = ours(*eargs, need_weights=need_weights,
                  **{k: eager.tensor(v) for k, v in mk.items()})
    close(eo, to)
    if need_weights:
        close(ew, tw)
    else:
        assert ew is None
    w = rnd(*to.shape)
    (to * torch.tensor(w)).sum().backward()
    (eo * eager.tensor(w)).sum().backward()
    close(ex.grad, tx.grad)
    theirs_p = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        close(p.grad, theirs_p[name].grad)


def test_mha_per_head_weights_unbatched_and_causal():
    torch = pytest.importorskip("torch")
    ours, theirs = mha_pair(torch)
    x = rnd(4, 8)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.double)
    to, tw = theirs(*(torch.tensor(x),) * 3, attn_mask=mask, average_attn_weights=False,
                    is_causal=True)
    eo, ew = ours(*(eager.tensor(x),) * 3, attn_mask=eager.tensor(mask.numpy()),
                  average_attn_weights=False, is_causal=True)
    assert tuple(ew.shape) == (2, 4, 4)
    close(eo, to)
    close(ew, tw)
    to, _ = theirs(*(torch.tensor(x),) * 3, attn_mask=mask, need_weights=False, is_causal=True)
    eo, _ = ours(*(eager.tensor(x),) * 3, attn_mask=eager.tensor(mask.numpy()),
                 need_weights=False, is_causal=True)
    close(eo, to)


def test_mha_gradcheck_with_masks():
    eager.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    kpm = eager.tensor(np.array([[False, False, True], [False, True, True]]))
    am = eager.tensor(np.triu(np.ones((3, 3), bool), 1))

    def fn(x):
        return mha(x, x, x, key_padding_mask=kpm, attn_mask=am, need_weights=False)[0]
    assert gradcheck(fn, rnd(2, 3, 4))


def test_mha_repr_init_and_errors():
    torch = pytest.importorskip("torch")
    for kw in ({}, {"kdim": 3, "vdim": 5, "bias": False}, {"add_bias_kv": True}):
        assert repr(nn.MultiheadAttention(8, 2, **kw)) == \
            repr(torch.nn.MultiheadAttention(8, 2, **kw))
        assert list(nn.MultiheadAttention(8, 2, **kw).state_dict()) == \
            list(torch.nn.MultiheadAttention(8, 2, **kw).state_dict())
    m = nn.MultiheadAttention(8, 2)
    np.testing.assert_array_equal(m.in_proj_bias.detach().numpy(), 0)
    np.testing.assert_array_equal(m.out_proj.bias.detach().numpy(), 0)
    bound = np.sqrt(6 / (8 + 24))                  # xavier_uniform_ on (3E, E)
    assert np.abs(m.in_proj_weight.detach().numpy()).max() <= bound
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0, got "
                                         "embed_dim=0 and num_heads=2 instead"):
        nn.MultiheadAttention(0, 2)
    x = eager.randn(4, 2, 8)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got "
                                             "6"):
        m(eager.randn(4, 2, 6), eager.randn(4, 2, 6), eager.randn(4, 2, 6))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*\[3, 3\]\), "
                                           r"but should be \(4, 4\)."):
        m(x, x, x, attn_mask=eager.zeros(3, 3))
    with pytest.raises(AssertionError, match=r"For batched \(3-D\) `query`, expected `key` and "
                                             r"`value` to be 3-D but found 2-D and 3-D"):
        m(x, x[0], x)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        m(x, x, x, key_padding_mask=eager.zeros(2, 4, dtype=eager.bool),
          attn_mask=eager.zeros(4, 4))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask "
                                             "are supported"):
        m(x, x, x, key_padding_mask=eager.zeros(2, 4, dtype=eager.int64))
