"""Padding layers: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad`` and
``CircularPad`` in 1, 2 and 3 dimensions (``F.pad`` with a fixed amount and mode)."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


def _amounts(padding, nsp: int) -> tuple:
    if isinstance(padding, (tuple, list)):
        if len(padding) != 2 * nsp:
            raise ValueError(f"padding must be an int or a tuple of {2 * nsp} ints, got "
                             f"{tuple(padding)}")
        return tuple(padding)
    return (padding,) * (2 * nsp)


class _PadNd(Module):
    _nsp = 0
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _amounts(padding, self._nsp)

    def forward(self, input):
        n = self._nsp
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pads the last dimension of the input with the reflection of its border.

    The border element itself is not repeated: padding ``[0, 1, 2, 3]`` by 2 on each side
    gives ``[2, 1, 0, 1, 2, 3, 2, 1]``. Each amount must be smaller than the size of the
    dimension it pads (a ``RuntimeError`` otherwise); a negative amount crops instead.
    This is ``F.pad(input, padding, mode="reflect")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 2 ints gives ``(left, right)``.

    Shape:
        - Input: ``(C, W_in)`` or ``(N, C, W_in)``.
        - Output: ``(C, W_out)`` or ``(N, C, W_out)``, where
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ReflectionPad1d(2)
        >>> m(eager.arange(4.).reshape(1, 1, 4))
        tensor([[[2., 1., 0., 1., 2., 3., 2., 1.]]])
        >>> nn.ReflectionPad1d((3, 1))(eager.randn(2, 3, 8)).shape
        eager.Size([2, 3, 12])
    """

    _nsp = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pads the last two dimensions of the input with the reflection of its border.

    The border element itself is not repeated: padding ``[0, 1, 2, 3]`` by 2 on each side
    gives ``[2, 1, 0, 1, 2, 3, 2, 1]``. Each amount must be smaller than the size of the
    dimension it pads (a ``RuntimeError`` otherwise); a negative amount crops instead.
    This is ``F.pad(input, padding, mode="reflect")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 4 ints gives ``(left, right, top, bottom)``.

    Shape:
        - Input: ``(C, H_in, W_in)`` or ``(N, C, H_in, W_in)``.
        - Output: ``(C, H_out, W_out)`` or ``(N, C, H_out, W_out)``, where
          ``H_out = H_in + top + bottom`` and ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ReflectionPad2d(1)
        >>> m(eager.arange(9.).reshape(1, 1, 3, 3))
        tensor([[[[4., 3., 4., 5., 4.],
                  [1., 0., 1., 2., 1.],
                  [4., 3., 4., 5., 4.],
                  [7., 6., 7., 8., 7.],
                  [4., 3., 4., 5., 4.]]]])
        >>> nn.ReflectionPad2d((1, 1, 2, 0))(eager.randn(2, 3, 8, 8)).shape
        eager.Size([2, 3, 10, 10])
    """

    _nsp = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    """Pads the last three dimensions of the input with the reflection of its border.

    The border element itself is not repeated: padding ``[0, 1, 2, 3]`` by 2 on each side
    gives ``[2, 1, 0, 1, 2, 3, 2, 1]``. Each amount must be smaller than the size of the
    dimension it pads (a ``RuntimeError`` otherwise); a negative amount crops instead.
    This is ``F.pad(input, padding, mode="reflect")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 6 ints gives ``(left, right, top, bottom, front, back)``.

    Shape:
        - Input: ``(C, D_in, H_in, W_in)`` or ``(N, C, D_in, H_in, W_in)``.
        - Output: ``(C, D_out, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``, where
          ``D_out = D_in + front + back``, ``H_out = H_in + top + bottom`` and
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ReflectionPad3d(1)
        >>> m(eager.randn(2, 3, 4, 4, 4)).shape
        eager.Size([2, 3, 6, 6, 6])
        >>> nn.ReflectionPad3d((1, 0, 2, 0, 0, 3))(eager.randn(3, 4, 4, 4)).shape
        eager.Size([3, 7, 6, 5])
    """

    _nsp = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Pads the last dimension of the input by repeating its border elements.

    Padding ``[0, 1, 2, 3]`` by ``(1, 2)`` gives ``[0, 0, 1, 2, 3, 3, 3]``. A negative
    amount crops instead. This is ``F.pad(input, padding, mode="replicate")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 2 ints gives ``(left, right)``.

    Shape:
        - Input: ``(C, W_in)`` or ``(N, C, W_in)``.
        - Output: ``(C, W_out)`` or ``(N, C, W_out)``, where
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ReplicationPad1d((1, 2))
        >>> m(eager.arange(4.).reshape(1, 1, 4))
        tensor([[[0., 0., 1., 2., 3., 3., 3.]]])
    """

    _nsp = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pads the last two dimensions of the input by repeating its border elements.

    Padding ``[0, 1, 2, 3]`` by ``(1, 2)`` gives ``[0, 0, 1, 2, 3, 3, 3]``. A negative
    amount crops instead. This is ``F.pad(input, padding, mode="replicate")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 4 ints gives ``(left, right, top, bottom)``.

    Shape:
        - Input: ``(C, H_in, W_in)`` or ``(N, C, H_in, W_in)``.
        - Output: ``(C, H_out, W_out)`` or ``(N, C, H_out, W_out)``, where
          ``H_out = H_in + top + bottom`` and ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ReplicationPad2d((1, 0, 0, 1))
        >>> m(eager.arange(4.).reshape(1, 1, 2, 2))
        tensor([[[[0., 0., 1.],
                  [2., 2., 3.],
                  [2., 2., 3.]]]])
        >>> nn.ReplicationPad2d(2)(eager.randn(2, 3, 8, 8)).shape
        eager.Size([2, 3, 12, 12])
    """

    _nsp = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    """Pads the last three dimensions of the input by repeating its border elements.

    Padding ``[0, 1, 2, 3]`` by ``(1, 2)`` gives ``[0, 0, 1, 2, 3, 3, 3]``. A negative
    amount crops instead. This is ``F.pad(input, padding, mode="replicate")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 6 ints gives ``(left, right, top, bottom, front, back)``.

    Shape:
        - Input: ``(C, D_in, H_in, W_in)`` or ``(N, C, D_in, H_in, W_in)``.
        - Output: ``(C, D_out, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``, where
          ``D_out = D_in + front + back``, ``H_out = H_in + top + bottom`` and
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ReplicationPad3d(1)
        >>> m(eager.randn(2, 3, 4, 4, 4)).shape
        eager.Size([2, 3, 6, 6, 6])
    """

    _nsp = 3
    _mode = "replicate"


class CircularPad1d(_PadNd):
    """Pads the last dimension of the input by wrapping it around (periodic padding).

    The left padding is taken from the right end of the input and the right padding from
    its left end: padding ``[0, 1, 2, 3]`` by 1 gives ``[3, 0, 1, 2, 3, 0]``. An amount
    may not exceed the size of the dimension it pads (the input wraps around at most
    once); a negative amount crops instead.
    This is ``F.pad(input, padding, mode="circular")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 2 ints gives ``(left, right)``.

    Shape:
        - Input: ``(C, W_in)`` or ``(N, C, W_in)``.
        - Output: ``(C, W_out)`` or ``(N, C, W_out)``, where
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.CircularPad1d(1)
        >>> m(eager.arange(4.).reshape(1, 1, 4))
        tensor([[[3., 0., 1., 2., 3., 0.]]])
    """

    _nsp = 1
    _mode = "circular"


class CircularPad2d(_PadNd):
    """Pads the last two dimensions of the input by wrapping it around (periodic padding).

    The left padding is taken from the right end of the input and the right padding from
    its left end: padding ``[0, 1, 2, 3]`` by 1 gives ``[3, 0, 1, 2, 3, 0]``. An amount
    may not exceed the size of the dimension it pads (the input wraps around at most
    once); a negative amount crops instead.
    This is ``F.pad(input, padding, mode="circular")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 4 ints gives ``(left, right, top, bottom)``.

    Shape:
        - Input: ``(C, H_in, W_in)`` or ``(N, C, H_in, W_in)``.
        - Output: ``(C, H_out, W_out)`` or ``(N, C, H_out, W_out)``, where
          ``H_out = H_in + top + bottom`` and ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.CircularPad2d((1, 1, 0, 1))
        >>> m(eager.arange(4.).reshape(1, 1, 2, 2))
        tensor([[[[1., 0., 1., 0.],
                  [3., 2., 3., 2.],
                  [1., 0., 1., 0.]]]])
        >>> nn.CircularPad2d(2)(eager.randn(2, 3, 8, 8)).shape
        eager.Size([2, 3, 12, 12])
    """

    _nsp = 2
    _mode = "circular"


class CircularPad3d(_PadNd):
    """Pads the last three dimensions of the input by wrapping it around (periodic padding).

    The left padding is taken from the right end of the input and the right padding from
    its left end: padding ``[0, 1, 2, 3]`` by 1 gives ``[3, 0, 1, 2, 3, 0]``. An amount
    may not exceed the size of the dimension it pads (the input wraps around at most
    once); a negative amount crops instead.
    This is ``F.pad(input, padding, mode="circular")``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 6 ints gives ``(left, right, top, bottom, front, back)``.

    Shape:
        - Input: ``(C, D_in, H_in, W_in)`` or ``(N, C, D_in, H_in, W_in)``.
        - Output: ``(C, D_out, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``, where
          ``D_out = D_in + front + back``, ``H_out = H_in + top + bottom`` and
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.CircularPad3d(1)
        >>> m(eager.randn(2, 3, 4, 4, 4)).shape
        eager.Size([2, 3, 6, 6, 6])
    """

    _nsp = 3
    _mode = "circular"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension of the input with a constant value.

    A negative amount crops instead of padding. Unlike the other padding modules, the input may
    have any number of leading dimensions. This is ``F.pad(input, padding, value=value)``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 2 ints gives ``(left, right)``.
        value (float): the value written into the padded positions.

    Shape:
        - Input: ``(*, W_in)``, at least 1 dimension.
        - Output: ``(*, W_out)``, where
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ConstantPad1d(2, 3.5)
        >>> m(eager.arange(4.).reshape(1, 4))
        tensor([[3.5000, 3.5000, 0.0000, 1.0000, 2.0000, 3.0000, 3.5000, 3.5000]])
        >>> nn.ConstantPad1d((3, 1), 0.0)(eager.randn(2, 3, 8)).shape
        eager.Size([2, 3, 12])
    """

    _nsp = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dimensions of the input with a constant value.

    A negative amount crops instead of padding. Unlike the other padding modules, the input may
    have any number of leading dimensions. This is ``F.pad(input, padding, value=value)``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 4 ints gives ``(left, right, top, bottom)``.
        value (float): the value written into the padded positions.

    Shape:
        - Input: ``(*, H_in, W_in)``, at least 2 dimensions.
        - Output: ``(*, H_out, W_out)``, where
          ``H_out = H_in + top + bottom`` and ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ConstantPad2d((1, 0, 0, 1), -1.0)
        >>> m(eager.ones(1, 2, 2))
        tensor([[[-1.,  1.,  1.],
                 [-1.,  1.,  1.],
                 [-1., -1., -1.]]])
        >>> nn.ConstantPad2d(2, 0.5)(eager.randn(2, 3, 8, 8)).shape
        eager.Size([2, 3, 12, 12])
    """

    _nsp = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dimensions of the input with a constant value.

    A negative amount crops instead of padding. Unlike the other padding modules, the input may
    have any number of leading dimensions. This is ``F.pad(input, padding, value=value)``.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 6 ints gives ``(left, right, top, bottom, front, back)``.
        value (float): the value written into the padded positions.

    Shape:
        - Input: ``(*, D_in, H_in, W_in)``, at least 3 dimensions.
        - Output: ``(*, D_out, H_out, W_out)``, where
          ``D_out = D_in + front + back``, ``H_out = H_in + top + bottom`` and
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ConstantPad3d((1, 1, 2, 2, 0, 1), 3.0)
        >>> m(eager.randn(2, 3, 4, 4, 4)).shape
        eager.Size([2, 3, 5, 8, 6])
    """

    _nsp = 3


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dimension of the input with zeros.

    The same as ``ConstantPad1d(padding, 0.0)``: a negative amount crops, and the input may
    have any number of leading dimensions.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 2 ints gives ``(left, right)``.

    Shape:
        - Input: ``(*, W_in)``, at least 1 dimension.
        - Output: ``(*, W_out)``, where
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ZeroPad1d((1, 2))
        >>> m(eager.ones(1, 2, 3))
        tensor([[[0., 1., 1., 1., 0., 0.],
                 [0., 1., 1., 1., 0., 0.]]])
        >>> nn.ZeroPad1d(-1)(eager.arange(4.).reshape(1, 4))
        tensor([[1., 2.]])
    """

    _nsp = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last two dimensions of the input with zeros.

    The same as ``ConstantPad2d(padding, 0.0)``: a negative amount crops, and the input may
    have any number of leading dimensions.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 4 ints gives ``(left, right, top, bottom)``.

    Shape:
        - Input: ``(*, H_in, W_in)``, at least 2 dimensions.
        - Output: ``(*, H_out, W_out)``, where
          ``H_out = H_in + top + bottom`` and ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ZeroPad2d((1, 1, 2, 0))
        >>> m(eager.ones(1, 2, 2))
        tensor([[[0., 0., 0., 0.],
                 [0., 0., 0., 0.],
                 [0., 1., 1., 0.],
                 [0., 1., 1., 0.]]])
        >>> nn.ZeroPad2d(3)(eager.randn(2, 3, 8, 8)).shape
        eager.Size([2, 3, 14, 14])
    """

    _nsp = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last three dimensions of the input with zeros.

    The same as ``ConstantPad3d(padding, 0.0)``: a negative amount crops, and the input may
    have any number of leading dimensions.

    Args:
        padding (int or tuple): the padding amounts. An int pads every side by the same
            amount; a tuple of 6 ints gives ``(left, right, top, bottom, front, back)``.

    Shape:
        - Input: ``(*, D_in, H_in, W_in)``, at least 3 dimensions.
        - Output: ``(*, D_out, H_out, W_out)``, where
          ``D_out = D_in + front + back``, ``H_out = H_in + top + bottom`` and
          ``W_out = W_in + left + right``.

    Example::

        >>> m = nn.ZeroPad3d((1, 1, 2, 2, 0, 1))
        >>> m(eager.randn(2, 3, 4, 4, 4)).shape
        eager.Size([2, 3, 5, 8, 6])
    """

    _nsp = 3
