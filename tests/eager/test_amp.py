"""Mixed precision: float16/bfloat16 tensors, ``eager.autocast`` (PyTorch's CPU op lists,
checked entry by entry against PyTorch) and ``eager.amp.GradScaler`` (the same scale
sequences as ``torch.amp.GradScaler("cpu")``)."""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest

import eager
import eager.nn.functional as F
from eager._state import STATE
from eager.amp import autocast_mode as ac

RNG = np.random.default_rng(8)


@pytest.fixture(autouse=True)
def _autocast_off():
    STATE.autocast = None
    yield
    STATE.autocast = None


def _torch():
    return pytest.importorskip("torch")


def _tdtype(torch, dt):
    return getattr(torch, dt.name)


def _name(t) -> str:
    return str(t.dtype).split(".")[-1]


def _np(t) -> np.ndarray:
    """A tensor of either library as float64 (bfloat16 included)."""
    return t.detach().double().numpy()


# -- the dtypes --------------------------------------------------------------------------

def test_bfloat16_is_ml_dtypes_and_floating():
    assert eager.bfloat16.np == np.dtype(ml_dtypes.bfloat16)
    x = eager.tensor([1.0, 2.5], dtype=eager.bfloat16)
    assert x.dtype is eager.bfloat16 and x.numpy().dtype == ml_dtypes.bfloat16
    assert x.is_floating_point() and x.element_size() == 2
    assert x.type() == "eager.BFloat16Tensor"
    assert eager.tensor([1.0]).half().dtype is eager.float16 is eager.half
    assert eager.tensor([1.0]).bfloat16().dtype is eager.bfloat16
    assert eager.tensor([1.0]).to(eager.bfloat16).to(eager.float32).dtype is eager.float32
    assert eager.tensor([1.0]).to(dtype=eager.float16).dtype is eager.float16
    assert x.requires_grad_().requires_grad


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_creation_printing_and_rounding_like_torch(dt):
    torch = _torch()
    vals = [3.14159, -2.71828, 1e-3, 1234.5678]
    e = eager.tensor(vals, dtype=getattr(eager, dt))
    t = torch.tensor(vals, dtype=getattr(torch, dt))
    assert e.tolist() == t.tolist()
    assert repr(e).replace("eager.", "torch.") == repr(t)
    assert repr(e[1]).replace("eager.", "torch.") == repr(t[1])
    assert e[3].item() == t[3].item()
    for make in ("zeros", "ones"):
        assert getattr(eager, make)(2, dtype=getattr(eager, dt)).tolist() == \
            getattr(torch, make)(2, dtype=getattr(torch, dt)).tolist()
    assert eager.full((2,), 3.3, dtype=getattr(eager, dt)).tolist() == \
        torch.full((2,), 3.3, dtype=getattr(torch, dt)).tolist()
    assert eager.arange(0, 3, dtype=getattr(eager, dt)).tolist() == [0.0, 1.0, 2.0]
    assert eager.randn(3, dtype=getattr(eager, dt)).dtype is getattr(eager, dt)


def test_out_of_range_is_inf_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isinf(eager.tensor([1e5]).half().item())
        assert math.isinf((eager.tensor([60000.0], dtype=eager.float16) * 2).item())


PROMOTIONS = [
    ("bf16 + f16", lambda m: m.ones(2, dtype=m.bfloat16) + m.ones(2, dtype=m.float16)),
    ("bf16 + python float", lambda m: m.ones(2, dtype=m.bfloat16) + 1.5),
    ("bf16 + python int", lambda m: m.ones(2, dtype=m.bfloat16) + 1),
    ("bf16 + f32", lambda m: m.ones(2, dtype=m.bfloat16) + m.ones(2)),
    ("bf16 + f32 0-d", lambda m: m.ones(2, dtype=m.bfloat16) + m.tensor(2.0)),
    ("f16 + bf16 0-d", lambda m: m.ones(2, dtype=m.float16) + m.tensor(2.0, dtype=m.bfloat16)),
    ("int64 + bf16 0-d", lambda m: m.ones(2, dtype=m.int64) + m.tensor(2.0, dtype=m.bfloat16)),
    ("bf16 * f64", lambda m: m.ones(2, dtype=m.bfloat16) * m.ones(2, dtype=m.float64)),
    ("f16 < bf16", lambda m: m.ones(2, dtype=m.float16) < m.ones(2, dtype=m.bfloat16)),
    ("where bf16/float", lambda m: m.where(m.ones(2) > 0, m.ones(2, dtype=m.bfloat16), 0.0)),
    ("cat bf16 f32", lambda m: m.cat([m.ones(2, dtype=m.bfloat16), m.ones(2)])),
    ("bf16 sum", lambda m: m.ones(2, dtype=m.bfloat16).sum()),
    ("f16 mean", lambda m: m.ones(2, dtype=m.float16).mean()),
    ("bf16 argmax", lambda m: m.ones(2, dtype=m.bfloat16).argmax()),
    ("bf16 long", lambda m: m.ones(2, dtype=m.bfloat16).long()),
    ("bf16 softmax", lambda m: m.softmax(m.ones(2, dtype=m.bfloat16), 0)),
    ("bf16 add_ f32", lambda m: m.ones(2, dtype=m.bfloat16).add_(m.ones(2))),
]


