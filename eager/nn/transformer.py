"""Transformer layers with PyTorch's names, arguments, submodule names and semantics:
``TransformerEncoderLayer``, ``TransformerEncoder``, ``TransformerDecoderLayer``,
``TransformerDecoder`` and ``Transformer``.

PyTorch's inference fast paths (fused kernels, nested tensors for padded batches) are not
reproduced: every call takes PyTorch's training-mode path, whose values equal the fast
path's except at padded positions (which the nested-tensor path leaves zero).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable

from ..factories import full
from ..fn import elementwise as _ew
from ..fn.linalg import triu
from . import functional as F
from . import init
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .fn.attention import _canonical_mask
from .layers import Dropout, Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer"]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    """``(sz, sz)`` float mask: 0 on and below the diagonal, -inf above."""
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_activation_fn(activation: str) -> Callable:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_seq_len(src, batch_first: bool) -> int:
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None) -> bool:
    """``is_causal`` when given; else whether ``mask`` equals the causal float mask (a read
    of the mask's data)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool(_ew.eq(mask, causal).all())
        else:
            make_causal = False
    return make_causal


class TransformerEncoderLayer(Module):
    """One Transformer encoder layer: self-attention and a feed-forward block.

    The input goes through multi-head self-attention (``self_attn``) and then through the
    feed-forward block ``linear2(dropout(activation(linear1(x))))``; each block has dropout,
    a residual connection and a layer norm (``norm1``, ``norm2``), applied after the residual
    sum by default or before the block with ``norm_first=True``. It is the layer of
    "Attention Is All You Need" (Vaswani et al., 2017). ``forward(src, src_mask=None,
    src_key_padding_mask=None, is_causal=False)``.

    Masks follow :class:`MultiheadAttention`: a boolean mask is ``True`` where attention is
    not allowed, a float mask is added to the attention scores (``-inf`` blocks). The
    ``*_is_causal`` flags are hints that the matching mask is the causal mask; they do not
    replace it (``is_causal=True`` without a mask raises ``RuntimeError``). PyTorch's inference
    fast path (fused kernels, nested tensors) is not reproduced: every call computes the
    regular path, so the output is the same in training and eval mode except for dropout.

    Args:
        d_model (int): number of features of each position (the embedding size).
        nhead (int): number of attention heads; must divide ``d_model``.
        dim_feedforward (int): hidden size of the feed-forward block. Default: ``2048``.
        dropout (float): dropout probability after the attention and feed-forward blocks and
            inside the feed-forward block (and on the attention weights). Default: ``0.1``.
        activation (str or Callable): the feed-forward activation: ``"relu"``, ``"gelu"`` or a
            callable (another string raises ``RuntimeError``). Default: ``F.relu``.
        layer_norm_eps (float): ``eps`` of the layer norms. Default: ``1e-5``.
        batch_first (bool): if ``True``, inputs and output are ``(N, S, E)`` instead of
            ``(S, N, E)``. Default: ``False``.
        norm_first (bool): if ``True``, each block is applied to ``norm(x)`` and added to ``x``
            (pre-norm); else ``norm`` is applied after the residual sum (post-norm).
            Default: ``False``.
        bias (bool): if ``False``, the linear layers, attention projections and layer norms learn
            no additive bias. Default: ``True``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``src`` ``(S, N, E)``, ``(N, S, E)`` with ``batch_first``, or unbatched
          ``(S, E)``, with ``E = d_model``; ``src_mask`` ``(S, S)`` or ``(N * nhead, S, S)``;
          ``src_key_padding_mask`` ``(N, S)`` (or ``(S)`` unbatched), ``True`` at padding.
        - Output: the shape of ``src``.

    Example::

        >>> layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64)
        >>> src = eager.randn(10, 3, 32)
        >>> layer(src).shape
        eager.Size([10, 3, 32])
        >>> layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, norm_first=True)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(10)
        >>> layer(eager.randn(3, 10, 32), src_mask=mask, is_causal=True).shape
        eager.Size([3, 10, 32])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               src_mask, "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype,
                                   check_other=False)
        x = src
        if self.norm_first:
            x = _ew.add(x, self._sa_block(self.norm1(x), src_mask, src_key_padding_mask,
                                          is_causal))
            x = _ew.add(x, self._ff_block(self.norm2(x)))
        else:
            x = self.norm1(_ew.add(x, self._sa_block(x, src_mask, src_key_padding_mask,
                                                     is_causal)))
            x = self.norm2(_ew.add(x, self._ff_block(x)))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """One Transformer decoder layer: self-attention, cross-attention and a feed-forward block.

    The target goes through multi-head self-attention (``self_attn``), then multi-head
    attention whose keys and values are ``memory``, the encoder's output
    (``multihead_attn``), then the feed-forward block
    ``linear2(dropout(activation(linear1(x))))``. Each block has dropout, a residual connection
    and a layer norm (``norm1``, ``norm2``, ``norm3``), applied after the residual sum by
    default or before the block with ``norm_first=True``. ``forward(tgt, memory, tgt_mask=None,
    memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    tgt_is_causal=False, memory_is_causal=False)``.

    Masks follow :class:`MultiheadAttention`: a boolean mask is ``True`` where attention is
    not allowed, a float mask is added to the attention scores (``-inf`` blocks). The
    ``*_is_causal`` flags are hints that the matching mask is the causal mask; they do not
    replace it (``is_causal=True`` without a mask raises ``RuntimeError``). PyTorch's inference
    fast path (fused kernels, nested tensors) is not reproduced: every call computes the
    regular path, so the output is the same in training and eval mode except for dropout.

    Args:
        d_model (int): number of features of each position (the embedding size).
        nhead (int): number of attention heads; must divide ``d_model``.
        dim_feedforward (int): hidden size of the feed-forward block. Default: ``2048``.
        dropout (float): dropout probability after the attention and feed-forward blocks and
            inside the feed-forward block (and on the attention weights). Default: ``0.1``.
        activation (str or Callable): the feed-forward activation: ``"relu"``, ``"gelu"`` or a
            callable (another string raises ``RuntimeError``). Default: ``F.relu``.
        layer_norm_eps (float): ``eps`` of the layer norms. Default: ``1e-5``.
        batch_first (bool): if ``True``, inputs and output are ``(N, S, E)`` instead of
            ``(S, N, E)``. Default: ``False``.
        norm_first (bool): if ``True``, each block is applied to ``norm(x)`` and added to ``x``
            (pre-norm); else ``norm`` is applied after the residual sum (post-norm).
            Default: ``False``.
        bias (bool): if ``False``, the linear layers, attention projections and layer norms learn
            no additive bias. Default: ``True``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``tgt`` ``(T, N, E)``, ``(N, T, E)`` with ``batch_first``, or unbatched
          ``(T, E)``; ``memory`` ``(S, N, E)`` likewise; ``tgt_mask`` ``(T, T)``;
          ``memory_mask`` ``(T, S)``; ``tgt_key_padding_mask`` ``(N, T)``;
          ``memory_key_padding_mask`` ``(N, S)``; ``E = d_model``.
        - Output: the shape of ``tgt``.

    Example::

        >>> layer = nn.TransformerDecoderLayer(d_model=32, nhead=4, dim_feedforward=64)
        >>> memory = eager.randn(10, 3, 32)
        >>> tgt = eager.randn(7, 3, 32)
        >>> layer(tgt, memory).shape
        eager.Size([7, 3, 32])
        >>> mask = nn.Transformer.generate_square_subsequent_mask(7)
        >>> layer(tgt, memory, tgt_mask=mask, tgt_is_causal=True).shape
        eager.Size([7, 3, 32])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False):
        x = tgt
        if self.norm_first:
            x = _ew.add(x, self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                          tgt_is_causal))
            x = _ew.add(x, self._mha_block(self.norm2(x), memory, memory_mask,
                                           memory_key_padding_mask, memory_is_causal))
            x = _ew.add(x, self._ff_block(self.norm3(x)))
        else:
            x = self.norm1(_ew.add(x, self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                                     tgt_is_causal)))
            x = self.norm2(_ew.add(x, self._mha_block(x, memory, memory_mask,
                                                      memory_key_padding_mask,
                                                      memory_is_causal)))
            x = self.norm3(_ew.add(x, self._ff_block(x)))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal: bool = False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _why_no_nested_tensor(layer) -> str:
    """PyTorch's reason for not using its nested-tensor fast path (it warns about it)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True(use batch_first for better "
                "inference performance)")
    if not attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """A stack of ``num_layers`` Transformer encoder layers, with an optional final norm.

    ``layers`` holds ``num_layers`` deep copies of ``encoder_layer`` (which is not itself used
    and shares no parameters with them); the input goes through them in turn, then through
    ``norm`` when given. ``forward(src, mask=None, src_key_padding_mask=None,
    is_causal=None)``: with ``is_causal=None``, the layers are told the mask is causal when
    ``mask`` equals :meth:`Transformer.generate_square_subsequent_mask` (a read of the mask's
    values). There is no nested-tensor fast path here: ``enable_nested_tensor`` only sets
    ``use_nested_tensor`` and, as in PyTorch, warns when the layer could not use that path.

    Args:
        encoder_layer (TransformerEncoderLayer): the layer to copy.
        num_layers (int): number of layers.
        norm (Module, optional): a module applied to the output of the last layer, e.g. a
            :class:`LayerNorm`. Default: ``None``.
        enable_nested_tensor (bool): accepted as PyTorch's; no effect on the computation.
            Default: ``True``.
        mask_check (bool): accepted as PyTorch's; no effect. Default: ``True``.

    Shape:
        - Input: ``src`` ``(S, N, E)``, ``(N, S, E)`` with the layer's ``batch_first``, or
          unbatched ``(S, E)``; ``mask`` ``(S, S)`` or ``(N * nhead, S, S)``;
          ``src_key_padding_mask`` ``(N, S)``.
        - Output: the shape of ``src``.

    Example::

        >>> layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        >>> encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(32))
        >>> src = eager.randn(3, 10, 32)
        >>> encoder(src).shape
        eager.Size([3, 10, 32])
        >>> padding = eager.tensor([[False] * 8 + [True] * 2] * 3)
        >>> encoder(src, src_key_padding_mask=padding).shape
        eager.Size([3, 10, 32])
    """

    def __init__(self, encoder_layer, num_layers: int, norm=None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               mask, "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """A stack of ``num_layers`` Transformer decoder layers, with an optional final norm.

    ``layers`` holds ``num_layers`` deep copies of ``decoder_layer`` (which is not itself used
    and shares no parameters with them); the target goes through them in turn, each attending
    to the same ``memory``, then through ``norm`` when given. ``forward(tgt, memory,
    tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    tgt_is_causal=None, memory_is_causal=False)``: with ``tgt_is_causal=None``, the layers are
    told ``tgt_mask`` is causal when it equals
    :meth:`Transformer.generate_square_subsequent_mask`.

    Args:
        decoder_layer (TransformerDecoderLayer): the layer to copy.
        num_layers (int): number of layers.
        norm (Module, optional): a module applied to the output of the last layer, e.g. a
            :class:`LayerNorm`. Default: ``None``.

    Shape:
        - Input: ``tgt`` ``(T, N, E)`` and ``memory`` ``(S, N, E)`` (batch first with the
          layer's ``batch_first``, or unbatched without ``N``); masks as in
          :class:`TransformerDecoderLayer`.
        - Output: the shape of ``tgt``.

    Example::

        >>> layer = nn.TransformerDecoderLayer(d_model=32, nhead=4, dim_feedforward=64)
        >>> decoder = nn.TransformerDecoder(layer, num_layers=2)
        >>> memory = eager.randn(10, 3, 32)
        >>> tgt = eager.randn(7, 3, 32)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(7)
        >>> decoder(tgt, memory, tgt_mask=mask).shape
        eager.Size([7, 3, 32])
    """

    def __init__(self, decoder_layer, num_layers: int, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """A Transformer encoder-decoder model, as in "Attention Is All You Need".

    ``encoder`` is a :class:`TransformerEncoder` of ``num_encoder_layers`` layers and
    ``decoder`` a :class:`TransformerDecoder` of ``num_decoder_layers`` layers, each ending with
    a :class:`LayerNorm`; the encoder's output is the decoder's ``memory``. Every parameter with
    more than one dimension is initialized with ``xavier_uniform_``. The model has no
    embeddings or output projection: inputs are sequences of ``d_model`` features.
    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)`` raises ``RuntimeError``
    when ``src`` and ``tgt`` differ in batch size or do not have ``d_model`` features.
    ``Transformer.generate_square_subsequent_mask(sz)`` gives the causal float mask (0 on and
    below the diagonal, ``-inf`` above).

    Args:
        d_model (int): number of features of each position. Default: ``512``.
        nhead (int): number of attention heads; must divide ``d_model``. Default: ``8``.
        num_encoder_layers (int): number of encoder layers. Default: ``6``.
        num_decoder_layers (int): number of decoder layers. Default: ``6``.
        dim_feedforward (int): hidden size of the feed-forward blocks. Default: ``2048``.
        dropout (float): dropout probability. Default: ``0.1``.
        activation (str or Callable): feed-forward activation, ``"relu"``, ``"gelu"`` or a
            callable. Default: ``F.relu``.
        custom_encoder (Module, optional): used instead of the default encoder; as in PyTorch,
            its parameters with more than one dimension are re-initialized with
            ``xavier_uniform_`` too. Default: ``None``.
        custom_decoder (Module, optional): used instead of the default decoder (re-initialized
            the same way). Default: ``None``.
        layer_norm_eps (float): ``eps`` of the layer norms. Default: ``1e-5``.
        batch_first (bool): if ``True``, inputs and output are ``(N, S, E)`` instead of
            ``(S, N, E)``. Default: ``False``.
        norm_first (bool): if ``True``, the layers use pre-norm (see
            :class:`TransformerEncoderLayer`). Default: ``False``.
        bias (bool): if ``False``, linear layers and layer norms learn no additive bias.
            Default: ``True``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``src`` ``(S, N, E)`` and ``tgt`` ``(T, N, E)`` (``(N, S, E)`` and
          ``(N, T, E)`` with ``batch_first``, or ``(S, E)`` and ``(T, E)`` unbatched), with
          ``E = d_model``; ``src_mask`` ``(S, S)``, ``tgt_mask`` ``(T, T)``, ``memory_mask``
          ``(T, S)``; ``src_key_padding_mask`` ``(N, S)``, ``tgt_key_padding_mask`` ``(N, T)``,
          ``memory_key_padding_mask`` ``(N, S)``.
        - Output: ``(T, N, E)`` (``(N, T, E)`` with ``batch_first``, ``(T, E)`` unbatched).

    Example::

        >>> model = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2,
        ...                        num_decoder_layers=2, dim_feedforward=64)
        >>> src = eager.randn(10, 3, 32)
        >>> tgt = eager.randn(7, 3, 32)
        >>> tgt_mask = nn.Transformer.generate_square_subsequent_mask(7)
        >>> model(src, tgt, tgt_mask=tgt_mask).shape
        eager.Size([7, 3, 32])
        >>> tgt_mask[:3, :3]
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_kw = dict(dim_feedforward=dim_feedforward, dropout=dropout,
                        activation=activation, layer_norm_eps=layer_norm_eps,
                        batch_first=batch_first, norm_first=norm_first, bias=bias, **kw)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, **layer_kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, **layer_kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        batched = src.ndim == 3
        if batched and src.shape[0 if self.batch_first else 1] != \
                tgt.shape[0 if self.batch_first else 1]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """``(sz, sz)`` float mask: 0 on and below the diagonal, -inf above."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

