"""eager.nn: Module machinery, layers, losses, functional and init — against PyTorch where
it is importable, by finite differences (float64) otherwise."""

from __future__ import annotations

import copy
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import eager
from eager import nn
from eager.nn import functional as F
from tests.helpers import gradcheck

RNG = np.random.default_rng(1234)


def rnd(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def copy_from_torch(ours, theirs):
    """Load a torch module's state into ours (as NumPy arrays)."""
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def run_both(ours, theirs, *arrays, int_args=(), out_index=None):
    """Forward both modules on the same inputs, backward a random projection of the output;
    return (our out, their out, our input grads, their input grads)."""
    import torch
    ti = [torch.tensor(a, requires_grad=True) for a in arrays]
    ei = [eager.tensor(a, requires_grad=True) for a in arrays]
    extra_t = [torch.tensor(a) for a in int_args]
    extra_e = [eager.tensor(a) for a in int_args]
    to = theirs(*ti, *extra_t)
    eo = ours(*ei, *extra_e)
    if out_index is not None:
        to, eo = to[out_index], eo[out_index]
    w = RNG.standard_normal(tuple(to.shape))
    (to * torch.tensor(w, dtype=to.dtype)).sum().backward()
    (eo * eager.tensor(w, dtype=eo.dtype)).sum().backward()
    return eo, to, ei, ti


def assert_close(e, t, atol=1e-10, rtol=1e-7):
    ea = e.detach().numpy() if isinstance(e, eager.Tensor) else np.asarray(e)
    ta = t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)
    np.testing.assert_allclose(ea, ta, atol=atol, rtol=rtol)


def assert_grads_match(ours, theirs, atol=1e-10, rtol=1e-7):
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert p.grad is not None, name
        assert_close(p.grad, tp[name].grad, atol, rtol)


# -- Module machinery -------------------------------------------------------------------

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(3, 2, bias=False)
        self.register_buffer("steps", eager.zeros(()))
        self.register_buffer("scratch", eager.zeros(2), persistent=False)
        self.scale = nn.Parameter(eager.ones(1))
        self.plain = 5

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


def test_registration_and_traversal():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert len(list(net.parameters())) == 4
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert net.fc2.bias is None
    assert net.plain == 5 and "plain" in net.__dict__
    assert isinstance(net.fc1.weight, nn.Parameter) and isinstance(net.fc1.weight, eager.Tensor)
    assert "fc1" not in net.__dict__ and "scale" not in net.__dict__
    assert net.get_submodule("fc1") is net.fc1
    assert net.get_parameter("fc1.bias") is net.fc1.bias
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = net.nope
    # a plain tensor assigned to a parameter slot is an error; None is fine
    with pytest.raises(TypeError, match="cannot assign"):
        net.scale = eager.ones(1)
    # reassigning a parameter to a module moves it
    del net.scale
    assert "scale" not in dict(net.named_parameters())
    net.fc2 = nn.Identity()
    assert isinstance(net.fc2, nn.Identity)


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.modules())) == 3
    assert len(list(seq.named_modules(remove_duplicate=False))) == 4


def test_parameters_are_named_parameters_values_in_order():
    shared = nn.Linear(2, 2)
    inner = nn.Sequential(shared, nn.Linear(2, 3, bias=False), shared)
    net = nn.Sequential(nn.Linear(3, 2), inner, nn.Sequential(inner, nn.Linear(2, 2)))
    net[1][1].register_parameter("extra", None)
    net[2][1].weight = net[0].weight                 # one parameter in two modules
    for recurse in (True, False):
        named = [p for _, p in net.named_parameters(recurse=recurse)]
        assert [id(p) for p in net.parameters(recurse=recurse)] == [id(p) for p in named]
    assert len(list(net.parameters())) == 6

    class Only(nn.Module):                           # a subclass's own named_parameters
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)

        def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
            return self.a.named_parameters(prefix, recurse, remove_duplicate)

    m = Only()
    assert [id(p) for p in m.parameters()] == [id(m.a.weight), id(m.a.bias)]


