"""erf's eager forward (runtime.cpu.erf.erf, vectorized NumPy) against math.erf.

float32 results (runtime.cpu.erf.erf32, float32 arithmetic) are within 1 ulp of the
correctly rounded erf on a dense sample of 2**20 inputs (all of them:
benchmarks/check_erf32.py); float16 results are ``math.erf`` rounded, bit for bit;
float64 results are held to 1 ulp of math.erf (both are within about half an ulp of the
true value).  The compiled tier's kernels run the same algorithms per element
(runtime.cpu.mathlib.erf): their results are eager's bits in every dtype.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import compiler
import eager
from eager.nn import functional as F
from runtime.cpu.erf import T32, erf, erf32, gelu

_math_erf = np.frompyfunc(math.erf, 1, 1)


def math_erf(x: np.ndarray) -> np.ndarray:
    """math.erf on each value (in float64), rounded to x's dtype."""
    with np.errstate(invalid="ignore"):
        return np.asarray(_math_erf(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in ulps between float64 arrays (-0.0 == +0.0; both nan: 0)."""
    def ordered(v):
        i = v.view(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)
    d = np.abs(ordered(a) - ordered(b)).astype(np.float64)
    d[np.isnan(a) & np.isnan(b)] = 0
    d[np.isnan(a) ^ np.isnan(b)] = np.inf
    return d


def dense(dtype) -> np.ndarray:
    """A dense grid over [-7, 7] (erf is +-1 past 6), random normals, a geometric grid of
    tiny values down to the smallest subnormal of the dtype, and 300 consecutive floats
    on each side of every boundary between the implementation's regions."""
    rng = np.random.default_rng(0)
    tiny = np.finfo(dtype).smallest_subnormal
    parts = [np.linspace(-7, 7, 1_400_001), rng.standard_normal(200_000) * 3,
             np.geomspace(float(tiny), 1, 50_000), -np.geomspace(float(tiny), 1, 50_000)]
    grid = [p.astype(dtype) for p in parts]
    for b in np.arange(1.0, 6.5, 0.5, dtype=dtype):
        below = np.nextafter(np.full(300, b, dtype), dtype(0)) - np.arange(300) * np.spacing(b)
        above = b + np.arange(300, dtype=dtype) * np.spacing(b)
        grid += [below.astype(dtype), above.astype(dtype), -above.astype(dtype)]
    return np.concatenate(grid)


def sample32() -> np.ndarray:
    """2**20 float32 inputs: 2**19 random bit patterns (every exponent alike: subnormals,
    huge values, infs and nans), a uniform grid over [-4.5, 4.5] (erf is +-1 past 3.92),
    4096 consecutive floats on each side of the region boundary T32 and of 4 (the clamp),
    the smallest subnormals, and the special values."""
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 1 << 32, 1 << 19, dtype=np.uint64).astype(np.uint32)
    parts = [bits.view(np.float32), np.linspace(-4.5, 4.5, (1 << 19) - 4 * 8192 - 4096 - 16,
                                                dtype=np.float32)]
    for b in (T32, np.float32(4.0)):
        i = np.int32(b.view(np.int32))
        run = (np.arange(i - 4096, i + 4096, dtype=np.int32)).view(np.float32)
        parts += [run, -run]
    parts.append(np.arange(1, 4097, dtype=np.int32).view(np.float32))
    parts.append(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 3.4e38, -3.4e38,
                           1e-45, -1e-45, 1.1754944e-38, -1.1754944e-38, 1.0, -1.0,
                           3.92, -3.92], np.float32))
    x = np.concatenate(parts)
    assert x.size == 1 << 20 and x.dtype == np.float32
    return x


