"""Issue 23's CUDA performance items that can be checked without a GPU: constants without
host-to-device copies, the caching allocator's size classes and out-of-memory retry, FMA
contraction off in elementwise kernels, kernels cached on disk.  Tiny shapes: the
simulator runs ~170 us a thread."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager
from eager import nn, optim
from runtime.cuda import array as cuda_array
from runtime.cuda.array import CudaArray


def _host(t):
    return t.detach().cpu().numpy()


# -- 1. constants are kernel arguments, not copies ------------------------------------------

class _H2DCounter:
    """Counts host-to-device copies: CudaArray's own (``TRANSFERS``) and, beneath it,
    numba's ``cuda.to_device`` and the device array's ``copy_to_device`` from a host
    array (whatever path a copy takes)."""

    def __init__(self, monkeypatch):
        from numba import cuda
        self.numba = 0
        self.start = cuda_array.TRANSFERS["h2d"]
        real_to_device = cuda.to_device

        def to_device(obj, *a, **k):
            self.numba += 1
            return real_to_device(obj, *a, **k)
        monkeypatch.setattr(cuda, "to_device", to_device)
        dev_type = type(CudaArray.empty((1,), np.float32).base)
        real_copy = dev_type.copy_to_device

        def copy_to_device(self_, ary, *a, **k):
            if isinstance(ary, np.ndarray):
                self.numba += 1
            return real_copy(self_, ary, *a, **k)
        monkeypatch.setattr(dev_type, "copy_to_device", copy_to_device)

    @property
    def count(self) -> int:
        return cuda_array.TRANSFERS["h2d"] - self.start + self.numba


def test_full_zeros_ones_copy_nothing_to_the_device(monkeypatch):
    c = _H2DCounter(monkeypatch)
    z = eager.zeros(2, 3, device="cuda")
    o = eager.ones(5, dtype=eager.int64, device="cuda")
    f = eager.full((2, 2), 2.5, device="cuda", dtype=eager.float16)
    b = eager.full((3,), True, device="cuda")
    s = eager.zeros((), device="cuda")
    assert c.count == 0
    np.testing.assert_array_equal(_host(z), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(_host(o), np.ones(5, np.int64))
    assert _host(f).dtype == np.float16 and (_host(f) == 2.5).all()
    assert _host(b).dtype == np.bool_ and _host(b).all()
    assert _host(s).shape == () and _host(s) == 0
    # a fill into a strided view writes through it
    t = eager.zeros(3, 4, device="cuda")
    t.t()[1].fill_(7.0)
    want = np.zeros((3, 4), np.float32)
    want[:, 1] = 7
    np.testing.assert_array_equal(_host(t), want)


def test_a_host_scalar_on_cuda_is_a_kernel_argument_until_written():
    x = eager.tensor([1.0, 2.0, 4.0], device="cuda")
    s = eager.tensor(3.0, device="cuda")         # 0-d: its value stays on the host
    assert s._data.host is not None
    np.testing.assert_array_equal(_host(x * s), [3, 6, 12])
    assert s._data.host is not None                  # read as an argument: still no copy
    # a CPU 0-d float64 tensor with a CUDA float32 one (Adam's bias correction)
    d = eager.tensor(0.5, dtype=eager.float64)
    out = x / d
    assert out.is_cuda and out.dtype == eager.float32
    np.testing.assert_array_equal(_host(out), [2, 4, 8])
    # written in place: copied to the device once, then an ordinary device array
    s.add_(1.0)
    assert s._data.host is None
    assert _host(s) == 4.0
    np.testing.assert_array_equal(_host(x * s), [4, 8, 16])
    # a view taken before a write sees it (the view materializes the shared memory)
    u = eager.tensor(1.0, device="cuda")
    v = u.view(1)
    v.mul_(5.0)
    assert _host(u) == 5.0


def test_compiled_adam_step_on_cuda_copies_nothing_to_the_device(monkeypatch):
    eager.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).to("cuda")
    opt = optim.Adam(model.parameters(), lr=0.01)
    x = eager.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)).cuda()
    y = eager.tensor([0, 1, 1, 0]).cuda()

    def step(xb, yb):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss
    fn = compiler.compile(step)
    for _ in range(3):              # warm-up: traces, kernels, optimizer state
        fn(x, y)
        compiler.wait()
    c = _H2DCounter(monkeypatch)
    for _ in range(2):
        loss = fn(x, y)
        compiler.wait()
    assert c.count == 0, f"{c.count} host-to-device copies in two steady-state steps"
    assert fn.stats()["hits"] >= 2
    assert np.isfinite(_host(loss))
