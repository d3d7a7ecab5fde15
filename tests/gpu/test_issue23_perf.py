"""Issue 23's CUDA performance items that can be checked without a GPU: constants without
host-to-device copies, the caching allocator's size classes and out-of-memory retry, FMA
contraction off in elementwise kernels, kernels cached on disk.  Tiny shapes: the
simulator runs ~170 us a thread."""

from __future__ import annotations

import gc

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


# -- 2. the caching allocator: size classes, splits, retry after out of memory ----------------

class _FakeDevice:
    """A malloc for the allocator: host arrays standing for device memory, that can be
    made to fail with the driver's out-of-memory error a number of times."""

    def __init__(self, fail=0, exc=MemoryError):
        self.fail, self.exc, self.calls = fail, exc, []

    def __call__(self, nbytes):
        self.calls.append(nbytes)
        if self.fail:
            self.fail -= 1
            raise self.exc("out of memory")
        return np.zeros(nbytes, np.uint8)


def test_size_classes():
    sc = cuda_array.size_class
    assert sc(1) == sc(512) == 512 and sc(513) == 1024
    assert sc(1 << 20) == 1 << 20
    assert sc((1 << 20) + 1) == 2 << 20                   # 1 MiB steps up to 8 MiB
    assert sc(5 * (1 << 20) + 7) == 6 << 20
    assert sc(9 * (1 << 20)) == 10 << 20                  # then a quarter power of two
    assert sc(100 * (1 << 20)) == 112 << 20
    for n in (3, 700, 5000, 1 << 20, 3 << 20, 123456789):
        assert n <= sc(n) <= max(512, n * 1.5) and sc(sc(n)) == sc(n)


def test_allocator_reuses_nearby_sizes_and_splits_segments():
    fake = _FakeDevice()
    A = cuda_array.CachingAllocator(malloc=fake)
    a = A.allocate(1000)                  # small: cut from a 2 MiB segment
    b = A.allocate(3000)
    assert fake.calls == [2 << 20] and A.counts["splits"] == 2
    assert a.nbytes == 1024 and b.nbytes == 3072
    assert A.allocated == 4096 and A.reserved == 2 << 20
    del a
    c = A.allocate(900)                   # another size of the same class: a's block
    assert c.nbytes == 1024 and fake.calls == [2 << 20]
    big = A.allocate(5 * (1 << 20) + 3)   # large: a segment of its class
    assert big.nbytes == 6 << 20 and fake.calls[-1] == 6 << 20
    del big
    big2 = A.allocate(5 * (1 << 20) + 100)   # reused across nearby sizes
    assert big2.nbytes == 6 << 20 and len(fake.calls) == 2
    del big2
    part = A.allocate(2 << 20)            # split from the cached 6 MiB block
    assert part.nbytes == 2 << 20 and len(fake.calls) == 2
    assert A.allocated == 1024 + 3072 + (2 << 20)
    assert A.reserved == (2 << 20) + (6 << 20)
    del b, c, part
    assert A.allocated == 0
    A.empty_cache()
    assert A.reserved == 0 and A.stats()["cached_bytes"] == 0 and not A.free


def test_allocator_frees_cache_collects_and_retries_after_out_of_memory():
    fake = _FakeDevice()
    A = cuda_array.CachingAllocator(malloc=fake)
    cached = A.allocate(6 << 20)
    del cached                            # 6 MiB cached
    assert A.reserved == 6 << 20
    fake.fail = 1
    blk = A.allocate(20 << 20)            # fails once: cache dropped, retried
    assert blk.nbytes == 20 << 20 and A.counts["oom_retries"] == 1
    assert A.reserved == 20 << 20 and A.allocated == 20 << 20
    # a dead tensor kept alive by a reference cycle is collected before the retry
    cyc = [A.allocate(40 << 20)]
    cyc.append(cyc)
    del cyc
    gc.disable()
    try:
        fake.fail = 1
        again = A.allocate(40 << 20)
    finally:
        gc.enable()
    assert again.nbytes == 40 << 20 and A.counts["oom_retries"] == 2
    assert A.reserved == (20 << 20) + (40 << 20)
    # fails twice: PyTorch's error naming the size and what the cache held
    keep = A.allocate(1 << 20)
    del keep
    fake.fail = 2
    with pytest.raises(RuntimeError, match=r"CUDA out of memory\. Tried to allocate "
                                           r"64\.00 MiB") as info:
        A.allocate(64 << 20)
    assert isinstance(info.value, eager.cuda.OutOfMemoryError)
    assert "60.00 MiB is allocated" in str(info.value)
    assert "retried once" in str(info.value)
    assert A.allocated == 60 << 20 and A.reserved == 60 << 20