def ulps32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in float32 steps (-0.0 == +0.0; both nan: 0; one nan: 2**32)."""
    def ordered(v):
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    d = np.abs(ordered(a) - ordered(b))
    d[np.isnan(a) & np.isnan(b)] = 0
    d[np.isnan(a) ^ np.isnan(b)] = 1 << 32
    return d


def test_float32_within_one_ulp_of_correctly_rounded():
    """The stated bound (the exhaustive run over all 2**32 inputs finds the same)."""
    x = sample32()
    got = erf(x)
    assert got.dtype == np.float32
    assert np.array_equal(got, erf32(x), equal_nan=True)
    d = ulps32(got, math_erf(x))       # math.erf rounded: the correctly rounded erf here
    i = int(np.argmax(d))
    assert d[i] <= 1, f"{d[i]} ulp at x={x[i]!r}: {got[i]!r} vs {math_erf(x[i:i + 1])[0]!r}"
    assert np.mean(d == 0) > 0.95       # most results are the correctly rounded ones
    # odd, bit for bit; erf(+-0) = +-0; +-1 from 3.92 on; nan stays nan
    assert np.array_equal(erf(-x), -got, equal_nan=True)
    assert np.all(np.abs(got[np.abs(x) >= np.float32(3.92)]) == 1)
    assert np.array_equal(np.isnan(got), np.isnan(x))


def test_float32_subnormals_and_boundary():
    tiny = np.arange(1, 2000, dtype=np.int32).view(np.float32)   # the smallest subnormals
    x = np.concatenate([tiny, -tiny, np.float32(1e-38) * np.arange(1, 200, dtype=np.float32)])
    assert ulps32(erf(x), math_erf(x)).max() <= 1
    assert erf(np.float32([1.4e-45]))[0] == np.float32(1.4e-45)  # erf(x) ~ 1.128 x: rounds
    # both sides of the region boundary (within 1 ulp: not always monotone, like any
    # function within 1 ulp where it rises by less than an ulp per input step)
    i = int(T32.view(np.int32))
    run = np.arange(i - 100, i + 100, dtype=np.int32).view(np.float32)
    assert ulps32(erf(run), math_erf(run)).max() <= 1


def test_float16_equals_math_erf_rounded():
    x = dense(np.float16)
    got, want = erf(x), math_erf(x)
    assert got.dtype == np.float16
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(x[i], got[i], want[i]) for i in bad[:5]]


def test_float64_within_one_ulp_of_math_erf():
    x = dense(np.float64)
    got, want = erf(x), math_erf(x)
    assert got.dtype == np.float64
    d = ulps(got, want)
    i = int(np.argmax(d))
    assert d[i] <= 1, f"{d[i]} ulp at x={x[i]!r}: {got[i]!r} vs math.erf {want[i]!r}"
    # odd: erf(-x) == -erf(x) bit for bit
    assert np.array_equal(erf(-x), -got, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_special_values(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0, -6.0, 1e4, -1e4], dtype)
    got = erf(x)
    assert np.isnan(got[0])
    assert got[1:3].tolist() == [1.0, -1.0]
    assert got[3] == 0 and not np.signbit(got[3])
    assert got[4] == 0 and np.signbit(got[4])        # -0.0 keeps its sign
    assert got[5:].tolist() == [1.0, -1.0, 1.0, -1.0]


def test_float64_subnormals_round_once():
    x = np.array([5e-324, 1e-310, 2.2e-308, 1e-300]) * np.array([1, -1, 1, -1])
    assert np.array_equal(erf(x), math_erf(x))


def test_shape_and_empty():
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4)
    assert erf(x).shape == (2, 3, 4)
    assert np.array_equal(erf(x).ravel(), erf(x.ravel()))
    assert erf(np.zeros((0, 3), np.float32)).shape == (0, 3)
    assert erf(np.float32(0.5)).shape == ()
    # longer than one block (the functions run in blocks of 65536 / 32768 elements)
    big = np.random.default_rng(1).standard_normal(200_003).astype(np.float32)
    assert ulps32(erf(big), math_erf(big)).max() <= 1
    assert np.array_equal(erf(big)[100_000:], erf(big[100_000:]))   # blocks do not matter
    big64 = big.astype(np.float64)
    assert ulps(erf(big64), math_erf(big64)).max() <= 1
    with pytest.raises(TypeError, match="erf: expected a floating-point array"):
        erf(np.arange(3))


def test_eager_erf_and_gelu_use_it():
    x = np.linspace(-5, 5, 1001, dtype=np.float32)
    assert np.array_equal(eager.erf(eager.tensor(x)).numpy(), erf32(x))
    assert eager.erf(eager.tensor([1, 2])).dtype == eager.float32   # ints: float32
    half = np.float32(0.5)
    want = half * x * (np.float32(1) + erf32(x * np.float32(1 / math.sqrt(2))))
    assert np.array_equal(F.gelu(eager.tensor(x)).numpy(), want)
    assert np.array_equal(eager.nn.GELU()(eager.tensor(x)).numpy(), want)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # gelu(-inf) is nan
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_gelu_blocks_equal_the_expression(dtype):
    """runtime.cpu.erf.gelu (eager's forward, by blocks for float32) gives the bits of
    ``0.5 * a * (1 + erf(a * (1/sqrt 2)))`` written out, in the array's dtype."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(70_000) * 3, [0.0, -0.0, np.inf, -np.inf,
                                                          np.nan, 1e-30, -40.0]]).astype(dtype)
    with np.errstate(invalid="ignore"):
        want = 0.5 * x * (1.0 + erf(x * (1 / math.sqrt(2))))
    got = gelu(x)
    assert got.dtype == want.dtype == dtype
    assert np.array_equal(got, want, equal_nan=True)
    assert gelu(x.reshape(7, -1)[:, ::2]).shape == (7, 5001)
    assert np.array_equal(gelu(x[:10].reshape(2, 5)), want[:10].reshape(2, 5), equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_erf_is_eagers_bits(dtype):
    """runtime.cpu.mathlib.erf in a Numba loop (vectorized, as in a fused kernel) gives
    the bits of the NumPy form (float32: on the 2**20 sample; float64: the dense grid),
    subnormals and special values."""
    numba = pytest.importorskip("numba")
    from runtime.cpu import mathlib

    @numba.njit(error_model="numpy")
    def loop(a, out):
        for i in range(a.size):
            out[i] = mathlib.erf(a[i])

    x = sample32() if dtype == np.float32 else dense(dtype)
    x = np.concatenate([x, np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0, -6.0, 1e4,
                                     -1e4, 5.99999], dtype)])
    got = np.empty_like(x)
    loop(x, got)
    want = erf(x)
    bad = np.flatnonzero((got != want) & ~(np.isnan(got) & np.isnan(want)))
    assert bad.size == 0, [(x[i], got[i], want[i]) for i in bad[:5]]
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # gelu(-inf) is nan
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_gelu_exact_and_erf_against_eager(dtype):
    """erf: the same bits in both dtypes.  gelu float32: the same bits; float64: the
    kernel's ``x/2 * (1 + erf)`` may contract into an FMA, within |x| * 2**-53 (1 + erf
    cancels for large negative x) plus 2 ulp."""
    def f(x):
        return F.gelu(x), eager.erf(x * 0.5)

    cf = compiler.compile(f, backend="numba")
    rng = np.random.default_rng(2)
    xs = [np.concatenate([rng.standard_normal(5000) * 4, [0.0, -0.0, np.inf, -np.inf, 7.0,
                                                        -1e-30, 1.0, -1.0]]).astype(dtype)
          for _ in range(4)]
    for x in xs[:2]:
        cf(eager.tensor(x))
    compiler.wait()   # the fused Numba kernels are built: the next calls run them
    for x in xs[2:]:
        (g_gelu, g_erf), (w_gelu, w_erf) = cf(eager.tensor(x)), f(eager.tensor(x))
        g_gelu, g_erf, w_gelu, w_erf = (t.numpy() for t in (g_gelu, g_erf, w_gelu, w_erf))
        assert g_gelu.dtype == w_gelu.dtype == g_erf.dtype == w_erf.dtype == dtype
        assert np.array_equal(np.signbit(g_erf), np.signbit(w_erf))
        assert np.array_equal(g_erf, w_erf)
        if dtype == np.float32:
            assert np.array_equal(g_gelu, w_gelu, equal_nan=True)
            continue
        with np.errstate(invalid="ignore"):
            tol = 2 * np.spacing(np.abs(w_gelu)) + np.abs(x) * 2.0 ** -53
            ok = (np.abs(g_gelu - w_gelu) <= tol) | (g_gelu == w_gelu)
        assert (ok | (np.isnan(g_gelu) & np.isnan(w_gelu))).all()
    s = cf.stats()
    assert s["traces"] == 1 and s["hits"] == 3, s   # the first call traced, the rest replayed
    assert "mathlib.erf" in str(cf.explain())