def test_train_eval_apply_and_zero_grad():
    net = Net()
    assert net.training and net.fc1.training
    assert net.eval() is net
    assert not net.training and not net.fc1.training and not net.act.training
    net.train()
    assert net.fc2.training
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    net(eager.randn(5, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_to_dtype_keeps_parameter_identity():
    net = Net()
    w = net.fc1.weight
    net(eager.randn(2, 4)).sum().backward()
    assert net.double() is net
    assert net.fc1.weight is w and w.dtype == eager.float64 and w.grad.dtype == eager.float64
    assert net.steps.dtype == eager.float64
    net.to(eager.float32)
    assert w.dtype == eager.float32
    assert net(eager.randn(2, 4)).dtype == eager.float32
    net.float()
    with pytest.raises(TypeError):
        net.to(eager.int64)


def test_parameter():
    t = eager.ones(2, 3)
    p = nn.Parameter(t)
    assert p.requires_grad and p.is_leaf and isinstance(p, eager.Tensor)
    assert np.shares_memory(p.numpy(force=True), t.numpy())
    assert repr(p).startswith("Parameter containing:\ntensor([[1., 1., 1.],")
    assert repr(p).endswith("requires_grad=True)")
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p and q.requires_grad
    y = p * 2
    assert type(y) is eager.Tensor
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(eager.tensor([1, 2]))


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h = lin.register_forward_hook(lambda m, args, out: calls.append(tuple(out.shape)))
    lin(eager.randn(3, 2))
    h.remove()
    lin(eager.randn(3, 2))
    assert calls == [(3, 2)]


def test_deepcopy_module():
    net = Net()
    net2 = copy.deepcopy(net)
    assert net2.fc1.weight is not net.fc1.weight
    np.testing.assert_array_equal(net2.fc1.weight.detach().numpy(), net.fc1.weight.detach().numpy())
    assert isinstance(net2.fc1.weight, nn.Parameter)


# -- state dicts ------------------------------------------------------------------------

def test_state_dict_round_trip():
    net, net2 = Net(), Net()
    sd = net.state_dict()
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert isinstance(sd, OrderedDict)
    assert not any(v.requires_grad for v in sd.values())
    # detached views share storage with the parameters, as PyTorch
    assert np.shares_memory(sd["fc1.weight"].numpy(), net.fc1.weight.numpy(force=True))
    r = net2.load_state_dict(sd)
    assert r.missing_keys == [] and r.unexpected_keys == []
    assert repr(r) == "<All keys matched successfully>"
    for (n1, a), (n2, b) in zip(net.state_dict().items(), net2.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # loading copies: the parameters stay the same objects and do not alias the source
    w = net2.fc1.weight
    net2.load_state_dict({k: v.numpy().copy() for k, v in sd.items()})
    assert net2.fc1.weight is w
    assert w.requires_grad


def test_load_state_dict_errors():
    net = Net()
    sd = net.state_dict()
    bad = OrderedDict(sd)
    del bad["fc1.bias"]
    bad["fc1.extra"] = eager.zeros(1)
    bad["other.weight"] = eager.zeros(1)
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(bad)
    msg = str(e.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:\n\t")
    assert 'Missing key(s) in state_dict: "fc1.bias". ' in msg
    assert 'Unexpected key(s) in state_dict: "other.weight", "fc1.extra". ' in msg
    r = net.load_state_dict(bad, strict=False)
    assert r.missing_keys == ["fc1.bias"] and r.unexpected_keys == ["other.weight", "fc1.extra"]
    bad2 = OrderedDict(sd)
    bad2["fc1.weight"] = eager.zeros(4, 4)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc1\.weight: copying a param "
                       r"with shape eager\.Size\(\[4, 4\]\) from checkpoint, the shape in "
                       r"current model is eager\.Size\(\[3, 4\]\)\."):
        net.load_state_dict(bad2)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        net.load_state_dict([1, 2])


def test_state_dict_keys_match_torch():
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.LayerNorm(4),
                         nn.Embedding(5, 4))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.ReLU(), torch.nn.LayerNorm(4),
                                 torch.nn.Embedding(5, 4))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    copy_from_torch(ours, theirs)
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].numpy(), v.numpy())
    assert ours.state_dict()["1.num_batches_tracked"].dtype == eager.int64


# -- reprs ------------------------------------------------------------------------------

