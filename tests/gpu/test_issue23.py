"""Issue 23's CUDA gaps, one test per fix: reshape/view on device views, random fills on the
device, copies across devices, half types, comparisons, device ordinals, save, and the
``torch.cuda`` memory/event/stream API.  Tiny shapes: the simulator runs ~170 us a thread."""

from __future__ import annotations

import numpy as np
import pytest

import eager
from runtime.cuda import SIMULATED
from runtime.cuda.array import CudaArray


def _host(t):
    return t.detach().cpu().numpy()


# -- 1. reshape ------------------------------------------------------------------------------

def test_cuda_array_reshape_infers_minus_one_and_views_strided_data():
    a = CudaArray.from_host(np.arange(12, dtype=np.float32))
    assert a.reshape((-1, 4)).shape == (3, 4)
    assert a.reshape((2, -1, 2)).shape == (2, 3, 2)
    assert a.reshape(-1).shape == (12,)
    with pytest.raises(ValueError):
        a.reshape((-1, 5))
    with pytest.raises(ValueError):
        a.reshape((-1, -1))
    # NumPy's no-copy protocol (what eager's can_view asks): a view or ValueError
    t = a.reshape((3, 4)).transpose((1, 0))           # (4, 3), strides (1, 4)
    with pytest.raises(ValueError):
        t.reshape((12,), copy=False)
    v = t.reshape((2, 2, 3), copy=False)              # splitting a dimension is a view
    assert v.base is a.base and v.estrides == (2, 1, 4)
    np.testing.assert_array_equal(v.to_host(), np.arange(12).reshape(3, 4).T.reshape(2, 2, 3))
    c = t.reshape((12,), copy=True)
    np.testing.assert_array_equal(c.to_host(), np.arange(12).reshape(3, 4).T.reshape(-1))


def test_tensor_reshape_view_flatten_on_cuda():
    h = eager.arange(24.0).reshape(2, 3, 4)
    g = h.cuda()
    for f in (lambda x: x.reshape(6, -1), lambda x: x.view(-1, 4), lambda x: x.flatten(),
              lambda x: x.flatten(1), lambda x: x.permute(1, 0, 2).reshape(3, -1),
              lambda x: x.transpose(0, 2).flatten(), lambda x: x[:, :, :2].reshape(-1)):
        out = f(g)
        assert out.is_cuda
        np.testing.assert_array_equal(_host(out), f(h).numpy())
    # a view shares storage (writes show through), as PyTorch
    v = g.view(6, 4)
    v[0, 0] = 100.0
    assert _host(g)[0, 0, 0] == 100.0
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        g.transpose(0, 2).view(-1)
    # autograd through a reshape of a strided view
    x = eager.arange(6.0, requires_grad=True)
    y = x.cuda().reshape(2, 3).t().reshape(-1)
    (y * eager.arange(6.0).cuda()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 2, 4, 1, 3, 5])


# -- 2. random fills on the device -------------------------------------------------------------

def test_fills_and_init_draw_on_the_device():
    x = eager.empty(16, device="cuda")
    assert x.normal_(2.0, 0.5) is x and x.is_cuda
    v = _host(x)
    assert np.isfinite(v).all() and abs(v.mean() - 2.0) < 0.6 and len(set(v.tolist())) == 16
    u = _host(eager.empty(16, device="cuda").uniform_(-3.0, -1.0))
    assert (u >= -3.0).all() and (u < -1.0).all() and len(set(u.tolist())) == 16
    b = _host(eager.empty(8, device="cuda").bernoulli_(1.0))
    np.testing.assert_array_equal(b, np.ones(8))
    lin = eager.nn.Linear(3, 2, device="cuda")
    assert lin.weight.is_cuda and lin.bias.is_cuda
    w = _host(lin.weight)
    assert (np.abs(w) <= 1 / np.sqrt(3)).all() and len(set(w.ravel().tolist())) == 6
    eager.nn.init.xavier_normal_(lin.weight)
    eager.nn.init.kaiming_uniform_(lin.weight)
    assert lin.weight.is_cuda
    eager.manual_seed(7)
    a = _host(eager.empty(4, device="cuda").normal_())
    eager.manual_seed(7)
    np.testing.assert_array_equal(_host(eager.empty(4, device="cuda").normal_()), a)
    with pytest.raises(RuntimeError, match="generator"):
        eager.empty(2, device="cuda").normal_(generator=eager.Generator())