def test_allocator_retries_on_numbas_out_of_memory_error():
    from numba.cuda.cudadrv.driver import CudaAPIError

    def oom(msg):
        return CudaAPIError(2, msg)       # CUDA_ERROR_OUT_OF_MEMORY
    fake = _FakeDevice(fail=1, exc=oom)
    A = cuda_array.CachingAllocator(malloc=fake)
    assert A.allocate(4096).nbytes == 4096 and A.counts["oom_retries"] == 1
    other = _FakeDevice(fail=1, exc=lambda m: CudaAPIError(700, m))   # not an OOM
    B = cuda_array.CachingAllocator(malloc=other)
    with pytest.raises(CudaAPIError):
        B.allocate(4096)
    assert B.counts["oom_retries"] == 0


def test_torch_cuda_memory_counters_follow_the_allocator():
    eager.cuda.empty_cache()
    base_alloc, base_res = eager.cuda.memory_allocated(), eager.cuda.memory_reserved()
    x = eager.empty(3 << 18, device="cuda")          # 3 MiB of float32: a large block
    assert eager.cuda.memory_allocated() == base_alloc + (3 << 20)
    assert eager.cuda.memory_reserved() == base_res + (3 << 20)
    assert eager.cuda.max_memory_reserved() >= eager.cuda.memory_reserved()
    del x
    assert eager.cuda.memory_allocated() == base_alloc
    assert eager.cuda.memory_reserved() == base_res + (3 << 20)   # cached
    y = eager.empty(3 << 18, device="cuda")
    assert eager.cuda.memory_reserved() == base_res + (3 << 20)   # reused
    del y
    eager.cuda.empty_cache()
    assert eager.cuda.memory_reserved() <= base_res


# -- 3. FMA contraction off in elementwise kernels (checked in their PTX) ----------------------

_PTX_SCRIPT = r"""
import glob, json, sys
from runtime.cuda import ptxcheck
out = []
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    record = json.load(open(path))
    ptx = ptxcheck.ptx(record, "sm_80")
    ptxcheck.link_cubin(ptx, "sm_80")
    out.append({"source": record["source"], "fma": ptx.count("fma.rn"),
                "mul": ptx.count("mul.rn.f32"), "add": ptx.count("add.rn.f32")})
print(json.dumps(out))
"""


