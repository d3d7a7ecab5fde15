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

from .base import Op
from .elementwise import Rsqrt
from .reduce import Mean

_F64 = np.dtype(np.float64)


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