@pytest.mark.parametrize("case", PROMOTIONS, ids=[c[0] for c in PROMOTIONS])
def test_type_promotion_like_torch(case):
    torch = _torch()
    _, fn = case
    assert _name(fn(eager)) == _name(fn(torch))


def test_promotion_results_named():
    assert (eager.ones(2, dtype=eager.bfloat16) + eager.ones(2, dtype=eager.float16)).dtype \
        is eager.float32
    assert (eager.ones(2, dtype=eager.bfloat16) + 1.5).dtype is eager.bfloat16
    assert (eager.ones(2, dtype=eager.bfloat16) + eager.ones(2)).dtype is eager.float32


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_elementwise_and_reductions_round_like_torch(dt):
    """Computed in float32, rounded once to the half type, as PyTorch's CPU kernels."""
    torch = _torch()
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    e = eager.tensor(x).to(getattr(eager, dt))
    t = torch.tensor(x).to(getattr(torch, dt))
    for fn in (lambda m, a: a * 3.3, lambda m, a: a / 3, lambda m, a: m.exp(a),
               lambda m, a: m.tanh(a) + a, lambda m, a: (a * 0.1).sum(),
               lambda m, a: a.mean(1), lambda m, a: a.abs().sqrt(), lambda m, a: a ** 2,
               lambda m, a: a.clamp(-0.5, 0.5), lambda m, a: m.softmax(a, 1),
               lambda m, a: m.log_softmax(a, 0), lambda m, a: a.max(1).values,
               lambda m, a: a.cumsum(1)):
        re, rt = fn(eager, e), fn(torch, t)
        assert _name(re) == _name(rt)
        np.testing.assert_allclose(_np(re), _np(rt), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_matmul_and_linear_in_half_match_torch(dt):
    torch = _torch()
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    w = RNG.standard_normal((4, 8)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    ed, td = getattr(eager, dt), getattr(torch, dt)
    re = F.linear(eager.tensor(x).to(ed), eager.tensor(w).to(ed), eager.tensor(b).to(ed))
    rt = torch.nn.functional.linear(torch.tensor(x).to(td), torch.tensor(w).to(td),
                                    torch.tensor(b).to(td))
    assert re.dtype is ed
    np.testing.assert_allclose(_np(re), _np(rt), rtol=2e-2, atol=2e-2)
    re = eager.tensor(x).to(ed) @ eager.tensor(w.T.copy()).to(ed)
    rt = torch.tensor(x).to(td) @ torch.tensor(w.T.copy()).to(td)
    assert re.dtype is ed
    np.testing.assert_allclose(_np(re), _np(rt), rtol=2e-2, atol=2e-2)


SCALAR_OPS = {
    # PyTorch rounds a Python number (or a 0-d tensor) to the half type first, except for
    # mul/div, whose kernels take it unrounded; results are then rounded once
    "eq": lambda m, a: a == 1.1, "gt": lambda m, a: a > 0.3, "add": lambda m, a: a + 1.1,
    "sub": lambda m, a: a - 0.3, "rsub": lambda m, a: 0.7 - a, "mul": lambda m, a: a * 1.1,
    "div": lambda m, a: a / 1.3, "pow": lambda m, a: a.abs() ** 1.3,
    "add 0-d": lambda m, a: a + m.tensor(1.1), "lt 0-d": lambda m, a: a < m.tensor(0.3),
    "add_": lambda m, a: a.clone().add_(1.1), "mul_": lambda m, a: a.clone().mul_(1.1),
    "where": lambda m, a: m.where(a > 0, a, 0.3),
}


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
def test_scalar_operands_bit_for_bit_like_torch(name, dt):
    torch = _torch()
    x = np.random.default_rng(0).standard_normal(500).astype(np.float32)
    re = SCALAR_OPS[name](eager, eager.tensor(x).to(getattr(eager, dt)))
    rt = SCALAR_OPS[name](torch, torch.tensor(x).to(getattr(torch, dt)))
    assert _name(re) == _name(rt)
    np.testing.assert_array_equal(re.numpy().astype(np.float32), rt.float().numpy()
                                  if rt.dtype != torch.bool else rt.numpy())


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_alpha_and_lerp_round_once_like_torch(dt):
    """``add(alpha=)`` and ``lerp`` are one kernel in PyTorch: one rounding (up to the
    fused multiply-add its vector loop may use: a few elements in a thousand)."""
    torch = _torch()
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    for fn in (lambda m, a: m.add(a, a * 1.5, alpha=0.3),
               lambda m, a: m.sub(a, a * 1.5, alpha=1.7),
               lambda m, a: m.lerp(a, a * 2, 0.3), lambda m, a: m.lerp(a, a * 2, 0.8)):
        re = fn(eager, eager.tensor(x).to(getattr(eager, dt)))
        rt = fn(torch, torch.tensor(x).to(getattr(torch, dt)))
        assert _name(re) == _name(rt) == dt
        assert np.mean(_np(re) == _np(rt)) > 0.99


@pytest.mark.parametrize("dt", ["bfloat16", "float16", "float32", "float64"])
def test_nan_to_num_keeps_the_dtype(dt):
    torch = _torch()
    v = [math.inf, math.nan, -math.inf, 1.0]
    re = eager.tensor(v).to(getattr(eager, dt)).nan_to_num()
    rt = torch.tensor(v).to(getattr(torch, dt)).nan_to_num()
    assert _name(re) == _name(rt) == dt
    assert re.tolist() == rt.tolist()


def test_save_load_and_module_conversions(tmp_path):
    t = eager.tensor([1.5, -2.25, 3.0e38], dtype=eager.bfloat16)
    lin = eager.nn.Linear(2, 3).bfloat16()
    assert lin.weight.dtype is eager.bfloat16
    assert lin(eager.ones(1, 2, dtype=eager.bfloat16)).dtype is eager.bfloat16
    eager.save({"t": t, "w": lin.state_dict(), "a": t.numpy()}, tmp_path / "x.pt")
    back = eager.load(tmp_path / "x.pt")
    assert back["t"].dtype is eager.bfloat16 and back["t"].tolist() == t.tolist()
    assert back["w"]["weight"].dtype is eager.bfloat16
    assert back["a"].dtype == ml_dtypes.bfloat16
    assert eager.nn.Linear(2, 2).half().weight.dtype is eager.float16


def test_mixed_half_and_float_matmul_is_torchs_error():
    with pytest.raises(RuntimeError, match=r"same dtype, but got: c10::BFloat16 != float"):
        eager.ones(2, 3, dtype=eager.bfloat16) @ eager.ones(3, 2)
    with pytest.raises(RuntimeError, match=r"c10::Half != float"):
        eager.ones(2, 3, dtype=eager.float16) @ eager.ones(3, 2)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(eager.ones(2, 3, dtype=eager.bfloat16), eager.ones(2, 3))


def test_half_linear_algebra_is_rejected_as_torch():
    a = eager.eye(3, dtype=eager.bfloat16) * 2
    with pytest.raises(RuntimeError, match="linalg.inv: Low precision dtypes not supported. "
                                           "Got BFloat16"):
        eager.linalg.inv(a)
    with pytest.raises(RuntimeError, match="Got Half"):
        eager.linalg.det(a.half())
    with pytest.raises(RuntimeError, match="Low precision"):
        eager.linalg.pinv(a)
    with pytest.raises(NotImplementedError, match="\"cdist\" not implemented for 'BFloat16'"):
        eager.cdist(a, a)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_backward_gives_grads_in_the_param_dtype_close_to_float32(dt):
    """No finite differences in half precision: the gradients are compared with the same
    computation in float32, within the half type's tolerance."""
    x = RNG.standard_normal((3, 6)).astype(np.float32)
    w = RNG.standard_normal((4, 6)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    grads = {}
    for name in (dt, "float32"):
        d = getattr(eager, name)
        ps = [eager.tensor(a).to(d).requires_grad_() for a in (x, w, b)]
        y = F.linear(*ps)
        loss = (eager.softmax(eager.tanh(y), 1) * eager.arange(4.0).to(d)).sum()
        loss.backward()
        assert loss.dtype is d
        assert all(p.grad.dtype is d for p in ps)
        grads[name] = [_np(p.grad) for p in ps]
    tol = 2e-2 if dt == "bfloat16" else 3e-3
    for g, ref in zip(grads[dt], grads["float32"]):
        np.testing.assert_allclose(g, ref, rtol=tol, atol=tol)


def test_create_graph_backward_of_half_ops_equals_the_plain_backward():
    """The tensor-mode backward (create_graph, a compiler trace) computes each half op's
    formula in float32 and rounds once, as the array-mode backward does."""
    x = eager.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)).bfloat16()
    x.requires_grad_()
    w = eager.tensor(np.linspace(-2, 1, 12, dtype=np.float32).reshape(3, 4)).bfloat16()

    def f():
        return (eager.tanh(x @ w) * eager.sigmoid(x @ w)).sum()

    (g1,) = eager.autograd.grad(f(), x)
    (g2,) = eager.autograd.grad(f(), x, create_graph=True)
    assert g1.dtype is g2.dtype is eager.bfloat16 and g2.requires_grad
    np.testing.assert_array_equal(_np(g1), _np(g2))
    g2.sum().backward()
    assert x.grad.dtype is eager.bfloat16


def test_backward_inside_autocast_is_not_autocast():
    """Backward ops run in their forward's dtypes even when the backward is run inside an
    autocast region (the create_graph formulas dispatch a matmul: not cast to bfloat16)."""
    a = eager.tensor(_X, requires_grad=True)
    z = (a @ a).sum()  # float32, outside autocast
    (want,) = eager.autograd.grad(z, a, create_graph=True)
    z = (a @ a).sum()
    with eager.autocast("cpu"):
        (got,) = eager.autograd.grad(z, a, create_graph=True)
        assert (a @ a).dtype is eager.bfloat16  # still on after the backward
    assert got.dtype is eager.float32
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_half_backward_matches_torch():
    torch = _torch()
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    w = RNG.standard_normal((5, 4)).astype(np.float32)
    out = []
    for m in (eager, torch):
        xs = m.tensor(x).to(m.bfloat16).requires_grad_()
        ws = m.tensor(w).to(m.bfloat16).requires_grad_()
        m.nn.functional.linear(xs, ws).tanh().sum().backward()
        out.append((_name(ws.grad), _np(xs.grad), _np(ws.grad)))
    assert out[0][0] == out[1][0] == "bfloat16"
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-2, atol=1e-2)


