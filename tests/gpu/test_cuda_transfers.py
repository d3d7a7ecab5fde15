"""Host round trips that steady-state CUDA work no longer makes: scalars written by scatter
and by index assignment are kernel arguments (a fill), and a copy of a non-contiguous CUDA
array is a device kernel, not a trip through the host."""

from __future__ import annotations

import numpy as np
import pytest

import eager
from runtime.cuda import array as cuda_array
from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from .test_issue23_perf import _H2DCounter


def _host(t):
    return t.detach().cpu().numpy()


def _d2h():
    return cuda_array.TRANSFERS["d2h"]


def test_launch_gives_the_array_its_copy_kernel():
    assert cuda_array.STRIDED_COPY is launch.copy


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_copy_of_a_strided_view_stays_on_the_device(monkeypatch, dtype):
    host = np.arange(24).astype(dtype).reshape(2, 3, 4)
    a = CudaArray.from_host(host)
    views = [a.transpose((2, 0, 1)), a.basic_index(((0, 2, 1), (0, 3, 2), (1, 4, 2))),
             a.basic_index((1,)).broadcast_to((2, 3, 4))]
    c, d2h = _H2DCounter(monkeypatch), _d2h()
    copies = [v.copy() for v in views]
    assert c.count == 0 and _d2h() == d2h          # no host round trip either way
    for v, cp, want in zip(views, copies, [host.transpose(2, 0, 1), host[0:2, 0:3:2, 1:4:2],
                                           np.broadcast_to(host[1], (2, 3, 4))]):
        assert cp.is_contiguous and cp.shape == v.shape and cp.dtype == v.dtype
        assert cp.base is not v.base
        np.testing.assert_array_equal(cp.to_host(), want)


def test_reshape_with_copy_of_a_transposed_view_copies_on_the_device(monkeypatch):
    a = CudaArray.from_host(np.arange(6, dtype=np.float32).reshape(2, 3)).transpose((1, 0))
    c, d2h = _H2DCounter(monkeypatch), _d2h()
    r = a.reshape((6,), copy=True)
    assert c.count == 0 and _d2h() == d2h
    np.testing.assert_array_equal(r.to_host(), np.arange(6).reshape(2, 3).T.reshape(-1))


def test_scalar_writes_by_index_copy_nothing_to_the_device(monkeypatch):
    x = eager.zeros(3, 4, device="cuda")
    idx = eager.tensor([[0, 2, 1, 0]], device="cuda")
    rows = eager.tensor([0, 2], device="cuda")
    mask_rows = eager.tensor([1], device="cuda")
    s = eager.tensor(2.5, device="cuda")              # 0-d: its value on the host
    c = _H2DCounter(monkeypatch)
    y = x.scatter(0, idx, 1.5)                        # scatter of a Python scalar
    x2 = x.clone()
    x2[rows] = 3.0                                    # index_put of a Python scalar
    x2[mask_rows] = s                                 # ... of a 0-d tensor on the host
    assert c.count == 0, f"{c.count} host-to-device copies for scalar writes"
    want = np.zeros((3, 4), np.float32)
    want[[0, 2, 1, 0], [0, 1, 2, 3]] = 1.5
    np.testing.assert_array_equal(_host(y), want)
    want = np.zeros((3, 4), np.float32)
    want[[0, 2]] = 3.0
    want[1] = 2.5
    np.testing.assert_array_equal(_host(x2), want)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.int8, np.uint8])
def test_min_and_max_of_an_index_array_read_back_one_element(dtype, monkeypatch):
    """Index bounds checks (index_select, gather, advanced indexing) read an index array's
    min and max: a device reduction, then one element to the host, not the array."""
    a = np.arange(24).reshape(4, 6).astype(dtype) - (0 if dtype == np.uint8 else 5)
    c = CudaArray.from_host(a)
    read = []
    original = CudaArray.to_host
    monkeypatch.setattr(CudaArray, "to_host", lambda self: read.append(self.size) or
                        original(self))
    for view, ref in ((c, a), (c.transpose((1, 0)), a.T),
                      (c.basic_index(((1, 4, 2), (0, 6, 3))), a[1:4:2, ::3])):
        assert (view.min(), view.max()) == (ref.min(), ref.max())
    assert read and set(read) == {1}
    x = eager.arange(20.0, device="cuda")
    read.clear()
    assert x.index_select(0, eager.tensor([3, 19, 0], device="cuda")).cpu().tolist() == \
        [3.0, 19.0, 0.0]
    assert max(read) == 3          # the result; the index's bounds came back as scalars
