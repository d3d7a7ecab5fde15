"""``erf``: two algorithms, each written twice, as whole-array NumPy operations (eager's
forward) and per element in Numba kernels (:func:`runtime.cpu.mathlib.erf`, the same
operations in the same order from the constants here), so eager and compiled results are
the same bits in both dtypes.

**float32** (:func:`erf32`, float32 arithmetic throughout; no branches, no table
lookups, so a kernel's loop vectorizes 8 lanes wide): within 1 ulp of the correctly
rounded ``erf`` for every float32 input (checked over all 2**32 inputs by
``benchmarks/check_erf32.py``: at most 0.97 ulp from the exact value;
``tests/eager/test_erf.py`` checks a dense sample).  Both regions are evaluated for every
element and one is selected, for ``a = |x|``:

* ``a < T32 = 0.96875``: ``erf(x) = x + x * Q(w)``, ``w = x*x - 1/2``, ``Q(w) ~
  erf(x)/x - 1`` of degree 6 (``|x*Q| <= 0.17 |erf|``: its rounding errors shrink in the
  sum).  Centred at ``x*x = 1/2``, ``Q``'s last product ``w * (..)`` stays within 0.17
  in magnitude; uncentred it reaches 0.27 near ``T32``, cancelling against the constant
  term.  A subnormal ``x`` needs no scaling: ``x*Q`` is rounded to the subnormal grid,
  where ``x`` lies, and the sum is exact.
* ``a >= T32`` (and inf): ``erf(x) = copysign(1 - C * 2**r, x)``, ``C = erfc(T32)``
  rounded, ``r = L(min(a, 4) - T32) ~ log2(erfc(a) / C)`` of degree 6 (``r`` is near 0
  where ``erfc`` is largest, so its rounding error is small there); ``k = r + MAGIC32 -
  MAGIC32`` (``r`` rounded to an integer by the addition, which leaves ``k + 127`` in the
  low mantissa bits: shifted into the exponent field they are ``2**k``), ``f = r - k``
  (exact) in [-1/2, 1/2], ``C * 2**f`` a polynomial of degree 5.  ``erfc(a) < 2**-25``
  from ``a = 3.92``: the result rounds to +-1, so ``a`` is clamped at 4.  nan takes the
  first region (nan).

``Q`` and ``L`` are evaluated by pairs, ``c0 + v*((c1 + v*c2) + v2*((c3 + v*c4) + v2*(c5
+ v*c6)))`` with ``v2 = v*v`` (a short chain of dependent operations: the kernels' loop is
bound by throughput, not latency), ``C * 2**f`` by Horner's rule.  The kernel evaluates
one of the two polynomials per element, its coefficients selected by region.

The errors: the polynomials are weighted minimax fits (Lawson's iteration in float64),
coefficients rounded to float32 one at a time from the constant term up (each the best of
its nearest float32 values, the higher ones refitted); fit errors below 0.03 ulp of the
result (``Q`` and ``L``) and 0.18 ulp (``C * 2**f``, relative error times ``erfc``), the
rest is float32 rounding (no FMA: NumPy has none).  ``L``'s error counts as ``erfc(a) *
ln 2`` times its absolute error, so it is centred on the region's start, where ``erfc``
is largest.

**float64** (and float16: computed in float64, rounded once, equal to ``math.erf``
rounded): within 1 ulp of ``math.erf``, for ``a = |x|`` (``erf`` is odd: the sign is
copied back at the end):

* ``a < 1``: ``erf(x) = x + x * Q(x*x)`` with ``Q(u) = erf(sqrt(u))/sqrt(u) - 1``, a
  degree-12 polynomial.  ``|x * Q| <= 0.16 |erf(x)|``, so its rounding errors shrink
  under the final addition.  The addition runs on ``8x`` and is scaled back by 1/8 so
  that subnormal inputs are rounded once, like the C library does.
* ``1 <= a < 6``: ``erf(x) = 1 - erfc(a)``, ``erfc`` from ten degree-13 polynomials in
  ``t = a - m`` on intervals of width 1/2 centred on ``m``; ``erfc < 0.16`` here, so its
  absolute error (< 5e-18) stays far below one ulp of the result.
* ``a >= 6`` (and inf): ``erfc(6) < 2**-54``, so ``erf`` rounds to ``+-1``; nan stays nan.

The coefficients are Chebyshev interpolants (``mpmath.chebyfit`` at 50 digits, degree
12 for ``Q`` on ``u`` in [0, 1], degree 13 for ``erfc(m + t)`` on ``t`` in [-1/4, 1/4]),
rounded to float64; with the rounded coefficients the polynomials are within 1.7e-17
(``Q``) and 4.6e-18 (``erfc``) of the functions.  Both claims, and the kernels' equality
with this module's functions, are tested value by value in ``tests/eager/test_erf.py``.

Speed: the work is whole-array NumPy operations (no Python per element), on blocks that
stay in cache, into preallocated buffers.  float64: boolean-mask indexing is avoided (it
is slow on unsorted data): each region's elements are picked once with ``flatnonzero``
and the polynomial coefficients of the ``erfc`` intervals are gathered per element with
``take``.  float32: 57 ufunc calls per block of 32768 elements, both regions for every
element (no indexing).  :func:`gelu` runs GELU's erf form block by block with the same
operations as the expression ``0.5 * a * (1 + erf(a * (1/sqrt 2)))`` (the same bits).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["erf", "erf32", "gelu"]

# Q(u) = erf(sqrt u)/sqrt u - 1 = sum_j _Q[j] u**j on [0, 1]
_Q = np.array([
    0.1283791670955126, -0.3761263890318375, 0.11283791670954879,
    -0.026866170645076792, 0.0052239776248180145, -0.000854832698083379,
    0.0001205533111164271, -1.4925595266831182e-05, 1.6461000484121368e-06,
    -1.6350312701054695e-07, 1.4659775274047436e-08, -1.1372848856791674e-09,
    5.957176147748911e-11,
])
# erfc(m_k + t) = sum_j _C[j, k] t**j, |t| <= 1/4, m_k = 1.25 + k/2 (k = 0..9).
# row j: the coefficient of t**j, one column per interval
_C = np.array([
    [0.07709987174354177, 0.013328328780817559, 0.0014627165866811502,
     0.00010062192211963724, 4.302779463675123e-06, 1.1372725656977712e-07,
     1.8505741373880612e-09, 1.848504772185588e-11, 1.1310313268761733e-13,
     4.232136621291691e-16],
    [-0.2365211224472908, -0.05277499593015038, -0.007142319022017982,
     -0.0005862772470937923, -2.9189025383581733e-05, -8.814321912317976e-07,
     -1.6143993719507204e-08, -1.7934357034353256e-10, -1.2084074716093265e-12,
     -4.9384851411824895e-15],
    [0.29565140305911153, 0.09235624287775983, 0.016070217799542874,
     0.0016122624295072932, 9.486433249663875e-05, 3.305370717149894e-06,
     6.861197330583845e-08, 8.518819585501894e-10, 6.3441391965136284e-12,
     2.8396288954473957e-14],
    [-0.16753579506683547, -0.09015728471400461, -0.02172455369197196,
     -0.002760388705066609, -0.0001958097119481461, -7.969616062397557e-06,
     -1.890192597995592e-07, -2.6378450136141567e-09, -2.1801684786565257e-11,
     -1.0720628125956702e-13],
    [0.006159404230896534, 0.04810220983301914, 0.01908338363633625,
     0.003258113659793406, 0.00028656933775070937, 1.384123987009681e-05,
     3.7879526983383196e-07, 5.980921403439721e-09, 5.511471704429019e-11,
     2.9875278475970634e-13],
    [0.04718103640600039, -0.006624361468900602, -0.010657679165515582,
     -0.0027558084140728244, -0.00031379722550312924, -1.8370974995629414e-05,
     -5.872461797936775e-07, -1.0572396927692433e-08, -1.0920038803325359e-10,
     -6.549692514839024e-13],
    [-0.02130127301145005, -0.008963045180389002, 0.00290435713041379,
     0.0016573273880252134, 0.0002635285041757942, 1.927272219942407e-05,
     7.309199654212912e-07, 1.5144701789651e-08, 1.7640269613546945e-10,
     1.1756753433806352e-12],
    [-0.0036259827199190244, 0.006058751526573601, 0.000670455955356343,
     -0.0006460409567512276, -0.0001699914133368133, -1.6275302987042403e-05,
     -7.477252231001777e-07, -1.8036301277976957e-08, -2.3860470121491385e-10,
     -1.775537607069319e-12],
    [0.0056976802634647146, -0.0007300475155067315, -0.0009994964272719107,
     8.901228719214331e-05, 8.164763207712718e-05, 1.1128193054255004e-05,
     6.37834656523887e-07, 1.8173468655661378e-08, 2.7540126376724834e-10,
     2.30109051151223e-12],
    [-0.0008776311203165393, -0.0008941843166397162, 0.000369381086164474,
     7.122311801431493e-05, -2.5913900673472375e-05, -6.108869420026458e-06,
     -4.5700581729818335e-07, -1.5675568258151044e-08, -2.748828746176984e-10,
     -2.5945550729449734e-12],
    [-0.0007935637760477615, 0.0004426629932340801, 1.153034958136253e-05,
     -5.5013835286284066e-05, 2.328840480316741e-06, 2.6041152154208356e-06,
     2.7500786094321867e-07, 1.1645597137497432e-08, 2.3888787209141457e-10,
     2.5585495268186886e-12],
    [0.0003238378954372589, 5.505955216685546e-06, -6.51506823581935e-05,
     1.5843740679499495e-05, 2.865557704931699e-06, -7.756125867485207e-07,
     -1.377741503313587e-07, -7.500767558845102e-09, -1.834293290048941e-10,
     -2.2579165888464656e-12],
    [5.3358854084741746e-05, -6.765497805692175e-05, 2.194472164632137e-05,
     1.2681253092432668e-06, -1.9043111846332243e-06, 8.078525577335848e-08,
     5.655309447048697e-08, 4.35232109852286e-09, 1.33374243044882e-10,
     1.9637541497887333e-12],
    [-5.444072496071499e-05, 1.7013932130488557e-05, 1.5164999359449104e-06,
     -2.687131468952656e-06, 5.336244331841553e-07, 6.041585276859998e-08,
     -1.703091943167985e-08, -2.049854216764062e-09, -7.87516422700037e-11,
     -1.3599117789003806e-12],
])
_LO, _WIDTH = 1.0, 0.5         # the erfc intervals: [1 + k/2, 1.5 + k/2), k = 0..9
_HI = _LO + _WIDTH * _C.shape[1]
_MID = _LO + _WIDTH * (np.arange(_C.shape[1]) + 0.5)
# the tables under public names, for the per-element form (runtime.cpu.mathlib.erf)
Q, C, MID, LO, WIDTH, HI = _Q, _C, _MID, _LO, _WIDTH, _HI
_BLOCK = 1 << 16               # elements per block: the float64 temporaries stay in cache


def erf(a: np.ndarray) -> np.ndarray:
    """``erf`` of each element of a float array, in the array's dtype (float32:
    :func:`erf32`)."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        raise TypeError(f"erf: expected a floating-point array, got {a.dtype}")
    if a.dtype == np.float32:
        return erf32(a)
    flat = a.reshape(-1)
    out = np.empty(flat.shape, np.float64)
    for i in range(0, flat.size, _BLOCK):
        _erf_block(flat[i:i + _BLOCK].astype(np.float64), out[i:i + _BLOCK])
    return out.astype(a.dtype, copy=False).reshape(a.shape)


