"""``eager.nn.utils.rnn``: variable-length sequences for the recurrent modules, with
PyTorch's names: ``PackedSequence``, ``pack_padded_sequence``, ``pad_packed_sequence``,
``pad_sequence``, ``unpad_sequence``, ``pack_sequence``, ``unpack_sequence``,
``invert_permutation``.

A packed sequence stores the time steps one after another, step ``t`` holding the
``batch_sizes[t]`` sequences still running (sorted longest first).  Every move between
the padded and the packed layout here is one ``index_select`` with a row map computed in
Python, so its gradient is one scatter (linear in the data, not one full-size gradient
per time step).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ... import dtypes as _dt
from ...factories import full, tensor
from ...fn.index import index_select
from ...fn.shape import cat, reshape, transpose
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``: made by
    :func:`pack_padded_sequence` or :func:`pack_sequence`, taken and returned by
    ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU``.  ``batch_sizes`` is an int64 tensor;
    ``unsorted_indices`` is the inverse permutation of ``sorted_indices`` (None when the
    batch was already sorted)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def double(self) -> PackedSequence:
        return self.to(dtype=_dt.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_dt.float32)

    def cpu(self) -> PackedSequence:
        return self

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def _with_layout(packed: PackedSequence, sizes: tuple, order) -> PackedSequence:
    """Remember the batch sizes and sort order a packed sequence was made from (Python
    ints), so that unpacking it reads no tensor data: a compiled function that packs from
    a list of lengths then replays (the lengths are part of its cache key)."""
    packed.__dict__["_layout"] = (packed.batch_sizes, sizes, order)
    return packed


def _layout(packed: PackedSequence):
    """``(batch_sizes, sorted order or None)`` as Python ints.  Reading them from the
    tensors is a read of tensor data: a compiled function doing it runs eagerly, since
    its shapes depend on the data."""
    known = packed.__dict__.get("_layout")
    if known is not None and known[0] is packed.batch_sizes:
        return known[1], known[2]
    sizes = tuple(int(b) for b in packed.batch_sizes.tolist())
    order = None if packed.sorted_indices is None else \
        [int(v) for v in packed.sorted_indices.tolist()]
    return sizes, order


def sizes_of(packed: PackedSequence) -> tuple:
    """``batch_sizes`` as a tuple of ints."""
    return _layout(packed)[0]


def with_layout_of(packed: PackedSequence, source: PackedSequence) -> PackedSequence:
    """``packed`` (same batch sizes and order as ``source``) remembering its layout."""
    sizes, order = _layout(source)
    return _with_layout(packed, sizes, order)


def _inverse(order: list) -> list:
    inv = [0] * len(order)
    for i, j in enumerate(order):
        inv[j] = i
    return inv


def invert_permutation(permutation):
    if permutation is None:
        return None
    order = [int(v) for v in permutation.tolist()]
    return tensor(np.asarray(_inverse(order), dtype=np.int64), device=permutation.device)


def _lengths_list(lengths) -> list:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _batch_sizes(lengths: list) -> list:
    """Sequences still running at each step, for lengths sorted longest first."""
    T = lengths[0]
    counts = np.zeros(T + 1, dtype=np.int64)
    np.add.at(counts, np.asarray(lengths), 1)
    return (len(lengths) - np.cumsum(counts)[:-1]).tolist()


def pack_padded_sequence(input, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of sequences
    of ``lengths``; with ``enforce_sorted=False`` the batch is sorted longest first and
    the order kept in ``sorted_indices``."""
    lengths = _lengths_list(lengths)
    B = input.shape[0 if batch_first else 1]
    if len(lengths) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={B})")
    order = list(range(B))
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(order, key=lambda j: -lengths[j])      # stable, as torch.sort
        sorted_indices = tensor(np.asarray(order, dtype=np.int64), device=input.device)
    elif any(lengths[j] < lengths[j + 1] for j in range(B - 1)):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    sorted_lengths = [lengths[j] for j in order]
    if B == 0 or sorted_lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    T = input.shape[1 if batch_first else 0]
    if sorted_lengths[0] > T:
        raise RuntimeError(f"pack_padded_sequence: a length of {sorted_lengths[0]} is longer "
                           f"than the padded input's {T} time steps")
    batch_sizes = _batch_sizes(sorted_lengths)
    rows = []
    for t, bs in enumerate(batch_sizes):
        for j in order[:bs]:
            rows.append(j * T + t if batch_first else t * B + j)
    flat = reshape(input, (T * B,) + tuple(input.shape[2:]))
    data = index_select(flat, 0, tensor(np.asarray(rows, dtype=np.int64), device=input.device))
    unsorted_indices = None
    if sorted_indices is not None:
        unsorted_indices = tensor(np.asarray(_inverse(order), dtype=np.int64),
                                  device=input.device)
    packed = PackedSequence(data, tensor(np.asarray(batch_sizes, dtype=np.int64)),
                            sorted_indices, unsorted_indices)
    return _with_layout(packed, tuple(batch_sizes), None if enforce_sorted else order)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length=None):
    """The inverse of :func:`pack_padded_sequence`: ``(padded, lengths)``, in the batch's
    original order; ``total_length`` pads the time dimension further."""
    batch_sizes, order = _layout(sequence)
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    B = batch_sizes[0]
    data = sequence.data
    N = data.shape[0]
    lengths = [sum(1 for bs in batch_sizes if bs > j) for j in range(B)]
    unsorted = list(range(B)) if order is None else _inverse(order)
    offsets = np.concatenate(([0], np.cumsum(batch_sizes)[:-1])).tolist()
    # padded position (t, b) reads packed row offsets[t] + sorted position of b, else the
    # padding row appended after the data
    rows = np.full((max_len, B), N, dtype=np.int64)
    for b, j in enumerate(unsorted):
        rows[:lengths[j], b] = [offsets[t] + j for t in range(lengths[j])]
    if batch_first:
        rows = rows.T
    pad_row = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                   device=data.device)
    picked = index_select(cat([data, pad_row], 0), 0, tensor(rows.reshape(-1),
                                                             device=data.device))
    padded = reshape(picked, rows.shape + tuple(data.shape[1:]))
    out_lengths = tensor(np.asarray([lengths[j] for j in unsorted], dtype=np.int64))
    return padded, out_lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stack tensors of shapes ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` if
    ``batch_first``), padding with ``padding_value`` on ``padding_side``."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences[1:]:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have the trailing shape "
                               f"{list(trailing)} of the first, got {list(s.shape[1:])}")
    lengths = [s.shape[0] if s.ndim else 1 for s in sequences]
    B, T = len(sequences), max(lengths)
    N = sum(lengths)
    rows = np.full((T, B), N, dtype=np.int64)
    start = 0
    for b, n in enumerate(lengths):
        first = 0 if padding_side == "right" else T - n
        rows[first:first + n, b] = np.arange(start, start + n)
        start += n
    if batch_first:
        rows = rows.T
    dtype = sequences[0].dtype
    on = sequences[0].device
    pad_row = full((1,) + trailing, padding_value, dtype=dtype, device=on)
    pieces = [s if s.ndim else reshape(s, (1,)) for s in sequences]
    picked = index_select(cat(pieces + [pad_row], 0), 0, tensor(rows.reshape(-1), device=on))
    return reshape(picked, rows.shape + trailing)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = transpose(padded_sequences, 0, 1)
    return [padded_sequences[b, :n] for b, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
