"""eager.nn.utils (clip_grad_norm_, clip_grad_value_, get_total_norm, parameters_to_vector,
vector_to_parameters) and nn.ParameterList / nn.ParameterDict, against PyTorch where
importable, and compiled training steps that clip."""

import math
from collections import OrderedDict

import numpy as np
import pytest

import compiler
import eager
from eager import nn
from tests.helpers import gradcheck

RNG = np.random.default_rng(3)
GRADS = [RNG.standard_normal((3, 4)), RNG.standard_normal(5), RNG.standard_normal((2, 1, 2))]


def _params(lib, grads, dtype=np.float64, with_none=True):
    ps = []
    for g in grads:
        p = lib.nn.Parameter(lib.tensor(np.ones_like(g, dtype=dtype)))
        p.grad = lib.tensor(np.asarray(g, dtype=dtype))
        ps.append(p)
    if with_none:
        ps.append(lib.nn.Parameter(lib.tensor(np.ones(2, dtype=dtype))))   # grad None: skipped
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, 0])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    torch = pytest.importorskip("torch")
    ours = _params(eager, GRADS, dtype)
    theirs = _params(torch, GRADS, dtype)
    t_ours = nn.utils.clip_grad_norm_(iter(ours), max_norm, norm_type)
    t_theirs = torch.nn.utils.clip_grad_norm_(iter(theirs), max_norm, norm_type)
    tol = dict(rtol=1e-12) if dtype == np.float64 else dict(rtol=2e-6)
    assert t_ours.dtype == (eager.float64 if dtype == np.float64 else eager.float32)
    np.testing.assert_allclose(t_ours.item(), t_theirs.item(), **tol)
    for a, b in zip(ours, theirs):
        if b.grad is None:
            assert a.grad is None
        else:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol)


def test_clip_grad_norm_semantics():
    ps = _params(eager, GRADS)
    flat = np.concatenate([g.ravel() for g in GRADS])
    total = nn.utils.clip_grad_norm_(ps, 1.0)
    assert total.item() == pytest.approx(np.linalg.norm(flat), rel=1e-12)
    after = np.concatenate([p.grad.numpy().ravel() for p in ps[:-1]])
    assert np.linalg.norm(after) == pytest.approx(1.0 / (1.0 + 1e-6 / np.linalg.norm(flat)),
                                                  rel=1e-9)
    np.testing.assert_allclose(after / flat, after[0] / flat[0])   # one common scale
    # below max_norm: untouched; a single tensor works; no grads at all: 0
    p = nn.Parameter(eager.ones(3))
    p.grad = eager.tensor([0.1, 0.2, 0.2])
    assert nn.utils.clip_grad_norm_(p, 5.0).item() == pytest.approx(0.3)
    np.testing.assert_array_equal(p.grad.numpy(), np.array([0.1, 0.2, 0.2], np.float32))
    assert nn.utils.clip_grad_norm_([nn.Parameter(eager.ones(2))], 1.0).item() == 0.0
    assert nn.utils.get_total_norm([eager.tensor([3.0, -4.0]), eager.tensor([12.0])]).item() \
        == pytest.approx(13.0)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_clip_grad_norm_nonfinite():
    ps = _params(eager, [np.array([1.0, np.inf]), np.array([2.0])], with_none=False)
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite"):
        nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(ps[0].grad.numpy(), [1.0, np.inf])      # nothing scaled
    total = nn.utils.clip_grad_norm_(ps, 1.0)                            # scaled by inf
    assert math.isinf(total.item())
    np.testing.assert_array_equal(ps[1].grad.numpy(), [0.0])
    assert np.isnan(ps[0].grad.numpy()[1])


def test_clip_grad_norm_nonfinite_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, eager):
        ps = _params(lib, [np.array([1.0, np.nan])], with_none=False)
        with pytest.raises(RuntimeError) as e:
            lib.nn.utils.clip_grad_norm_(ps, 1.0, norm_type=math.inf, error_if_nonfinite=True)
        if lib is torch:
            theirs = str(e.value)
        else:
            assert str(e.value) == theirs


