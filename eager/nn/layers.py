"""Basic layers: ``Identity``, ``Linear``, ``Bilinear``, ``Embedding``, ``Flatten``,
``Unflatten``, ``Dropout``, with PyTorch's parameters, default initialization and repr."""

from __future__ import annotations

import math

import numpy as np

from ..autograd.grad_mode import no_grad
from ..factories import empty, tensor
from ..fn.elementwise import mul
from ..fn.shape import flatten, unflatten
from ..inplace import inplace
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Bilinear", "Dropout", "Embedding", "Flatten", "Identity", "Linear", "Unflatten"]


def _wrap_dim(dim: int, ndim: int) -> int:
    """``dim`` counted from 0 (a 0-d tensor counts as one dimension); PyTorch's
    ``IndexError`` when it is out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


class Identity(Module):
    """A placeholder layer that returns its input unchanged.

    Useful to switch a layer off without changing the model's structure (e.g. replacing a
    classifier head). It holds no parameters and returns the very same tensor object.

    Args:
        args (Any): any positional arguments; ignored.
        kwargs (Any): any keyword arguments; ignored.

    Shape:
        - Input: ``(*)``, any shape.
        - Output: ``(*)``, the input itself.

    Example::

        >>> m = nn.Identity(54, unused_argument=0.1)
        >>> x = eager.randn(128, 20)
        >>> m(x).shape
        eager.Size([128, 20])
        >>> m(x) is x
        True
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """Applies an affine transformation: ``y = x W^T + b``.

    Args:
        in_features (int): size of each input sample.
        out_features (int): size of each output sample.
        bias (bool): if ``False``, the layer learns no additive bias. Default: ``True``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(*, H_in)`` with ``H_in = in_features`` and any number of leading dims.
        - Output: ``(*, H_out)`` with ``H_out = out_features``.

    Attributes:
        weight: ``(out_features, in_features)``, initialized from
            ``U(-sqrt(k), sqrt(k))`` with ``k = 1 / in_features`` (Kaiming uniform, as PyTorch).
        bias: ``(out_features,)``, initialized from the same distribution.

    Example::

        >>> m = nn.Linear(20, 30)
        >>> m(eager.randn(128, 20)).shape
        eager.Size([128, 30])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """Applies a bilinear transformation to two inputs: ``y = x1^T A x2 + b``.

    Each output feature ``o`` is ``sum_ij x1[..., i] * weight[o, i, j] * x2[..., j] + bias[o]``.
    The two inputs must have the same leading dimensions. This is ``F.bilinear``.

    Args:
        in1_features (int): size of each sample of the first input.
        in2_features (int): size of each sample of the second input.
        out_features (int): size of each output sample.
        bias (bool): if ``False``, the layer learns no additive bias. Default: ``True``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input1: ``(*, H_in1)`` with ``H_in1 = in1_features`` and any number of leading dims.
        - Input2: ``(*, H_in2)`` with ``H_in2 = in2_features`` and the same leading dims.
        - Output: ``(*, H_out)`` with ``H_out = out_features``.

    Attributes:
        weight: ``(out_features, in1_features, in2_features)``, initialized from
            ``U(-sqrt(k), sqrt(k))`` with ``k = 1 / in1_features``.
        bias: ``(out_features,)``, initialized from the same distribution.

    Example::

        >>> m = nn.Bilinear(20, 30, 40)
        >>> m(eager.randn(128, 20), eager.randn(128, 30)).shape
        eager.Size([128, 40])
        >>> m(eager.randn(5, 7, 20), eager.randn(5, 7, 30)).shape
        eager.Size([5, 7, 40])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``.

    Args:
        num_embeddings (int): size of the dictionary.
        embedding_dim (int): size of each vector.
        padding_idx (int, optional): this row starts at zero and gets no gradient.
        max_norm, norm_type, scale_grad_by_freq, sparse: PyTorch's names; eager raises
            NotImplementedError when ``max_norm``, ``scale_grad_by_freq=True`` or
            ``sparse=True`` is used.

    Shape:
        - Input: ``(*)``, integer indices of any shape.
        - Output: ``(*, embedding_dim)``.

    Attributes:
        weight: ``(num_embeddings, embedding_dim)``, initialized from ``N(0, 1)``.

    Example::

        >>> emb = nn.Embedding(10, 3)
        >>> emb(eager.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])).shape
        eager.Size([2, 4, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None,
                 max_norm=None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight=None, _freeze: bool = False, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, \
                    "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, \
                    "Padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            keep = np.ones((self.num_embeddings, 1), dtype=self.weight._data.dtype)
            keep[self.padding_idx] = 0
            with no_grad():
                inplace(self.weight, mul(self.weight, tensor(keep)), "fill_")

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None, **kwargs):
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, _weight=embeddings, _freeze=freeze,
                   **kwargs)


