"""Issue 23's CUDA gaps, one test per fix: reshape/view on device views, random fills on the
device, copies across devices, half types, comparisons, device ordinals, save, and the
``torch.cuda`` memory/event/stream API.  Tiny shapes: the simulator runs ~170 us a thread."""

from __future__ import annotations

import numpy as np
import pytest

import eager
from runtime.cuda.array import CudaArray


def _host(t):
    return t.cpu().numpy()


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
