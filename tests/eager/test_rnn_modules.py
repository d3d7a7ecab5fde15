"""nn.RNN / nn.LSTM / nn.GRU and nn.utils.rnn: values and gradients against PyTorch with
the weights copied across, the recurrent scan op by finite differences (float64),
parameter names, reprs, initialization and PyTorch's error messages."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import eager
from eager import nn
from eager.dispatch import dispatch
from eager.nn.utils import rnn as rnn_utils
from eager.ops.recurrent import RnnScan
from tests.helpers import gradcheck

RNG = np.random.default_rng(7)


def rnd(*shape):
    return RNG.standard_normal(shape)


def copy_from_torch(ours, theirs):
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def close(ours, theirs, atol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=atol,
                               rtol=1e-7)


def pair(torch, cls, *args, **kwargs):
    """The same module in torch and here (float64), our weights copied from torch's."""
    theirs = getattr(torch.nn, cls)(*args, **kwargs).double()
    ours = getattr(nn, cls)(*args, **kwargs).double()
    copy_from_torch(ours, theirs)
    return ours, theirs


def hidden_of(cls, out):
    """(h_n,) or (h_n, c_n) from a module's second output."""
    return tuple(out) if cls == "LSTM" else (out,)


def loss_of(outs):
    """A weighted sum of every output, so each one's gradient is exercised."""
    total = 0
    for i, o in enumerate(outs):
        total = total + (o * o).sum() * (i + 1) + o.sum()
    return total


CONFIGS = [
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "bias": False}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True, "bias": False}),
    ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
    ("RNN", {"num_layers": 3}),
]


@pytest.mark.parametrize("cls,kwargs", CONFIGS)
@pytest.mark.parametrize("with_hidden", [False, True])
def test_modules_match_torch(cls, kwargs, with_hidden):
    torch = pytest.importorskip("torch")
    ours, theirs = pair(torch, cls, 4, 5, **kwargs)
    T, B = 6, 3
    x = rnd(B, T, 4) if kwargs.get("batch_first") else rnd(T, B, 4)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    hidden = [rnd(layers, B, kwargs.get("proj_size") or 5)]
    if cls == "LSTM":
        hidden.append(rnd(layers, B, 5))
    ti = [torch.tensor(a, requires_grad=True) for a in [x] + hidden]
    ei = [eager.tensor(a, requires_grad=True) for a in [x] + hidden]
    if with_hidden:
        th = tuple(ti[1:]) if cls == "LSTM" else ti[1]
        eh = tuple(ei[1:]) if cls == "LSTM" else ei[1]
        to, th_n = theirs(ti[0], th)
        eo, eh_n = ours(ei[0], eh)
    else:
        to, th_n = theirs(ti[0])
        eo, eh_n = ours(ei[0])
    assert tuple(eo.shape) == tuple(to.shape)
    close(eo, to)
    for e, t in zip(hidden_of(cls, eh_n), hidden_of(cls, th_n)):
        assert tuple(e.shape) == tuple(t.shape)
        close(e, t)
    loss_of((to,) + hidden_of(cls, th_n)).backward()
    loss_of((eo,) + hidden_of(cls, eh_n)).backward()
    for e, t in zip(ei, ti):
        if t.grad is not None:
            close(e.grad, t.grad)
    theirs_p = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        close(p.grad, theirs_p[name].grad)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
def test_unbatched_input(cls):
    torch = pytest.importorskip("torch")
    ours, theirs = pair(torch, cls, 3, 4, num_layers=2)
    x = rnd(5, 3)
    h = [rnd(2, 4)] + ([rnd(2, 4)] if cls == "LSTM" else [])
    th = tuple(torch.tensor(a) for a in h)
    eh = tuple(eager.tensor(a) for a in h)
    to, th_n = theirs(torch.tensor(x), th if cls == "LSTM" else th[0])
    eo, eh_n = ours(eager.tensor(x), eh if cls == "LSTM" else eh[0])
    assert tuple(eo.shape) == (5, 4)
    close(eo, to)
    for e, t in zip(hidden_of(cls, eh_n), hidden_of(cls, th_n)):
        assert tuple(e.shape) == (2, 4)
        close(e, t)


