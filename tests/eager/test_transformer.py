"""nn.TransformerEncoderLayer / TransformerEncoder / TransformerDecoderLayer /
TransformerDecoder / Transformer against PyTorch (weights copied across): values,
gradients, masks, submodule names, reprs, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import eager
from eager import nn
from tests.helpers import gradcheck

RNG = np.random.default_rng(5)


def rnd(*shape):
    return RNG.standard_normal(shape)


def close(ours, theirs, atol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=atol,
                               rtol=1e-7)


def copy_from_torch(ours, theirs):
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def check_grads(ours, theirs, ei, ti):
    for e, t in zip(ei, ti):
        close(e.grad, t.grad)
    theirs_p = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        close(p.grad, theirs_p[name].grad)


ENCODER_CONFIGS = [
    {},
    {"batch_first": True, "norm_first": True, "activation": "gelu"},
    {"bias": False, "layer_norm_eps": 1e-3},
]


@pytest.mark.parametrize("kwargs", ENCODER_CONFIGS)
@pytest.mark.parametrize("masks", ["none", "causal", "padding"])
def test_encoder_matches_torch(kwargs, masks):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the nested-tensor notice (tested below)
        theirs = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kwargs), 2,
            norm=torch.nn.LayerNorm(8)).double()
        ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                **kwargs),
                                     2, norm=nn.LayerNorm(8)).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_from_torch(ours, theirs)
    bf = kwargs.get("batch_first", False)
    x = rnd(3, 5, 8) if bf else rnd(5, 3, 8)
    tx, ex = torch.tensor(x, requires_grad=True), eager.tensor(x, requires_grad=True)
    tk, ek = {}, {}
    if masks == "causal":
        tk["mask"] = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.double)
        ek["mask"] = nn.Transformer.generate_square_subsequent_mask(5, dtype=eager.float64)
        close(ek["mask"], tk["mask"])
    elif masks == "padding":
        kpm = np.zeros((3, 5), bool)
        kpm[1, 3:] = True
        tk["src_key_padding_mask"] = torch.tensor(kpm)
        ek["src_key_padding_mask"] = eager.tensor(kpm)
    to, eo = theirs(tx, **tk), ours(ex, **ek)
    close(eo, to)
    w = rnd(*to.shape)
    (to * torch.tensor(w)).sum().backward()
    (eo * eager.tensor(w)).sum().backward()
    check_grads(ours, theirs, [ex], [tx])


@pytest.mark.parametrize("kwargs", [{}, {"batch_first": True, "norm_first": True}])
def test_decoder_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(8, 2, 16, 0.0, **kwargs), 2).double()
    ours = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, 0.0, **kwargs),
                                 2).double()
    assert repr(ours) == repr(theirs)
    copy_from_torch(ours, theirs)
    bf = kwargs.get("batch_first", False)
    tgt = rnd(3, 4, 8) if bf else rnd(4, 3, 8)
    mem = rnd(3, 6, 8) if bf else rnd(6, 3, 8)
    mkpm = np.zeros((3, 6), bool)
    mkpm[:, -1] = True
    ti = [torch.tensor(a, requires_grad=True) for a in (tgt, mem)]
    ei = [eager.tensor(a, requires_grad=True) for a in (tgt, mem)]
    tm = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.double)
    to = theirs(*ti, tgt_mask=tm, memory_key_padding_mask=torch.tensor(mkpm))
    eo = ours(*ei, tgt_mask=eager.tensor(tm.numpy()),
              memory_key_padding_mask=eager.tensor(mkpm))
    close(eo, to)
    w = rnd(*to.shape)
    (to * torch.tensor(w)).sum().backward()
    (eo * eager.tensor(w)).sum().backward()
    check_grads(ours, theirs, ei, ti)


def test_transformer_model_matches_torch():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.Transformer(8, 2, 1, 2, 16, 0.0, activation="gelu").double()
        ours = nn.Transformer(8, 2, 1, 2, 16, 0.0, activation="gelu").double()
    assert repr(ours) == repr(theirs)
    copy_from_torch(ours, theirs)
    src, tgt = rnd(5, 2, 8), rnd(4, 2, 8)
    tm = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.double)
    close(ours(eager.tensor(src), eager.tensor(tgt), tgt_mask=eager.tensor(tm.numpy())),
          theirs(torch.tensor(src), torch.tensor(tgt), tgt_mask=tm))
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        ours(eager.tensor(src), eager.tensor(rnd(4, 3, 8)))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to "
                                           "d_model"):
        ours(eager.tensor(src), eager.tensor(rnd(4, 2, 6)))


def test_encoder_layer_gradcheck_with_masks():
    eager.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, batch_first=True,
                                       norm_first=True).double()
    kpm = eager.tensor(np.array([[False, False, True], [False, False, False]]))
    mask = eager.tensor(np.triu(np.ones((3, 3), bool), 1))

    def fn(x):
        return layer(x, src_mask=mask, src_key_padding_mask=kpm)
    assert gradcheck(fn, rnd(2, 3, 4), atol=1e-5)


def test_reprs_callable_activation_and_warning():
    torch = pytest.importorskip("torch")
    for kw in ({}, {"activation": "gelu", "bias": False}):
        assert repr(nn.TransformerEncoderLayer(8, 2, 16, **kw)) == \
            repr(torch.nn.TransformerEncoderLayer(8, 2, 16, **kw))
    layer = nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU())
    assert layer.activation_relu_or_gelu == 2
    assert repr(layer) == repr(torch.nn.TransformerEncoderLayer(8, 2, 16,
                                                                activation=torch.nn.GELU()))
    assert nn.TransformerEncoderLayer(8, 2, activation=eager.tanh).activation_relu_or_gelu == 0
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but "
                                         "self.use_nested_tensor is False because "
                                         "encoder_layer.self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), 2)
    assert enc.use_nested_tensor is False
    assert enc.layers[0] is not enc.layers[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, batch_first=True), 2)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.TransformerEncoderLayer(9, 2)


def test_dropout_in_training_only():
    eager.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5, batch_first=True)
    x = eager.randn(2, 5, 8)
    layer.requires_grad_(False)
    layer.eval()
    a, b = layer(x).numpy(), layer(x).numpy()
    np.testing.assert_array_equal(a, b)
    layer.train()
    eager.manual_seed(3)
    c = layer(x).numpy()
    eager.manual_seed(3)
    np.testing.assert_array_equal(layer(x).numpy(), c)
    assert not np.allclose(a, c)