# -- autocast: the policy table, entry by entry, against PyTorch -------------------------

_A = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
_SPD = _A @ _A.T + 3 * np.eye(3, dtype=np.float32)


def _spd(m, dt):
    return m.tensor(_SPD.copy()).to(dt)


_X = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)


def _x(m, dt, shape=(4, 4)):
    return m.tensor(_X.reshape(-1)[:int(np.prod(shape))].reshape(shape).copy()).to(dt)


def _probs(m, dt):
    return m.sigmoid(_x(m, dt))


#: name in POLICY/FUNCTIONS -> fn(module, dtype) calling it on tensors of that dtype
CASES = {
    "matmul": lambda m, d: _x(m, d) @ _x(m, d),
    "linear": lambda m, d: m.nn.functional.linear(_x(m, d), _x(m, d), _x(m, d, (4,))),
    "einsum": lambda m, d: m.einsum("ij,jk->ik", _x(m, d), _x(m, d)),
    "rnn_scan": lambda m, d: m.nn.LSTM(4, 3).to(d)(_x(m, d, (2, 2, 4)))[0],
    "prod": lambda m, d: _x(m, d).prod(),
    "cholesky": lambda m, d: m.linalg.cholesky(_spd(m, d)),
    "cholesky_info": lambda m, d: m.linalg.cholesky_ex(_spd(m, d))[0],
    "inv": lambda m, d: m.linalg.inv(_spd(m, d)),
    "lu_info": lambda m, d: m.linalg.inv_ex(_spd(m, d))[0],
    "qr": lambda m, d: m.linalg.qr(_spd(m, d))[1],
    "svd": lambda m, d: m.linalg.svd(_spd(m, d))[1],
    "svdvals": lambda m, d: m.linalg.svdvals(_spd(m, d)),
    "solve": lambda m, d: m.linalg.solve(_spd(m, d), _spd(m, d)),
    "eigh": lambda m, d: m.linalg.eigh(_spd(m, d))[0],
    "eigvalsh": lambda m, d: m.linalg.eigvalsh(_spd(m, d)),
    "nll_loss": lambda m, d: m.nn.functional.nll_loss(_x(m, d), m.tensor([0, 1, 3, 2])),
    "cat": lambda m, d: m.cat([_x(m, d), _x(m, m.float32)]),
    "stack": lambda m, d: m.stack([_x(m, d), _x(m, m.float32)]),
    "index_copy": lambda m, d: _x(m, d).index_copy(0, m.tensor([1]), _x(m, m.float32, (1, 4))),
    "conv1d": lambda m, d: m.nn.functional.conv1d(_x(m, d, (1, 2, 8)), _x(m, d, (2, 2, 3))),
    "conv2d": lambda m, d: m.nn.functional.conv2d(_x(m, d, (1, 1, 4, 4)),
                                                  _x(m, d, (2, 1, 2, 2))),
    "conv3d": lambda m, d: m.nn.functional.conv3d(_x(m, d, (1, 1, 2, 2, 4)),
                                                  _x(m, d, (1, 1, 1, 2, 2))),
    "conv_transpose1d": lambda m, d: m.nn.functional.conv_transpose1d(
        _x(m, d, (1, 2, 4)), _x(m, d, (2, 1, 3))),
    "conv_transpose2d": lambda m, d: m.nn.functional.conv_transpose2d(
        _x(m, d, (1, 1, 2, 4)), _x(m, d, (1, 2, 2, 2))),
    "conv_transpose3d": lambda m, d: m.nn.functional.conv_transpose3d(
        _x(m, d, (1, 1, 1, 2, 4)), _x(m, d, (1, 1, 1, 2, 2))),
    "scaled_dot_product_attention": lambda m, d: m.nn.functional.scaled_dot_product_attention(
        _x(m, d, (1, 4, 4)), _x(m, d, (1, 4, 4)), _x(m, d, (1, 4, 4))),
    "vecdot": lambda m, d: m.linalg.vecdot(_x(m, d), _x(m, d)),
    "mse_loss": lambda m, d: m.nn.functional.mse_loss(_x(m, d), _x(m, d) * 0.5),
    "l1_loss": lambda m, d: m.nn.functional.l1_loss(_x(m, d), _x(m, d) * 0.5),
    "smooth_l1_loss": lambda m, d: m.nn.functional.smooth_l1_loss(_x(m, d), _x(m, d) * 0.5),
    "huber_loss": lambda m, d: m.nn.functional.huber_loss(_x(m, d), _x(m, d) * 0.5),
    "binary_cross_entropy": lambda m, d: m.nn.functional.binary_cross_entropy(
        _probs(m, d), _probs(m, d) * 0.5),
    "binary_cross_entropy_with_logits": lambda m, d:
        m.nn.functional.binary_cross_entropy_with_logits(_x(m, d), _probs(m, d)),
    "kl_div": lambda m, d: m.nn.functional.kl_div(_x(m, d), _probs(m, d),
                                                  reduction="batchmean"),
    "cross_entropy": lambda m, d: m.nn.functional.cross_entropy(
        _x(m, d), m.softmax(_x(m, d) * 2, 1)),
    "cdist": lambda m, d: m.cdist(_x(m, d), _x(m, d) * 0.5),
    "trace": lambda m, d: m.trace(_x(m, d)),
    "pinverse": lambda m, d: m.pinverse(_spd(m, d)),
    "lstsq": lambda m, d: m.linalg.lstsq(_spd(m, d), _spd(m, d))[0],
    "matrix_rank": lambda m, d: m.linalg.matrix_rank(_spd(m, d)),
    "avg_pool3d": lambda m, d: m.nn.functional.avg_pool3d(_x(m, d, (1, 1, 2, 2, 4)), 2),
    "max_pool3d": lambda m, d: m.nn.functional.max_pool3d(_x(m, d, (1, 1, 2, 2, 4)), 2),
    "adaptive_avg_pool3d": lambda m, d: m.nn.functional.adaptive_avg_pool3d(
        _x(m, d, (1, 1, 2, 2, 4)), 1),
    "adaptive_max_pool3d": lambda m, d: m.nn.functional.adaptive_max_pool3d(
        _x(m, d, (1, 1, 2, 2, 4)), 1),
    "reflection_pad": lambda m, d: m.nn.functional.pad(_x(m, d, (1, 4, 4)), (1, 2),
                                                       mode="reflect"),
    "replication_pad": lambda m, d: m.nn.functional.pad(_x(m, d, (1, 4, 4)), (1, 2, 1, 1),
                                                        mode="replicate"),
}


