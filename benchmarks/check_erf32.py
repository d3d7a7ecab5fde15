"""Exhaustive check of the float32 erf (runtime.cpu.erf.erf32 / runtime.cpu.mathlib.erf)
over all 2**32 float32 inputs:

* the kernel form (``mathlib.erf`` in a Numba loop) against the correctly rounded erf:
  the reference is the float64 erf (``mathlib.erf`` on float64, within 1 ulp of
  ``math.erf``) rounded to float32; where that float64 value lies within 2**-50 (relative)
  of a float32 rounding boundary the correctly rounded value is ambiguous, and both
  neighbours are accepted (the count of such inputs is printed);
* eager's NumPy form (``runtime.cpu.erf.erf32``) against the kernel, bit for bit (two
  nans of any payload count as equal).

    .venv/bin/python benchmarks/check_erf32.py            # all 2**32 inputs (minutes)
    .venv/bin/python benchmarks/check_erf32.py --step 97  # every 97th bit pattern

Prints the largest distance in ulps (integer steps between float32 values) and the
largest error in ulps of the exact value (from the float64 reference), per region, and
exits 1 if the distance exceeds ``--bound`` or a NumPy result differs from the kernel's.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunk", type=int, default=1 << 24, help="inputs per chunk")
    ap.add_argument("--step", type=int, default=1, help="check every step-th bit pattern")
    ap.add_argument("--bound", type=int, default=1, help="largest distance allowed (ulp)")
    ap.add_argument("--no-numpy", action="store_true", help="skip eager's NumPy form")
    args = ap.parse_args()

    import numba

    from runtime.cpu import mathlib
    from runtime.cpu.erf import T32, erf32

    @numba.njit(parallel=True, error_model="numpy")
    def both(x, out32, out64):
        for i in numba.prange(x.size):
            out32[i] = mathlib.erf(x[i])
            out64[i] = mathlib.erf(np.float64(x[i]))

    def ordered(v):
        """float32 bits -> integers in the order of the values (-0 and +0: both 0)."""
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    names = ("|x| < T", "|x| >= T")
    dmax, emax = [0, 0], [0.0, 0.0]
    worst, ewhere = [None, None], [None, None]
    hist = np.zeros(3, np.int64)
    ambiguous = numpy_bad = nan_bad = checked = 0
    t0 = time.time()
    total = 1 << 32
    for start in range(0, total, args.chunk * args.step):
        stop = min(start + args.chunk * args.step, total)
        x = np.arange(start, stop, args.step, dtype=np.uint64).astype(np.uint32).view(np.float32)
        k32 = np.empty_like(x)
        r64 = np.empty(x.size, np.float64)
        both(x, k32, r64)
        checked += x.size
        if not args.no_numpy:
            n32 = erf32(x)
            diff = (n32.view(np.int32) != k32.view(np.int32)) & ~(np.isnan(n32) & np.isnan(k32))
            numpy_bad += int(diff.sum())
        isnan = np.isnan(x)
        nan_bad += int((isnan != np.isnan(k32)).sum())
        fin = ~isnan
        x, k32, r64 = x[fin], k32[fin], r64[fin]
        with np.errstate(over="ignore"):
            lo = (r64 * (1 - 2.0 ** -50)).astype(np.float32)
            hi = (r64 * (1 + 2.0 ** -50)).astype(np.float32)
        ambiguous += int((lo != hi).sum())
        ko = ordered(k32)
        d = np.minimum(np.abs(ko - ordered(lo)), np.abs(ko - ordered(hi)))
        ref = r64.astype(np.float32)
        ulp = np.spacing(np.abs(ref)).astype(np.float64)
        # a result below a power of two: the ulp of the binade under it
        pow2 = (ref.view(np.int32) & 0x7FFFFF) == 0
        below = np.abs(k32.astype(np.float64)) < np.abs(r64)
        ulp = np.where(pow2 & below & (np.abs(ref) > np.finfo(np.float32).tiny), ulp / 2, ulp)
        err = np.abs(k32.astype(np.float64) - r64) / ulp
        hist += np.bincount(np.minimum(d, 2), minlength=3)[:3]
        big = np.abs(x) >= T32
        for region, sel in enumerate((~big, big)):
            if not sel.any():
                continue
            i = int(np.argmax(np.where(sel, d, -1)))
            if d[i] > dmax[region] or worst[region] is None:
                dmax[region] = int(d[i])
                worst[region] = (float(x[i]), float(k32[i]), float(r64[i]))
            j = int(np.argmax(np.where(sel, err, -1)))
            if err[j] > emax[region]:
                emax[region] = float(err[j])
                ewhere[region] = float(x[j])
        done = stop / total
        print(f"\r{done:6.1%}  {time.time() - t0:6.0f} s", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(f"float32 erf, {checked} inputs (every {args.step}th bit pattern)"
          if args.step > 1 else f"float32 erf, all {checked} float32 inputs")
    for region in (0, 1):
        w = worst[region]
        print(f"  {names[region]:9s} max distance {dmax[region]} ulp (at x={w[0]!r}: "
              f"{w[1]!r}, erf {w[2]!r});\n{'':12s}max error {emax[region]:.3f} ulp of the "
              f"exact value (at x={ewhere[region]!r})")
    print(f"  distance 0 / 1 / >=2 ulp: {hist[0]} / {hist[1]} / {hist[2]}; "
          f"ambiguous roundings (both neighbours accepted): {ambiguous}")
    print(f"  nan in == nan out: {'yes' if nan_bad == 0 else f'NO ({nan_bad})'}")
    if not args.no_numpy:
        print(f"  NumPy form == kernel, bit for bit: "
              f"{'yes' if numpy_bad == 0 else f'NO ({numpy_bad} inputs differ)'}")
    ok = max(dmax) <= args.bound and numpy_bad == 0 and nan_bad == 0
    print(f"  within {args.bound} ulp: {'yes' if max(dmax) <= args.bound else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
