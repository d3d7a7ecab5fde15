"""Every registered op runs on CUDA, with the CPU's results, dtypes and errors.

``NOT_ON_CUDA`` (the op table's, ``tests/optable_ops.py``) is the measured gap: an op
with no CUDA implementation fails ``test_every_op_runs_on_cuda_or_is_listed`` unless it is
listed there with its reason (and a listed op that gained one fails it too, so the list
stays true).  Ops that run
on CUDA by copying to the host (``eager.cuda.ops.HOST_FALLBACK``) are counted apart.
Tiny shapes: the simulator runs ~170 us a thread."""

from __future__ import annotations

import numpy as np
import pytest

import eager
import eager.cuda.ops as cuda_ops
from eager.dispatch import IMPLS
from eager.ops import OPS
from tests.opinfo import library_ops
from tests.optable_ops import NOT_ON_CUDA

F = eager.nn.functional


def test_every_op_runs_on_cuda_or_is_listed():
    table = IMPLS["cuda"]
    missing = {name for name, op in library_ops().items()
               if op not in table and not op.any_device}
    assert missing == set(NOT_ON_CUDA), (
        f"without a CUDA implementation and not listed: {sorted(missing - set(NOT_ON_CUDA))}; "
        f"listed but implemented now: {sorted(set(NOT_ON_CUDA) - missing)}")
    assert set(cuda_ops.HOST_FALLBACK) <= set(OPS)
    assert not set(cuda_ops.HOST_FALLBACK) & set(NOT_ON_CUDA)


# -- CPU against CUDA ------------------------------------------------------------------------

def _host(t):
    return t.detach().cpu().numpy() if isinstance(t, eager.Tensor) else t


def _compare(cpu, gpu, rtol=1e-5, atol=1e-6):
    if isinstance(cpu, (tuple, list)):
        assert len(cpu) == len(gpu)
        for c, g in zip(cpu, gpu):
            _compare(c, g, rtol, atol)
        return
    if not isinstance(cpu, eager.Tensor):
        assert cpu == gpu
        return
    assert gpu.is_cuda, "the result left the GPU"
    assert gpu.dtype == cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape)
    c, g = _host(cpu), _host(gpu)
    if c.dtype.kind in "biu":
        np.testing.assert_array_equal(g, c)
    else:
        np.testing.assert_allclose(g.astype(np.float64), c.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)


def check(f, *arrays, grad=False, rtol=1e-5, atol=1e-6):
    """``f`` on CPU tensors and on CUDA tensors: the same values, dtypes, shapes, or the
    same error; ``grad``: the gradients of the float inputs too."""
    def make(dev):
        return [eager.tensor(a, requires_grad=grad and a.dtype.kind == "f").to(dev)
                if isinstance(a, np.ndarray) else a for a in arrays]
    cpu_in, gpu_in = make("cpu"), make("cuda")
    if grad:   # leaves on each device
        gpu_in = [eager.tensor(a, requires_grad=a.dtype.kind == "f", device="cuda")
                  if isinstance(a, np.ndarray) else a for a in arrays]
    try:
        want = f(*cpu_in)
    except (RuntimeError, ValueError, IndexError, TypeError) as exc:   # a user's error (an
        with pytest.raises(type(exc)) as info:         # AttributeError is the test's bug)
            f(*gpu_in)
        assert str(info.value) == str(exc)
        return None
    got = f(*gpu_in)
    _compare(want, got, rtol, atol)
    if grad:
        out_c = want[0] if isinstance(want, tuple) else want
        out_g = got[0] if isinstance(got, tuple) else got
        w = np.linspace(-1, 1, out_c.numel()).reshape(out_c.shape).astype(np.float32)
        (out_c * eager.tensor(w, dtype=out_c.dtype)).sum().backward()
        (out_g * eager.tensor(w, dtype=out_g.dtype, device="cuda")).sum().backward()
        for c, g in zip(cpu_in, gpu_in):
            if isinstance(c, eager.Tensor) and c.requires_grad:
                assert g.grad is not None and g.grad.is_cuda
                _compare(c.grad, g.grad, rtol, atol)
    return got


RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3)).astype(np.float32)
X3 = RNG.standard_normal((2, 3, 2)).astype(np.float32)
XZ = np.array([[1.5, 0.0, -2.0], [0.5, 3.0, -1.0]], np.float32)
XI = np.array([[1, -2, 3], [4, 0, -6]], np.int64)


@pytest.mark.parametrize("f", [
    lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.prod(0, keepdim=True),
    lambda x: x.any(), lambda x: (x > 0).all(1), lambda x: (x > 0).any(0, keepdim=True),
    lambda x: x.count_nonzero(), lambda x: x.count_nonzero(1),
], ids=["prod", "prod1", "prod0k", "any", "all1", "any0k", "cnz", "cnz1"])
def test_products_and_logical_reductions(f):
    check(f, XZ)
    check(f, XI)


def test_logical_reductions_of_uint8_nan_and_empty():
    check(lambda x: x.all(), np.array([1, 2, 0], np.uint8))
    check(lambda x: x.any(0), np.array([[0, 0], [0, 3]], np.uint8))
    check(lambda x: x.all(), np.array([np.nan, 1.0], np.float32))
    check(lambda x: (x.all(), x.any(), x.prod()), np.zeros((0, 2), np.float32))


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf"), float("-inf"), 0.0, 3.0])
def test_norm_and_its_gradient(p):
    check(lambda x: x.norm(p), XZ, grad=p != 0.0)
    check(lambda x: eager.linalg.vector_norm(x, p, dim=1), XZ, grad=p != 0.0)


def test_clip_grad_norm_on_cuda():
    out = []
    for dev in ("cpu", "cuda"):
        lin = eager.nn.Linear(3, 2)
        with eager.no_grad():
            lin.weight.copy_(eager.tensor(X))
            lin.bias.fill_(0.5)
        lin = lin.to(dev)
        (lin(eager.tensor(X, device=dev)) ** 2).sum().backward()
        total = eager.nn.utils.clip_grad_norm_(lin.parameters(), 0.1)
        out.append((total, lin.weight.grad, lin.bias.grad))
    _compare(*out)


@pytest.mark.parametrize("f", [
    lambda x: x.cumsum(0), lambda x: x.cumsum(-1), lambda x: x.cumprod(1),
    lambda x: eager.logcumsumexp(x, 1), lambda x: x.cumsum(1, dtype=eager.float64),
], ids=["cumsum0", "cumsum-1", "cumprod", "logcumsumexp", "cumsum-f64"])
def test_scans_and_their_gradients(f):
    check(f, X3, grad=True)


def test_scans_of_integers_bool_and_0d():
    check(lambda x: x.cumsum(1), XI)
    check(lambda x: x.cumprod(0), XI)
    check(lambda x: (x > 0).cumsum(1), XI)
    check(lambda x: x.cumsum(0), np.array(2.5, np.float32))
    check(lambda x: x.cumsum(2), X)                                  # the CPU's error
    check(lambda x: eager.logcumsumexp(x, 0),
          np.array([-np.inf, -np.inf, 0.0, np.inf], np.float32))


@pytest.mark.parametrize("f", [
    lambda x: x.flip(0), lambda x: x.flip(0, 2), lambda x: x.roll(1, 1),
    lambda x: x.roll((1, -3), (0, 2)), lambda x: x.roll(4), lambda x: x.repeat(2, 1, 1),
    lambda x: x.repeat(1, 2, 1, 2), lambda x: x.tril(), lambda x: x.triu(1),
    lambda x: x.tril(-1), lambda x: x.diagonal(0, 0, 1), lambda x: x.diagonal(1, 1, 2),
    lambda x: eager.diag(x[:, :, 0]), lambda x: eager.diag(x[0, :, 0], -1),
    lambda x: x.transpose(0, 2).flip(1), lambda x: x[:, 1:].roll(1, 0),
], ids=["flip0", "flip02", "roll", "roll2", "rollflat", "repeat", "repeat+", "tril",
        "triu1", "tril-1", "diagonal", "diagonal1", "diag2d", "diag1d", "flipT", "rollview"])
def test_shape_ops_and_their_gradients(f):
    check(f, X3, grad=True)


