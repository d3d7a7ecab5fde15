"""Vectorizable scalar math functions for Numba kernels (no SVML needed).

Why this exists
    The llvmlite wheels ship without Intel SVML, so ``np.exp``/``np.tanh``/
    ``math.exp`` inside an ``@njit`` loop lower to libm calls (``llvm.exp.*``
    is "vectorized" and then scalarized into one call per lane), which keeps
    the loop scalar. The functions here are straight-line float arithmetic
    (range reduction + polynomial + a 2**n built by bit-casting n into the
    exponent field, via ``numba.extending.intrinsic`` and llvmlite IR), so
    they are inlined into the caller's loop and LLVM vectorizes it.

    Measured on the dev VM (Xeon with AVX-512, LLVM picks 256-bit vectors,
    numba 0.68.1), 1M float32 elements, ``benchmarks/bench_mathlib.py``:
    fused GELU (tanh form) with ``np.tanh`` in the loop ~16.9 ms, with
    :func:`tanh` from here ~0.8 ms (~20x, loop body is ``<8 x float>``
    code), NumPy ufunc composition ~2.1 ms. Single-function loops, float32:
    exp 0.51 ms (np.exp loop 2.3), log 0.51 (2.8), tanh 0.54 (15.3), expm1
    0.43 (11.4), log1p 0.66 (14.5), sin 0.74 (8.1); float64 is 3-10x faster
    than the np.* loop.

Public functions: ``exp, expm1, log, log1p, tanh, sigmoid, softplus, sin, cos, erf``,
each ``f(x) -> same float type``; Numba dispatchers callable from jitted code
(the intended use) and from Python.

* float32 argument -> float32 arithmetic and float32 result (never promoted
  to float64, which would halve the SIMD width); float64 -> float64.
  Integer/bool arguments are converted to float64 (like NumPy).
* Compiled with ``forceinline=True`` (LLVM ``alwaysinline``; plain LLVM
  inlining gives up on the larger float64 bodies), ``inline='never'`` at the
  Numba IR level, ``fastmath={'contract'}`` (FMA contraction only) and
  ``error_model='numpy'``. Because inlining happens in LLVM, the *caller's*
  fastmath/error_model do not apply to this code: a ``fastmath=True`` kernel
  cannot fold away the nan/inf handling or the error-compensation terms.
  Divisions use a raw ``fdiv`` intrinsic (no ZeroDivisionError branch).
  Note for kernel authors: a ``/`` written in the kernel itself under the
  default ``error_model='python'`` adds such a branch and blocks
  vectorization; generate kernels with ``error_model='numpy'``.

Accuracy: max error in ULPs over dense grids, random values and special
values (``tests/runtime/test_mathlib.py``; reference = NumPy float64 rounded
to float32 for float32 inputs, NumPy 80-bit long double rounded to float64
for float64 inputs). Within about 1 ulp of NumPy itself.

    ==========  =======  =======  =====================================
    function    float32  float64  method
    ==========  =======  =======  =====================================
    exp         1        1        Cody-Waite, Cephes expf / Taylor-13
    expm1       1        2        same reduction, 2**k*p + (2**k - 1)
    log         1        1        Cephes logf / fdlibm log (s=f/(2+f))
    log1p       1        1        log(1+x) + rounding correction c/u
    tanh        2        2        -t/(2+t), t = expm1(-2|x|), copysign
    sigmoid     2        2        e = exp(-|x|); (1 or e)/(1+e)
    softplus    2        2        log1p(exp(-|x|)) + max(x, 0)
    sin, cos    2        2        Cody-Waite by pi/2, Cephes polynomials
    erf         0 (*)    0 (*)    runtime.cpu.erf's algorithms, per element
    ==========  =======  =======  =====================================

    (*) erf is not NumPy's (NumPy has none) but eager's: the same bits as
    :func:`runtime.cpu.erf.erf`, which is within 1 ulp of the correctly rounded
    erf for float32 (all inputs checked; float32 arithmetic, no gathers) and
    within 1 ulp of ``math.erf`` for float64.

Special values follow NumPy, including signed zeros: exp overflow -> inf,
underflow -> 0, exp(-inf) = 0, expm1(-inf) = -1; log(+-0) = -inf,
log(<0) = nan, log(inf) = inf, log1p(-1) = -inf; tanh(+-inf) = +-1 (and
exactly +-1 once |x| is large); sigmoid/softplus never give nan for non-nan
input; nan in -> nan out; sin/cos(+-inf) = nan.

Limitations
    * Subnormal *outputs* (exp for x in about [-104, -87.3] float32 /
      [-745, -708.4] float64, and sigmoid/softplus of very negative x) are
      produced by scaling with two normal powers of two: at most 1 ulp of
      the subnormal grid, which is a large *relative* error near the bottom
      of the subnormal range. Subnormal *inputs* to log are rescaled first
      and are as accurate as normal ones. FTZ/DAZ is never enabled.
    * sin/cos use a Cody-Waite reduction by pi/2 (4 parts for float32, 3 for
      float64): accurate for |x| <= 8192 (float32) and |x| <= 1e6 (float64,
      tested); beyond that the error grows with |x| (no Payne-Hanek) but
      the result stays finite and in [-1, 1].
    * Results differ from NumPy in the last bit or two (NumPy itself varies
      across CPUs/builds), and may differ by an ulp between CPUs with and
      without FMA.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

from . import erf as _erf_tables

__all__ = ["cos", "erf", "exp", "expm1", "log", "log1p", "sigmoid", "sin", "softplus",
           "tanh"]

# Options for every function in this module. Only FMA contraction is allowed:
# the algorithms rely on IEEE evaluation order (Cody-Waite reduction, log1p's
# rounding-error correction) and on inf/nan propagating, so no reassoc/nnan/ninf.
# forceinline -> LLVM alwaysinline, so the caller's loop sees straight-line code.
_JIT = dict(
    fastmath={"contract"}, error_model="numpy", cache=False, inline="never", forceinline=True
)

_F32 = np.float32
_F64 = np.float64


# --------------------------------------------------------------------------
# LLVM-level helpers (numba.extending.intrinsic)
# --------------------------------------------------------------------------


def _layout(fty):
    """(total bits, mantissa bits, exponent bias) of a Numba float type."""
    if fty == types.float32:
        return 32, 23, 127
    if fty == types.float64:
        return 64, 52, 1023
    return None


@intrinsic
def _rint(typingctx, x):
    """Round to nearest integer, ties to even (llvm.rint; vectorizes to vroundps/pd)."""
    if _layout(x) is None:
        return None

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(sig.return_type)
        fn = builder.module.declare_intrinsic("llvm.rint", [llty])
        return builder.call(fn, args)

    return x(x), codegen


@intrinsic
def _div(typingctx, a, b):
    """Plain IEEE ``a / b`` (no zero-division check whatever the caller's error model)."""
    if _layout(a) is None or a != b:
        return None

    def codegen(context, builder, sig, args):
        return builder.fdiv(args[0], args[1])

    return a(a, b), codegen


@intrinsic
def _copysign(typingctx, mag, sgn):
    """|mag| with the sign bit of sgn (llvm.copysign; one bitwise op in SIMD)."""
    if _layout(mag) is None or mag != sgn:
        return None

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(sig.return_type)
        fnty = ir.FunctionType(llty, [llty, llty])
        fn = builder.module.declare_intrinsic("llvm.copysign", [llty], fnty)
        return builder.call(fn, args)

    return mag(mag, sgn), codegen


def _pow2_ir(builder, n, ity, fty, mbits, bias):
    """2**n as a float for an integer n in the normal exponent range: bits = (n+bias) << mbits."""
    e = builder.add(n, ir.Constant(ity, bias))
    return builder.bitcast(builder.shl(e, ir.Constant(ity, mbits)), fty)


@intrinsic
def _scale2(typingctx, p, k):
    """p * 2**k for an integral-valued float k with |k| <= 2*(bias-1).

    2**k is applied as two normal powers of two 2**(k>>1) * 2**(k-(k>>1)), so
    results that overflow become inf and results in the subnormal range are
    rounded once (gradual underflow) instead of producing garbage exponents.
    """
    if _layout(p) is None or p != k:
        return None

    def codegen(context, builder, sig, args):
        bits, mbits, bias = _layout(sig.args[0])
        fty = context.get_value_type(sig.args[0])
        ity = ir.IntType(bits)
        pv, kv = args
        n = builder.fptosi(kv, ity)
        n1 = builder.ashr(n, ir.Constant(ity, 1))
        n2 = builder.sub(n, n1)
        s1 = _pow2_ir(builder, n1, ity, fty, mbits, bias)
        s2 = _pow2_ir(builder, n2, ity, fty, mbits, bias)
        return builder.fmul(builder.fmul(pv, s1), s2)

    return p(p, k), codegen


@intrinsic
def _pow2(typingctx, k):
    """2**k for an integral-valued float k in the normal exponent range (single bit-cast)."""
    if _layout(k) is None:
        return None

    def codegen(context, builder, sig, args):
        bits, mbits, bias = _layout(sig.args[0])
        fty = context.get_value_type(sig.args[0])
        ity = ir.IntType(bits)
        n = builder.fptosi(args[0], ity)
        return _pow2_ir(builder, n, ity, fty, mbits, bias)

    return k(k), codegen


@intrinsic
def _log_split(typingctx, x):
    """Split a positive normal finite x into (m, e), x = m * 2**e, m in [sqrt(.5), sqrt(2)).

    Pure integer manipulation of the bit pattern (float -> int bitcast and back):
    adding (bits(1.0) - bits(sqrt(.5))) carries into the exponent exactly when
    the mantissa is >= sqrt(2)/2, so no compare/select is needed. e is returned
    as an integral-valued float of the same type. Other inputs give garbage
    (no UB); callers special-case them.
    """
    if _layout(x) is None:
        return None
    if x == types.float32:
        one_bits, sqrth_bits = 0x3F800000, 0x3F3504F3
    else:
        one_bits, sqrth_bits = 0x3FF0000000000000, 0x3FE6A09E667F3BCD

    def codegen(context, builder, sig, args):
        bits, mbits, bias = _layout(sig.args[0])
        fty = context.get_value_type(sig.args[0])
        ity = ir.IntType(bits)
        ix = builder.bitcast(args[0], ity)
        ix = builder.add(ix, ir.Constant(ity, one_bits - sqrth_bits))
        e = builder.sub(builder.ashr(ix, ir.Constant(ity, mbits)), ir.Constant(ity, bias))
        mi = builder.add(
            builder.and_(ix, ir.Constant(ity, (1 << mbits) - 1)), ir.Constant(ity, sqrth_bits)
        )
        m = builder.bitcast(mi, fty)
        ef = builder.sitofp(e, fty)
        return context.make_tuple(builder, sig.return_type, [m, ef])

    return types.UniTuple(x, 2)(x), codegen


@intrinsic
def _quadrant_sign(typingctx, q, v):
    """Flip the sign of v if bit 1 of the integral-valued float q is set (sin/cos quadrant)."""
    if _layout(v) is None or q != v:
        return None

    def codegen(context, builder, sig, args):
        bits = _layout(sig.args[0])[0]
        ity = ir.IntType(bits)
        n = builder.fptosi(args[0], ity)
        sign = builder.shl(builder.and_(n, ir.Constant(ity, 2)), ir.Constant(ity, bits - 2))
        vi = builder.bitcast(args[1], ity)
        fty = context.get_value_type(sig.args[1])
        return builder.bitcast(builder.xor(vi, sign), fty)

    return v(q, v), codegen


# --------------------------------------------------------------------------
# Constants. Module-level NumPy scalars are frozen by Numba as typed constants,
# so every float32 constant below stays float32 inside the float32 code.
# --------------------------------------------------------------------------

_F32_INF = _F32(np.inf)
_F32_NAN = _F32(np.nan)
_F32_0 = _F32(0.0)
_F32_HALF = _F32(0.5)
_F32_1 = _F32(1.0)
_F32_2 = _F32(2.0)
_F64_INF = _F64(np.inf)
_F64_NAN = _F64(np.nan)
_F64_0 = _F64(0.0)
_F64_HALF = _F64(0.5)
_F64_1 = _F64(1.0)
_F64_2 = _F64(2.0)

# exp / expm1, float32 (Cephes expf): Cody-Waite ln2 = C1 + C2, C1 has 9 bits
_E32_LOG2E = _F32(1.44269504088896341)
_E32_C1 = _F32(0.693359375)
_E32_C2 = _F32(-2.12194440e-4)
_E32_HI = _F32(89.0)  # exp(89) overflows; k = 128 still fits _scale2
_E32_LO = _F32(-104.0)  # exp(-104) rounds to 0 in float32
_E32_P0 = _F32(1.9875691500e-4)
_E32_P1 = _F32(1.3981999507e-3)
_E32_P2 = _F32(8.3334519073e-3)
_E32_P3 = _F32(4.1665795894e-2)
_E32_P4 = _F32(1.6666665459e-1)
_E32_P5 = _F32(5.0000001201e-1)
_EM1_32_LO = _F32(-30.0)  # expm1(x) == -1 in float32 below about -17.3

# exp / expm1, float64: Cody-Waite ln2 = C1 + C2 (C1 has 16 bits, Cephes), then
# expm1(r) = r + r^2/2 + r^3 * (Taylor tail to r^13)
_E64_LOG2E = _F64(1.4426950408889634073599)
_E64_C1 = _F64(6.93145751953125e-1)
_E64_C2 = _F64(1.42860682030941723212e-6)
_E64_HI = _F64(710.0)
_E64_LO = _F64(-746.0)
_EM1_64_LO = _F64(-60.0)
# Taylor terms 1/3! .. 1/13! (truncation < 0.1 ulp on |r| <= 0.35)
_E64_T3 = _F64(1.0 / 6.0)
_E64_T4 = _F64(1.0 / 24.0)
_E64_T5 = _F64(1.0 / 120.0)
_E64_T6 = _F64(1.0 / 720.0)
_E64_T7 = _F64(1.0 / 5040.0)
_E64_T8 = _F64(1.0 / 40320.0)
_E64_T9 = _F64(1.0 / 362880.0)
_E64_T10 = _F64(1.0 / 3628800.0)
_E64_T11 = _F64(1.0 / 39916800.0)
_E64_T12 = _F64(1.0 / 479001600.0)
_E64_T13 = _F64(1.0 / 6227020800.0)

# log / log1p, float32 (Cephes logf polynomial on f = m - 1, no division)
_L32_TINY = _F32(1.17549435e-38)  # FLT_MIN; below: rescale by 2**25
_L32_TWO25 = _F32(33554432.0)
_L32_25 = _F32(25.0)
_L32_C1 = _F32(0.693359375)
_L32_C2 = _F32(-2.12194440e-4)
_L32_P0 = _F32(7.0376836292e-2)
_L32_P1 = _F32(-1.1514610310e-1)
_L32_P2 = _F32(1.1676998740e-1)
_L32_P3 = _F32(-1.2420140846e-1)
_L32_P4 = _F32(1.4249322787e-1)
_L32_P5 = _F32(-1.6668057665e-1)
_L32_P6 = _F32(2.0000714765e-1)
_L32_P7 = _F32(-2.4999993993e-1)
_L32_P8 = _F32(3.3333331174e-1)

# log / log1p, float64 (fdlibm/musl log: s = f/(2+f), minimax in s^2)
_L64_TINY = _F64(2.2250738585072014e-308)  # DBL_MIN; below: rescale by 2**54
_L64_TWO54 = _F64(18014398509481984.0)
_L64_54 = _F64(54.0)
_L64_LN2_HI = _F64(6.93147180369123816490e-01)  # 0x3fe62e42fee00000
_L64_LN2_LO = _F64(1.90821492927058770002e-10)  # 0x3dea39ef35793c76
_L64_LG1 = _F64(6.666666666666735130e-01)
_L64_LG2 = _F64(3.999999999940941908e-01)
_L64_LG3 = _F64(2.857142874366239149e-01)
_L64_LG4 = _F64(2.222219843214978396e-01)
_L64_LG5 = _F64(1.818357216161805012e-01)
_L64_LG6 = _F64(1.531383769920937332e-01)
_L64_LG7 = _F64(1.479819860511658591e-01)

# sin / cos, float32 (Cephes sinf/cosf polynomials on [-pi/4, pi/4]),
# pi/2 split into four parts for Cody-Waite: the first three have <= 11 significant
# bits, so q * PIO2_i is exact for |q| < 2**13, i.e. |x| <= 8192.
_S32_2OPI = _F32(0.636619772367581343)
_S32_PIO2_1 = _F32(1.5703125)
_S32_PIO2_2 = _F32(4.837512969970703125e-4)
_S32_PIO2_3 = _F32(7.549533620476723e-08)
_S32_PIO2_4 = _F32(2.5633440682570896e-12)
_S32_S0 = _F32(-1.9515295891e-4)
_S32_S1 = _F32(8.3321608736e-3)
_S32_S2 = _F32(-1.6666654611e-1)
_S32_C0 = _F32(2.443315711809948e-5)
_S32_C1 = _F32(-1.388731625493765e-3)
_S32_C2 = _F32(4.166664568298827e-2)

# sin / cos, float64 (Cephes sin/cos polynomials on [-pi/4, pi/4])
_S64_2OPI = _F64(0.63661977236758134308)
_S64_PIO2_1 = _F64(1.57079625129699707031e00)  # 2 * Cephes DP1
_S64_PIO2_2 = _F64(7.54978941586159635335e-08)  # 2 * Cephes DP2
_S64_PIO2_3 = _F64(5.39030285815811905290e-15)  # 2 * Cephes DP3
_S64_S0 = _F64(1.58962301576546568060e-10)
_S64_S1 = _F64(-2.50507477628578072866e-8)
_S64_S2 = _F64(2.75573136213857245213e-6)
_S64_S3 = _F64(-1.98412698295895385996e-4)
_S64_S4 = _F64(8.33333333332211858878e-3)
_S64_S5 = _F64(-1.66666666666666307295e-1)
_S64_C0 = _F64(-1.13585365213876817300e-11)
_S64_C1 = _F64(2.08757008419747316778e-9)
_S64_C2 = _F64(-2.75573141792967388112e-7)
_S64_C3 = _F64(2.48015872888517045348e-5)
_S64_C4 = _F64(-1.38888888888730564116e-3)
_S64_C5 = _F64(4.16666666666665929218e-2)


# --------------------------------------------------------------------------
# exp / expm1
# --------------------------------------------------------------------------


@njit(**_JIT)
def _exp_reduce_f32(x, lo):
    """Clamp x to [lo, 89] (nan -> 89), return (k, r) with x = k*ln2 + r, |r| <= ~ln2/2."""
    xc = x if x < _E32_HI else _E32_HI
    xc = xc if xc > lo else lo
    k = _rint(xc * _E32_LOG2E)
    r = xc - k * _E32_C1
    r = r - k * _E32_C2
    return k, r


@njit(**_JIT)
def _expm1_poly_f32(r):
    """exp(r) - 1 on |r| <= ~0.35 (Cephes expf polynomial), exact leading term r."""
    z = r * r
    p = ((((_E32_P0 * r + _E32_P1) * r + _E32_P2) * r + _E32_P3) * r + _E32_P4) * r + _E32_P5
    return p * z + r


@njit(**_JIT)
def _exp_f32(x):
    k, r = _exp_reduce_f32(x, _E32_LO)
    y = _scale2(_expm1_poly_f32(r) + _F32_1, k)
    return y if x == x else x


@njit(**_JIT)
def _expm1_f32(x):
    k, r = _exp_reduce_f32(x, _EM1_32_LO)
    p = _expm1_poly_f32(r)
    # expm1(x) = 2**k * p + (2**k - 1); for k > 64 use 2**(k-1) and double at the end
    # so that k = 128 (x in (88.38, 89]) does not need an unrepresentable 2**128.
    big = k > _F32(64.0)
    kk = k - _F32_1 if big else k
    u = _pow2(kk)
    y = u * p + (u - _F32_1)
    y = y * _F32_2 if big else y
    y = y if x != _F32_0 else x  # expm1(-0) = -0
    return y if x == x else x


@njit(**_JIT)
def _exp_reduce_f64(x, lo):
    xc = x if x < _E64_HI else _E64_HI
    xc = xc if xc > lo else lo
    k = _rint(xc * _E64_LOG2E)
    r = xc - k * _E64_C1
    r = r - k * _E64_C2
    return k, r


@njit(**_JIT)
def _expm1_poly_f64(r):
    """exp(r) - 1 on |r| <= ~0.35: r + r^2/2 + r^3 * Taylor tail (~0.6 ulp, no division)."""
    z = r * r
    t = _E64_T13 * r + _E64_T12
    t = t * r + _E64_T11
    t = t * r + _E64_T10
    t = t * r + _E64_T9
    t = t * r + _E64_T8
    t = t * r + _E64_T7
    t = t * r + _E64_T6
    t = t * r + _E64_T5
    t = t * r + _E64_T4
    t = t * r + _E64_T3
    return r + (_F64_HALF * z + z * r * t)


@njit(**_JIT)
def _exp_f64(x):
    k, r = _exp_reduce_f64(x, _E64_LO)
    y = _scale2(_expm1_poly_f64(r) + _F64_1, k)
    return y if x == x else x


@njit(**_JIT)
def _expm1_f64(x):
    k, r = _exp_reduce_f64(x, _EM1_64_LO)
    p = _expm1_poly_f64(r)
    big = k > _F64(512.0)
    kk = k - _F64_1 if big else k
    u = _pow2(kk)
    y = u * p + (u - _F64_1)
    y = y * _F64_2 if big else y
    y = y if x != _F64_0 else x
    return y if x == x else x


# --------------------------------------------------------------------------
# log / log1p
# --------------------------------------------------------------------------


@njit(**_JIT)
def _log_kernel_f32(m, e, c):
    """log(m * 2**e) + c for m in [sqrt(.5), sqrt(2)); c is a small correction term."""
    f = m - _F32_1
    z = f * f
    y = (
        (
            (((((_L32_P0 * f + _L32_P1) * f + _L32_P2) * f + _L32_P3) * f + _L32_P4) * f + _L32_P5)
            * f
            + _L32_P6
        )
        * f
        + _L32_P7
    ) * f + _L32_P8
    y = y * f * z
    y = y + (e * _L32_C2 + c)
    y = y - _F32_HALF * z
    return (f + y) + e * _L32_C1


@njit(**_JIT)
def _log_f32(x):
    tiny = x < _L32_TINY
    xs = x * _L32_TWO25 if tiny else x
    m, e = _log_split(xs)
    e = e - _L32_25 if tiny else e
    y = _log_kernel_f32(m, e, _F32_0)
    y = y if x < _F32_INF else x  # +inf -> inf (nan handled below)
    return y if x > _F32_0 else (-_F32_INF if x == _F32_0 else _F32_NAN)


@njit(**_JIT)
def _log1p_f32(x):
    u = x + _F32_1
    m, e = _log_split(u)
    # u = 1 + x rounded; (1 + x) / u = 1 + c/u exactly up to O(c^2)
    c = (_F32_1 - (u - x)) if e >= _F32_2 else (x - (u - _F32_1))
    c = _div(c, u)
    y = _log_kernel_f32(m, e, c)
    y = y if x < _F32_INF else x
    y = y if x != _F32_0 else x  # log1p(-0) = -0
    return y if u > _F32_0 else (-_F32_INF if u == _F32_0 else _F32_NAN)


@njit(**_JIT)
def _log_kernel_f64(m, e, c):
    f = m - _F64_1
    hfsq = _F64_HALF * f * f
    s = _div(f, _F64_2 + f)
    z = s * s
    w = z * z
    t1 = w * (_L64_LG2 + w * (_L64_LG4 + w * _L64_LG6))
    t2 = z * (_L64_LG1 + w * (_L64_LG3 + w * (_L64_LG5 + w * _L64_LG7)))
    r = t2 + t1
    return s * (hfsq + r) + (e * _L64_LN2_LO + c) - hfsq + f + e * _L64_LN2_HI


@njit(**_JIT)
def _log_f64(x):
    tiny = x < _L64_TINY
    xs = x * _L64_TWO54 if tiny else x
    m, e = _log_split(xs)
    e = e - _L64_54 if tiny else e
    y = _log_kernel_f64(m, e, _F64_0)
    y = y if x < _F64_INF else x
    return y if x > _F64_0 else (-_F64_INF if x == _F64_0 else _F64_NAN)


@njit(**_JIT)
def _log1p_f64(x):
    u = x + _F64_1
    m, e = _log_split(u)
    c = (_F64_1 - (u - x)) if e >= _F64_2 else (x - (u - _F64_1))
    c = _div(c, u)
    y = _log_kernel_f64(m, e, c)
    y = y if x < _F64_INF else x
    y = y if x != _F64_0 else x
    return y if u > _F64_0 else (-_F64_INF if u == _F64_0 else _F64_NAN)


# --------------------------------------------------------------------------
# tanh / sigmoid / softplus (built on the above)
# --------------------------------------------------------------------------


@njit(**_JIT)
def _tanh_f32(x):
    # tanh|x| = -t / (2 + t) with t = expm1(-2|x|) in [-1, 0]: no cancellation
    # anywhere, tiny |x| gives exactly x, large |x| gives exactly 1. expm1 is
    # inlined here because its argument is <= 0 (no overflow branch needed).
    a = _F32(-2.0) * abs(x)
    a = a if a > _EM1_32_LO else _EM1_32_LO  # nan -> LO, fixed below
    k = _rint(a * _E32_LOG2E)
    r = a - k * _E32_C1
    r = r - k * _E32_C2
    u = _pow2(k)
    t = u * _expm1_poly_f32(r) + (u - _F32_1)
    y = _copysign(_div(-t, _F32_2 + t), x)
    return y if x == x else x


@njit(**_JIT)
def _tanh_f64(x):
    a = _F64(-2.0) * abs(x)
    a = a if a > _EM1_64_LO else _EM1_64_LO
    k = _rint(a * _E64_LOG2E)
    r = a - k * _E64_C1
    r = r - k * _E64_C2
    u = _pow2(k)
    t = u * _expm1_poly_f64(r) + (u - _F64_1)
    y = _copysign(_div(-t, _F64_2 + t), x)
    return y if x == x else x


@njit(**_JIT)
def _sigmoid_f32(x):
    e = _exp_f32(-abs(x))  # in (0, 1]: never overflows
    num = _F32_1 if x >= _F32_0 else e
    y = _div(num, _F32_1 + e)
    return y if x == x else x


@njit(**_JIT)
def _sigmoid_f64(x):
    e = _exp_f64(-abs(x))
    num = _F64_1 if x >= _F64_0 else e
    y = _div(num, _F64_1 + e)
    return y if x == x else x


@njit(**_JIT)
def _softplus_f32(x):
    pos = x if x > _F32_0 else _F32_0
    return _log1p_f32(_exp_f32(-abs(x))) + pos


@njit(**_JIT)
def _softplus_f64(x):
    pos = x if x > _F64_0 else _F64_0
    return _log1p_f64(_exp_f64(-abs(x))) + pos


# --------------------------------------------------------------------------
# sin / cos
# --------------------------------------------------------------------------


@njit(**_JIT)
def _sincos_reduce_f32(x):
    q = _rint(x * _S32_2OPI)
    r = x - q * _S32_PIO2_1
    r = r - q * _S32_PIO2_2
    r = r - q * _S32_PIO2_3
    r = r - q * _S32_PIO2_4
    z = r * r
    s = ((_S32_S0 * z + _S32_S1) * z + _S32_S2) * z * r + r
    c = ((_S32_C0 * z + _S32_C1) * z + _S32_C2) * z * z - _F32_HALF * z + _F32_1
    return q, s, c


@njit(**_JIT)
def _sin_f32(x):
    xf = x if abs(x) < _F32_INF else _F32_0  # keep the int conversion defined
    q, s, c = _sincos_reduce_f32(xf)
    q = q - _F32(4.0) * _rint(q * _F32(0.25))  # quadrant mod 4 in [-2, 2], exact
    odd = abs(q) == _F32_1  # q odd -> cos polynomial
    y = _quadrant_sign(q, c if odd else s)
    y = y if x != _F32_0 else x  # sin(-0) = -0
    return y if abs(x) < _F32_INF else x - x


@njit(**_JIT)
def _cos_f32(x):
    xf = x if abs(x) < _F32_INF else _F32_0
    q, s, c = _sincos_reduce_f32(xf)
    q = q - _F32(4.0) * _rint(q * _F32(0.25))
    odd = abs(q) == _F32_1
    # cos(r + q*pi/2) = sin(r + (q+1)*pi/2)
    y = _quadrant_sign(q + _F32_1, s if odd else c)
    return y if abs(x) < _F32_INF else x - x


@njit(**_JIT)
def _sincos_reduce_f64(x):
    q = _rint(x * _S64_2OPI)
    r = x - q * _S64_PIO2_1
    r = r - q * _S64_PIO2_2
    r = r - q * _S64_PIO2_3
    z = r * r
    s = (
        ((((_S64_S0 * z + _S64_S1) * z + _S64_S2) * z + _S64_S3) * z + _S64_S4) * z + _S64_S5
    ) * z * r + r
    c = (
        (((((_S64_C0 * z + _S64_C1) * z + _S64_C2) * z + _S64_C3) * z + _S64_C4) * z + _S64_C5)
        * z
        * z
        - _F64_HALF * z
        + _F64_1
    )
    return q, s, c


@njit(**_JIT)
def _sin_f64(x):
    xf = x if abs(x) < _F64_INF else _F64_0
    q, s, c = _sincos_reduce_f64(xf)
    q = q - _F64(4.0) * _rint(q * _F64(0.25))
    odd = abs(q) == _F64_1
    y = _quadrant_sign(q, c if odd else s)
    y = y if x != _F64_0 else x
    return y if abs(x) < _F64_INF else x - x


@njit(**_JIT)
def _cos_f64(x):
    xf = x if abs(x) < _F64_INF else _F64_0
    q, s, c = _sincos_reduce_f64(xf)
    q = q - _F64(4.0) * _rint(q * _F64(0.25))
    odd = abs(q) == _F64_1
    y = _quadrant_sign(q + _F64_1, s if odd else c)
    return y if abs(x) < _F64_INF else x - x


# --------------------------------------------------------------------------
# erf: the algorithm of runtime.cpu.erf (eager's), per element
# --------------------------------------------------------------------------
# Every element computes what each region needs and one result is selected, so the loop
# has no branches: LLVM vectorizes it.  No FMA contraction: each step rounds as the NumPy
# version's does, so the results are the same bits.  float64 gathers its erfc
# coefficients by interval; float32 has no gathers (8 float32 lanes per vector).

_ERF_Q = _erf_tables.Q
_ERF_C = _erf_tables.C
_ERF_MID = _erf_tables.MID
_ERF_NQ = len(_ERF_Q)
_ERF_NC = _ERF_C.shape[0]
_ERF_KMAX = float(_ERF_C.shape[1] - 1)
_ERF_LO, _ERF_SCALE, _ERF_HI = _erf_tables.LO, 1.0 / _erf_tables.WIDTH, _erf_tables.HI
_JIT_EXACT = dict(fastmath=False, error_model="numpy", cache=False, inline="never",
                  forceinline=True)  # fastmath given: else inherited from the caller


@njit(**_JIT_EXACT)
def _erf_f64(x):
    ax = abs(x)
    y = x * 8.0                      # |x| < 1: x + x*Q(x*x), on 8x (subnormals)
    u = y * y
    u *= 1.0 / 64.0
    q = _ERF_Q[_ERF_NQ - 1]
    for j in range(_ERF_NQ - 2, -1, -1):
        q = q * u
        q = q + _ERF_Q[j]
    q = q * y
    q = q + y
    q = q * 0.125
    kk = (ax - _ERF_LO) * _ERF_SCALE  # 1 <= |x| < 6: 1 - erfc(|x|), sign of x
    kk = kk if kk > 0.0 else 0.0      # (nan and the other regions: any valid index)
    kk = kk if kk < _ERF_KMAX else _ERF_KMAX
    k = int(kk)
    t = ax - _ERF_MID[k]
    r = _ERF_C[_ERF_NC - 1, k]
    for j in range(_ERF_NC - 2, -1, -1):
        r = r * t
        r = r + _ERF_C[j, k]
    r = 1.0 - r
    m = _copysign(r, x)
    s = np.sign(x)                   # |x| >= 6, inf: +-1; nan: nan
    return q if ax < _ERF_LO else (m if ax < _ERF_HI else s)


# float32: runtime.cpu.erf.erf32's algorithm in float32 arithmetic, one operation per
# step as its NumPy form (runtime.cpu.erf._erf32_block) does them.  The two regions'
# polynomials have one shape, so the loop evaluates one of them per element, with each
# coefficient selected by region (a blend: no table, no gather), and the 2**f polynomial
# after it; polynomials of degree 6 go by pairs (Estrin), which shortens the chain of
# dependent operations: a throughput-bound loop instead of a latency-bound one.
_E32T, _E32U, _E32AMAX, _E32MAGIC = (_erf_tables.T32, _erf_tables.U32, _erf_tables.A32_MAX,
                                     _erf_tables.MAGIC32)
_EQ0, _EQ1, _EQ2, _EQ3, _EQ4, _EQ5, _EQ6 = (_F32(c) for c in _erf_tables.Q32)
_EL0, _EL1, _EL2, _EL3, _EL4, _EL5, _EL6 = (_F32(c) for c in _erf_tables.L32)
_EE0, _EE1, _EE2, _EE3, _EE4, _EE5 = (_F32(c) for c in _erf_tables.E32)


@intrinsic
def _pow2_magic(typingctx, t):
    """2**k from ``t = k + MAGIC32`` (float32; k + 127 in t's low mantissa bits): t's bits
    shifted left by 23 (one integer shift)."""
    if t != types.float32:
        return None

    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        bits = builder.shl(builder.bitcast(args[0], i32), ir.Constant(i32, 23))
        return builder.bitcast(bits, ir.FloatType())

    return t(t), codegen


@njit(**_JIT_EXACT)
def _erf_f32(x):
    a = abs(x)
    big = a >= _E32T                  # |x| >= T: copysign(1 - C * 2**L(t - T), x)
    t = a if a < _E32AMAX else _E32AMAX
    v = (t - _E32T) if big else (x * x - _E32U)   # |x| < T: x + x*Q(x*x - U)
    c0 = _EL0 if big else _EQ0
    c1 = _EL1 if big else _EQ1
    c2 = _EL2 if big else _EQ2
    c3 = _EL3 if big else _EQ3
    c4 = _EL4 if big else _EQ4
    c5 = _EL5 if big else _EQ5
    c6 = _EL6 if big else _EQ6
    w1 = v * c2
    w1 = w1 + c1
    w3 = v * c4
    w3 = w3 + c3
    p = v * c6
    p = p + c5
    v2 = v * v
    p = p * v2
    p = p + w3
    p = p * v2
    p = p + w1
    p = p * v
    p = p + c0                        # Q(v) or r = L(v)
    q = p * x
    q = q + x
    tt = p + _E32MAGIC                # k + MAGIC, k: r rounded to an integer (ties: odd)
    k = tt - _E32MAGIC
    f = p - k                         # exact, in [-1/2, 1/2]
    e = f * _EE5
    e = e + _EE4
    e = e * f
    e = e + _EE3
    e = e * f
    e = e + _EE2
    e = e * f
    e = e + _EE1
    e = e * f
    e = e + _EE0                      # C * 2**f
    e = e * _pow2_magic(tt)
    e = _F32_1 - e
    m = _copysign(e, x)
    return m if big else q


# --------------------------------------------------------------------------
# Public, type-generic entry points
# --------------------------------------------------------------------------


def _make_public(name, impl32, impl64, doc):
    """Build an njit function `name(x)` dispatching on the (compile-time) type of x."""

    def _generic(x):  # pragma: no cover - only its Numba overload is ever used
        raise NotImplementedError

    def _ov(x):
        if x == types.float32:
            return lambda x: impl32(x)
        if x == types.float64:
            return lambda x: impl64(x)
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x: impl64(np.float64(x))
        return None

    _generic.__name__ = _ov.__name__ = f"_{name}_generic"
    overload(_generic, jit_options=dict(_JIT), inline="never")(_ov)

    def public(x):
        return _generic(x)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = doc
    public.__module__ = __name__
    return njit(**_JIT)(public)


exp = _make_public("exp", _exp_f32, _exp_f64, "exp(x), same float type as x (<= 1 ulp).")
expm1 = _make_public("expm1", _expm1_f32, _expm1_f64, "exp(x) - 1, accurate near 0 (<= 2 ulp).")
log = _make_public(
    "log", _log_f32, _log_f64, "Natural log; log(0) = -inf, log(x < 0) = nan (<= 1 ulp)."
)
log1p = _make_public(
    "log1p", _log1p_f32, _log1p_f64, "log(1 + x), accurate near 0; log1p(-1) = -inf (<= 1 ulp)."
)
tanh = _make_public("tanh", _tanh_f32, _tanh_f64, "Hyperbolic tangent (<= 2 ulp).")
sigmoid = _make_public(
    "sigmoid", _sigmoid_f32, _sigmoid_f64, "1 / (1 + exp(-x)) without overflow or nan (<= 2 ulp)."
)
softplus = _make_public(
    "softplus",
    _softplus_f32,
    _softplus_f64,
    "log(1 + exp(x)) computed stably as log1p(exp(-|x|)) + max(x, 0) (<= 2 ulp).",
)
sin = _make_public("sin", _sin_f32, _sin_f64, "Sine; accurate for |x| <= 8192 (f32) / 1e6 (f64).")
cos = _make_public("cos", _cos_f32, _cos_f64, "Cosine; accurate for |x| <= 8192 (f32) / 1e6 (f64).")
erf = _make_public("erf", _erf_f32, _erf_f64,
                   "Error function, eager's algorithms (runtime.cpu.erf): the same bits "
                   "(float32: <= 1 ulp of the correctly rounded erf).")