def test_every_policy_entry_has_a_case():
    assert set(CASES) == set(ac.POLICY) | set(ac.FUNCTIONS)


def _expected(kind, arg_dtype, low):
    if kind == ac.LOWER:
        return low
    if kind == ac.FP32:
        return "float32"
    return "float32"  # PROMOTE: the cases mix a half type with float32


def _inputs_for(kind, low):
    """LOWER ops get float32 (and float16) arguments, the others half ones."""
    if kind == ac.LOWER:
        return ["float32", "float16" if low == "bfloat16" else "bfloat16"]
    return [low]


#: entries checked with float32 arguments under bfloat16 autocast only (PyTorch's CPU LSTM
#: goes through oneDNN, which has no float16 primitive and treats float16 weights apart)
_FLOAT32_ONLY = {"rnn_scan"}


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_policy_entry_matches_torch(name, low):
    """The dtype each listed op gives under autocast is PyTorch's (and the table's), and
    its values are PyTorch's within the lower precision's tolerance."""
    torch = _torch()
    kind = ac.POLICY.get(name) or ac.FUNCTIONS[name]
    if name in _FLOAT32_ONLY and low != "bfloat16":
        pytest.skip("PyTorch's oneDNN LSTM has no float16 version")
    for arg in _inputs_for(kind, low)[:1 if name in _FLOAT32_ONLY else None]:
        torch.manual_seed(0)
        eager.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # kl_div / deprecations, same in both
            with eager.autocast("cpu", dtype=getattr(eager, low)):
                re = CASES[name](eager, getattr(eager, arg))
            try:
                with torch.autocast("cpu", dtype=getattr(torch, low)):
                    rt = CASES[name](torch, getattr(torch, arg))
            except RuntimeError as exc:
                if "could not create a primitive descriptor" not in str(exc):
                    raise
                # oneDNN's bfloat16 LSTM needs CPU support (AVX-512 BF16/AMX) this one lacks
                assert _name(re) == _expected(kind, arg, low), (name, arg)
                pytest.skip(f"PyTorch cannot run {name} in {low} on this CPU: {exc}")
        assert _name(re) == _name(rt), (name, arg)
        if name != "matrix_rank":
            assert _name(re) == _expected(kind, arg, low), (name, arg)
        if name == "rnn_scan":
            continue  # random weights: the dtype is the point
        tol = 5e-2 if "bfloat16" in (low, arg) else 1e-2
        np.testing.assert_allclose(_np(re), _np(rt), rtol=tol, atol=tol * 2)