def test_reprs_match_torch():
    torch = pytest.importorskip("torch")
    tnn = torch.nn
    pairs = [
        (nn.Linear(3, 4, bias=False), tnn.Linear(3, 4, bias=False)),
        (nn.Bilinear(2, 3, 4), tnn.Bilinear(2, 3, 4)),
        (nn.Embedding(10, 3, padding_idx=0), tnn.Embedding(10, 3, padding_idx=0)),
        (nn.LayerNorm(5), tnn.LayerNorm(5)),
        (nn.LayerNorm((2, 3), elementwise_affine=False), tnn.LayerNorm((2, 3),
                                                                       elementwise_affine=False)),
        (nn.BatchNorm1d(4, momentum=None), tnn.BatchNorm1d(4, momentum=None)),
        (nn.Dropout(0.2), tnn.Dropout(0.2)),
        (nn.ReLU(), tnn.ReLU()), (nn.ReLU(inplace=True), tnn.ReLU(inplace=True)),
        (nn.GELU(approximate="tanh"), tnn.GELU(approximate="tanh")),
        (nn.Tanh(), tnn.Tanh()), (nn.Sigmoid(), tnn.Sigmoid()), (nn.SiLU(), tnn.SiLU()),
        (nn.Softmax(dim=1), tnn.Softmax(dim=1)), (nn.LogSoftmax(-1), tnn.LogSoftmax(-1)),
        (nn.Identity(), tnn.Identity()), (nn.Flatten(), tnn.Flatten()),
        (nn.RNNCell(3, 4, nonlinearity="relu"), tnn.RNNCell(3, 4, nonlinearity="relu")),
        (nn.GRUCell(3, 4, bias=False), tnn.GRUCell(3, 4, bias=False)),
        (nn.LSTMCell(3, 4), tnn.LSTMCell(3, 4)),
        (nn.CrossEntropyLoss(), tnn.CrossEntropyLoss()), (nn.MSELoss(), tnn.MSELoss()),
        (nn.LeakyReLU(0.2), tnn.LeakyReLU(0.2)),
        (nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Dropout())),
         tnn.Sequential(tnn.Linear(2, 3), tnn.Sequential(tnn.ReLU(), tnn.Dropout()))),
        (nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)]),
         tnn.ModuleList([tnn.Linear(2, 2), tnn.Linear(2, 2), tnn.ReLU(), tnn.Linear(2, 2)])),
        (nn.ModuleList(), tnn.ModuleList()),
        (nn.ModuleDict({"a": nn.Tanh(), "b": nn.Linear(1, 2)}),
         tnn.ModuleDict({"a": tnn.Tanh(), "b": tnn.Linear(1, 2)})),
    ]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)

    def custom(mod):
        class Custom(mod.Module):
            def __init__(self):
                super().__init__()
                self.body = mod.Sequential(mod.Linear(2, 2), mod.ReLU())
                self.head = mod.Linear(2, 1)
        return Custom()

    assert repr(custom(nn)) == repr(custom(tnn))
    assert repr(custom(nn)).count("\n") == 6


# -- containers -------------------------------------------------------------------------