@pytest.mark.parametrize("cls,kwargs", [("LSTM", {"bidirectional": True, "num_layers": 2,
                                                  "proj_size": 2}),
                                        ("GRU", {"bidirectional": True, "batch_first": True}),
                                        ("RNN", {})])
def test_packed_sequence_matches_torch(cls, kwargs):
    """Unsorted lengths: outputs zero past each length, final states at each length, the
    hidden state in the caller's batch order, and every gradient as in PyTorch."""
    torch = pytest.importorskip("torch")
    tu = torch.nn.utils.rnn
    ours, theirs = pair(torch, cls, 4, 5, **kwargs)
    bf = kwargs.get("batch_first", False)
    lengths = [3, 6, 1, 4]
    x = rnd(4, 6, 4) if bf else rnd(6, 4, 4)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    hidden = [rnd(layers, 4, kwargs.get("proj_size") or 5)]
    if cls == "LSTM":
        hidden.append(rnd(layers, 4, 5))
    ti = [torch.tensor(a, requires_grad=True) for a in [x] + hidden]
    ei = [eager.tensor(a, requires_grad=True) for a in [x] + hidden]
    tp = tu.pack_padded_sequence(ti[0], torch.tensor(lengths), batch_first=bf,
                                 enforce_sorted=False)
    ep = rnn_utils.pack_padded_sequence(ei[0], eager.tensor(lengths), batch_first=bf,
                                        enforce_sorted=False)
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        np.testing.assert_array_equal(getattr(ep, field).numpy(), getattr(tp, field).numpy())
    close(ep.data, tp.data)
    th = tuple(ti[1:]) if cls == "LSTM" else ti[1]
    eh = tuple(ei[1:]) if cls == "LSTM" else ei[1]
    to, th_n = theirs(tp, th)
    eo, eh_n = ours(ep, eh)
    assert isinstance(eo, rnn_utils.PackedSequence)
    close(eo.data, to.data)
    tpad, tlen = tu.pad_packed_sequence(to, batch_first=bf, total_length=7)
    epad, elen = rnn_utils.pad_packed_sequence(eo, batch_first=bf, total_length=7)
    np.testing.assert_array_equal(elen.numpy(), lengths)
    close(epad, tpad)
    for e, t in zip(hidden_of(cls, eh_n), hidden_of(cls, th_n)):
        close(e, t)
    loss_of((tpad,) + hidden_of(cls, th_n)).backward()
    loss_of((epad,) + hidden_of(cls, eh_n)).backward()
    for e, t in zip(ei, ti):
        close(e.grad, t.grad)
    theirs_p = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        close(p.grad, theirs_p[name].grad)


# -- the scan op by finite differences --------------------------------------------------

@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_gradcheck(mode, reverse):
    """One layer over a packed batch of lengths (3, 2, 1): every argument's gradient."""
    sizes = (3, 2, 1)
    G = {"lstm": 4, "gru": 3}.get(mode, 1)
    H = 2
    args = [rnd(sum(sizes), G * H), rnd(3, H), rnd(G * H, H), rnd(G * H)]
    if mode == "lstm":
        args.insert(2, rnd(3, H))

    def fn(*t):
        if mode == "lstm":
            gi, h0, c0, w_hh, b_hh = t
        else:
            (gi, h0, w_hh, b_hh), c0 = t, None
        return dispatch(RnnScan, gi, h0, c0, w_hh, b_hh, None, mode=mode, batch_sizes=sizes,
                        reverse=reverse)
    assert gradcheck(fn, *args)


def test_scan_gradcheck_lstm_projection():
    sizes = (2, 2, 1)
    H, P = 3, 2

    def fn(gi, h0, c0, w_hh, w_hr):
        return dispatch(RnnScan, gi, h0, c0, w_hh, None, w_hr, mode="lstm", batch_sizes=sizes,
                        reverse=False)
    assert gradcheck(fn, rnd(5, 4 * H), rnd(2, P), rnd(2, H), rnd(4 * H, P), rnd(P, H))


