"""The product step of a convolution as one op: ``weight`` seen as an ``(out_channels,
in_channels * prod(kernel))`` matrix times im2col's columns, shaped ``(N, out_channels,
*out_size)``, plus the bias per channel (:func:`eager.nn.fn.conv._conv` dispatches it for
ungrouped float32/float64 CPU convolutions; im2col stays its own op).

Forward and backward run the composite's ops in the composite's order (reshape of the
weight, matmul, reshape, reshape of the bias, add; and their backward formulas with the
engine's ``sum_to``s): the same bits from one grad node instead of five.
"""

from __future__ import annotations

from .base import Op
from .elementwise import Add
from .linalg import Matmul
from .shape import Reshape


class ConvProduct(Op):
    """``reshape(weight, (O, C*K)) @ cols`` as ``(N, O, *out_size)``, ``+ bias`` per
    channel (``bias`` None: none); ``cols`` is im2col's ``(N, C*K, L)``."""
    saves = (0, 1)

    def forward(cols, weight, bias, out_size):
        out_c = weight.shape[0]
        out = Matmul.forward(Reshape.forward(weight, (out_c, cols.shape[1])), cols)
        out = Reshape.forward(out, (cols.shape[0], out_c) + tuple(out_size))
        if bias is not None:
            out = Add.forward(out, Reshape.forward(bias, (out_c,) + (1,) * len(out_size)))
        return out

    def backward(F, g, saved, node):
        cols, w = saved
        n, ck, length = node.shapes[0]
        out_c = node.shapes[1][0]
        nsp = len(node.params["out_size"])
        need_c, need_w = node.needs[0], node.needs[1]
        need_b = len(node.needs) > 2 and node.needs[2]
        gc = gw = gb = None
        if need_b:   # the add's gradient summed to the bias' (O, 1, ...) shape, reshaped
            gb = F.reshape(F.sum_to(g, shape=(out_c,) + (1,) * nsp), shape=(out_c,))
        g3 = F.reshape(g, shape=(n, out_c, length))
        if need_c:
            w2 = F.reshape(w, shape=(out_c, ck))
            gc = F.matmul(F.permute(w2, dims=(1, 0)), g3)
        if need_w:   # a batch of products summed to the weight matrix, reshaped back
            gw = F.matmul(g3, F.permute(cols, dims=(0, 2, 1)))
            gw = F.reshape(F.sum_to(gw, shape=(out_c, ck)), shape=node.shapes[1])
        return gc, gw, gb