# -- float32 ------------------------------------------------------------------------------

_f32 = np.float32
# region boundary, the centre of the first region's variable, the clamp of the second
T32, U32, A32_MAX = _f32(0.96875), _f32(0.5), _f32(4.0)
# Q(w) ~ erf(x)/x - 1 with w = x*x - U32, |x| < T32: Q32[j] w**j
Q32 = np.array([
    -0.03453126177191734, -0.281072199344635, 0.07941003143787384, -0.018283264711499214,
    0.0034796642139554024, -0.0005657389992848039, 8.04352093837224e-05], _f32)
# L(s) ~ log2(erfc(T32 + s) / C32) on s in [0, A32_MAX - T32]: L32[j] s**j
L32 = np.array([
    -2.136404120278712e-08, -3.7313802242279053, -1.2106544971466064, -0.06171528622508049,
    0.014731448143720627, -0.0027143708430230618, 0.0002746059908531606], _f32)
# C32 * 2**f ~ E32[j] f**j on f in [-1/2, 1/2]; E32[0] = C32 = erfc(T32) rounded
E32 = np.array([
    0.17068085074424744, 0.11830689013004303, 0.04100135713815689, 0.009474314749240875,
    0.00165079184807837, 0.00022571934096049517], _f32)
C32 = E32[0]
# r + MAGIC32 rounds r to an integer k (ties to odd k: MAGIC32 is odd) and holds k + 127,
# 2**k's exponent field, in its low mantissa bits
MAGIC32 = _f32(1.5 * 2 ** 23 + 127)
_BLOCK32 = 1 << 15             # elements per float32 block (~1.2 MB of scratch buffers)