@pytest.mark.parametrize("norm_type", [math.inf, -math.inf, 2.0, 1.0])
def test_clip_grad_norm_with_an_empty_gradient(norm_type):
    """An empty gradient has no inf/-inf norm: PyTorch's RuntimeError, nothing scaled (it
    was NumPy's ValueError); the other norms count it as 0."""
    grads = [np.zeros(0), np.array([3.0, -4.0])]
    ps = _params(eager, grads, with_none=False)
    if math.isinf(norm_type):
        what = ("_foreach_norm cannot compute the infinity norm" if norm_type > 0 else
                "linalg.vector_norm cannot compute the -inf norm")
        with pytest.raises(RuntimeError, match=f"^{what} on an empty tensor because the "
                                               "operation does not have an identity$"):
            nn.utils.clip_grad_norm_(ps, 1.0, norm_type=norm_type)
        np.testing.assert_array_equal(ps[1].grad.numpy(), [3.0, -4.0])
    else:
        total = nn.utils.clip_grad_norm_(ps, 1.0, norm_type=norm_type)
        assert total.item() == pytest.approx(5.0 if norm_type == 2.0 else 7.0)
    torch = pytest.importorskip("torch")
    theirs = _params(torch, grads, with_none=False)
    try:
        expected = torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type=norm_type).item()
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours:
            nn.utils.clip_grad_norm_(_params(eager, grads, with_none=False), 1.0,
                                     norm_type=norm_type)
        assert str(ours.value) == str(e)
    else:
        assert total.item() == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("clip", [0.3, 2.0])
def test_clip_grad_value_matches_torch(clip):
    torch = pytest.importorskip("torch")
    ours, theirs = _params(eager, GRADS), _params(torch, GRADS)
    assert nn.utils.clip_grad_value_(ours, clip) is None
    torch.nn.utils.clip_grad_value_(theirs, clip)
    for a, b in zip(ours[:-1], theirs[:-1]):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_clip_grad_value():
    ps = _params(eager, GRADS)
    nn.utils.clip_grad_value_(ps, 0.5)
    for p, g in zip(ps, GRADS):
        np.testing.assert_array_equal(p.grad.numpy(), np.clip(g, -0.5, 0.5))


def test_parameters_to_vector_and_back():
    m = nn.Linear(3, 2).double()
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (8,)
    np.testing.assert_array_equal(vec.detach().numpy()[:6], m.weight.detach().numpy().ravel())
    new = eager.arange(8, dtype=eager.float64)
    nn.utils.vector_to_parameters(new, m.parameters())
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(m.bias.detach().numpy(), [6.0, 7.0])
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], m.parameters())
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: numpy.ndarray"):
        nn.utils.vector_to_parameters(np.zeros(8), m.parameters())


def test_parameters_to_vector_gradient():
    gradcheck(lambda a, b: nn.utils.parameters_to_vector([a, b]) * 2.0,
              RNG.standard_normal((2, 3)), RNG.standard_normal(4))