class Flatten(Module):
    """Flattens a contiguous range of dimensions into one.

    The dimensions ``start_dim`` to ``end_dim`` (both included, negative values counting from
    the end) are merged; the others are kept. The default keeps the batch dimension and
    flattens the rest, as before a :class:`Linear` layer. A 0-d input counts as one
    dimension (``Flatten(0)`` gives a 1-element 1-d tensor). An out-of-range
    ``start_dim``/``end_dim`` raises ``IndexError``, as in PyTorch (so the default needs at
    least 2 dimensions), and when they are equal the input itself is returned.

    Args:
        start_dim (int): first dimension to flatten. Default: ``1``.
        end_dim (int): last dimension to flatten. Default: ``-1``.

    Shape:
        - Input: ``(*, S_start, ..., S_end, *)``, any number of dimensions.
        - Output: ``(*, S_start * ... * S_end, *)``.

    Example::

        >>> x = eager.randn(32, 1, 5, 5)
        >>> nn.Flatten()(x).shape
        eager.Size([32, 25])
        >>> nn.Flatten(0, 2)(x).shape
        eager.Size([160, 5])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        nd = input.ndim
        s, e = _wrap_dim(self.start_dim, nd), _wrap_dim(self.end_dim, nd)
        return flatten(input, s, e)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits one dimension of the input into several: the inverse of :class:`Flatten`.

    Dimension ``dim`` (negative counts from the end) is reshaped into ``unflattened_size``,
    whose product must equal its size; one entry may be ``-1`` to be inferred. An
    out-of-range ``dim`` raises ``IndexError`` and ``unflattened_size`` must be a tuple or
    list of ints (else ``TypeError``), as in PyTorch; named-tensor sizes (a ``NamedShape``)
    are not supported.

    Args:
        dim (int): the dimension to split.
        unflattened_size (tuple or list of int): the sizes to split it into.

    Shape:
        - Input: ``(*, S_dim, *)``.
        - Output: ``(*, U_1, ..., U_n, *)``, with ``unflattened_size = (U_1, ..., U_n)`` and
          ``U_1 * ... * U_n = S_dim``.

    Example::

        >>> m = nn.Unflatten(1, (2, 5, 5))
        >>> m(eager.randn(2, 50)).shape
        eager.Size([2, 2, 5, 5])
        >>> nn.Unflatten(-1, (2, -1))(eager.randn(3, 4, 10)).shape
        eager.Size([3, 4, 2, 5])
        >>> nn.Sequential(nn.Flatten(), nn.Unflatten(1, (3, 4)))(eager.randn(2, 3, 4)).shape
        eager.Size([2, 3, 4])
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError("unflattened_size must be tuple of ints, but found element of "
                                f"type {type(elem).__name__} at pos {idx}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        d = _wrap_dim(self.dim, input.ndim)
        if input.ndim == 0:
            raise RuntimeError(f"unflatten: Dimension specified as {self.dim} but tensor has "
                               "no dimensions")
        return unflatten(input, d, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Dropout(Module):
    """In training mode, zeroes each element with probability ``p`` and scales the rest by
    ``1 / (1 - p)``; in eval mode, the identity.

    Args:
        p (float): probability of an element to be zeroed. Default: 0.5.
        inplace (bool): do it in place. Default: ``False``.

    Shape:
        - Input: ``(*)``; Output: ``(*)`` (same shape).

    Example::

        >>> m = nn.Dropout(p=0.2)
        >>> m(eager.randn(20, 16)).shape
        eager.Size([20, 16])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
