"""``embedding_bag``: sums, means or maxima of bags of embedding rows, without building
the ``(bags, length, dim)`` tensor of their rows for sums and means.

The rows are looked up with ``index_select``; sums and means add them into their bags
with ``index_add``; maxima pad the bags to a common length and take ``max`` over it (so
the gradient goes to the first maximal row of each bag, as PyTorch's).  Entries equal to
``padding_idx`` leave their bag (they add nothing and do not count in a mean) and give
no gradient.  ``scale_grad_by_freq`` divides each row's gradient, not its value, by how
often its index occurs in ``input``.  The bags of a 2-D ``input`` follow from its shape; a
1-D ``input`` with ``offsets`` reads the offsets into Python, as do the bounds check of
the indices (skipped while a compiler traces), ``max_norm`` and ``scale_grad_by_freq``
(under ``eager.compile`` such a call runs eagerly).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._state import STATE
from ...autograd.grad_mode import no_grad
from ...dtypes import is_float as _isf
from ...factories import tensor, zeros
from ...fn import elementwise as _ew
from ...fn import reduce as _red
from ...fn.index import index_select
from ...fn.index_update import index_add
from .args import reshape

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def _check_indices(t, what: str = "indices") -> None:
    if t._data.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 '{what}' to have one of the "
                           f"following scalar types: Long, Int; but got {t.type()} instead "
                           "(while checking arguments for embedding_bag)")


def _renorm_(weight, flat, max_norm: float, norm_type: float) -> None:
    """Scale, in place and without grad, the rows of ``weight`` that ``flat`` names whose
    ``norm_type``-norm exceeds ``max_norm`` down to that norm (PyTorch's
    ``embedding_renorm_``)."""
    if not flat.numel():
        return
    with no_grad():
        rows_ix = tensor(np.unique(np.asarray(flat.tolist(), dtype=np.int64)),
                         device=weight.device)
        rows = index_select(weight, 0, rows_ix)
        norms = _red.norm(rows, norm_type, 1, keepdim=True)
        scale = _ew.where(_ew.gt(norms, max_norm),
                          _ew.div(max_norm, _ew.add(norms, 1e-7)), 1.0)
        weight.index_copy_(0, rows_ix, _ew.mul(rows, _ew.cast(scale, weight.dtype)))


def _grad_scaled(rows, flat):
    """``rows`` in value; its gradient divided by the count of each row's index in
    ``flat``."""
    ix = np.asarray(flat.tolist(), dtype=np.int64)
    _, inverse, counts = np.unique(ix, return_inverse=True, return_counts=True)
    s = tensor((1.0 / counts[inverse]).reshape(-1, 1), dtype=rows.dtype, device=rows.device)
    fixed = rows.detach()
    return _ew.add(fixed, _ew.mul(_ew.sub(rows, fixed), s))


def _bags(offsets, n: int, include_last_offset: bool):
    """The ``(start, end)`` of each bag from 1-D ``offsets`` into ``n`` indices."""
    _check_indices(offsets)
    off = [int(v) for v in offsets.tolist()]
    if include_last_offset:
        if not off:
            raise RuntimeError("include_last_offset: number of offset should be at least 1")
        starts, ends = off[:-1], off[1:]
    else:
        starts, ends = off, off[1:] + [n]
    if off and off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {off[0]}")
    if off and off[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {off[-1]}")
    for i in range(len(off) - 1):
        if off[i] > off[i + 1]:
            raise RuntimeError(f"embedding_bag: offsets have to be non-decreasing, but got "
                               f"offsets[{i}] = {off[i]} > offsets[{i + 1}] = {off[i + 1]}")
    return starts, ends


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None):
    r"""Reduce bags of embedding rows without materializing the rows of each bag: for
    each bag of indices, the sum, mean or elementwise maximum of those rows of
    ``weight``.

    Args:
        input (Tensor): integer indices into ``weight``: ``(B, N)``, ``B`` bags of ``N``
            each; or ``(N)``, bags delimited by ``offsets``.
        weight (Tensor): the embedding table, ``(num_embeddings, embedding_dim)``.
        offsets (Tensor, optional): for 1-D ``input`` only, the start of each bag in
            ``input`` (the first is 0).
        max_norm (float, optional): rows used whose norm exceeds ``max_norm`` are first
            scaled, in ``weight`` itself, to norm ``max_norm``.
        norm_type (float): the ``p`` of that norm. Default: 2.
        scale_grad_by_freq (bool): divide each row's gradient by how often its index occurs
            in ``input`` (not with ``mode="max"``). Default: False.
        mode (str): ``"sum"``, ``"mean"`` or ``"max"``. Default: ``"mean"``.
        sparse (bool): sparse gradients are not supported: eager raises
            NotImplementedError for True (``"max"`` raises ValueError, as PyTorch).
        per_sample_weights (Tensor, optional): with ``mode="sum"``, a weight per index,
            the shape of ``input``, multiplying its row.
        include_last_offset (bool): ``offsets`` has one more entry, the end of the last
            bag (CSR style). Default: False.
        padding_idx (int, optional): entries equal to this index are left out of their
            bag (empty bags give zeros) and give no gradient.

    Shape:
        - Output: ``(B, embedding_dim)``, ``B`` the number of bags.

    Example::

        >>> weight = eager.randn(10, 3, requires_grad=True)
        >>> ix = eager.tensor([1, 2, 4, 5, 4, 3, 2, 9])
        >>> F.embedding_bag(ix, weight, eager.tensor([0, 4]), mode="sum").shape
        eager.Size([2, 3])
        >>> F.embedding_bag(eager.tensor([[1, 2], [4, 5]]), weight, mode="max").shape
        eager.Size([2, 3])
    """
    if weight._data.dtype.kind in "iu" and _isf(input._data.dtype):
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    psw = per_sample_weights
    _check_args(input, weight, offsets, mode, scale_grad_by_freq, sparse, psw)
    if max_norm is not None:
        _renorm_(weight, reshape(input, (-1,)), max_norm, norm_type)
    _check_types(weight, psw, mode)
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        if padding_idx < 0:
            padding_idx += num
    flat = reshape(input, (-1,))
    n = flat.numel()
    nbags, starts, lengths = _layout(input, offsets, n, include_last_offset)
    # the bags are consecutive from position 0
    covered = int(lengths.sum())
    bag_of = np.repeat(np.arange(nbags, dtype=np.int64), lengths)
    if n and STATE.tracer is None:
        lo, hi = int(_red.min(flat)), int(_red.max(flat))
        if lo < 0 or hi >= num:
            raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                               f"found idx to be {lo if lo < 0 else hi}")
    if covered < n:
        # positions past the last bag (include_last_offset) belong to no bag
        flat = flat[:covered]
        bag_of = bag_of[:covered]
        if psw is not None:
            psw = reshape(psw, (-1,))[:covered]
        n = covered
    keep = None if padding_idx is None else _ew.ne(flat, padding_idx)

    rows = index_select(weight, 0, flat)                     # (n, dim)
    if scale_grad_by_freq and n:
        rows = _grad_scaled(rows, flat)
    bags = tensor(bag_of, device=weight.device)
    out0 = zeros(nbags, dim, dtype=weight.dtype, device=weight.device)
    if mode != "max" or not n:
        return _sum_or_mean(weight, rows, bags, out0, keep, psw, mode, n, nbags)
    return _max(weight, rows, keep, starts, lengths, nbags, dim)


def _check_args(input, weight, offsets, mode, scale_grad_by_freq, sparse, psw) -> None:
    """PyTorch's checks of the shapes, the mode and its options, and the indices' type."""
    if psw is not None and tuple(input.shape) != tuple(psw.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({psw.shape}) is not None, "
                         f"then it must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients (sparse=True) are not "
                                  "supported")
    _check_indices(input)


def _check_types(weight, psw, mode) -> None:
    """The checks of ``per_sample_weights`` against the mode and of the weight's dtype."""
    if psw is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if not _isf(weight._data.dtype):
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the "
                           "following scalar types: Half, BFloat16, Float, Double; but got "
                           f"{weight.type()} instead (while checking arguments for "
                           "embedding_bag)")
    if psw is not None and psw._data.dtype != weight._data.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as "
                           f"tensor for argument #1 'per_sample_weights'; but type "
                           f"{weight.type()} does not equal {psw.type()} (while checking "
                           "arguments for embedding_bag)")