def test_shape_ops_on_bool_and_int():
    check(lambda x: ((x > 0).tril(), x.triu(), x.flip(1), x.roll(2, 1), x.repeat(2, 2)), XI)
    check(lambda x: x.tril(), np.arange(3.0, dtype=np.float32))   # the CPU's error


IDX = np.array([1, 0, 1], np.int64)


@pytest.mark.parametrize("f", [
    lambda x, i: x[i], lambda x, i: x[:, i], lambda x, i: x[i, :, i[:2] - 2],
    lambda x, i: x[i, i], lambda x, i: x[..., i[1:]], lambda x, i: x[x > 0],
    lambda x, i: x[i.reshape(3, 1), i[:2]], lambda x, i: x.index_select(1, i),
    lambda x, i: x.index_select(0, i[:1]), lambda x, i: x.masked_select(x > 0),
], ids=["first", "second", "split", "pair", "last", "mask", "batch", "select1", "select0",
        "masked_select"])
def test_advanced_indexing_and_its_gradient(f):
    check(f, X3, IDX, grad=True)


def test_index_errors_as_on_the_cpu():
    check(lambda x, i: x[i + 1], X3, IDX)                 # out of bounds: IndexError
    check(lambda x, i: x[:, -4 + i], X3, IDX)
    check(lambda x, i: x.index_select(1, i + 2), X3, IDX)


def test_index_put_index_add_index_copy():
    def put(x, i):
        y = x.clone()
        y[i, 1] = eager.tensor([7.0, 8.0, 9.0], device=x.device)
        y[:, i[:2]] = 0.5
        y[y > 1] = -1.0
        return y
    check(put, X3, IDX)

    def put_grad(x, i):
        return x.index_put((i,), x[0, 0] * 2, accumulate=True)
    check(put_grad, X3, IDX, grad=True)
    check(lambda x, i: x.index_add(1, i, eager.ones(2, 3, 2, device=x.device), alpha=2), X3,
          IDX, grad=True)
    check(lambda x, i: x.index_copy(0, i[1:], x.flip(0)), X3, IDX, grad=True)
    check(lambda x, i: x.index_copy(0, i + 1, x[:2].flip(0)), X3, IDX)          # bad index

    def wrong_shape(x, i):
        y = x.clone()
        y[i] = eager.ones(2, 2, device=x.device)
        return y
    check(wrong_shape, X3, IDX)


def test_fallback_ops_match_and_are_counted():
    before = dict(cuda_ops.FALLBACK_CALLS)
    check(lambda a: eager.linalg.inv(a), np.array([[2, 1], [1, 3]], np.float32), grad=True)
    check(lambda x: x.sort(1), X3, grad=True)
    check(lambda x: x.sort(0, descending=True), X3)
    check(lambda x: x.topk(2, 1), X3, grad=True)
    check(lambda x: F.pad(x, (1, 2)), X3, grad=True)
    check(lambda x: F.pad(x[None], (1, 1, 0, 1), mode="reflect"), X3, grad=True)
    check(lambda x: eager.linalg.inv(x[:, :2]), XZ)
    assert cuda_ops.FALLBACK_CALLS["inv"] >= before.get("inv", 0) + 2


def test_convolution_and_pooling_with_gradients():
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 2, 2)).astype(np.float32)
    b = RNG.standard_normal(3).astype(np.float32)
    check(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b, grad=True, rtol=1e-4)
    check(lambda x: F.max_pool2d(x, 2), x, grad=True)
    check(lambda x: F.avg_pool2d(x, 2, 1), x, grad=True)
    check(lambda x: F.conv1d(x[0], w[:, :, 0]), x, w, grad=True, rtol=1e-4)


# -- float16 / bfloat16 ------------------------------------------------------------------------