def test_sequential_container():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2 and sub[0] is b
    assert list(seq) == [a, b, c]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and [k for k, _ in seq.named_children()] == ["0", "1", "2", "3"]
    del seq[1]
    assert [k for k, _ in seq.named_children()] == ["0", "1", "2"] and seq[1] is c
    x = eager.randn(5, 2)
    out = seq(x)
    assert out.shape == (5, 1)
    with pytest.raises(IndexError):
        seq[7]
    named = nn.Sequential(OrderedDict([("first", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert isinstance(named.first, nn.Linear) and named[1] is named.act


def test_modulelist_and_moduledict():
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml.insert(0, nn.Sigmoid())
    assert isinstance(ml[0], nn.Sigmoid) and isinstance(ml[-1], nn.Tanh) and len(ml) == 6
    assert isinstance(ml[1:3], nn.ModuleList)
    del ml[0]
    assert [k for k, _ in ml.named_children()] == [str(i) for i in range(5)]
    md = nn.ModuleDict({"enc": nn.Linear(2, 2)})
    md["dec"] = nn.Linear(2, 2)
    assert list(md.keys()) == ["enc", "dec"] and "dec" in md and len(md) == 2
    assert [n for n, _ in md.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight",
                                                     "dec.bias"]
    md.pop("enc")
    assert list(md) == ["dec"]


# -- layers against torch ---------------------------------------------------------------

def test_linear_matches_torch():
    torch = pytest.importorskip("torch")
    for shape in [(5, 3), (2, 4, 3), (3,)]:
        theirs = torch.nn.Linear(3, 4).double()
        ours = nn.Linear(3, 4).double()
        copy_from_torch(ours, theirs)
        eo, to, ei, ti = run_both(ours, theirs, rnd(*shape))
        assert_close(eo, to)
        assert_close(ei[0].grad, ti[0].grad)
        assert_grads_match(ours, theirs)


def test_linear_forward_is_one_op():
    lin = nn.Linear(3, 2)
    out = lin(eager.randn(4, 3))
    assert out.grad_fn.name() == "LinearBackward0"


def test_bilinear_matches_torch():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Bilinear(3, 2, 4).double()
    ours = nn.Bilinear(3, 2, 4).double()
    copy_from_torch(ours, theirs)
    eo, to, ei, ti = run_both(ours, theirs, rnd(5, 3), rnd(5, 2))
    assert_close(eo, to)
    assert_close(ei[0].grad, ti[0].grad)
    assert_close(ei[1].grad, ti[1].grad)
    assert_grads_match(ours, theirs)


def test_embedding_matches_torch_with_padding_idx():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Embedding(6, 3, padding_idx=2).double()
    ours = nn.Embedding(6, 3, padding_idx=2).double()
    assert not ours.weight.detach().numpy()[2].any()
    copy_from_torch(ours, theirs)
    with torch.no_grad():
        theirs.weight[2] = 0.5  # a non-zero padding row is looked up but gets no gradient
    copy_from_torch(ours, theirs)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    to = theirs(torch.tensor(idx))
    eo = ours(eager.tensor(idx))
    w = rnd(2, 3, 3)
    (to * torch.tensor(w)).sum().backward()
    (eo * eager.tensor(w)).sum().backward()
    assert_close(eo, to)
    assert_close(ours.weight.grad, theirs.weight.grad)
    assert not ours.weight.grad.numpy()[2].any()
    emb = nn.Embedding.from_pretrained(eager.tensor(rnd(4, 2)))
    assert not emb.weight.requires_grad


def test_layer_norm_matches_torch():
    torch = pytest.importorskip("torch")
    for shape, norm in [((4, 5), 5), ((2, 3, 4), (3, 4))]:
        theirs = torch.nn.LayerNorm(norm).double()
        ours = nn.LayerNorm(norm).double()
        with torch.no_grad():
            theirs.weight.normal_()
            theirs.bias.normal_()
        copy_from_torch(ours, theirs)
        eo, to, ei, ti = run_both(ours, theirs, rnd(*shape))
        assert_close(eo, to, atol=1e-9)
        assert_close(ei[0].grad, ti[0].grad, atol=1e-9)
        assert_grads_match(ours, theirs, atol=1e-9)


def test_layer_norm_gradcheck():
    gradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), rnd(3, 4), rnd(4), rnd(4))
    gradcheck(lambda x: F.layer_norm(x, (2, 3)), rnd(2, 2, 3))


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm1d_matches_torch(shape, momentum):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.BatchNorm1d(3, momentum=momentum).double()
    ours = nn.BatchNorm1d(3, momentum=momentum).double()
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    copy_from_torch(ours, theirs)
    for _ in range(3):  # training: batch statistics, running stats updated
        eo, to, ei, ti = run_both(ours, theirs, rnd(*shape) * 2 + 1)
        assert_close(eo, to, atol=1e-9)
        assert_close(ei[0].grad, ti[0].grad, atol=1e-9)
    assert_grads_match(ours, theirs, atol=1e-9)
    assert_close(ours.running_mean, theirs.running_mean)
    assert_close(ours.running_var, theirs.running_var)
    assert int(ours.num_batches_tracked) == 3
    ours.eval()
    theirs.eval()
    eo, to, ei, ti = run_both(ours, theirs, rnd(*shape))
    assert_close(eo, to)
    assert_close(ei[0].grad, ti[0].grad)
    assert int(ours.num_batches_tracked) == 3
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(eager.randn(1, 3))


def test_batchnorm_no_running_stats():
    bn = nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    assert list(bn.state_dict()) == []
    x = eager.tensor(rnd(8, 2, dtype=np.float32))
    bn.eval()
    y = bn(x).numpy()  # still uses batch statistics
    np.testing.assert_allclose(y.mean(0), 0, atol=1e-6)


def test_dropout_train_eval():
    eager.manual_seed(0)
    d = nn.Dropout(0.25)
    x = eager.ones(200, 100, requires_grad=True)
    y = d(x)
    arr = y.detach().numpy()
    kept = arr != 0
    assert 0.72 < kept.mean() < 0.78
    np.testing.assert_allclose(arr[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), arr)  # gradient is the scaled mask
    # fresh draws on each call
    assert not np.array_equal(d(x).detach().numpy(), arr)
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 0.0) is x
    assert not F.dropout(x, 1.0).detach().numpy().any()
    with pytest.raises(ValueError):
        nn.Dropout(1.5)
    # seeded: reproducible
    eager.manual_seed(3)
    a = F.dropout(eager.ones(50)).numpy()
    eager.manual_seed(3)
    np.testing.assert_array_equal(F.dropout(eager.ones(50)).numpy(), a)


def test_dropout_draws_through_dispatch():
    """The mask comes from a random op recorded by the dispatch point."""
    from eager._state import STATE
    from eager.ops.base import OPS
    from eager.tracing import TracerHooks

    seen = []

    class Rec(TracerHooks):
        def record(self, op, args, params, out):
            seen.append(op.name)

    STATE.tracer = Rec()
    try:
        F.dropout(eager.ones(3, 3), 0.5)
    finally:
        STATE.tracer = None
    assert any(OPS[n].random for n in seen)


@pytest.mark.parametrize("name,kwargs", [("ReLU", {}), ("GELU", {}),
                                         ("GELU", {"approximate": "tanh"}),
                                         ("Tanh", {}), ("Sigmoid", {}), ("SiLU", {}),
                                         ("Softmax", {"dim": 1}), ("LogSoftmax", {"dim": -1}),
                                         ("LeakyReLU", {"negative_slope": 0.1}), ("ELU", {}),
                                         ("Softplus", {"beta": 2.0}), ("Flatten", {}),
                                         ("Identity", {})])
def test_activations_match_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    eo, to, ei, ti = run_both(ours, theirs, rnd(3, 4, 2))
    assert_close(eo, to, atol=1e-9)
    assert_close(ei[0].grad, ti[0].grad, atol=1e-9)


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension"):
        out = nn.Softmax()(eager.randn(2, 3))
    np.testing.assert_allclose(out.numpy().sum(1), 1, rtol=1e-6)


@pytest.mark.parametrize("cell", ["RNNCell", "GRUCell", "LSTMCell"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hidden", [True, False])
def test_rnn_cells_match_torch(cell, batched, with_hidden):
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn, cell)(3, 4).double()
    ours = getattr(nn, cell)(3, 4).double()
    assert [n for n, _ in ours.named_parameters()] == ["weight_ih", "weight_hh", "bias_ih",
                                                       "bias_hh"]
    copy_from_torch(ours, theirs)
    lead = (5,) if batched else ()
    x = rnd(*lead, 3)
    args = [x]
    if with_hidden:
        args += [rnd(*lead, 4)] if cell != "LSTMCell" else [rnd(*lead, 4), rnd(*lead, 4)]
    ti = [torch.tensor(a, requires_grad=True) for a in args]
    ei = [eager.tensor(a, requires_grad=True) for a in args]
    if cell == "LSTMCell" and with_hidden:
        to, eo = theirs(ti[0], (ti[1], ti[2])), ours(ei[0], (ei[1], ei[2]))
    elif with_hidden:
        to, eo = theirs(ti[0], ti[1]), ours(ei[0], ei[1])
    else:
        to, eo = theirs(ti[0]), ours(ei[0])
    if cell == "LSTMCell":
        assert_close(eo[1], to[1])
        tl = (to[0] * 2 + to[1] ** 2).sum()
        el = (eo[0] * 2 + eo[1] ** 2).sum()
        to, eo = to[0], eo[0]
    else:
        tl, el = (to ** 2).sum(), (eo ** 2).sum()
    assert_close(eo, to)
    tl.backward()
    el.backward()
    for e, t in zip(ei, ti):
        assert_close(e.grad, t.grad)
    assert_grads_match(ours, theirs)


# -- default initialization -------------------------------------------------------------

def test_default_inits():
    eager.manual_seed(0)
    lin = nn.Linear(400, 300)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) == U(-1/sqrt(fan_in), ...)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
    emb = nn.Embedding(500, 40)
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.03
    ln = nn.LayerNorm(6)
    np.testing.assert_array_equal(ln.weight.detach().numpy(), 1)
    np.testing.assert_array_equal(ln.bias.detach().numpy(), 0)
    cell = nn.LSTMCell(10, 100)
    for p in cell.parameters():
        assert np.abs(p.detach().numpy()).max() <= 0.1
    bil = nn.Bilinear(25, 3, 2)
    assert np.abs(bil.weight.detach().numpy()).max() <= 0.2
    # reproducible under manual_seed
    eager.manual_seed(7)
    a = nn.Linear(3, 3).weight.detach().numpy().copy()
    eager.manual_seed(7)
    np.testing.assert_array_equal(nn.Linear(3, 3).weight.detach().numpy(), a)


def test_init_functions():
    torch = pytest.importorskip("torch")
    for nl, p in [("linear", None), ("relu", None), ("tanh", None), ("leaky_relu", 0.2),
                  ("leaky_relu", None), ("selu", None), ("sigmoid", None)]:
        assert nn.init.calculate_gain(nl, p) == pytest.approx(torch.nn.init.calculate_gain(nl, p))
    eager.manual_seed(0)
    w = nn.Parameter(eager.empty(300, 200))
    v0 = w._version_value
    out = nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert out is w and w.requires_grad and w.grad_fn is None and w._version_value > v0
    assert w.detach().numpy().std() == pytest.approx(math.sqrt(2 / 300), rel=0.02)
    nn.init.kaiming_uniform_(w)
    bound = math.sqrt(6 / 200)  # a=0: gain sqrt(2)
    assert np.abs(w.detach().numpy()).max() <= bound
    nn.init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6 / 500)
    assert bound * 0.98 < np.abs(w.detach().numpy()).max() <= bound
    nn.init.xavier_normal_(w)
    assert w.detach().numpy().std() == pytest.approx(math.sqrt(2 / 500), rel=0.02)
    nn.init.normal_(w, 3.0, 0.5)
    assert w.detach().numpy().mean() == pytest.approx(3.0, abs=0.01)
    nn.init.uniform_(w, -1, 2)
    assert w.detach().numpy().min() >= -1 and w.detach().numpy().max() <= 2
    nn.init.constant_(w, 0.25)
    assert (w.detach().numpy() == 0.25).all()
    nn.init.zeros_(w)
    assert not w.detach().numpy().any()
    nn.init.ones_(w)
    assert (w.detach().numpy() == 1).all()
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(eager.empty(3))