def _layout(input, offsets, n: int, include_last_offset: bool) -> tuple:
    """``(nbags, starts, lengths)``: the bags' count, first positions and lengths."""
    if input.ndim == 2:
        nbags, length = input.shape
        starts = np.arange(nbags, dtype=np.int64) * length
        lengths = np.full(nbags, length, dtype=np.int64)
    else:
        s0, e0 = _bags(offsets, n, include_last_offset)
        nbags = len(s0)
        starts = np.asarray(s0, dtype=np.int64)
        lengths = np.asarray(e0, dtype=np.int64) - starts
    return nbags, starts, lengths


def _sum_or_mean(weight, rows, bags, out0, keep, psw, mode, n, nbags):
    """Sums (or means) of the bags' rows, added into ``out0`` by bag with ``index_add``."""
    if psw is not None:
        rows = _ew.mul(rows, reshape(psw, (n, 1)))
    if keep is not None:      # (a where, not a product: an inf in a padding row stays out)
        rows = _ew.where(reshape(keep, (n, 1)), rows, 0.0)
    out = index_add(out0, 0, bags, rows)
    if mode == "mean":
        ones = (_ew.cast(keep, weight.dtype) if keep is not None
                else tensor(np.ones(n), dtype=weight.dtype, device=weight.device))
        count = index_add(zeros(nbags, dtype=weight.dtype, device=weight.device), 0, bags,
                          ones)
        out = _ew.div(out, reshape(_ew.clamp_min(count, 1.0), (nbags, 1)))
    return out


def _max(weight, rows, keep, starts, lengths, nbags, dim):
    """Maxima of the bags' rows: bags padded to one length (padding slots -inf), empty 0."""
    width = int(lengths.max())
    j = np.arange(width, dtype=np.int64)
    slot_ok = j[None, :] < lengths[:, None]                      # (nbags, width)
    pos = np.where(slot_ok, starts[:, None] + j[None, :], 0).reshape(-1)
    pos_t = tensor(pos, device=weight.device)
    ok = tensor(slot_ok.reshape(-1), device=weight.device)
    if keep is not None:
        ok = _ew.logical_and(ok, index_select(keep, 0, pos_t))
    padded = index_select(rows, 0, pos_t)                        # (nbags * width, dim)
    padded = _ew.where(reshape(ok, (-1, 1)), padded, float("-inf"))
    best = _red.max(reshape(padded, (nbags, width, dim)), 1)[0]
    nonempty = _red.any(reshape(ok, (nbags, width)), 1)
    return _ew.where(reshape(nonempty, (nbags, 1)), best, 0.0)
