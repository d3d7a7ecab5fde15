"""Scaled dot-product attention as one op (``F.scaled_dot_product_attention`` dispatches it
for float32/float64 CPU tensors with one batch shape, without a mask argument, dropout or
grouped heads; other cases keep the composite of its ops).

The forward runs the composite's ops' forwards in its order: ``q * scale``, ``@ k^T``, the
causal ``where`` (``mask`` given), ``softmax`` over the keys, ``@ v``; so the same bits.
The backward recomputes the scores from the saved ``q`` and ``k`` and runs the backward
formulas of those ops in the order the engine ran them on the composite's nodes, each
receiving one gradient: the same bits again, from one grad node instead of six.
"""

from __future__ import annotations

from .base import A, Op
from .elementwise import Mul, Where
from .linalg import Matmul
from .reduce import Softmax
from .shape import Permute

_NEG_INF = float("-inf")


def _swap(nd: int) -> tuple:
    return tuple(range(nd - 2)) + (nd - 1, nd - 2)


class ScaledDotProductAttention(Op):
    """``softmax(q * scale @ k^T [masked]) @ v`` over the last two dimensions; ``mask`` is
    None or a bool ``(L, S)`` array (True: the key is seen; is_causal's lower triangle)."""
    saves = (0, 1, 2, 3)

    def forward(q, k, v, mask, scale):
        return ScaledDotProductAttention.forward_aux(q, k, v, mask, scale)[0]

    def forward_aux(q, k, v, mask, scale):
        """The forward, and the ``q * scale`` and attention weights it computed (the
        backward's recomputation: the same operations on the same values)."""
        qs = Mul.forward(q, scale)
        scores = Matmul.forward(qs, Permute.forward(k, _swap(k.ndim)))
        if mask is not None:
            scores = Where.forward(mask, scores, _NEG_INF)
        attn = Softmax.forward(scores, scores.ndim - 1)
        return Matmul.forward(attn, v), (qs, attn)

    def backward(F, g, saved, node):
        q, k, v, mask = saved
        scale = node.params["scale"]
        nd = len(node.shapes[0])
        swap = _swap(nd)
        need_q, need_k, need_v = node.needs[:3]
        kt = F.permute(k, dims=swap)
        if F is A and node.aux is not None:
            qs, attn = node.aux
        else:
            qs = F.mul(q, scale)
            scores = F.matmul(qs, kt)
            if mask is not None:
                scores = F.where(mask, scores, _NEG_INF)
            attn = F.softmax(scores, dim=nd - 1)
        gq = gk = gv = None
        # the engine's order on the composite: attn @ v, softmax, where, q*scale @ k^T
        if need_q or need_k:
            ga = F.matmul(g, F.permute(v, dims=swap))
        if need_v:
            gv = F.matmul(F.permute(attn, dims=swap), g)
        if need_q or need_k:
            s = F.sum(F.mul(ga, attn), dim=(nd - 1,), keepdim=True, dtype=None)
            gs = F.mul(attn, F.sub(ga, s))
            if mask is not None:
                gs = F.where(mask, gs, 0.0)
            if need_q:
                gq = F.mul(F.matmul(gs, F.permute(kt, dims=swap)), scale)
            if need_k:
                gk = F.permute(F.matmul(F.permute(qs, dims=swap), gs), dims=swap)
        return gq, gk, gv, None