UNLISTED = {
    # ops PyTorch's CPU autocast leaves alone: they keep their input dtype
    "softmax": lambda m, d: m.softmax(_x(m, d), 1),
    "log_softmax": lambda m, d: m.log_softmax(_x(m, d), 1),
    "sum": lambda m, d: _x(m, d).sum(),
    "layer_norm": lambda m, d: m.nn.functional.layer_norm(_x(m, d), (4,)),
    "gelu": lambda m, d: m.nn.functional.gelu(_x(m, d)),
    "dot": lambda m, d: m.dot(_x(m, d)[0], _x(m, d)[1]),
    "mv": lambda m, d: m.mv(_x(m, d), _x(m, d)[0]),
    "outer": lambda m, d: m.outer(_x(m, d)[0], _x(m, d)[1]),
    "one-operand einsum": lambda m, d: m.einsum("ii->", _x(m, d)),
    "adaptive_avg_pool2d": lambda m, d: m.nn.functional.adaptive_avg_pool2d(
        _x(m, d, (1, 4, 4)), 2),
    "bilinear upsampling": lambda m, d: m.nn.functional.interpolate(
        _x(m, d, (1, 1, 4, 4)), scale_factor=2, mode="bilinear"),
    "constant pad": lambda m, d: m.nn.functional.pad(_x(m, d), (1, 1)),
    "float64 matmul": lambda m, d: _x(m, m.float64) @ _x(m, m.float64),
    "int matmul": lambda m, d: m.ones(2, 2, dtype=m.int64) @ m.ones(2, 2, dtype=m.int64),
}


