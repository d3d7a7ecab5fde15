"""``EmbeddingBag``: an embedding table whose forward reduces bags of rows (sum, mean or
max) with :func:`eager.nn.functional.embedding_bag`, PyTorch's parameters, initialization
and repr."""

from __future__ import annotations

from ..factories import empty
from . import init
from .fn.embedding_bag import embedding_bag
from .layers import Embedding
from .module import Module
from .parameter import Parameter

__all__ = ["EmbeddingBag"]


class EmbeddingBag(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim`` whose forward returns,
    for each bag of indices, the sum, mean or elementwise maximum of the bag's vectors,
    without forming the vectors of each bag (see :func:`eager.nn.functional.embedding_bag`).

    Args:
        num_embeddings (int): size of the table.
        embedding_dim (int): size of each vector.
        max_norm (float, optional): vectors used whose norm exceeds this are renormalized,
            in the table, to norm ``max_norm``.
        norm_type (float): the ``p`` of that norm. Default: 2.
        scale_grad_by_freq (bool): divide each vector's gradient by how often its index
            occurs in the input (not with ``mode="max"``). Default: False.
        mode (str): ``"sum"``, ``"mean"`` or ``"max"``. Default: ``"mean"``.
        sparse (bool): sparse gradients are not supported (eager raises for True).
        include_last_offset (bool): ``offsets`` ends with the end of the last bag.
            Default: False.
        padding_idx (int, optional): this vector starts at zero, is left out of every bag
            and gets no gradient.
        device, dtype: of the table.

    Shape:
        - Input: ``(B, N)``: ``B`` bags of ``N`` indices, ``offsets`` None; or ``(N)``
          with 1-D ``offsets`` giving where each bag starts.
        - per_sample_weights (optional, ``mode="sum"`` only): the shape of the input.
        - Output: ``(B, embedding_dim)``.

    Attributes:
        weight: ``(num_embeddings, embedding_dim)``, initialized from ``N(0, 1)``.

    Example::

        >>> bag = nn.EmbeddingBag(10, 3, mode="sum")
        >>> ix = eager.tensor([1, 2, 4, 5, 4, 3, 2, 9])
        >>> bag(ix, eager.tensor([0, 4])).shape
        eager.Size([2, 3])
        >>> bag
        EmbeddingBag(10, 3, mode='sum')
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0 and padding_idx >= num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            if padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype,
                                          device=device))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        Embedding._fill_padding_idx_with_zero(self)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False, padding_idx=None):
        """An ``EmbeddingBag`` whose table is ``embeddings`` (2-D), frozen unless
        ``freeze=False``; the other arguments as the constructor's.

        Args:
            embeddings (Tensor): ``(num_embeddings, embedding_dim)``.
            freeze (bool): the table gets no gradient. Default: True.

        Example::

            >>> bag = nn.EmbeddingBag.from_pretrained(eager.eye(3), mode="sum")
            >>> bag(eager.tensor([[0, 2]]))
            tensor([[1., 0., 1.]])
        """
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