def test_lstm_module_gradcheck():
    """A whole one-layer LSTM module, input to output, in float64."""
    eager.manual_seed(0)
    lstm = nn.LSTM(2, 2).double()

    def fn(x):
        out, (h, c) = lstm(x)
        return eager.cat([out.reshape(-1), h.reshape(-1), c.reshape(-1)])
    assert gradcheck(fn, rnd(3, 2, 2))


def test_second_order_gradient():
    """The scan's backward is written over the op namespace: it is differentiable."""
    torch = pytest.importorskip("torch")
    ours, theirs = pair(torch, "GRU", 2, 3)
    x = rnd(4, 2, 2)
    tx = torch.tensor(x, requires_grad=True)
    ex = eager.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad((theirs(tx)[0] ** 2).sum(), tx, create_graph=True)
    (eg,) = eager.autograd.grad((ours(ex)[0] ** 2).sum(), ex, create_graph=True)
    close(eg, tg)
    (tg ** 2).sum().backward()
    (eg ** 2).sum().backward()
    close(ex.grad, tx.grad, atol=1e-9)


# -- packing utilities ---------------------------------------------------------------------

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    torch = pytest.importorskip("torch")
    seqs = [rnd(n, 2) for n in (2, 5, 3)]
    ts = [torch.tensor(s, requires_grad=True) for s in seqs]
    es = [eager.tensor(s, requires_grad=True) for s in seqs]
    t = torch.nn.utils.rnn.pad_sequence(ts, batch_first, -1.5, side)
    e = rnn_utils.pad_sequence(es, batch_first=batch_first, padding_value=-1.5,
                               padding_side=side)
    close(e, t)
    w = rnd(*t.shape)
    (t * torch.tensor(w)).sum().backward()
    (e * eager.tensor(w)).sum().backward()
    for a, b in zip(es, ts):
        close(a.grad, b.grad)


def test_pack_sequence_roundtrip():
    torch = pytest.importorskip("torch")
    seqs = [rnd(n, 3) for n in (2, 4, 1)]
    tp = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    ep = rnn_utils.pack_sequence([eager.tensor(s) for s in seqs], enforce_sorted=False)
    close(ep.data, tp.data)
    np.testing.assert_array_equal(ep.batch_sizes.numpy(), [3, 2, 1, 1])
    back = rnn_utils.unpack_sequence(ep)
    for a, s in zip(back, seqs):
        np.testing.assert_array_equal(a.numpy(), s)
    # sorted input: no permutation at all
    sp = rnn_utils.pack_sequence([eager.tensor(seqs[i]) for i in (1, 0, 2)])
    assert sp.sorted_indices is None and sp.unsorted_indices is None
    assert isinstance(sp, tuple) and sp._fields == ("data", "batch_sizes", "sorted_indices",
                                                    "unsorted_indices")


def test_pack_padded_sequence_list_lengths_and_errors():
    x = eager.tensor(rnd(4, 3, 2))
    p = rnn_utils.pack_padded_sequence(x, [4, 2, 1])
    np.testing.assert_array_equal(p.batch_sizes.numpy(), [3, 2, 1, 1])
    np.testing.assert_array_equal(p.data.numpy(), x.numpy()[[0, 0, 0, 1, 1, 2, 3], [0, 1, 2,
                                                                                  0, 1, 0, 0]])
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order when "
                                           "`enforce_sorted` is True"):
        rnn_utils.pack_padded_sequence(x, [1, 2, 4])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        rnn_utils.pack_padded_sequence(x, [4, 2, 0])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to "
                                           r"batch_size, but got 2 \(batch_size=3\)"):
        rnn_utils.pack_padded_sequence(x, [4, 2])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of "
                                         "the longest sequence in input"):
        rnn_utils.pad_packed_sequence(p, total_length=3)
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or "
                                           "right, but got up."):
        rnn_utils.pad_sequence([x[0]], padding_side="up")


