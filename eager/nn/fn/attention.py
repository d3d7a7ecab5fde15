"""``scaled_dot_product_attention`` and ``multi_head_attention_forward``: attention as
PyTorch computes it (masks, causal, dropout, grouped-query heads, packed and separate
projections); :class:`eager.nn.MultiheadAttention` builds on them."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from ... import dtypes as _dt
from ..._state import STATE
from ...amp.autocast_mode import cast_inputs as _autocast
from ...dispatch import dispatch
from ...dtypes import is_float as _isf
from ...factories import tensor, zeros
from ...fn import elementwise as _ew
from ...fn import linalg as _la
from ...fn import reduce as _red
from ...fn.shape import cat, chunk, expand, permute, reshape, squeeze, transpose, unsqueeze
from ...ops import attention as _att
from .dropout import dropout
from .linear import linear
from .vision import pad

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_C_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "bool": "bool"}


def _is_float(t) -> bool:
    return _isf(t._data.dtype)


def _causal_mask(L: int, S: int):
    """The bool mask of ``is_causal``: query ``i`` sees keys ``0..i`` (top-left aligned)."""
    return tensor(_causal_array(L, S))


@functools.lru_cache(maxsize=64)
def _causal_array(L: int, S: int):
    mask = np.tril(np.ones((L, S), dtype=bool))
    mask.flags.writeable = False
    return mask


_ONE_OP_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _one_op(query, key, value) -> bool:
    """Whether attention runs as one op (:class:`eager.ops.attention.
    ScaledDotProductAttention`): float32/float64 CPU arrays of one dtype (no vmap
    storage), at least 3-D with the same batch shape, no autocast."""
    q, k, v = query._data, key._data, value._data
    if type(q) is not np.ndarray or type(k) is not np.ndarray or type(v) is not np.ndarray:
        return False
    return (q.dtype in _ONE_OP_DTYPES and q.dtype == k.dtype == v.dtype and q.ndim >= 3
            and q.ndim == k.ndim == v.ndim and q.shape[:-2] == k.shape[:-2] == v.shape[:-2]
            and STATE.autocast is None)


def _check_sdpa(query, key, value, attn_mask) -> None:
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_ctype(query)} key.dtype: {_ctype(key)} and "
                           f"value.dtype: {_ctype(value)} instead.")
    if attn_mask is not None and attn_mask.dtype != _dt.bool_ and not _is_float(attn_mask):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_ctype(attn_mask)} and  "
                           f"query.dtype: {_ctype(query)} instead.")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must be at "
                           "least 2-D")
    batch = int(np.prod(query.shape[:-2], dtype=np.int64))
    if key.shape[-1] != query.shape[-1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {query.shape[-1]}] but got: [{batch}, {key.shape[-1]}].")
    if value.shape[-2] != key.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {key.shape[-2]}] but got: [{batch}, {value.shape[-2]}].")


def _ctype(t) -> str:
    return _C_TYPES.get(t._data.dtype.name, t._data.dtype.name)


def _repeat_heads(x, groups: int):
    """``x.repeat_interleave(groups, dim=-3)`` as expand + reshape."""
    shape = tuple(x.shape)
    lead, (h, s, e) = shape[:-3], shape[-3:]
    x = expand(unsqueeze(x, -3), *(lead + (h, groups, s, e)))
    return reshape(x, lead + (h * groups, s, e))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False):
    """Computes ``softmax(query @ key.T * scale + mask) @ value``.

    Attention over the last two dimensions.

    ``attn_mask`` may be bool (``True`` marks a key a query *may* attend to; the others
    are excluded) or floating point (added to the scores).  A query row whose keys are all
    excluded gives zeros (and zero gradients) rather than NaN, as PyTorch does on the CPU.
    Computed as plain matmul and softmax (no fused kernel).

    Args:
        query (Tensor): the queries, ``(*, L, E)``.
        key (Tensor): the keys, ``(*, S, E)``.
        value (Tensor): the values, ``(*, S, Ev)``.
        attn_mask (Tensor, optional): a bool or float mask broadcastable to ``(*, L, S)``.
            Default: ``None``
        dropout_p (float, optional): dropout probability on the attention weights (always
            applied when positive: pass 0 in evaluation). Default: ``0.0``
        is_causal (bool, optional): mask so that query ``i`` sees keys ``0..i`` (top-left
            aligned); cannot be combined with ``attn_mask``. Default: ``False``
        scale (float, optional): the score scale. Default: ``None`` (``1 / sqrt(E)``)
        enable_gqa (bool, optional): grouped-query attention: ``key``/``value`` may have
            fewer heads (dimension ``-3``) than ``query``, each shared by a group of query
            heads (their count must divide the query's). Default: ``False``

    Shape:
        - Query: ``(*, L, E)``; Key: ``(*, S, E)``; Value: ``(*, S, Ev)``.
        - Output: ``(*, L, Ev)``.

    Example::

        >>> q, k, v = eager.randn(2, 4, 5, 8), eager.randn(2, 4, 7, 8), eager.randn(2, 4, 7, 16)
        >>> F.scaled_dot_product_attention(q, k, v).shape
        eager.Size([2, 4, 5, 16])
        >>> ones = eager.ones(2, 1)
        >>> F.scaled_dot_product_attention(ones, ones, eager.tensor([[1.0], [3.0]]),
        ...                                is_causal=True)
        tensor([[1.],
                [2.]])
    """
    query, key, value, attn_mask = _autocast("scaled_dot_product_attention", query, key,
                                             value, attn_mask)
    _check_sdpa(query, key, value, attn_mask)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if enable_gqa:
        for t in (query, key, value):
            if t.ndim < 3:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-t.ndim}, {t.ndim - 1}], but got -3)")
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if not hk or not hv or hq % hk or hq % hv:
            # PyTorch's message stops at "heads in "; the sentence is finished here
            raise RuntimeError(f"Number of heads in key and value must divide the number of "
                               f"heads in query: got {hq} query heads, {hk} key heads and "
                               f"{hv} value heads (enable_gqa=True)")
        if hk != hq:
            key = _repeat_heads(key, hq // hk)
        if hv != hq:
            value = _repeat_heads(value, hq // hv)
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if attn_mask is None and dropout_p <= 0.0 and _one_op(query, key, value):
        mask = tensor(_causal_array(L, S)) if is_causal else None
        return dispatch(_att.ScaledDotProductAttention, query, key, value, mask, scale=scale)
    scores = _la.matmul(_ew.mul(query, scale), transpose(key, -2, -1))
    keep = None                        # rows with at least one key (bool, broadcastable)
    if is_causal:
        scores = _ew.where(_causal_mask(L, S), scores, float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype == _dt.bool_:
            scores = _ew.where(attn_mask, scores, float("-inf"))
            keep = _red.any(attn_mask, -1, keepdim=True)
        else:
            scores = _ew.add(scores, attn_mask)
            keep = _ew.gt(_red.amax(attn_mask, -1, keepdim=True), float("-inf"))
    if keep is not None:  # a fully masked row: softmax of zeros, then zeroed (no NaN)
        scores = _ew.where(keep, scores, 0.0)
    attn = _red.softmax(scores, -1)
    if keep is not None:
        attn = _ew.where(keep, attn, 0.0)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _la.matmul(attn, value)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     "instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


def _canonical_mask(mask, name: str, other, other_name: str, dtype, check_other=True):
    """A bool mask (True = masked out) as a float mask of ``dtype`` (-inf where masked)."""
    if mask is None:
        return None
    if mask.dtype != _dt.bool_ and not _is_float(mask):
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if check_other and other is not None and other.dtype != mask.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if mask.dtype == _dt.bool_:
        mask = _ew.where(mask, float("-inf"), zeros(*mask.shape, dtype=dtype))
    return mask


def _in_projection(query, key, value, w_q, w_k, w_v, b_q, b_k, b_v):
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """The functional form of ``nn.MultiheadAttention``.

    It projects ``query``, ``key`` and ``value``, attends with ``num_heads`` heads and
    projects the result.

    The layout is sequence-first, ``(L, N, E)`` (or unbatched ``(L, E)``).  Unlike in
    :func:`scaled_dot_product_attention`, a bool ``attn_mask`` or ``key_padding_mask``
    marks with ``True`` the positions that are *not* allowed; float masks are added to the
    scores.  ``static_k``/``static_v`` are not supported (``NotImplementedError``).

    Args:
        query (Tensor): ``(L, N, E)`` or ``(L, E)``.
        key (Tensor): ``(S, N, E_k)`` or ``(S, E_k)``.
        value (Tensor): ``(S, N, E_v)`` or ``(S, E_v)``.
        embed_dim_to_check (int): the expected ``E``; a mismatch raises ``AssertionError``.
        num_heads (int): the number of heads; must divide ``E``.
        in_proj_weight (Tensor or None): the packed q/k/v projection, ``(3 * E, E)``.
        in_proj_bias (Tensor or None): the packed q/k/v bias, ``(3 * E,)``.
        bias_k (Tensor or None): a bias appended to the key sequence, ``(1, 1, E)``.
        bias_v (Tensor or None): a bias appended to the value sequence, ``(1, 1, E)``.
        add_zero_attn (bool): append a zero key and value to each sequence.
        dropout_p (float): dropout probability on the attention weights.
        out_proj_weight (Tensor): the output projection, ``(E, E)``.
        out_proj_bias (Tensor or None): the output projection bias, ``(E,)``.
        training (bool, optional): apply dropout. Default: ``True``
        key_padding_mask (Tensor, optional): ``(N, S)`` or ``(S)``, keys to ignore.
            Default: ``None``
        need_weights (bool, optional): also return the attention weights. Default: ``True``
        attn_mask (Tensor, optional): ``(L, S)`` or ``(N * num_heads, L, S)``.
            Default: ``None``
        use_separate_proj_weight (bool, optional): project with ``q_proj_weight``,
            ``k_proj_weight`` and ``v_proj_weight`` instead of ``in_proj_weight``.
            Default: ``False``
        q_proj_weight (Tensor, optional): ``(E, E)``. Default: ``None``
        k_proj_weight (Tensor, optional): ``(E, E_k)``. Default: ``None``
        v_proj_weight (Tensor, optional): ``(E, E_v)``. Default: ``None``
        static_k (Tensor, optional): not supported. Default: ``None``
        static_v (Tensor, optional): not supported. Default: ``None``
        average_attn_weights (bool, optional): average the returned weights over the heads.
            Default: ``True``
        is_causal (bool, optional): a hint that ``attn_mask`` is the causal mask (it must
            still be given). Default: ``False``

    Shape:
        - Output: ``(attn_output, attn_weights)``; ``attn_output`` is ``(L, N, E)`` (or
          ``(L, E)``); ``attn_weights`` is ``(N, L, S)``, ``(N, num_heads, L, S)`` without
          averaging, or ``None`` when ``need_weights`` is ``False``.

    Example::

        >>> E, L, N = 4, 3, 2
        >>> x = eager.randn(L, N, E)
        >>> w_in, w_out = eager.randn(3 * E, E), eager.randn(E, E)
        >>> out, w = F.multi_head_attention_forward(x, x, x, E, 2, w_in, None, None, None,
        ...                                         False, 0.0, w_out, None)
        >>> out.shape, w.shape
        (eager.Size([3, 2, 4]), eager.Size([2, 3, 3]))
    """
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k and static_v are "
                                  "not supported")
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = unsqueeze(query, 1), unsqueeze(key, 1), unsqueeze(value, 1)
        if key_padding_mask is not None:
            key_padding_mask = unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _mha_masks(query, key_padding_mask, attn_mask,
                                                        is_causal, need_weights)
    head_dim = _mha_head_dim(embed_dim, embed_dim_to_check, num_heads)
    q, k, v = _mha_in_projection(query, key, value, in_proj_weight, in_proj_bias,
                                 use_separate_proj_weight, q_proj_weight, k_proj_weight,
                                 v_proj_weight)
    if attn_mask is not None:
        attn_mask = _check_attn_mask(attn_mask, tgt_len, key.shape[0], bsz, num_heads)
    q, k, v, attn_mask = _mha_heads(q, k, v, attn_mask, key_padding_mask, bias_k, bias_v,
                                    add_zero_attn, tgt_len, bsz, embed_dim, num_heads, head_dim)
    if not training:
        dropout_p = 0.0
    if need_weights:
        out, w = _mha_attend_with_weights(q, k, v, attn_mask, dropout_p, out_proj_weight,
                                          out_proj_bias, tgt_len, bsz, embed_dim, num_heads,
                                          head_dim, average_attn_weights)
        if not batched:
            out, w = squeeze(out, 1), squeeze(w, 0)
        return out, w
    out = _mha_attend_sdpa(q, k, v, attn_mask, dropout_p, is_causal, out_proj_weight,
                           out_proj_bias, tgt_len, bsz, embed_dim, num_heads, head_dim)
    if not batched:
        out = squeeze(out, 1)
    return out, None


def _mha_masks(query, key_padding_mask, attn_mask, is_causal, need_weights):
    """The masks in canonical (float) form and the causal hint as the attention uses them."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None          # the SDPA path below builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    return key_padding_mask, attn_mask, is_causal


def _mha_head_dim(embed_dim, embed_dim_to_check, num_heads):
    """Each head's width, after checking the embedding dimension and its split into heads."""
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    return head_dim


def _mha_in_projection(query, key, value, in_proj_weight, in_proj_bias,
                       use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight):
    """``(q, k, v)``: the inputs projected by the packed or the separate weights."""
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = chunk(in_proj_bias, 3)
        return _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                              v_proj_weight, b_q, b_k, b_v)
    if tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape "
                             f"{value.shape}")
    if query is key and key is value:  # self-attention: one matmul
        return chunk(linear(query, in_proj_weight, in_proj_bias), 3, -1)
    w_q, w_k, w_v = chunk(in_proj_weight, 3)
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = chunk(in_proj_bias, 3)
    return _in_projection(query, key, value, w_q, w_k, w_v, b_q, b_k, b_v)