def test_dropout_training_on_cuda():
    x = eager.ones(12, device="cuda", requires_grad=True)
    y = eager.nn.functional.dropout(x, 0.5, training=True)
    assert y.is_cuda
    v = _host(y)
    assert set(v.tolist()) <= {0.0, 2.0}
    y.sum().backward()
    np.testing.assert_array_equal(_host(x.grad), v)
    d = eager.nn.Dropout(0.25)
    assert set(_host(d(eager.ones(8, device="cuda"))).tolist()) <= {0.0, float(np.float32(4 / 3))}
    m = _host(eager.nn.functional.dropout1d(eager.ones(2, 3, 2, device="cuda"), 0.5, True))
    assert set(m.ravel().tolist()) <= {0.0, 2.0}
    assert (m == m[:, :, :1]).all()                  # whole channels


def test_randperm_and_bernoulli_of_a_tensor_on_cuda():
    p = eager.randperm(9, device="cuda")
    assert p.is_cuda and p.dtype == eager.int64
    assert sorted(_host(p).tolist()) == list(range(9))
    assert _host(eager.randperm(0, device="cuda")).shape == (0,)
    assert sorted(_host(eager.randperm(5, device="cuda", dtype=eager.float32)).tolist()) == \
        [0.0, 1.0, 2.0, 3.0, 4.0]
    probs = eager.tensor([0.0, 1.0, 0.0, 1.0, 1.0], device="cuda")
    np.testing.assert_array_equal(_host(eager.bernoulli(probs)), [0, 1, 0, 1, 1])
    s = eager.tensor([[0.0, 1.0, 0.5]], device="cuda").expand(2, 3)  # a strided p
    r = _host(eager.bernoulli(s))
    np.testing.assert_array_equal(r[:, :2], [[0, 1], [0, 1]])
    assert set(r[:, 2].tolist()) <= {0.0, 1.0}
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        eager.bernoulli(eager.tensor([0.5, 1.5], device="cuda"))


# -- 3. copies across devices, comparisons ---------------------------------------------------------

def test_copy_across_devices_both_ways():
    g = eager.zeros(2, 3, device="cuda")
    assert g.copy_(eager.arange(6.0).reshape(2, 3)) is g and g.is_cuda
    np.testing.assert_array_equal(_host(g), np.arange(6.0).reshape(2, 3))
    g.copy_(eager.tensor([7.0, 8.0, 9.0]))                     # broadcast from the CPU
    np.testing.assert_array_equal(_host(g), [[7, 8, 9], [7, 8, 9]])
    h = eager.zeros(2, 3, dtype=eager.float64)
    h.copy_(eager.arange(6, device="cuda").reshape(2, 3).t().t())  # cast, from the device
    assert not h.is_cuda and h.dtype == eager.float64
    np.testing.assert_array_equal(h.numpy(), np.arange(6.0).reshape(2, 3))
    x = eager.tensor([1.0, 2.0], requires_grad=True)
    y = eager.zeros(2, device="cuda")
    y.copy_(x * 2)
    y.sum().backward()                                           # the gradient comes back
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_equal_allclose_isclose_on_cuda():
    a = eager.tensor([1.0, 2.0, float("inf"), float("nan")], device="cuda")
    b = a.clone()
    assert not eager.equal(a, b)                                 # nan != nan, as torch
    assert eager.equal(a[:3], b[:3]) and not eager.equal(a[:3], b[:2])
    assert not eager.equal(a[:2], eager.tensor([1.0, 3.0], device="cuda"))
    assert eager.allclose(a, b, equal_nan=True) and not eager.allclose(a, b)
    c = eager.tensor([1.0 + 1e-6, 2.1, float("inf"), float("nan")], device="cuda")
    got = eager.isclose(a, c)
    assert got.is_cuda and got.dtype == eager.bool
    np.testing.assert_array_equal(_host(got), [True, False, True, False])
    np.testing.assert_array_equal(_host(eager.isclose(a, c, equal_nan=True, atol=0.2)),
                                  [True, True, True, True])
    np.testing.assert_array_equal(_host(eager.isclose(a, 2.0)), [False, True, False, False])


