"""``embedding`` (rows of a table by index) and ``one_hot``, as PyTorch's."""

from __future__ import annotations

import numpy as np

from ...dispatch import dispatch
from ...fn import elementwise as _ew
from ...fn.index import index_select as _index_select
from ...ops import index as _ix
from ...ops import loss as _loss
from .linear import _reshape

__all__ = ['embedding', 'one_hot']

_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """Looks up rows of ``weight`` by index: ``out[...] = weight[input[...]]``.

    Args:
        input (Tensor): integer indices into the rows of ``weight``; other dtypes raise
            ``RuntimeError``.
        weight (Tensor): the table, ``(num_embeddings, embedding_dim)``.
        padding_idx (int, optional): a row (negative counts from the end) that gets no
            gradient; its value is looked up as it is (not zeroed here). Default: ``None``
        max_norm (float, optional): not supported here (anything but ``None`` raises
            ``NotImplementedError``). Default: ``None``
        norm_type (float, optional): the norm of ``max_norm``; unused here. Default: ``2.0``
        scale_grad_by_freq (bool, optional): not supported here (``True`` raises
            ``NotImplementedError``). Default: ``False``
        sparse (bool, optional): not supported here (``True`` raises ``NotImplementedError``).
            Default: ``False``

    Shape:
        - Input: ``(*)``, any shape of integer indices.
        - Weight: ``(num_embeddings, embedding_dim)``.
        - Output: ``(*, embedding_dim)``.

    Example::

        >>> table = eager.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 3.0]])
        >>> F.embedding(eager.tensor([[0, 2], [1, 0]]), table)
        tensor([[[0., 0.],
                 [2., 3.]],
        <BLANKLINE>
                [[1., 1.],
                 [0., 0.]]])
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not "
                                  "supported")
    if input._data.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.dtype} instead "
                           "(while checking arguments for embedding)")
    num, dim = weight.shape
    ix = input._data
    if type(ix) is np.ndarray and ix.dtype in _INDEX_DTYPES:
        # index_select's checks, then its Index op with the indices in their own shape
        # (the same rows, and the same accumulation order in the backward's np.add.at)
        if ix.size and (ix.min() < 0 or ix.max() >= num):
            raise IndexError("index out of range in self")
        out = dispatch(_ix.Index, weight, _reshape(input, (1,) + tuple(input.shape)),
                       dims=(0,))
    else:
        flat = _reshape(input, (-1,))
        out = _reshape(_index_select(weight, 0, flat), tuple(input.shape) + (dim,))
    if padding_idx is not None and out.requires_grad:
        if padding_idx < 0:
            padding_idx += num
        # the padding row gets no gradient (as PyTorch): route it through a detached copy
        keep = _reshape(_ew.ne(input, padding_idx), tuple(input.shape) + (1,))
        out = _ew.where(keep, out, out.detach())
    return out


def one_hot(tensor, num_classes: int = -1):
    """Encodes integer class indices as one-hot vectors: a 1 at each index, 0 elsewhere.

    Args:
        tensor (Tensor): integer class indices (other dtypes raise ``RuntimeError``); all
            must lie in ``[0, num_classes)``.
        num_classes (int, optional): the length of each vector; ``-1`` takes the largest
            index plus one (an empty ``tensor`` then raises ``RuntimeError``). Default: ``-1``

    Shape:
        - Input: ``(*)``.
        - Output: ``(*, num_classes)``, int64.

    Example::

        >>> F.one_hot(eager.tensor([0, 2, 1]))
        tensor([[1, 0, 0],
                [0, 0, 1],
                [0, 1, 0]])
        >>> F.one_hot(eager.tensor([0, 2]), num_classes=4)
        tensor([[1, 0, 0, 0],
                [0, 0, 1, 0]])
    """
    if tensor._data.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if not tensor.numel():
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    return dispatch(_loss.OneHot, tensor, num_classes=int(num_classes))