def erf32(a: np.ndarray) -> np.ndarray:
    """``erf`` of a float32 array, float32 arithmetic (within 1 ulp of the correctly
    rounded result); the same bits as :func:`runtime.cpu.mathlib.erf` on float32."""
    a = np.asarray(a)
    if a.dtype != np.float32:
        raise TypeError(f"erf32: expected a float32 array, got {a.dtype}")
    flat = a.reshape(-1)
    out = np.empty_like(flat)
    n = min(flat.size, _BLOCK32)
    bufs = _Bufs32(n)
    with np.errstate(all="ignore"):  # the region not selected may overflow or be nan
        for i in range(0, flat.size, _BLOCK32):
            j = min(i + _BLOCK32, flat.size)
            _erf32_block(flat[i:j], out[i:j], bufs.view(j - i))
    return out.reshape(a.shape)


def gelu(a: np.ndarray, keep: bool = False):
    """GELU's erf form, ``0.5 * a * (1 + erf(a * (1/sqrt 2)))`` with the constants in
    ``a``'s float dtype, evaluated in that order (the same bits as the expression), by
    blocks for float32.  ``keep``: ``(gelu, 1 + erf(a * (1/sqrt 2)))``, the second None
    but for float32."""
    a = np.asarray(a)
    c = 1.0 / math.sqrt(2.0)          # a Python float: weak, takes a's dtype
    if a.dtype != np.float32:
        out = (0.5 * a * (1.0 + erf(a * c))).astype(a.dtype, copy=False)
        return (out, None) if keep else out
    flat = a.reshape(-1)
    out = np.empty_like(flat)
    kept = np.empty_like(flat) if keep else out
    n = min(flat.size, _BLOCK32)
    bufs = _Bufs32(n)
    z, h = np.empty(n, _f32), np.empty(n, _f32)
    c32, half, one = _f32(c), _f32(0.5), _f32(1.0)
    with np.errstate(all="ignore"):
        for i in range(0, flat.size, _BLOCK32):
            j = min(i + _BLOCK32, flat.size)
            x = flat[i:j]
            zz, hh, o = z[:j - i], h[:j - i], kept[i:j]
            np.multiply(x, c32, out=zz)
            _erf32_block(zz, o, bufs.view(j - i))
            np.add(one, o, out=o)
            np.multiply(half, x, out=hh)
            np.multiply(hh, o, out=out[i:j])
    if keep:
        return out.reshape(a.shape), kept.reshape(a.shape)
    return out.reshape(a.shape)