def test_fused_multiply_add_kernel_has_no_fma_in_its_ptx(tmp_path, monkeypatch):
    """A fused ``a*b+c`` must round the product as eager's separate mul and add kernels do
    (NVVM's -fma=0); the GEMM keeps its FMA.  Compiled to PTX for sm_80 and linked, in a
    process without the simulator (NVVM from the venv's CUDA wheels: no GPU needed)."""
    import json
    import os
    import subprocess
    import sys

    from runtime.cuda import DEVICE, blas
    monkeypatch.setattr(DEVICE, "_logged", set())
    monkeypatch.setattr(blas, "_CUPY", None)   # the tiled GEMM kernel, not a GPU's cuBLAS
    monkeypatch.setenv("DYNGRAPH_CUDA_KERNEL_LOG", str(tmp_path))

    def f(a, b, c, w):
        return (a * b + c) @ w
    cf = compiler.compile(f)
    a, b, c = (eager.tensor(np.full((2, 3), v, np.float32), device="cuda")
               for v in (1.1, 2.3, 0.7))
    w = eager.ones(3, 2, device="cuda")
    for _ in range(2):
        out = cf(a, b, c, w)
        compiler.wait()
    np.testing.assert_array_equal(_host(out), _host(f(a, b, c, w)))
    assert any("a0 * a1" in k[1] for t in cf.explain().traces for k in t["kernels"])
    monkeypatch.delenv("DYNGRAPH_CUDA_KERNEL_LOG")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", _PTX_SCRIPT, str(tmp_path)], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode and ("NVVM" in proc.stderr and "not found" in proc.stderr.lower()):
        pytest.skip("no libNVVM here (the cuda extra's nvidia-nvvm wheel)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    kernels = json.loads(proc.stdout.strip().splitlines()[-1])
    fused = [k for k in kernels if "t0 = a0 * a1" in k["source"] and "t1 = t0 + a2"
             in k["source"]]
    assert fused
    for k in fused:
        assert k["fma"] == 0 and k["mul"] >= 1 and k["add"] >= 1, k
    gemm = [k for k in kernels if "NVVM_FMA = True" in k["source"]]
    assert gemm and all(k["fma"] >= 1 for k in gemm)


# -- 4. kernels cached on disk across processes ---------------------------------------------------

_CACHE_SCRIPT = r"""
import glob, json, os, sys
from runtime.cuda import DEVICE, templates, kernels
from runtime.cuda import launch
src = templates.elementwise_source(["t0 = a0 * a1", "t1 = t0 + a2"], ["t1"], [True] * 3,
                                   [True], 1)
out = {}
mod = DEVICE.load(src)
cache = getattr(mod.kernel, "_cache", None)
out["dispatcher"] = type(mod.kernel).__name__
out["cache"] = type(cache).__name__
out["cache_path"] = getattr(cache, "cache_path", None)
out["guarded"] = "load_overload" in vars(cache) if cache is not None else False
out["lto"] = mod.kernel.targetoptions.get("lto")
from numba.cuda.core.caching import IndexDataCacheFile
out["trusted"] = IndexDataCacheFile._save_index.__module__ == "runtime.cache"
for name, source in (("random", kernels.RANDOM_SOURCE), ("gather", kernels.GATHER_SOURCE),
                     ("gemm", kernels.gemm_source(16, "float32", True))):
    m = DEVICE.load(source)
    disp = [v for v in vars(m).values() if type(v).__name__ == "CUDADispatcher"]
    out[name] = sorted({type(d._cache).__name__ for d in disp})
print(json.dumps(out))
"""


def _run_without_simulator(script, *args, env_extra=None):
    import json
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(env_extra or {})
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", script, *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_kernels_are_built_with_a_disk_cache_outside_the_simulator(tmp_path):
    from runtime.cuda import kernels, templates
    src = templates.elementwise_source(["t0 = a0"], ["t0"], [True], [True], 1)
    jit = "cuda.jit(fn, cache=True, lto=False)"
    assert jit in src and "@kernel_jit\n" in src and "runtime.cuda.mathlib " in src
    red = templates.reduce_source(["t0 = a0"], "t0", [True], 1, "0.0", "{acc} + {x}",
                                  "{acc}", "float64", 8)
    assert jit in red and "@kernel_jit\n" in red
    for source in (kernels.RANDOM_SOURCE, kernels.GATHER_SOURCE, kernels.SCATTER_SOURCE,
                   kernels.INDEX_SOURCE, kernels.gemm_source(4, "float32", False),
                   kernels.nll_source(8), kernels.argreduce_source(8, "float64", True),
                   kernels.scan_source("sum", "float32"),
                   kernels.half_decode_source("float16"),
                   kernels.half_encode_source("float32", "bfloat16")):
        assert "@cuda.jit" not in source and jit in source and "@kernel_jit\n" in source
    # a process with numba-cuda's real target (no GPU needed to build the dispatchers):
    # every kernel has numba-cuda's disk cache beside its source in the kernel cache
    # directory, read through runtime.cache's checks, self-healing on a bad file
    got = _run_without_simulator(_CACHE_SCRIPT,
                                 env_extra={"DYNGRAPH_CACHE_DIR": str(tmp_path)})
    assert got["dispatcher"] == "CUDADispatcher" and got["cache"] == "CUDACache"
    assert got["cache_path"].startswith(str(tmp_path)) and got["guarded"]
    assert got["lto"] is False        # linked from PTX: no FMA contraction at link time
    assert got["trusted"]
    assert got["random"] == got["gather"] == got["gemm"] == ["CUDACache"]
    # with the disk cache off, kernels are built without one (no file to key it on)
    off = _run_without_simulator(_CACHE_SCRIPT, env_extra={"DYNGRAPH_CACHE_DIR": "off"})
    assert off["dispatcher"] == "CUDADispatcher" and off["cache"] == "NullCache"


# -- 5. two-pass reductions, argmax in the input's dtype, float32 random numbers ----------------

def test_long_reductions_split_over_blocks_in_two_passes():
    from runtime.cuda import launch
    per_block = launch.DEV.reduce_threads * launch._PER_THREAD      # what one block reduces whole
    assert launch.reduce_parts(1, 20) == (1, 20)              # short: one block
    n = 3 * per_block + 17                                    # 401 simulated, 12305 on a GPU
    parts, chunk = launch.reduce_parts(1, n)
    assert parts > 1 and (parts - 1) * chunk < n <= parts * chunk
    rng = np.random.default_rng(0)
    h = rng.standard_normal(n).astype(np.float32)
    h[17] = 9.5
    x = eager.tensor(h, device="cuda")
    np.testing.assert_allclose(_host(x.sum()), h.astype(np.float64).sum(), rtol=1e-5,
                               atol=1e-4)
    np.testing.assert_allclose(_host(x.mean()), h.astype(np.float64).mean(), rtol=1e-5,
                               atol=1e-6)
    assert _host(x.amax()) == 9.5 and _host(x.amin()) == h.min()
    nan_at = n * 3 // 5                                       # in another block than h[17]
    hn = h.copy()
    hn[nan_at] = np.nan
    t_nan = eager.tensor(hn, device="cuda")
    assert np.isnan(_host(t_nan.amax())) and np.isnan(_host(t_nan.sum()))
    i = eager.tensor(np.arange(n) % 7, device="cuda")
    assert _host(i.sum()) == (np.arange(n) % 7).sum()
    assert bool(_host((i > 5).any())) and not bool(_host((i > 6).any()))
    assert not bool(_host((i > 0).all()))
    # powers of two multiply exactly in any order while no partial product leaves the range
    # (alternating 2 and 0.5 overflows in a GPU block's order: each thread takes one parity)
    hp = np.ones(n, np.float32)
    hp[[3, n // 3, n // 2, n - 9, n - 1]] = 2.0
    hp[[5, n // 4, n - 2]] = 0.5
    assert _host(eager.tensor(hp, device="cuda").prod()) == 4.0
    # two rows (split too) and a strided view
    m = rng.standard_normal((2, 2 * per_block + 88)).astype(np.float32)
    t = eager.tensor(m, device="cuda")
    np.testing.assert_allclose(_host(t.sum(dim=1)), m.astype(np.float64).sum(1), rtol=1e-5,
                               atol=1e-4)
    np.testing.assert_allclose(_host(t.t().sum(dim=0)), m.astype(np.float64).sum(1),
                               rtol=1e-5, atol=1e-4)
    # a fused reduction gives eager's bits (both launch the same two passes)
    cf = compiler.compile(lambda a: (a * 2 + 1).sum())
    for _ in range(2):
        got = cf(x)
        compiler.wait()
    assert _host(got) == _host((x * 2 + 1).sum())


def test_argmax_compares_in_the_inputs_dtype():
    from runtime.cuda import launch
    h = np.array([[3, 1, 7, 7, -2], [0, 9, 2, 9, 1]], np.float32)
    for dt in (np.float32, np.int32, np.uint8):
        a = h.astype(dt) if dt is not np.uint8 else np.abs(h).astype(dt)
        t = eager.tensor(a, device="cuda")
        np.testing.assert_array_equal(_host(t.argmax(dim=1)), a.argmax(1))
        np.testing.assert_array_equal(_host(t.argmin(dim=1)), a.argmin(1))
        assert _host(t.argmax()) == a.argmax()
        assert ("arg", True, np.dtype(dt).name) in launch.KERNELS
    # a contiguous view that starts inside its block, NaN as the extreme
    f = eager.tensor(np.array([5, 1, 8, np.nan, 2, 8], np.float32), device="cuda")
    v = f[1:3]
    assert v._data.offset == 1 and _host(v.argmax()) == 1
    assert _host(f[4:].argmax()) == 1 and _host(f.argmax()) == 3


def test_float32_random_numbers_are_drawn_in_float32_and_stay_below_one():
    from runtime.cuda import DEVICE, kernels, launch
    mod = DEVICE.load(kernels.RANDOM_SOURCE)
    top = np.uint64(0xFFFFFFFF)
    real_bits = mod.bits
    try:
        mod.bits = lambda seed, counter, stream: top
        # the float64 draw rounded to float32 reaches 1.0; the float32 draw does not
        assert np.float32(mod.uniform(0, 0, 0)) == 1.0
        assert mod.uniform32(0, 0, 0) < 1.0
        assert mod.uniform32(0, 0, 0).dtype == np.float32
    finally:
        mod.bits = real_bits
    eager.manual_seed(3)
    r = eager.rand(200, device="cuda")
    z = eager.randn(200, device="cuda")
    assert r.dtype == eager.float32 and z.dtype == eager.float32
    rh, zh = _host(r), _host(z)
    assert (rh >= 0).all() and (rh < 1).all() and 0.3 < rh.mean() < 0.7
    assert np.isfinite(zh).all() and abs(zh.mean()) < 0.4 and 0.6 < zh.std() < 1.4
    eager.manual_seed(3)
    np.testing.assert_array_equal(_host(eager.rand(200, device="cuda")), rh)
    d = eager.rand(50, device="cuda", dtype=eager.float64)      # float64: 53-bit draws
    assert d.dtype == eager.float64 and (_host(d) < 1).all()
    assert launch.random.__doc__ and "rand32" in launch.random.__doc__