def _mha_heads(q, k, v, attn_mask, key_padding_mask, bias_k, bias_v, add_zero_attn,
               tgt_len, bsz, embed_dim, num_heads, head_dim):
    """q, k, v split into heads (keys extended by bias_k/v, zero) and the merged mask."""
    if bias_k is not None and bias_v is not None:
        k = cat([k, expand(bias_k, 1, bsz, embed_dim)])
        v = cat([v, expand(bias_v, 1, bsz, embed_dim)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")
    # (L, N, E) -> (N * heads, L, head_dim)
    q = transpose(reshape(q, (tgt_len, bsz * num_heads, head_dim)), 0, 1)
    k = transpose(reshape(k, (k.shape[0], bsz * num_heads, head_dim)), 0, 1)
    v = transpose(reshape(v, (v.shape[0], bsz * num_heads, head_dim)), 0, 1)
    if add_zero_attn:
        zero = zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype)
        k, v = cat([k, zero], 1), cat([v, zero], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        kpm = reshape(expand(reshape(key_padding_mask, (bsz, 1, 1, src_len)),
                             bsz, num_heads, 1, src_len), (bsz * num_heads, 1, src_len))
        attn_mask = kpm if attn_mask is None else _ew.add(attn_mask, kpm)
    return q, k, v, attn_mask


def _mha_attend_with_weights(q, k, v, attn_mask, dropout_p, out_proj_weight, out_proj_bias,
                             tgt_len, bsz, embed_dim, num_heads, head_dim,
                             average_attn_weights):
    """``(out, weights)``: attention written out (the weights are returned), projected."""
    src_len = k.shape[1]
    q_scaled = _ew.mul(q, math.sqrt(1.0 / float(head_dim)))
    w = _la.matmul(q_scaled, transpose(k, -2, -1))
    if attn_mask is not None:
        w = _ew.add(w, attn_mask)
    w = _red.softmax(w, -1)
    if dropout_p > 0.0:
        w = dropout(w, dropout_p)
    out = _la.matmul(w, v)
    out = reshape(transpose(out, 0, 1), (tgt_len * bsz, embed_dim))
    out = reshape(linear(out, out_proj_weight, out_proj_bias), (tgt_len, bsz, -1))
    w = reshape(w, (bsz, num_heads, tgt_len, src_len))
    if average_attn_weights:
        w = _red.mean(w, 1)
    return out, w


def _mha_attend_sdpa(q, k, v, attn_mask, dropout_p, is_causal, out_proj_weight,
                     out_proj_bias, tgt_len, bsz, embed_dim, num_heads, head_dim):
    """The attention output through :func:`scaled_dot_product_attention`, projected."""
    src_len = k.shape[1]
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = unsqueeze(attn_mask, 0)
        else:
            attn_mask = reshape(attn_mask, (bsz, num_heads, -1, src_len))
    q = reshape(q, (bsz, num_heads, tgt_len, head_dim))
    k = reshape(k, (bsz, num_heads, src_len, head_dim))
    v = reshape(v, (bsz, num_heads, src_len, head_dim))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = reshape(permute(out, 2, 0, 1, 3), (bsz * tgt_len, embed_dim))
    return reshape(linear(out, out_proj_weight, out_proj_bias), (tgt_len, bsz, -1))


def _check_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    if attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return unsqueeze(attn_mask, 0)
    if attn_mask.ndim == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
