"""Accuracy, special values, dtype preservation and vectorization of runtime.cpu.mathlib.

Every function is called from inside an @njit loop (as generated kernels do);
one loop per math function is compiled and reused for float32 and float64.
Errors are measured in ULPs against a higher-precision NumPy reference:
float32 inputs against NumPy float64 (rounded to float32), float64 inputs
against NumPy long double (80-bit on x86-64) rounded to float64.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
from numba import njit, types

from runtime.cpu import mathlib as M

F32, F64 = np.float32, np.float64
LD = np.longdouble
# long double is only a better reference than double where it is wider
LD_IS_WIDER = np.finfo(LD).nmant > np.finfo(F64).nmant

# erf has no NumPy reference: its oracle is eager's NumPy form, bit for bit, and the
# correctly rounded erf (tests/eager/test_erf.py); here it is only checked for dtypes
# and vectorization
NAMES = sorted(set(M.__all__) - {"erf"})
DTYPES = [F32, F64]

# Max error in ULPs. Measured (grid + random + specials): 1 for exp/log/log1p,
# expm1 1 (f32) / 2 (f64), 2 for tanh/sigmoid/softplus, sin/cos 2; one ulp of
# headroom for CPUs without FMA (the module allows mul+add contraction).
MAX_ULP = dict(exp=2, expm1=3, log=2, log1p=2, tanh=3, sigmoid=3, softplus=3, sin=3, cos=3)

# (a) dense-grid range per function and dtype
GRID = {
    "exp": {F32: (-104.0, 89.0), F64: (-746.0, 710.0)},
    "expm1": {F32: (-20.0, 89.0), F64: (-40.0, 710.0)},
    "log": {F32: (0.0, 100.0), F64: (0.0, 100.0)},  # plus a geometric grid below
    "log1p": {F32: (-1.0, 100.0), F64: (-1.0, 100.0)},
    "tanh": {F32: (-12.0, 12.0), F64: (-25.0, 25.0)},
    "sigmoid": {F32: (-110.0, 110.0), F64: (-750.0, 750.0)},
    "softplus": {F32: (-110.0, 110.0), F64: (-750.0, 750.0)},
    "sin": {F32: (-8192.0, 8192.0), F64: (-1e6, 1e6)},
    "cos": {F32: (-8192.0, 8192.0), F64: (-1e6, 1e6)},
}

N_GRID = 200_001
N_RANDOM = 100_000


# ----------------------------------------------------------------- helpers


@functools.cache
def loop_for(name):
    """A plain @njit loop calling mathlib.<name> elementwise (default njit options)."""
    f = getattr(M, name)

    @njit
    def loop(x, out):
        for i in range(x.size):
            out[i] = f(x[i])

    return loop


def run(name, x):
    out = np.empty_like(x)
    loop_for(name)(x, out)
    return out


def reference(name, x):
    """NumPy in higher precision, rounded to x.dtype."""
    xh = x.astype(F64 if x.dtype == F32 else (LD if LD_IS_WIDER else F64))
    with np.errstate(all="ignore"):
        if name == "sigmoid":
            r = 1 / (1 + np.exp(-xh))
        elif name == "softplus":
            r = np.log1p(np.exp(-np.abs(xh))) + np.maximum(xh, 0)
        else:
            r = getattr(np, name)(xh)
        return r.astype(x.dtype)


def _ordered(a):
    """Map floats to integers so that adjacent floats differ by 1 (and -0 == +0)."""
    if a.dtype == F32:
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    i = a.view(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)


def ulp_error(y, ref):
    """Elementwise distance in ULPs; nan vs nan is 0, nan vs number is inf."""
    d = np.abs(_ordered(y) - _ordered(ref)).astype(F64)
    ny, nr = np.isnan(y), np.isnan(ref)
    d[ny & nr] = 0.0
    d[ny ^ nr] = np.inf
    return d


def assert_ulp(name, x, y, ref, max_ulp):
    assert y.dtype == x.dtype
    # inf must be inf of the same sign (inf and FLT_MAX are only 1 "ulp" apart)
    bad = np.isinf(y) != np.isinf(ref)
    assert not bad.any(), f"{name}: inf mismatch at x={x[bad][:5]}: {y[bad][:5]} vs {ref[bad][:5]}"
    err = ulp_error(y, ref)
    limit = max_ulp + (0 if (x.dtype == F32 or LD_IS_WIDER) else 1)
    i = int(np.argmax(err))
    assert err[i] <= limit, (
        f"{name}[{x.dtype}]: {err[i]} ulp > {limit} at x={x[i]!r}: got {y[i]!r}, want {ref[i]!r}"
    )
    return err.max()


def inputs(name, dtype):
    """(a) dense grid + (b) random values for one function and dtype."""
    rng = np.random.default_rng(1234 + NAMES.index(name) + (dtype == F64))
    lo, hi = GRID[name][dtype]
    grid = np.linspace(lo, hi, N_GRID)
    mag = 10.0 ** rng.uniform(-30, 0, N_RANDOM)  # many scales, incl. tiny
    sign = rng.choice([-1.0, 1.0], N_RANDOM)
    parts = [grid, rng.uniform(-1, 1, N_RANDOM), sign * mag, rng.uniform(lo, hi, N_RANDOM)]
    if name == "log":
        tiny = np.finfo(dtype).smallest_subnormal
        big = np.finfo(dtype).max
        parts += [np.geomspace(tiny, big / 4, N_GRID), rng.uniform(0.5, 2.0, N_RANDOM)]
    x = np.concatenate(parts).astype(dtype)
    if name in ("log", "log1p"):  # the domain; negatives are tested as specials
        x = x[x > (0 if name == "log" else -1)]
    return x


# ------------------------------------------------------- (a)+(b) accuracy


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", NAMES)
def test_accuracy_grid_and_random(name, dtype):
    x = inputs(name, dtype)
    assert_ulp(name, x, run(name, x), reference(name, x), MAX_ULP[name])


# ------------------------------------------------------- (c) special values

INF, NAN = np.inf, np.nan

# exact expectations: (x, expected) -- compared bit-for-bit (sign of zero included)
EXACT = {
    "exp": [
        (0.0, 1.0),
        (-0.0, 1.0),
        (INF, INF),
        (-INF, 0.0),
        (NAN, NAN),
        (1e4, INF),
        (-1e4, 0.0),
        (1e-30, 1.0),
        (-1e-30, 1.0),
    ],
    "expm1": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (INF, INF),
        (-INF, -1.0),
        (NAN, NAN),
        (1e4, INF),
        (-1e4, -1.0),
        (-50.0, -1.0),
        (1e-30, 1e-30),
        (-1e-30, -1e-30),
    ],
    "log": [
        (0.0, -INF),
        (-0.0, -INF),
        (1.0, 0.0),
        (INF, INF),
        (-INF, NAN),
        (-1.0, NAN),
        (-1e-30, NAN),
        (NAN, NAN),
    ],
    "log1p": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (-1.0, -INF),
        (-2.0, NAN),
        (-INF, NAN),
        (INF, INF),
        (NAN, NAN),
        (1e-30, 1e-30),
        (-1e-30, -1e-30),
    ],
    "tanh": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (INF, 1.0),
        (-INF, -1.0),
        (NAN, NAN),
        (20.0, 1.0),
        (-20.0, -1.0),
        (1e30, 1.0),
        (-1e30, -1.0),
        (1e-30, 1e-30),
        (-1e-30, -1e-30),
    ],
    "sigmoid": [
        (0.0, 0.5),
        (-0.0, 0.5),
        (INF, 1.0),
        (-INF, 0.0),
        (NAN, NAN),
        (100.0, 1.0),
        (1e30, 1.0),
        (-1e30, 0.0),
        (-1e4, 0.0),
    ],
    "softplus": [
        (INF, INF),
        (-INF, 0.0),
        (NAN, NAN),
        (100.0, 100.0),
        (1e30, 1e30),
        (-1e30, 0.0),
        (-1e4, 0.0),
    ],
    "sin": [
        (0.0, 0.0),
        (-0.0, -0.0),
        (INF, NAN),
        (-INF, NAN),
        (NAN, NAN),
        (1e-30, 1e-30),
        (-1e-30, -1e-30),
    ],
    "cos": [(0.0, 1.0), (-0.0, 1.0), (INF, NAN), (-INF, NAN), (NAN, NAN), (1e-30, 1.0)],
}


def _near(dtype):
    """Values near overflow / underflow / subnormal thresholds, compared in ULPs."""
    fi = np.finfo(dtype)
    ln_max = float(np.log(LD(fi.max)))
    ln_tiny = float(np.log(LD(fi.smallest_normal)))
    ln_sub = float(np.log(LD(fi.smallest_subnormal)))
    vals = [
        ln_max,
        np.nextafter(ln_max, 0),
        np.nextafter(ln_max, INF),
        ln_max - 0.3,
        ln_tiny,
        ln_tiny - 1,
        ln_sub + 1,
        ln_sub,
        ln_sub - 0.5,
        0.5 * ln_sub,
    ]
    tiny = [fi.smallest_normal, fi.smallest_subnormal, 1e-5, 1e-10, 1e-20, 3e-8, fi.eps, fi.eps / 2]
    return np.array(vals + tiny + [-v for v in vals + tiny] + [fi.max, -fi.max], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", NAMES)
def test_special_values_exact(name, dtype):
    x = np.array([a for a, _ in EXACT[name]], dtype)
    want = np.array([b for _, b in EXACT[name]], dtype)
    got = run(name, x)
    assert got.dtype == dtype
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"{name}[{dtype.__name__}] x={x[~same]} got {got[~same]} want {want[~same]}"


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", NAMES)
def test_near_thresholds(name, dtype):
    x = _near(dtype)
    if name == "log1p":
        x = np.concatenate([x, np.array([-1 + np.finfo(dtype).epsneg, -0.5, -0.999], dtype)])
    if name in ("sin", "cos"):  # documented accurate range only
        x = x[np.abs(x) <= GRID[name][dtype][1]]
    y = run(name, x)
    assert_ulp(name, x, y, reference(name, x), MAX_ULP[name])


def test_softplus_and_sigmoid_never_nan_for_non_nan():
    for dtype in DTYPES:
        x = np.concatenate([np.linspace(-2000, 2000, 4001), [INF, -INF, 3e38, -3e38]]).astype(dtype)
        for name in ("sigmoid", "softplus", "tanh", "exp", "expm1"):
            assert not np.isnan(run(name, x)).any(), name


def test_tanh_saturates_and_is_odd():
    for dtype in DTYPES:
        x = np.geomspace(1e-30, 1e30, 2001).astype(dtype)
        y, ym = run("tanh", x), run("tanh", -x)
        assert np.array_equal(ym, -y)
        assert np.all(np.abs(y) <= 1)
        assert np.all(y[x > (9.1 if dtype == F32 else 19.1)] == 1)


# ------------------------------------------- dtypes and vectorization


@pytest.mark.parametrize("name", NAMES + ["erf"])
def test_float32_stays_float32(name):
    x = np.linspace(0.5, 2, 16).astype(F32)
    run(name, x)  # compiles mathlib.<name> for float32 through the loop
    sigs = {sig.args: sig.return_type for sig in getattr(M, name).nopython_signatures}
    assert sigs[(types.float32,)] == types.float32
    loop = loop_for(name)
    sig = next(s for s in loop.signatures if s[0].dtype == types.float32)
    llvm = loop.inspect_llvm(sig)
    assert "fpext" not in llvm, "float32 code was promoted to double"
    run(name, x.astype(F64))
    sigs = {sig.args: sig.return_type for sig in getattr(M, name).nopython_signatures}
    assert sigs[(types.float64,)] == types.float64


def test_integer_argument_is_float64():
    @njit
    def f(n):
        return M.exp(n), M.log(n)

    e, lg = f(2)
    assert e == pytest.approx(np.exp(2.0), rel=1e-15)
    assert lg == pytest.approx(np.log(2.0), rel=1e-15)


@functools.cache
def _gathers_vectorize() -> bool:
    """Whether LLVM vectorizes a loop of float64 table lookups on this CPU (it does where
    gathers are cheap, e.g. Intel's AVX-512 cores; not on AMD Zen 3)."""
    @njit
    def probe(table, x, out):
        for i in range(x.size):
            k = int(x[i]) & 7
            out[i] = table[k] * x[i] + table[7 - k]

    x = np.linspace(0, 7, 64)
    probe(np.arange(8.0), x, np.empty_like(x))
    return bool(re.search(r"<\d+ x double>", probe.inspect_llvm(probe.signatures[0])))


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "sin", "erf"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_loop_is_vectorized(name, dtype):
    """The whole point: called from a default-options @njit loop, the loop becomes SIMD."""
    if name == "erf" and dtype == F64 and not _gathers_vectorize():
        pytest.skip("float64 erf gathers its coefficients, and LLVM's cost model for this "
                    "CPU keeps gather loops scalar (a probe loop stays scalar too)")
    x = np.linspace(0.5, 2, 64).astype(dtype)
    run(name, x)
    loop = loop_for(name)
    nbty = types.float32 if dtype == F32 else types.float64
    sig = next(s for s in loop.signatures if s[0].dtype == nbty)
    llvm = loop.inspect_llvm(sig)
    lane = "float" if dtype == F32 else "double"
    assert re.search(rf"<\d+ x {lane}>", llvm), f"{name}[{dtype.__name__}] loop not vectorized"
    # No transcendental left: np.exp etc. lower to llvm.exp.* which LLVM "vectorizes"
    # as <8 x float> and then scalarizes into 8 libm calls, so check for those too.
    assert not LIBM_CALL.search(llvm), LIBM_CALL.search(llvm).group(0)


LIBM_CALL = re.compile(
    r"@llvm\.(exp|exp2|exp10|log|log2|log10|sin|cos|tan|pow|powi|tanh|sinh|cosh)\."
    r"|@(exp|expm1|log|log1p|tanh|sin|cos|pow)f?\("
)


def test_libm_detector_sees_numpy_calls():
    """Guard for test_loop_is_vectorized: a loop calling np.exp must be flagged."""

    @njit
    def np_loop(x, out):
        for i in range(x.size):
            out[i] = np.exp(x[i]) + np.tanh(x[i])

    x = np.ones(8, F32)
    np_loop(x, x.copy())
    assert LIBM_CALL.search(np_loop.inspect_llvm(np_loop.signatures[0]))


def test_fastmath_caller_keeps_special_values():
    """A fastmath caller must not be able to fold away mathlib's nan/inf handling."""

    @njit(fastmath=True)
    def fm(x, out):
        for i in range(x.size):
            v = x[i]
            out[0, i] = M.exp(v)
            out[1, i] = M.log(v)
            out[2, i] = M.tanh(v)
            out[3, i] = M.sigmoid(v)
            out[4, i] = M.log1p(v)

    x = np.array([NAN, INF, -INF, 0.0, -1.0, 1.0, 100.0, -100.0, 1e-30], F32)
    out = np.empty((5, x.size), F32)
    fm(x, out)
    for row, name in enumerate(["exp", "log", "tanh", "sigmoid", "log1p"]):
        ref = reference(name, x)
        err = ulp_error(out[row], ref)
        assert np.all(err <= MAX_ULP[name]), (name, x, out[row], ref)
        assert np.array_equal(np.isinf(out[row]), np.isinf(ref)), name


def test_callable_from_python():
    assert M.exp(F64(1.0)) == pytest.approx(np.e, rel=1e-15)
    assert M.sigmoid(F32(0.0)) == 0.5
    assert M.log(F64(0.0)) == -np.inf