# -- 4. device ordinals, save ------------------------------------------------------------------

def test_a_device_index_this_machine_lacks_raises_pytorchs_error():
    n = eager.cuda.device_count()
    assert eager.zeros(1, device=f"cuda:{n - 1}").is_cuda
    assert eager.zeros(1).to(f"cuda:{n - 1}").is_cuda
    bad = f"cuda:{n}"
    for make in (lambda: eager.zeros(2, device=bad), lambda: eager.tensor([1.0], device=bad),
                 lambda: eager.randn(2, device=eager.device("cuda", n)),
                 lambda: eager.ones(2).to(bad), lambda: eager.ones(2).cuda(n),
                 lambda: eager.ones(2).to(device=bad, dtype=eager.float64)):
        with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
            make()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        eager.cuda.check_device(n)


def test_save_a_cuda_tensor_and_load_it_on_the_cpu(tmp_path):
    x = eager.arange(6.0).reshape(2, 3).cuda()
    path = tmp_path / "t.pt"
    eager.save({"x": x, "xt": x.t(), "lin": eager.nn.Linear(2, 2).cuda().state_dict()}, path)
    cpu = eager.load(path, map_location="cpu")
    assert not cpu["x"].is_cuda and not cpu["lin"]["weight"].is_cuda
    np.testing.assert_array_equal(cpu["xt"].numpy(), np.arange(6.0).reshape(2, 3).T)
    back = eager.load(path)
    assert back["x"].is_cuda and back["x"].device == eager.device("cuda", 0)
    np.testing.assert_array_equal(_host(back["x"]), np.arange(6.0).reshape(2, 3))


# -- 5. torch.cuda memory, device, event and stream API -----------------------------------------

def test_cuda_memory_device_event_stream_api():
    eager.cuda.synchronize()
    base = eager.cuda.memory_allocated()
    x = eager.empty(1000, device="cuda")
    assert eager.cuda.memory_allocated() >= base + 4000
    peak = eager.cuda.max_memory_allocated()
    assert peak >= eager.cuda.memory_allocated()
    del x
    assert eager.cuda.memory_allocated() == base
    assert eager.cuda.max_memory_allocated() == peak
    eager.cuda.reset_peak_memory_stats()
    assert eager.cuda.max_memory_allocated() == base
    assert isinstance(eager.cuda.get_device_name(), str) and eager.cuda.get_device_name(0)
    props = eager.cuda.get_device_properties(0)
    assert props.name == eager.cuda.get_device_name() and props.multi_processor_count >= 1
    start, end = eager.cuda.Event(enable_timing=True), eager.cuda.Event(enable_timing=True)
    start.record()
    y = eager.ones(4, device="cuda") * 2
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and (SIMULATED or ms >= 0.0)   # the simulator says -1
    with pytest.raises(RuntimeError, match="enable_timing"):
        eager.cuda.Event().elapsed_time(end)
    s = eager.cuda.Stream()
    with eager.cuda.stream(s):
        assert eager.cuda.current_stream() is s
        z = y + 1
    s.synchronize()
    assert eager.cuda.current_stream() is not s
    np.testing.assert_array_equal(_host(z), [3.0] * 4)
