"""Layer normalization as one op (``eager.nn.functional.layer_norm`` dispatches it for
float32 and float64 CPU tensors; other cases keep the composite of reductions and
elementwise ops).

The forward runs the composite's NumPy operations in the composite's order, so its bits
are the composite's: ``mean``, ``x - mean``, ``mean(xc * xc)``, ``rsqrt(var + eps)``,
``xc * rstd``, then ``* weight`` and ``+ bias``.  One op instead of nine: one dispatch and
one grad node, and its backward is PyTorch's closed form

    dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)),  gy = g * weight,
    dweight = sum(g * xhat),  dbias = sum(g)

evaluated in float64 (the statistics recomputed from the saved input) and rounded once
to the argument's dtype, where the composite's chain rule rounded every one of its
steps to float32.
"""

from __future__ import annotations

import numpy as np

from .base import A, Op
from .elementwise import Rsqrt
from .reduce import Mean, reduced_numel

_F64 = np.dtype(np.float64)
_ndarray = np.ndarray
_add_reduce = np.add.reduce


class LayerNorm(Op):
    """``(x - mean) * rsqrt(var + eps) * weight + bias`` over the dimensions ``dim`` (the
    trailing ones); ``weight``/``bias`` are None or broadcast against ``x`` (the
    normalized shape), in ``x``'s dtype."""
    saves = (0, 1)

    def forward(x, weight, bias, dim, eps):
        xc = np.subtract(x, Mean.forward(x, dim, True))
        var = Mean.forward(np.multiply(xc, xc), dim, True)
        out = np.multiply(xc, Rsqrt.forward(np.add(var, eps)), out=xc)
        if weight is not None:
            np.multiply(out, weight, out=out)
        if bias is not None:
            np.add(out, bias, out=out)
        return out

    def backward(F, g, saved, node):
        x, w = saved
        p = node.params
        dims, eps = p["dim"], p["eps"]
        needs = node.needs
        if F is A and type(x) is _ndarray and type(g) is _ndarray and x.size and \
                (w is None or type(w) is _ndarray):
            return _backward_arrays(x, w, g, dims, eps, needs, node.dtypes[0] == _F64)

        # float32 operands meet float64 ones below: promotion converts them exactly
        xc = F.sub(x, F.mean(x, dim=dims, keepdim=True, dtype=_F64))
        var = F.mean(F.mul(xc, xc), dim=dims, keepdim=True, dtype=None)
        rstd = F.rsqrt(F.add(var, eps))
        xhat = F.mul(xc, rstd)
        # g comes in the output's dtype: x's
        gd = g if node.dtypes[0] == _F64 else F.cast(g, dtype=_F64)
        gx = gw = gb = None
        if needs[0]:
            gy = gd if w is None else F.mul(gd, w)
            a = F.mean(gy, dim=dims, keepdim=True, dtype=None)
            b = F.mean(F.mul(gy, xhat), dim=dims, keepdim=True, dtype=None)
            gx = F.mul(F.sub(F.sub(gy, a), F.mul(xhat, b)), rstd)
        if needs[1]:
            gw = F.mul(gd, xhat)      # the engine sums it to weight's shape, then casts
        if needs[2]:
            gb = gd
        return gx, gw, gb


def _backward_arrays(x, w, g, dims, eps, needs, f64):
    """:meth:`LayerNorm.backward` on NumPy arrays (a plain backward), for a non-empty ``x``:
    the same float64 operations in the same order, so the same bits, with the means
    inlined and the intermediates written into arrays already made (float32 operands
    meet float64 ones as there: converted exactly)."""
    n = reduced_numel(x.shape, dims)

    def mean(a):   # Mean.forward(a, dims, True, float64) for n > 0
        s = _add_reduce(a, axis=dims, keepdims=True, dtype=_F64)
        return np.true_divide(s, n, out=s)

    xc = np.subtract(x, mean(x))
    sq = np.multiply(xc, xc)
    rstd = mean(sq)
    np.add(rstd, eps, out=rstd)
    np.reciprocal(np.sqrt(rstd, out=rstd), out=rstd)    # Rsqrt.forward
    xhat = np.multiply(xc, rstd, out=xc)
    gd = g if f64 else g.astype(_F64)                    # Cast.forward: exact
    gx = gw = gb = None
    if needs[0]:
        gy = gd if w is None else np.multiply(gd, w)
        a = mean(gy)
        b = mean(np.multiply(gy, xhat, out=sq))
        gx = np.subtract(gy, a, out=sq)
        np.subtract(gx, np.multiply(xhat, b), out=gx)
        np.multiply(gx, rstd, out=gx)
    if needs[1]:
        gw = np.multiply(gd, xhat)
    if needs[2]:
        gb = gd
    return gx, gw, gb