class _Bufs32:
    """Scratch arrays of one block: float32 ``a, v, v2, w1, w3, p, q``, int32 ``k, m``,
    bool ``b``."""

    def __init__(self, n: int):
        self.f = np.empty((7, n), _f32)
        self.i = np.empty((2, n), np.int32)
        self.b = np.empty(n, np.bool_)

    def view(self, n: int):
        return (*self.f[:, :n], *self.i[:, :n], self.b[:n])


_SIGN32 = np.int32(-2 ** 31)


def _poly6(v, c, out, v2, w1, w3) -> None:
    """``out = c[0] + v * (w1 + v2 * (w3 + v2 * w5))`` with ``w1 = c[1] + v * c[2]``,
    ``w3 = c[3] + v * c[4]``, ``w5 = c[5] + v * c[6]``, ``v2 = v * v``: the kernel's
    evaluation order (:func:`runtime.cpu.mathlib._erf_f32`)."""
    np.multiply(v, c[2], out=w1)
    w1 += c[1]
    np.multiply(v, c[4], out=w3)
    w3 += c[3]
    np.multiply(v, c[6], out=out)
    out += c[5]
    np.multiply(v, v, out=v2)
    out *= v2
    out += w3
    out *= v2
    out += w1
    out *= v
    out += c[0]