@pytest.mark.parametrize("name", sorted(UNLISTED))
@pytest.mark.parametrize("arg", ["float32", "bfloat16"])
def test_unlisted_ops_keep_their_dtype_like_torch(name, arg):
    torch = _torch()
    with eager.autocast("cpu", dtype=eager.bfloat16):
        re = UNLISTED[name](eager, getattr(eager, arg))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        rt = UNLISTED[name](torch, getattr(torch, arg))
    assert _name(re) == _name(rt)
    np.testing.assert_allclose(_np(re), _np(rt), rtol=5e-2, atol=5e-2)


def test_float64_stays_and_meets_a_cast_float32_as_torch():
    """float64 is not eligible: a float64 @ float32 matmul is the dtype mismatch PyTorch
    reports (against the cast bfloat16)."""
    with eager.autocast("cpu"):
        assert F.linear(eager.ones(2, 2, dtype=eager.float64),
                        eager.ones(2, 2, dtype=eager.float64)).dtype is eager.float64
        with pytest.raises(RuntimeError, match="double != c10::BFloat16"):
            eager.ones(2, 2, dtype=eager.float64) @ eager.ones(2, 2)


# -- autocast: the context manager ---------------------------------------------------------

def test_autocast_regions_nest_and_restore():
    a = eager.ones(2, 2)
    assert not eager.is_autocast_enabled("cpu")
    with eager.autocast(device_type="cpu", dtype=eager.bfloat16):
        assert (a @ a).dtype is eager.bfloat16
        assert eager.is_autocast_enabled("cpu") and not eager.is_autocast_enabled()
        assert eager.get_autocast_dtype("cpu") is eager.bfloat16
        with eager.autocast("cpu", enabled=False):
            assert (a @ a).dtype is eager.float32
            assert not eager.is_autocast_enabled("cpu")
            with eager.autocast("cpu", dtype=eager.float16):
                assert (a @ a).dtype is eager.float16
                assert eager.get_autocast_dtype("cpu") is eager.float16
        assert (a @ a).dtype is eager.bfloat16
    assert (a @ a).dtype is eager.float32
    assert STATE.autocast is None


def test_autocast_restores_on_exception():
    with pytest.raises(ValueError):
        with eager.autocast("cpu"):
            raise ValueError
    assert STATE.autocast is None


def test_default_dtype_and_spellings():
    a = eager.ones(2, 2)
    assert eager.autocast("cpu").fast_dtype is eager.bfloat16
    assert eager.amp.autocast is eager.autocast
    with eager.amp.autocast("cpu"):
        assert (a @ a).dtype is eager.bfloat16
    with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
        ctx = eager.cpu.amp.autocast()
    with ctx:
        assert (a @ a).dtype is eager.bfloat16
    with pytest.warns(FutureWarning):
        with eager.cpu.amp.autocast(dtype=eager.float16):
            assert (a @ a).dtype is eager.float16
    with pytest.warns(DeprecationWarning):
        assert not eager.is_autocast_cpu_enabled()


def test_decorator_form():
    @eager.autocast("cpu", dtype=eager.bfloat16)
    def f(x):
        return x @ x

    x = eager.ones(2, 2)
    assert f(x).dtype is eager.bfloat16
    assert (x @ x).dtype is eager.float32
    assert f.__name__ == "f"


