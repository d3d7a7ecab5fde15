"""Attention with PyTorch's names and semantics: ``scaled_dot_product_attention``,
``multi_head_attention_forward`` and ``MultiheadAttention``.

All composite (matmul, softmax, where, dropout), so a compiler trace records and fuses
them like any other ops.  Masks: for ``scaled_dot_product_attention`` a bool mask is True
where a query may attend; for ``MultiheadAttention`` (``attn_mask``,
``key_padding_mask``) True means *not allowed*, as in PyTorch; float masks are added to
the scores.
"""

from __future__ import annotations

from ..factories import empty
from ..fn.shape import transpose
from . import init
from .fn.attention import multi_head_attention_forward
from .layers import Linear
from .module import Module
from .parameter import Parameter

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]
















# -- multi-head attention -----------------------------------------------------------------











class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name PyTorch gives ``MultiheadAttention.out_proj``."""


class MultiheadAttention(Module):
    """Multi-head attention: ``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
    ``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``, with PyTorch's parameters
    (``in_proj_weight`` ``(3E, E)`` and ``in_proj_bias``, or ``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``;
    ``out_proj``, a Linear; ``bias_k``/``bias_v`` with ``add_bias_kv``).

    Args:
        embed_dim (int): ``E``, the model dimension (split into ``num_heads`` heads).
        num_heads (int): parallel heads; ``embed_dim`` must be divisible by it.
        dropout (float): dropout on the attention weights. Default: 0.
        bias (bool): biases on the input and output projections. Default: ``True``.
        add_bias_kv (bool): learned biases appended to key and value. Default: ``False``.
        add_zero_attn (bool): a zero batch appended to key and value. Default: ``False``.
        kdim, vdim (int, optional): features of key / value. Default: ``embed_dim``.
        batch_first (bool): ``(N, L, E)`` instead of ``(L, N, E)``. Default: ``False``.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(attn_output, attn_weights)``.

    Shape:
        - query: ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``) or unbatched ``(L, E)``.
        - key, value: ``(S, N, kdim)`` / ``(S, N, vdim)``.
        - key_padding_mask: ``(N, S)``, ``True`` (or ``-inf``) where a key is ignored.
        - attn_mask: ``(L, S)`` or ``(N * num_heads, L, S)``.
        - attn_output: ``(L, N, E)``.
        - attn_weights: ``(N, L, S)`` averaged over heads (``(N, num_heads, L, S)`` with
          ``average_attn_weights=False``); ``None`` when ``need_weights=False``.

    Example::

        >>> mha = nn.MultiheadAttention(16, 4, batch_first=True)
        >>> x = eager.randn(2, 5, 16)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        (eager.Size([2, 5, 16]), eager.Size([2, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"dtype": dtype, "device": device}
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        batched = query.ndim == 3
        if self.batch_first and batched:
            if key is value:
                if query is key:
                    query = key = value = transpose(query, 1, 0)
                else:
                    query, key = transpose(query, 1, 0), transpose(key, 1, 0)
                    value = key
            else:
                query, key, value = (transpose(x, 1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = transpose(out, 1, 0)
        return out, weights
