"""CUDA random numbers without float64 where the op is not float64: bernoulli compares 24
random bits with an integer threshold, bernoulli(p_tensor) draws in p's float32, randint
maps random bits onto its span in integer arithmetic (checked in the PTX, and the draws
against the generator's own functions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import eager
from runtime.cuda import launch
from runtime.cuda.array import CudaArray

SEED, OFFSET = 12345, 7


def _bits(mod, counter, stream):
    return int(mod.bits(SEED, counter, stream))


def test_bernoulli_into_float32_draws_exactly_uniform32_below_p():
    mod = launch._random_module()
    for p in (0.0, 0.1, 0.5, 1 / 3, 1.0):
        out = launch.random("bernoulli", CudaArray.empty((40,), np.float32), SEED, OFFSET, p)
        want = [1.0 if mod.uniform32(SEED, OFFSET + i, 0) < p else 0.0 for i in range(40)]
        np.testing.assert_array_equal(out.to_host(), want)
    # a float64 output keeps its 53-bit draws
    out = launch.random("bernoulli", CudaArray.empty((40,), np.float64), SEED, OFFSET, 0.3)
    want = [1.0 if mod.uniform(SEED, OFFSET + i, 0) < 0.3 else 0.0 for i in range(40)]
    np.testing.assert_array_equal(out.to_host(), want)


def test_randint_maps_64_random_bits_onto_the_span():
    mod = launch._random_module()
    for low, high in ((0, 10), (-5, 3), (0, 1), (0, (1 << 32) - 1)):
        out = launch.random("randint", CudaArray.empty((30,), np.int64), SEED, OFFSET,
                            low, high - low)
        span = high - low
        want = [low + (((_bits(mod, OFFSET + i, 0) << 32) | _bits(mod, OFFSET + i, 1))
                       * span >> 64) for i in range(30)]
        got = out.to_host()
        np.testing.assert_array_equal(got, want)
        assert (got >= low).all() and (got < high).all()
    wide = launch.random("randint", CudaArray.empty((30,), np.int64), SEED, OFFSET, 0,
                         1 << 40)
    got = wide.to_host()
    assert (got >= 0).all() and (got < 1 << 40).all() and len(set(got.tolist())) == 30


def test_eager_bernoulli_and_randint_on_cuda():
    eager.manual_seed(0)
    b = eager.full((400,), 0.25, device="cuda").bernoulli()
    assert b.dtype == eager.float32 and 0.1 < float(b.mean()) < 0.4
    p = eager.tensor(np.linspace(0, 1, 400, dtype=np.float32), device="cuda")
    bt = eager.bernoulli(p)
    assert bt.dtype == eager.float32
    h = bt.cpu().numpy()
    assert h[0] == 0 and h[-1] == 1 and set(np.unique(h)) <= {0.0, 1.0}
    r = eager.randint(3, 9, (300,), device="cuda").cpu().numpy()
    assert r.min() >= 3 and r.max() <= 8 and len(set(r.tolist())) == 6
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        eager.bernoulli(eager.tensor([0.5, 1.5], device="cuda"))


_SIG = {"rand32": [["array", "float32", 1], ["int64"], ["int64"], ["int64"]],
        "randn32": [["array", "float32", 1], ["int64"], ["int64"], ["int64"]],
        "bernoulli32": [["array", "float32", 1], ["int64"], ["int64"], ["int64"], ["int64"]],
        "bernoulli_tensor32": [["array", "float32", 1], ["array", "float32", 1], ["int64"],
                               ["int64"], ["int64"], ["array", "int32", 1]],
        "randint": [["array", "int64", 1], ["int64"], ["int64"], ["int64"], ["int64"],
                    ["int64"]]}


_SCRIPT = r"""
import json, sys
from runtime.cuda import kernels, ptxcheck
out = {}
for name, sig in json.loads(sys.argv[1]).items():
    source = kernels.rank_source(True) if name == "rank" else kernels.RANDOM_SOURCE
    ptx = ptxcheck.ptx({"source": source, "name": "kernel" if name == "rank" else name,
                        "signature": sig}, "sm_80")
    body = ptx[ptx.index(".entry"):]
    out[name] = [ln.strip() for ln in body.splitlines() if ".f64" in ln]
print(json.dumps(out))
"""


def f64_in_ptx(sigs: dict) -> dict:
    """kernel name -> the lines of its sm_80 PTX that use float64, for the kernels of
    ``kernels.RANDOM_SOURCE`` (and ``"rank"``: the rank kernel) with the given argument
    types; compiled in a process without the simulator (NVVM from the venv's CUDA wheels,
    no GPU needed).  Skips the test where there is no libNVVM."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(sigs)], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode and ("NVVM" in proc.stderr and "not found" in proc.stderr.lower()):
        pytest.skip("no libNVVM here (the cuda extra's nvidia-nvvm wheel)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_no_float64_in_the_ptx_of_32_bit_draws():
    """The float64 kernels, for contrast, do use .f64."""
    f64 = f64_in_ptx({**_SIG, "rand": [["array", "float64", 1]] + _SIG["rand32"][1:]})
    assert f64.pop("rand")                   # the check sees float64 where there is some
    # randn32's cosf is libdevice's __nv_cosf, whose large-argument reduction (Payne-Hanek,
    # for |x| > 105615) scales a 64-bit integer by pi/2 * 2**-64 in float64: never reached
    # for Box-Muller's angles in [0, 2*pi), but in the code.  Exactly that, nothing more:
    slow = f64.pop("randn32")
    ops = sorted(ln.split()[0] for ln in slow if not ln.startswith(".reg"))
    assert ops == ["cvt.rn.f32.f64", "cvt.rn.f64.s64", "mul.rn.f64"], slow
    assert any("0d3BF921FB54442D19" in ln for ln in slow), slow
    assert f64 == {name: [] for name in _SIG if name != "randn32"}, f64
