"""``erf``: one algorithm, as whole-array NumPy operations (eager's forward) and per
element in Numba kernels (:func:`runtime.cpu.mathlib.erf`, the same operations in the
same order from the tables here, so eager and compiled results are the same bits).

``erf`` of a float32 (or float16) array is computed in float64 and rounded once to the
array's dtype, so it equals ``math.erf`` on each value rounded to that dtype.  Float64
results are within 1 ulp of ``math.erf``.  Both claims, and the kernels' equality with
this function, are tested value by value in ``tests/eager/test_erf.py``.

How, for ``a = |x|`` (``erf`` is odd: the sign is copied back at the end):

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
(``Q``) and 4.6e-18 (``erfc``) of the functions.

Speed: the work is a few dozen whole-array NumPy operations (no Python per element);
boolean-mask indexing is avoided (it is slow on unsorted data): each region's elements
are picked once with ``flatnonzero`` and the polynomial coefficients of the ``erfc``
intervals are gathered per element with ``take``.  Large arrays run in blocks that stay
in cache.
"""

from __future__ import annotations

import numpy as np

__all__ = ["erf"]

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
    """``erf`` of each element of a float array, in the array's dtype."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        raise TypeError(f"erf: expected a floating-point array, got {a.dtype}")
    flat = a.reshape(-1)
    out = np.empty(flat.shape, np.float64)
    for i in range(0, flat.size, _BLOCK):
        _erf_block(flat[i:i + _BLOCK].astype(np.float64), out[i:i + _BLOCK])
    return out.astype(a.dtype, copy=False).reshape(a.shape)


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