def test_half_and_bfloat16_conversions_round_as_the_cpu():
    special = np.array([0.0, -0.0, 1.0, 65504.0, 65520.0, 1e-8, 3e-8, 6e-8, 1e-40, 3.3e38,
                        np.inf, -np.inf, np.nan, 1.0009765625, 1.00048828125, -2.5],
                       np.float32)
    for arr in (special, special.astype(np.float64),
                RNG.standard_normal(16).astype(np.float32) * 1e3):
        check(lambda x: (x.half(), x.bfloat16(), x.half().float(), x.bfloat16().double(),
                         x.half().bfloat16(), x.bfloat16().half()), arr, atol=0, rtol=0)
    check(lambda x: (x.half(), x.bfloat16(), x.half().long()), XI, atol=0, rtol=0)
    check(lambda x: (x > 0).half(), XI)


def test_ops_on_half_tensors_compute_as_the_cpu():
    for cast in (lambda t: t.half(), lambda t: t.bfloat16()):
        check(lambda x: (cast(x) + 1.1, cast(x) * cast(x), cast(x).sum(1), cast(x).exp(),
                         cast(x) == 1.1, cast(x).t().contiguous(), cast(x)[:, 1:].clone(),
                         cast(x).tril(), cast(x).flip(0), cast(x).cumsum(1),
                         cast(x) @ cast(x).t(), cast(x)[eager.tensor([1, 0], device=x.device)],
                         eager.cat([cast(x), cast(x)]), eager.zeros(2, dtype=cast(x).dtype,
                                                                     device=x.device)),
              X, rtol=1e-2, atol=1e-2)

    def write(x):
        y = x.half()
        y[0] = 3.0
        y[:, 1] = x[1]
        return y
    check(write, X)
    check(lambda x: eager.linalg.inv(x[:, :2].half()), X)          # PyTorch's refusal
    check(lambda x: x.half().sum().backward() or x.grad, X)


def test_half_gradients_on_cuda():
    check(lambda x: (x.half() * 2).float().sum(), X, grad=True)


# -- pinned memory, save/load ------------------------------------------------------------------

def test_pin_memory_and_is_pinned():
    a = eager.ones(3)
    assert not a.is_pinned()
    p = a.pin_memory()
    assert p.is_pinned() and p[1:].is_pinned() and p.pin_memory() is p
    np.testing.assert_array_equal(p.numpy(), a.numpy())
    g = p.cuda()
    assert not g.is_pinned()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        g.pin_memory()


def test_save_cuda_load_with_map_location(tmp_path):
    x = eager.tensor(X, device="cuda")
    h = x.half()
    path = tmp_path / "t.pt"
    eager.save({"x": x, "h": h, "s": x[:, 1:]}, path)
    for loc, want in (("cpu", "cpu"), ("cuda", "cuda"), ("cuda:0", "cuda"),
                      (eager.device("cpu"), "cpu"), ({"cuda:0": "cpu"}, "cpu"),
                      (lambda storage, location: storage, "cuda")):
        back = eager.load(path, map_location=loc)
        assert back["x"].device.type == want and back["h"].device.type == want
        assert back["h"].dtype == eager.float16
        np.testing.assert_array_equal(_host(back["x"]), X)
        np.testing.assert_array_equal(_host(back["h"]), X.astype(np.float16))
        np.testing.assert_array_equal(_host(back["s"]), X[:, 1:])
    cpu_path = tmp_path / "c.pt"
    eager.save(eager.tensor(X).bfloat16(), cpu_path)
    back = eager.load(cpu_path, map_location="cuda")
    assert back.is_cuda and back.dtype == eager.bfloat16
    np.testing.assert_array_equal(_host(back.float()), _host(eager.tensor(X).bfloat16().float()))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "float16",
                                   "bfloat16"])
def test_scatter_add_of_dtypes_without_atomics(dtype):
    # a GPU has no atomic add of bool, 8- or 16-bit integers: the kernel of those dtypes
    # failed to compile for sm_80 (the CI's PTX check sees every kernel launched here)
    dt = getattr(eager, dtype)
    check(lambda x, i, s: (x.to(dt).scatter_add(0, i, s.to(dt)),
                           x.to(dt).index_put((i[0],), s[0].to(dt), accumulate=True)),
          np.array([[1, 0, 3], [0, 0, 120]], np.float32), np.array([[0, 1, 1], [0, 1, 1]]),
          np.array([[1, 1, 5], [1, 0, 10]], np.float32))