# -- losses -----------------------------------------------------------------------------

def _loss_pair(ours, theirs, x, target, target_is_index=False):
    import torch
    tx = torch.tensor(x, requires_grad=True)
    ex = eager.tensor(x, requires_grad=True)
    tt, et = torch.tensor(target), eager.from_numpy(np.array(target))
    tl, el = theirs(tx, tt), ours(ex, et)
    w = rnd(*tuple(tl.shape))
    (tl * torch.tensor(w)).sum().backward()
    (el * eager.tensor(w)).sum().backward()
    assert_close(el, tl, atol=1e-10)
    assert_close(ex.grad, tx.grad, atol=1e-10)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses_match_torch(reduction):
    torch = pytest.importorskip("torch")
    x, t = rnd(4, 3), rnd(4, 3)
    for name, kw in [("MSELoss", {}), ("L1Loss", {}), ("SmoothL1Loss", {"beta": 0.5}),
                     ("HuberLoss", {"delta": 0.7})]:
        _loss_pair(getattr(nn, name)(reduction=reduction, **kw),
                   getattr(torch.nn, name)(reduction=reduction, **kw), x, t)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3), (4,)])
@pytest.mark.parametrize("kw", [{}, {"ignore_index": 1}, {"label_smoothing": 0.2},
                                {"weight": "w"}, {"weight": "w", "ignore_index": 2,
                                                  "label_smoothing": 0.1}])