def test_compiled_train_step_with_clipping_equals_eager():
    def make():
        eager.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
        params = list(model.parameters())
        opt = eager.optim.SGD(params, lr=0.5)

        def step(x, y):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            total = nn.utils.clip_grad_norm_(params, 0.05)
            nn.utils.clip_grad_value_(iter(params), 0.01)
            opt.step()
            return loss, total
        return model, step

    data = [(eager.tensor(RNG.standard_normal((5, 4))), eager.tensor(RNG.standard_normal((5, 1))))
            for _ in range(6)]
    m_e, step_e = make()
    m_c, step_c = make()
    cstep = compiler.compile(step_c)
    for k, (x, y) in enumerate(data):
        le, te = step_e(x, y)
        lc, tc = cstep(x, y)
        if k == 1:
            compiler.wait()
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-12)
        np.testing.assert_allclose(tc.item(), te.item(), rtol=1e-12)
    for a, b in zip(m_c.parameters(), m_e.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    assert cstep.stats()["hits"] >= 3


# -- ParameterList / ParameterDict -------------------------------------------------------

def test_parameter_list():
    pl = nn.ParameterList([nn.Parameter(eager.ones(2, 3)), eager.zeros(3)])
    assert len(pl) == 2 and isinstance(pl[1], nn.Parameter) and pl[1].requires_grad
    pl.append(eager.ones(1))
    pl += [eager.ones(4)]
    pl.extend([nn.Parameter(eager.ones(5))])
    assert len(pl) == 5 and [p.shape[0] for p in pl] == [2, 3, 1, 4, 5]
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2", "3", "4"]
    assert pl[-1].shape == (5,) and len(pl[1:3]) == 2 and pl[1:3][0] is pl[1]
    pl[0] = eager.zeros(7)
    assert pl[0].shape == (7,) and isinstance(pl[0], nn.Parameter)
    m = nn.Module()
    m.pl = pl
    assert list(m.state_dict()) == ["pl.0", "pl.1", "pl.2", "pl.3", "pl.4"]
    assert len(list(m.parameters())) == 5
    opt = eager.optim.SGD(m.parameters(), lr=1.0)
    for p in pl:
        p.grad = eager.ones_like(p)
    opt.step()
    np.testing.assert_array_equal(pl[1].detach().numpy(), [-1.0, -1.0, -1.0])
    with pytest.raises(IndexError, match="index 5 is out of range"):
        pl[5]
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an "
                                        "iterable, but got Tensor"):
        pl.extend(eager.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl()


def test_parameter_dict():
    pd = nn.ParameterDict({"b": eager.ones(2), "a": nn.Parameter(eager.zeros(1))})
    assert list(pd) == ["a", "b"]                    # a plain dict: sorted keys
    pd2 = nn.ParameterDict(OrderedDict([("z", eager.ones(1)), ("y", eager.ones(1))]))
    assert list(pd2.keys()) == ["z", "y"]            # an OrderedDict: its order
    assert isinstance(pd["b"], nn.Parameter) and "a" in pd and len(pd) == 2
    pd["c"] = eager.ones(3)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    assert pd.pop("a").shape == (1,) and list(pd) == ["b", "c"]
    assert pd.get("zz", 3) == 3 and pd.setdefault("d", eager.ones(1)).shape == (1,)
    k, v = pd.popitem()
    assert k == "d" and list(pd) == ["b", "c"]
    merged = pd | pd2
    assert list(merged) == ["b", "c", "z", "y"]
    pd |= pd2
    assert list(pd) == ["b", "c", "z", "y"] and list(pd.values())[0].shape == (2,)
    assert list(reversed(pd)) == ["y", "z", "c", "b"]
    pd.update([("e", eager.ones(1))])
    assert list(dict(pd.items())) == ["b", "c", "z", "y", "e"]
    assert list(pd.fromkeys(["p", "q"], eager.ones(1))) == ["p", "q"]
    del pd["e"]
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []


def test_parameter_containers_repr_and_errors_match_torch():
    torch = pytest.importorskip("torch")

    def build(lib):
        pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(3), "x"])
        pd = lib.nn.ParameterDict({"b": lib.ones(2), "a": lib.nn.Parameter(lib.zeros(1))})
        return pl, pd

    (pl, pd), (tpl, tpd) = build(eager), build(torch)
    assert repr(pl) == repr(tpl).replace("torch.", "eager.")
    assert repr(pd) == repr(tpd).replace("torch.", "eager.")
    assert repr(nn.ParameterList()) == repr(torch.nn.ParameterList())
    errors = [lambda pl, pd: pd[1], lambda pl, pd: pd.update(3),
              lambda pl, pd: pd.update([(1, 2, 3)]), lambda pl, pd: pd.update([3]),
              lambda pl, pd: pl[5], lambda pl, pd: pd["missing"]]
    for call in errors:
        with pytest.raises(Exception) as theirs:
            call(tpl, tpd)
        with pytest.raises(type(theirs.value)) as ours:
            call(pl, pd)
        if not isinstance(theirs.value, (KeyError, AttributeError)):
            assert str(ours.value) == str(theirs.value)


def test_parameter_list_in_compiled_model():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([eager.ones(3, dtype=eager.float64) * (k + 1)
                                        for k in range(3)])
            self.d = nn.ParameterDict({"s": eager.tensor(0.5, dtype=eager.float64)})

        def forward(self, x):
            for w in self.ws:
                x = (x * w).tanh()
            return x * self.d["s"]

    m = M()
    cm = compiler.compile(m)
    x = eager.tensor([0.1, -0.2, 0.3], dtype=eager.float64)
    for _ in range(4):
        out = cm(x)
        compiler.wait()
    np.testing.assert_allclose(out.detach().numpy(), m(x).detach().numpy(), rtol=1e-14)
    out.sum().backward()
    assert m.ws[2].grad is not None and m.d["s"].grad is not None


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0, 0.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_total_norm_on_arrays_equals_the_ops_bitwise(norm_type, dtype, monkeypatch):
    """clip_grad_norm_'s NumPy path (no Tensor per gradient) gives the norm ops' values."""
    import eager.nn.utils.clip_grad as cg

    def run():
        rng = np.random.default_rng(1)
        ps = [eager.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
              for s in [(3, 4), (5,), (), (4, 3)]]
        for p in ps:
            p.grad = eager.tensor(rng.standard_normal(p.shape).astype(dtype))
        ps[-1].grad = eager.tensor(rng.standard_normal((3, 4)).astype(dtype)).t()  # strided
        total = eager.nn.utils.clip_grad_norm_(ps, 0.5, norm_type=norm_type)
        return [total._data] + [p.grad._data for p in ps]

    real, taken = cg._numpy_total_norm, []
    monkeypatch.setattr(cg, "_numpy_total_norm",
                        lambda *a: taken.append(real(*a)) or taken[-1])
    fast = run()
    assert taken and taken[0] is not None
    monkeypatch.setattr(cg, "_numpy_total_norm", lambda *a: None)
    slow = run()
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