def test_autocast_gradients_reach_float32_params_in_float32():
    torch = _torch()
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    w = RNG.standard_normal((5, 4)).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    res = []
    for m in (eager, torch):
        ps = [m.tensor(a).requires_grad_() for a in (x, w, b)]
        with m.autocast("cpu", dtype=m.bfloat16):
            out = m.nn.functional.linear(*ps)
            loss = m.nn.functional.mse_loss(out, m.zeros(3, 5))
            loss.backward()  # inside the region, as is common
        res.append((_name(out), _name(loss), [(_name(p.grad), _np(p.grad)) for p in ps]))
    assert res[0][:2] == res[1][:2] == ("bfloat16", "float32")
    for (de, ge), (dt, gt) in zip(res[0][2], res[1][2]):
        assert de == dt == "float32"
        np.testing.assert_allclose(ge, gt, rtol=2e-2, atol=2e-2)


def test_a_model_under_autocast_matches_torch():
    torch = _torch()
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    y = np.array([0, 2, 1, 1, 0, 2])
    params = [RNG.standard_normal(s).astype(np.float32) * 0.5 for s in ((8, 4), (8,), (3, 8),
                                                                         (3,))]
    res = []
    for m in (eager, torch):
        ps = [m.tensor(p).requires_grad_() for p in params]
        with m.autocast("cpu", dtype=m.bfloat16):
            h = m.relu(m.nn.functional.linear(m.tensor(x), ps[0], ps[1]))
            logits = m.nn.functional.linear(h, ps[2], ps[3])
            loss = m.nn.functional.cross_entropy(logits, m.tensor(y))
        loss.backward()
        res.append((_name(h), _name(logits), _name(loss), loss.item(),
                    [_np(p.grad) for p in ps]))
    assert res[0][:3] == res[1][:3] == ("bfloat16", "bfloat16", "float32")
    assert abs(res[0][3] - res[1][3]) < 2e-2
    for ge, gt in zip(res[0][4], res[1][4]):
        np.testing.assert_allclose(ge, gt, rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_unsupported_dtype_warns_and_disables_like_torch(dtype):
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not "
                                         "supported. Disabling autocast"):
        ctx = eager.autocast("cpu", dtype=getattr(eager, dtype))
    with ctx:
        assert not eager.is_autocast_enabled("cpu")
        assert (eager.ones(2, 2) @ eager.ones(2, 2)).dtype is eager.float32


def test_bad_device_type():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        eager.autocast(5)
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'foo'"):
        eager.autocast("foo")
    if not eager.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ctx = eager.autocast("cuda")
        with ctx:
            assert (eager.ones(2, 2) @ eager.ones(2, 2)).dtype is eager.float32


# -- GradScaler ----------------------------------------------------------------------------

def _scaler_run(m, steps=12, bad=(3, 4, 9), nan=(6,), **kw):
    p = m.nn.Parameter(m.tensor([1.0, -2.0]))
    opt = m.optim.SGD([p], lr=0.1)
    sc = m.amp.GradScaler("cpu", **kw)
    seq = []
    for i in range(steps):
        opt.zero_grad()
        k = math.inf if i in bad else (math.nan if i in nan else 1.0)
        sc.scale((p * p).sum() * k).backward()
        sc.step(opt)
        sc.update()
        seq.append((sc.get_scale(), sc._get_growth_tracker(), round(p[0].item(), 6)))
    return seq, sc.state_dict()


@pytest.mark.parametrize("kw", [
    {"init_scale": 4.0, "growth_interval": 2},
    {"init_scale": 0.1, "growth_interval": 3},
    {"init_scale": 1e38, "growth_interval": 1, "growth_factor": 10.0, "backoff_factor": 0.25},
    {"enabled": False},
], ids=["grow-backoff", "float32-rounding", "growth-past-float32", "disabled"])
def test_scale_sequence_matches_torch(kw):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(_scaler_run(eager, **kw)) == repr(_scaler_run(torch, **kw))  # nan too


def test_scale_sequence_by_hand():
    seq, state = _scaler_run(eager, steps=6, init_scale=4.0, growth_interval=2, bad=(3,),
                             nan=())
    assert [s for s, _, _ in seq] == [4.0, 8.0, 8.0, 4.0, 4.0, 8.0]
    assert [p for _, _, p in seq][2:4] == [0.512, 0.512]  # the bad step was skipped
    assert state == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                     "growth_interval": 2, "_growth_tracker": 0}


def test_unscale_and_stage_errors():
    p = eager.nn.Parameter(eager.tensor([3.0, 4.0]))
    opt = eager.optim.SGD([p], lr=1.0)
    sc = eager.amp.GradScaler("cpu", init_scale=8.0)
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        sc.step(opt)
    sc.scale((p * p).sum()).backward()
    assert p.grad.tolist() == [48.0, 64.0]
    sc.unscale_(opt)
    assert p.grad.tolist() == [6.0, 8.0]
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        sc.unscale_(opt)
    assert sc.step(opt) is None
    assert p.tolist() == [-3.0, -4.0]
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        sc.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        sc.unscale_(opt)
    sc.update()
    sc.update(3.3)
    assert sc.get_scale() == float(np.float32(3.3))
    sc.update(eager.tensor(5.5))
    assert sc.get_scale() == 5.5
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        sc.step(opt, closure=lambda: 0)


