"""PyTorch's device API on CUDA: placement, copies, factories, errors, modules, exchange."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager
from eager import nn
from eager.dispatch import dispatch
from eager.ops import OPS
from runtime.cuda import DEVICE, SIMULATED


def test_cuda_namespace_and_tensor_device():
    assert eager.cuda.is_available() and eager.cuda.device_count() >= 1
    x = eager.tensor([1.0, 2.0], device="cuda")
    assert x.device == eager.device("cuda", 0) and str(x.device) == "cuda:0"
    assert x.is_cuda and not x.cpu().is_cuda
    eager.cuda.synchronize()
    assert repr(x) == "tensor([1., 2.], device='cuda:0')"


def test_to_cuda_cpu_round_trip_and_dtype():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = eager.tensor(a)
    g = x.to("cuda")
    assert g.is_cuda and g.cuda() is g and x.cpu() is x
    np.testing.assert_array_equal(g.cpu().numpy(), a)
    d = x.to("cuda", eager.float64)
    assert d.is_cuda and d.dtype == eager.float64
    assert x.to(d).device == d.device and x.to(d).dtype == eager.float64


def test_to_is_differentiable_across_devices():
    x = eager.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = (x.cuda() * 3.0).cpu().sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_numpy_of_a_cuda_tensor_raises_pytorchs_message():
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\) to copy the tensor to host "
                                        r"memory first\."):
        eager.ones(2, device="cuda").numpy()


def test_mixing_devices_raises_pytorchs_error_but_cpu_scalars_mix():
    g = eager.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device, "
                                           r"but found at least two devices, cuda:0 and cpu!$"):
        g + eager.ones(2)
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        eager.ones(2) * g
    out = g * eager.tensor(2.0)   # a 0-d CPU tensor is a scalar for any device
    assert out.is_cuda and out.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("make", [
    lambda: eager.zeros(2, 3, device="cuda"), lambda: eager.ones(2, device="cuda"),
    lambda: eager.full((2,), 7, device="cuda"), lambda: eager.empty(3, device="cuda"),
    lambda: eager.arange(4, device="cuda"), lambda: eager.linspace(0, 1, 3, device="cuda"),
    lambda: eager.eye(2, device="cuda"), lambda: eager.rand(3, device="cuda"),
    lambda: eager.randn(3, device="cuda"), lambda: eager.randint(0, 5, (3,), device="cuda"),
    lambda: eager.zeros_like(eager.ones(2, device="cuda")),
    lambda: eager.tensor([[1, 2]], device="cuda")])
def test_every_factory_takes_device(make):
    assert make().is_cuda


def test_factory_values_match_cpu():
    np.testing.assert_array_equal(eager.full((2, 2), 7, device="cuda").cpu().numpy(),
                                  np.full((2, 2), 7))
    np.testing.assert_array_equal(eager.arange(1, 7, 2, device="cuda").cpu().numpy(),
                                  [1, 3, 5])


def test_manual_seed_reproduces_random_ops_on_cuda():
    eager.manual_seed(3)
    a = eager.randn(5, device="cuda").cpu().numpy()
    u = eager.rand(5, device="cuda").cpu().numpy()
    eager.cuda.manual_seed(3)
    np.testing.assert_array_equal(eager.randn(5, device="cuda").cpu().numpy(), a)
    assert not np.array_equal(eager.randn(5, device="cuda").cpu().numpy(), a)
    assert ((u >= 0) & (u < 1)).all() and len(set(u.tolist())) == 5


def test_an_op_without_a_cuda_kernel_names_the_op_and_device():
    # (an op still without one: see NOT_ON_CUDA in tests/optable_ops.py; layer_norm is the
    # CPU's fast path of F.layer_norm, dispatched here directly)
    with pytest.raises(NotImplementedError, match="layer_norm.*'cuda'"):
        dispatch(OPS["layer_norm"], eager.ones(3, device="cuda"), None, None, dim=(0,),
                 eps=1e-5)


def test_caching_allocator_reuses_freed_blocks():
    x = eager.ones(16, device="cuda")
    del x
    before = eager.cuda.memory_stats()
    eager.ones(16, device="cuda")
    after = eager.cuda.memory_stats()
    assert after["fresh"] == before["fresh"] and after["reused"] > before["reused"]


def test_module_to_cuda_and_back_keeps_parameter_objects():
    m = nn.Linear(3, 2)
    w = m.weight
    m.cuda()
    assert m.weight is w and w.is_cuda and m.bias.is_cuda
    x = eager.randn(4, 3)
    out = m(x.cuda())
    m.cpu()
    assert not w.is_cuda
    np.testing.assert_allclose(out.cpu().detach().numpy(), m(x).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    m.to("cuda", eager.float64)
    assert m.weight.is_cuda and m.weight.dtype == eager.float64


@pytest.mark.skipif(SIMULATED, reason="the simulator's arrays have no CUDA array interface")
def test_cuda_array_interface_and_from_dlpack_share_memory():
    from numba import cuda
    g = eager.tensor([1.0, 2.0, 3.0], device="cuda")
    iface = g.__cuda_array_interface__
    assert iface["shape"] == (3,) and iface["typestr"] == "<f4"
    dev = cuda.to_device(np.array([4.0, 5.0], np.float32))
    t = eager.from_dlpack(dev)
    assert t.is_cuda and t.tolist() == [4.0, 5.0]
    dev.copy_to_device(np.array([9.0, 8.0], np.float32))   # zero-copy: the tensor sees it
    assert t.tolist() == [9.0, 8.0]


def test_cuda_array_interface_is_cuda_only_and_from_dlpack_takes_cpu_arrays():
    with pytest.raises(AttributeError, match="non-CUDA"):
        _ = eager.ones(1).__cuda_array_interface__
    a = np.arange(3.0)
    c = eager.from_dlpack(a)
    a[0] = 5.0
    assert not c.is_cuda and c.tolist() == [5.0, 1.0, 2.0]


def test_strided_views_read_without_copies():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = eager.tensor(a, device="cuda")
    t = g.t()
    assert t.is_cuda and not t.is_contiguous()
    np.testing.assert_array_equal((t * 2).cpu().numpy(), a.T * 2)
    np.testing.assert_array_equal((g[1:, ::2] + g[0, None, ::2]).cpu().numpy(),
                                  a[1:, ::2] + a[0, None, ::2])
    np.testing.assert_array_equal(g.expand(2, 3, 4).sum(0).cpu().numpy(), a * 2)


def test_in_place_ops_write_cuda_storage():
    g = eager.zeros(2, 3, device="cuda")
    g.add_(1.5)
    g[:, 1] = 4.0
    g.mul_(eager.tensor([1.0, 2.0, 3.0], device="cuda"))
    np.testing.assert_array_equal(g.cpu().numpy(), [[1.5, 8.0, 4.5], [1.5, 8.0, 4.5]])


def test_default_device_puts_factories_and_modules_on_cuda():
    with eager.device("cuda"):
        made = [eager.zeros(2), eager.ones(2, 3), eager.full((2,), 1.5), eager.empty(3),
                eager.tensor([1.0, 2.0]), eager.as_tensor([1, 2]), eager.arange(4),
                eager.linspace(0, 1, 3), eager.eye(2), eager.rand(2), eager.randn(2),
                eager.randint(0, 5, (3,)), eager.randperm(4), eager.tril_indices(3, 3),
                eager.nn.Linear(2, 3).weight]
        assert all(t.device == eager.device("cuda", 0) for t in made), \
            [t.device for t in made]
        assert eager.zeros(2, device="cpu").device.type == "cpu"   # an explicit device wins
    assert eager.zeros(2).device.type == "cpu"
    eager.set_default_device("cuda:0")
    try:
        assert eager.get_default_device() == eager.device("cuda", 0)
        assert eager.ones(1).is_cuda
    finally:
        eager.set_default_device("cpu")
    assert not eager.ones(1).is_cuda
    with eager.device("cuda:1"), pytest.raises(RuntimeError, match="invalid device ordinal"):
        eager.zeros(1)


def test_compiled_function_retraces_under_another_default_device():
    @compiler.compile(backend="python")
    def f(x):
        return x * eager.arange(3)

    x = eager.ones(3)
    assert f(x).device.type == "cpu"
    with eager.device("cuda"):
        out = f(x.cuda())
        assert out.is_cuda
        assert out.cpu().tolist() == [0.0, 1.0, 2.0]
    assert f(x).device.type == "cpu"
    assert f.stats()["traces"] == 2


def test_a_cuda_tensor_takes_cpu_indices_as_pytorch():
    """A CPU index tensor, a list or a NumPy array indexes a CUDA tensor (copied to the
    device, as PyTorch does); index_select wants its index on the device, as PyTorch."""
    x = eager.arange(6.0).reshape(2, 3).cuda()
    want = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for key, ref in ((eager.tensor([1, 0]), want[[1, 0]]), ([1, 0], want[[1, 0]]),
                     (np.array([True, False]), want[[True, False]]),
                     ((Ellipsis, [2, 0]), want[..., [2, 0]]),
                     (eager.tensor([True, False]), want[[True, False]])):
        got = x[key]
        assert got.is_cuda
        np.testing.assert_array_equal(got.cpu().numpy(), ref)
    y = x.clone()
    y[eager.tensor([1])] = eager.tensor([5.0, 6.0, 7.0])
    y[[0], [2]] = 9.0
    assert y.is_cuda and y.cpu().tolist() == [[0.0, 1.0, 9.0], [5.0, 6.0, 7.0]]
    with pytest.raises(RuntimeError, match="same device"):
        x.index_select(1, eager.tensor([2, 0]))


def test_an_empty_grid_is_not_launched():
    """A GPU refuses a launch of 0 blocks ("LaunchConfig.grid values must be >= 1": argmax
    over an empty batch in max_pool2d failed there); the simulator ran it, so the stand-in
    kernel below refuses it as the driver does."""
    launched = []

    class Kernel:
        def __getitem__(self, config):
            if config[0] < 1:
                raise RuntimeError(f"LaunchConfig.grid values must be >= 1 (got {config})")
            return lambda *args: launched.append((config, args))

    module = type("Module", (), {"kernel": Kernel()})
    DEVICE.launch(module, "kernel", 0, 32, [1])
    DEVICE.launch(module, "kernel", (3, 0), 32, [1])
    DEVICE.launch(module, "kernel", 2, 32, [1])
    assert launched == [((2, 32), (1,))]
    e = eager.zeros(0, 2, 4, 4, device="cuda")
    assert eager.nn.functional.max_pool2d(e, 2).shape == (0, 2, 2, 2)
    assert e.argmax(dim=2).shape == (0, 2, 4)