# -- names, reprs, init ----------------------------------------------------------------------

def test_parameter_names_state_dict_and_repr():
    torch = pytest.importorskip("torch")
    cases = [("RNN", (3, 4), {"nonlinearity": "relu"}),
             ("GRU", (3, 4, 2), {"batch_first": True, "dropout": 0.5, "bidirectional": True}),
             ("LSTM", (3, 4), {"proj_size": 2, "bias": False, "num_layers": 2}),
             ("LSTM", (3, 4), {"bidirectional": True})]
    for cls, args, kwargs in cases:
        ours, theirs = getattr(nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert ours._flat_weights_names == theirs._flat_weights_names
        for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert tuple(p.shape) == tuple(q.shape), n
        assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]


def test_default_init_range_and_seed():
    eager.manual_seed(3)
    lstm = nn.LSTM(10, 64, num_layers=2)
    bound = 1 / math.sqrt(64)
    values = np.concatenate([p.detach().numpy().ravel() for p in lstm.parameters()])
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.02 * bound
    eager.manual_seed(3)
    again = nn.LSTM(10, 64, num_layers=2)
    np.testing.assert_array_equal(again.weight_hh_l1.detach().numpy(),
                                  lstm.weight_hh_l1.detach().numpy())


def test_dropout_between_layers():
    eager.manual_seed(0)
    gru = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = eager.tensor(rnd(5, 2, 3).astype(np.float32))
    gru.eval()
    ref = gru(x)[0].detach().numpy()
    np.testing.assert_array_equal(gru(x)[0].detach().numpy(), ref)
    gru.train()
    eager.manual_seed(1)
    a = gru(x)[0].detach().numpy()
    eager.manual_seed(1)
    b = gru(x)[0].detach().numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, ref)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)


# -- errors in PyTorch's words ------------------------------------------------------------------

def test_errors():
    lstm = nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 3, got 5"):
        lstm(eager.randn(2, 1, 5))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 4\), got "
                                           r"\[1, 3, 4\]"):
        lstm(eager.randn(5, 2, 3), (eager.zeros(1, 3, 4), eager.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got "
                                           r"\[1, 2, 5\]"):
        lstm(eager.randn(5, 2, 3), (eager.zeros(1, 2, 4), eager.zeros(1, 2, 5)))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        lstm(eager.randn(1, 5, 2, 3))
    with pytest.raises(RuntimeError, match=r"For batched 3-D input, hx and cx should also be "
                                           r"3-D but got \(2-D, 3-D\) tensors"):
        lstm(eager.randn(5, 2, 3), (eager.zeros(2, 4), eager.zeros(1, 2, 4)))
    gru = nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[2, 2, 4\]"):
        gru(eager.randn(5, 2, 3), eager.zeros(2, 2, 4))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but "
                                           "got 3-D tensor"):
        gru(eager.randn(5, 3), eager.zeros(1, 1, 4))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 1D tensor "
                                         "instead"):
        nn.RNN(3, 4)(eager.randn(3))
    with pytest.raises(ValueError, match=r"RNN input dtype \(eager.float64\) does not match "
                                         r"weight dtype \(eager.float32\)"):
        gru(eager.randn(5, 2, 3, dtype=eager.float64))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'. Select from 'tanh' "
                                         "or 'relu'."):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.RNN(3, 4, dropout=1.5)
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        nn.RNN(3, 4.0)


def test_float32_default_matches_torch_closely():
    """The default dtype path (float32 parameters) against torch's float32 module."""
    torch = pytest.importorskip("torch")
    theirs = torch.nn.LSTM(3, 5, batch_first=True)
    ours = nn.LSTM(3, 5, batch_first=True)
    copy_from_torch(ours, theirs)
    x = rnd(2, 7, 3).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eo, (eh, ec) = ours(eager.tensor(x))
    to, (th, tc) = theirs(torch.tensor(x))
    assert eo.dtype == eager.float32
    close(eo, to, atol=1e-6)
    close(ec, tc, atol=1e-6)