def test_cross_entropy_class_indices_match_torch(reduction, shape, kw):
    torch = pytest.importorskip("torch")
    C = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    x = rnd(*shape)
    target = RNG.integers(0, C, tshape)
    if target.ndim:
        target.flat[0] = 1
        target.flat[-1] = 2
    kw_t, kw_e = dict(kw), dict(kw)
    if "weight" in kw:
        w = np.abs(rnd(C)) + 0.1
        kw_t["weight"], kw_e["weight"] = torch.tensor(w), eager.tensor(w)
    _loss_pair(nn.CrossEntropyLoss(reduction=reduction, **kw_e),
               torch.nn.CrossEntropyLoss(reduction=reduction, **kw_t), x, target)
    if not kw.get("label_smoothing"):
        tl = torch.nn.LogSoftmax(dim=1 if len(shape) > 1 else 0)
        _loss_pair(lambda a, b: F.nll_loss(F.log_softmax(a, tl.dim), b, reduction=reduction,
                                           **kw_e),
                   lambda a, b: torch.nn.functional.nll_loss(tl(a), b, reduction=reduction,
                                                             **kw_t), x, target)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probability_targets_match_torch(reduction):
    torch = pytest.importorskip("torch")
    x = rnd(5, 4, 2)
    p = np.exp(rnd(5, 4, 2))
    p /= p.sum(1, keepdims=True)
    w = np.abs(rnd(4)) + 0.1
    for kw_t, kw_e in [({}, {}), ({"label_smoothing": 0.3}, {"label_smoothing": 0.3}),
                       ({"weight": torch.tensor(w)}, {"weight": eager.tensor(w)})]:
        _loss_pair(nn.CrossEntropyLoss(reduction=reduction, **kw_e),
                   torch.nn.CrossEntropyLoss(reduction=reduction, **kw_t), x, p)