def test_state_dict_round_trip_and_errors():
    sc = eager.amp.GradScaler("cpu", init_scale=4.0, growth_interval=3)
    sc.scale(eager.tensor(1.0))
    p = eager.nn.Parameter(eager.tensor([1.0]))
    opt = eager.optim.SGD([p], lr=0.1)
    sc.scale((p * p).sum()).backward()
    sc.step(opt)
    sc.update()
    other = eager.amp.GradScaler("cpu")
    assert other.get_scale() == 65536.0
    other.load_state_dict(sc.state_dict())
    assert other.state_dict() == sc.state_dict() == {
        "scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 3,
        "_growth_tracker": 1}
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        eager.amp.GradScaler("cpu").load_state_dict({})
    assert eager.amp.GradScaler("cpu", enabled=False).state_dict() == {}
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        eager.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor must be < 1.0"):
        eager.amp.GradScaler("cpu", backoff_factor=1.0)


def test_scale_outputs_and_disabled_scaler():
    sc = eager.amp.GradScaler("cpu", init_scale=2.0)
    a, (b,) = sc.scale([eager.tensor(1.0), (eager.tensor(3.0),)])
    assert (a.item(), b.item()) == (2.0, 6.0)
    assert [t.item() for t in sc.scale(iter([eager.tensor(1.5)]))] == [3.0]
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable"):
        sc.scale(3.0)
    assert sc.scale(eager.ones(2, dtype=eager.bfloat16)).dtype is eager.bfloat16
    off = eager.amp.GradScaler("cpu", enabled=False)
    x = eager.tensor(2.0)
    assert off.scale(x) is x and off.get_scale() == 1.0 and not off.is_enabled()
    p = eager.nn.Parameter(eager.tensor([1.0]))
    opt = eager.optim.SGD([p], lr=1.0)
    (p * 2).sum().backward()
    off.step(opt)
    off.update()
    assert p.tolist() == [-1.0]


def test_half_gradients():
    ph = eager.nn.Parameter(eager.tensor([1.0], dtype=eager.float16))
    sc = eager.amp.GradScaler("cpu")
    sc.scale((ph * ph).sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        sc.unscale_(eager.optim.SGD([ph], lr=1.0))
    pb = eager.nn.Parameter(eager.tensor([1.0], dtype=eager.bfloat16))
    opt = eager.optim.SGD([pb], lr=1.0)
    sc = eager.amp.GradScaler("cpu")
    sc.scale((pb * pb).sum()).backward()
    sc.step(opt)
    sc.update()
    assert pb.tolist() == [-1.0] and pb.dtype is eager.bfloat16


def test_default_device_is_cuda_as_torch():
    if eager.cuda.is_available():
        pytest.skip("CUDA present: the default scaler is enabled")
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        sc = eager.amp.GradScaler()
    assert not sc.is_enabled()
    with pytest.warns(FutureWarning, match="torch.cpu.amp.GradScaler"):
        assert eager.cpu.amp.GradScaler().is_enabled()


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_training_with_autocast_and_scaler_matches_torch():
    torch = _torch()
    x = RNG.standard_normal((8, 3)).astype(np.float32)
    y = RNG.standard_normal((8, 1)).astype(np.float32)
    w0 = RNG.standard_normal((1, 3)).astype(np.float32)
    out = []
    for m in (eager, torch):
        w = m.nn.Parameter(m.tensor(w0))
        opt = m.optim.SGD([w], lr=0.05)
        sc = m.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
        scales, losses = [], []
        for i in range(5):
            opt.zero_grad()
            with m.autocast("cpu", dtype=m.bfloat16):
                loss = m.nn.functional.mse_loss(m.nn.functional.linear(m.tensor(x), w),
                                                m.tensor(y))
            if i == 2:
                loss = loss * math.inf
            sc.scale(loss).backward()
            sc.step(opt)
            sc.update()
            scales.append(sc.get_scale())
            losses.append(loss.item())
        out.append((scales, losses, _np(w)))
    assert out[0][0] == out[1][0]
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=2e-2)
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=2e-2, atol=2e-2)


def test_autocast_casts_vmap_batched_tensors_as_torch():
    """Under autocast a vmap-batched tensor is cast like any CPU tensor: a matmul of a
    batched and an unbatched float32 tensor runs in bfloat16, as torch.func.vmap does."""
    torch = _torch()
    from eager.func import vmap
    rng = np.random.default_rng(0)
    w, xs = rng.standard_normal((3, 2), np.float32), rng.standard_normal((4, 3), np.float32)
    W, X = eager.tensor(w), eager.tensor(xs)
    with eager.autocast("cpu", dtype=eager.bfloat16):
        got = vmap(lambda x: x @ W)(X)
        plain = X @ W
    tw, tx = torch.from_numpy(w), torch.from_numpy(xs)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = torch.func.vmap(lambda x: x @ tw)(tx)
    assert got.dtype == eager.bfloat16 == plain.dtype
    assert str(want.dtype) == "torch.bfloat16"
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    np.testing.assert_array_equal(got.float().numpy(), plain.float().numpy())