def _erf32_block(x, out, bufs) -> None:
    """erf of the float32 block ``x`` into ``out``: the float operations of
    :func:`runtime.cpu.mathlib._erf_f32`, each as its own ufunc call.  The kernel evaluates
    one polynomial with the coefficients of each element's region; here each region's
    polynomial is evaluated for every element (the same operations on the same values for
    the elements of that region).  Its ``copysign`` of a positive value and its select are
    done on the bits here (NumPy's ``copysign`` and ``where`` are several times slower than
    the arithmetic), with the same results."""
    a, v, v2, w1, w3, p, q, k, m, b = bufs
    np.abs(x, out=a)
    np.greater_equal(a, T32, out=b)           # the region (nan: False, the first)
    # |x| < T32: x + x * Q(x*x - U32)
    np.multiply(x, x, out=v)
    v -= U32
    _poly6(v, Q32, q, v2, w1, w3)
    q *= x
    q += x
    # |x| >= T32: copysign(1 - C32 * 2**r, x), r = L(min(|x|, 4) - T32)
    np.fmin(a, A32_MAX, out=v)                # a nan is not selected here: any value
    v -= T32                                  # s
    _poly6(v, L32, p, v2, w1, w3)             # r
    np.add(p, MAGIC32, out=a)                 # k + MAGIC32
    np.subtract(a, MAGIC32, out=v)            # k
    p -= v                                    # f = r - k, exact
    np.multiply(p, E32[5], out=v)
    v += E32[4]
    for c in E32[3::-1]:
        v *= p
        v += c                                # C32 * 2**f
    ai = a.view(np.int32)
    ai <<= 23                                 # 2**k: k + 127 in the exponent bits
    v *= a
    np.subtract(_f32(1.0), v, out=v)          # > 0: copysign is an or of x's sign bit
    vi, qi = v.view(np.int32), q.view(np.int32)
    np.bitwise_and(x.view(np.int32), _SIGN32, out=k)
    vi |= k
    np.copyto(m, b, casting="unsafe")         # select: q ^ ((v ^ q) & -b)
    np.negative(m, out=m)
    vi ^= qi
    vi &= m
    np.bitwise_xor(vi, qi, out=out.view(np.int32))


# -- float64 ------------------------------------------------------------------------------

def _erf_block(x: np.ndarray, out: np.ndarray) -> None:
    ax = np.abs(x)
    np.sign(x, out=out)  # +-1 where |x| >= 6 (and +-inf); nan stays nan; overwritten below
    small = np.flatnonzero(ax < _LO)
    if small.size:
        y = x.take(small)
        y *= 8.0                     # scaled: subnormal x is rounded once, at the end
        u = y * y
        u *= 1.0 / 64.0
        q = np.full_like(u, _Q[-1])
        for c in _Q[-2::-1]:
            q *= u
            q += c
        q *= y
        q += y
        q *= 0.125
        out[small] = q
    mid = np.flatnonzero((ax >= _LO) & (ax < _HI))
    if mid.size:
        am = ax.take(mid)
        k = ((am - _LO) * (1.0 / _WIDTH)).astype(np.intp)
        t = am - _MID.take(k)
        r = _C[-1].take(k)
        for row in _C[-2::-1]:
            r *= t
            r += row.take(k)
        r = np.subtract(1.0, r, out=r)
        out[mid] = np.copysign(r, x.take(mid), out=r)