def test_cross_entropy_all_ignored_is_nan_and_errors():
    x = eager.randn(3, 4)
    with np.errstate(invalid="ignore"):
        assert math.isnan(F.cross_entropy(x, eager.tensor([-100, -100, -100])).item())
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(x, eager.tensor([0, 7, 1]))
    with pytest.raises(ValueError, match="Expected input batch_size \\(3\\) to match target "
                                         "batch_size \\(2\\)"):
        F.cross_entropy(x, eager.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="expected scalar type Long"):
        F.nll_loss(x, eager.tensor([0.0, 1.0, 2.0]))


def test_class_index_losses_gradcheck():
    t = np.array([1, 0, 3, 2, 3])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    gradcheck(lambda x: F.cross_entropy(x, eager.tensor(t)), rnd(5, 4))
    gradcheck(lambda x: F.cross_entropy(x, eager.tensor(t), weight=eager.tensor(w),
                                        ignore_index=0, label_smoothing=0.1), rnd(5, 4))
    gradcheck(lambda x: F.cross_entropy(x, eager.tensor(t[:3].reshape(1, 3)),
                                        reduction="sum"), rnd(1, 4, 3))
    gradcheck(lambda x: F.nll_loss(x, eager.tensor(t), reduction="none"), rnd(5, 4))
    gradcheck(lambda x, p: F.cross_entropy(x, F.softmax(p, 1)), rnd(3, 4), rnd(3, 4))


def test_regression_and_bce_gradcheck():
    gradcheck(lambda x, t: F.mse_loss(x, t), rnd(3, 4), rnd(3, 4))
    gradcheck(lambda x, t: F.l1_loss(x, t, reduction="sum"), rnd(3, 4), rnd(3, 4))
    p = RNG.uniform(0.1, 0.9, (3, 4))
    t = RNG.uniform(0, 1, (3, 4))
    gradcheck(lambda x: F.binary_cross_entropy(x, eager.tensor(t)), p)
    gradcheck(lambda x, tt: F.binary_cross_entropy_with_logits(x, tt), rnd(3, 4), t)
    gradcheck(lambda x, pw: F.binary_cross_entropy_with_logits(
        x, eager.tensor(t), pos_weight=pw, reduction="sum"), rnd(3, 4), np.abs(rnd(4)) + 0.5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_losses_match_torch(reduction):
    torch = pytest.importorskip("torch")
    p = RNG.uniform(0.01, 0.99, (4, 3))
    t = (RNG.uniform(0, 1, (4, 3)) > 0.5).astype(np.float64)
    w = np.abs(rnd(4, 3))
    _loss_pair(nn.BCELoss(reduction=reduction), torch.nn.BCELoss(reduction=reduction), p, t)
    _loss_pair(nn.BCELoss(weight=eager.tensor(w), reduction=reduction),
               torch.nn.BCELoss(weight=torch.tensor(w), reduction=reduction), p, t)
    x = rnd(4, 3) * 5
    pw = np.abs(rnd(3)) + 0.5
    _loss_pair(nn.BCEWithLogitsLoss(reduction=reduction),
               torch.nn.BCEWithLogitsLoss(reduction=reduction), x, t)
    _loss_pair(nn.BCEWithLogitsLoss(pos_weight=eager.tensor(pw), weight=eager.tensor(w),
                                    reduction=reduction),
               torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pw), weight=torch.tensor(w),
                                          reduction=reduction), x, t)


