"""``linear`` and ``bilinear``: affine maps of the last dimension, as PyTorch's."""

from __future__ import annotations

import numpy as np

from ...dispatch import dispatch
from ...fn import elementwise as _ew
from ...fn import linalg as _la
from ...fn.reduce import sum as _sum
from ...ops import shape as _shp

__all__ = ['linear', 'bilinear']


def _reshape(x, shape):
    return dispatch(_shp.Reshape, x, shape=tuple(shape))


def linear(input, weight, bias=None):
    """Applies an affine map to the last dimension: ``input @ weight.T + bias``.

    Args:
        input (Tensor): the input, ``(*, in_features)``.
        weight (Tensor): the weight, ``(out_features, in_features)``.
        bias (Tensor, optional): the bias, ``(out_features,)``. Default: ``None``

    Shape:
        - Input: ``(*, in_features)``, any number of leading dimensions.
        - Weight: ``(out_features, in_features)``; bias ``(out_features,)``.
        - Output: ``(*, out_features)``.

    Example::

        >>> w = eager.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
        >>> F.linear(eager.ones(2, 3), w, eager.tensor([0.0, 1.0]))
        tensor([[0.0000, 2.5000],
                [0.0000, 2.5000]])
        >>> F.linear(eager.randn(4, 3), eager.randn(5, 3)).shape
        eager.Size([4, 5])
    """
    return _la.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """Applies a bilinear map to two inputs.

    ``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    Args:
        input1 (Tensor): the first input, ``(*, in1_features)``.
        input2 (Tensor): the second input, ``(*, in2_features)``, with the same leading
            dimensions as ``input1``.
        weight (Tensor): the weight, ``(out_features, in1_features, in2_features)``.
        bias (Tensor, optional): the bias, ``(out_features,)``. Default: ``None``

    Shape:
        - Input1: ``(*, in1_features)``; Input2: ``(*, in2_features)``.
        - Output: ``(*, out_features)``.

    Example::

        >>> F.bilinear(eager.ones(2, 3), eager.ones(2, 4), eager.ones(5, 3, 4)).shape
        eager.Size([2, 5])
        >>> F.bilinear(eager.ones(1, 2), eager.ones(1, 2), eager.ones(1, 2, 2), eager.tensor([0.5]))
        tensor([[4.5000]])
    """
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    B = int(np.prod(lead, dtype=np.int64))
    x1 = _reshape(input1, (B, in1))
    x2 = _reshape(input2, (B, in2))
    w = _reshape(dispatch(_shp.Permute, weight, dims=(1, 0, 2)), (in1, out_f * in2))
    t = _reshape(_la.matmul(x1, w), (B, out_f, in2))
    y = _sum(_ew.mul(t, _reshape(x2, (B, 1, in2))), -1)
    if bias is not None:
        y = _ew.add(y, bias)
    return _reshape(y, lead + (out_f,))