def test_bce_with_logits_is_stable():
    x = eager.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], requires_grad=True)
    t = eager.tensor([0.0, 1.0, 0.5, 0.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [0.0, 50.0, math.log(2), 50.0, 0.0],
                               rtol=1e-6)
    loss.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    # BCE clamps its logs at -100
    with np.errstate(divide="ignore"):
        y = F.binary_cross_entropy(eager.tensor([0.0, 1.0]), eager.tensor([1.0, 0.0]),
                                   reduction="none")
    np.testing.assert_allclose(y.numpy(), [100.0, 100.0])
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(eager.rand(3), eager.rand(2, 3))


# -- functional odds and ends -----------------------------------------------------------

def test_one_hot_and_pad():
    oh = F.one_hot(eager.tensor([0, 2, 1]), 4)
    assert oh.dtype == eager.int64
    np.testing.assert_array_equal(oh.numpy(), np.eye(4, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(eager.tensor([[1], [3]])).shape == (2, 1, 4)
    x = eager.tensor(rnd(2, 3), requires_grad=True)
    y = F.pad(x, (1, 2), value=-1.0)
    expect = np.pad(x.detach().numpy(), ((0, 0), (1, 2)), constant_values=-1.0)
    np.testing.assert_array_equal(y.detach().numpy(), expect)
    y2 = F.pad(x, (0, 0, 1, 0))
    assert y2.shape == (3, 3)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))


def test_functional_linear_and_gelu_match_torch():
    torch = pytest.importorskip("torch")
    x, w, b = rnd(3, 4), rnd(2, 4), rnd(2)
    assert_close(F.linear(eager.tensor(x), eager.tensor(w), eager.tensor(b)),
                 torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)))
    assert_close(F.linear(eager.tensor(x), eager.tensor(w)),
                 torch.nn.functional.linear(torch.tensor(x), torch.tensor(w)))


# -- end to end -------------------------------------------------------------------------

def test_mlp_learns():
    eager.manual_seed(0)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 5)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 2))
    opt = eager.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    xt, yt = eager.tensor(X), eager.tensor(y)
    first = None
    for _ in range(60):
        opt.zero_grad()
        loss = F.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    model.eval()
    with eager.no_grad():
        acc = (model(xt).numpy().argmax(1) == y).mean()
    assert loss.item() < first / 4 and acc > 0.95


def test_mlp_matches_torch_training():
    """Same weights, same data: 5 SGD steps of an MLP give the same parameters."""
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.LayerNorm(8),
                                 torch.nn.Linear(8, 3)).double()
    ours = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3)).double()
    copy_from_torch(ours, theirs)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9, foreach=False)
    eopt = eager.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    X, y = rnd(10, 6), RNG.integers(0, 3, 10)
    for _ in range(5):
        topt.zero_grad()
        eopt.zero_grad()
        torch.nn.functional.cross_entropy(theirs(torch.tensor(X)), torch.tensor(y)).backward()
        F.cross_entropy(ours(eager.tensor(X)), eager.tensor(y)).backward()
        topt.step()
        eopt.step()
    for k, v in theirs.state_dict().items():
        assert_close(ours.state_dict()[k], v, atol=1e-9)


def test_warnings_free_forward():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Sequential(nn.Linear(3, 3), nn.Softmax(dim=-1))(eager.randn(2, 3))
