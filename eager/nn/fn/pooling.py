"""Pooling with PyTorch's signatures, output sizes (``ceil_mode``, ``count_include_pad``,
``divisor_override``), index format and error messages.

Max and average pooling read every window through ``im2col``
(:class:`eager.ops.window.Im2col`, padding reads ``-inf`` for max, 0 for average) as an
``(N, C, kernel, L)`` array: average pooling sums the kernel axis and divides by the
window's divisor; max pooling takes the ``argmax`` over it (the first maximum, NaN
counting as the largest, as PyTorch) and picks that element, so the gradient goes to that
element only.  ``return_indices`` gives PyTorch's indices: positions in the flattened
spatial dimensions of each input plane.  Adaptive average pooling multiplies each spatial
dimension by an averaging matrix; adaptive max pooling gathers the (variable-size)
windows, or pools with a fixed window when the sizes divide.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as _dt
from ...amp.autocast_mode import cast_inputs as _autocast
from ...dispatch import dispatch
from ...dtypes import is_float as _isf
from ...factories import arange, tensor
from ...fn import elementwise as _ew
from ...fn.shape import narrow
from ...ops import index as _ix
from ...ops import reduce as _red
from ...ops import shape as _shp
from ...ops import window as _win
from .args import along, batched, ntuple, reshape, shape_list, unbatched

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d",
           "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d"]

_COUNT = {1: "one", 2: "two", 3: "three"}


# -- arguments and output size ------------------------------------------------------------

def _arg(name: str, what: str, value, nsp: int, omitted_ok: bool = False) -> tuple:
    if omitted_ok and (value is None or (isinstance(value, (tuple, list)) and not value)):
        return None
    t = ntuple(value, nsp)
    if t is None:
        if nsp == 1 and name == "max_pool1d":
            size = len(value) if isinstance(value, (tuple, list)) else value
            raise RuntimeError(f"max_pool1d() {what} must be an int, list of ints or tuple of "
                               f"ints of size 1 but got size {size}")
        lead = f"{name}: {what} must either be "
        lead += "omitted, a single int," if omitted_ok else "a single int,"
        if what == "dilation":
            lead = f"{name}: dilation must be either a single int,"
        raise RuntimeError(f"{lead} or a tuple of {_COUNT[nsp]} ints")
    return t


def _letters(nsp: int) -> tuple:
    return ("D", "H", "W")[3 - nsp:]


def _check_values(name, kernel, stride, padding, dilation):
    nsp = len(kernel)
    if name == "max_pool1d":
        if kernel[0] <= 0:
            raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got "
                               f"{kernel[0]}")
        if stride[0] <= 0:
            raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got "
                               f"{stride[0]}")
        if padding[0] < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got "
                               f"{padding[0]}")
        if padding[0] > kernel[0] // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, "
                               f"but got padding={padding[0]} and kernel_size={kernel[0]}")
        if dilation[0] <= 0:
            raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got "
                               f"{dilation[0]}")
        return
    letters = _letters(nsp)
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"k{a}: {k}" for a, k in zip(letters, kernel)))
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(s < 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got "
                           + " ".join(f"d{a}: {s}" for a, s in zip(letters, stride)))
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"dilation{a}: {d}" for a, d in zip(letters, dilation)))
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > _win.span(k, d) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")


def pool_output_size(size: int, kernel: int, stride: int, pad: int, dilation: int,
                     ceil_mode: bool) -> int:
    """PyTorch's ``pooling_output_shape``: with ``ceil_mode`` the last window may start in
    the right padding but not beyond it."""
    num = size + 2 * pad - _win.span(kernel, dilation) + (stride - 1 if ceil_mode else 0)
    out = num // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _check_input(name: str, input, nsp: int):
    nd = input.ndim
    if name == "max_pool1d" and (nd not in (2, 3) or any(s == 0 for s in input.shape[-2:])):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{shape_list(input)}")
    if name.startswith("avg_pool1d") and nd not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {name})")
    if nd not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"non-empty {nsp + 1}D or {nsp + 2}D (batch mode) tensor expected "
                           "for input")
    if any(s == 0 for s in input.shape[nd - nsp - 1:]):
        raise RuntimeError(f"Expected {nsp + 1}D or {nsp + 2}D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{shape_list(input)}")


def _geometry(name, x, kernel, stride, padding, dilation, ceil_mode):
    """Output size and the im2col (lo, hi) padding that makes exactly those windows."""
    size = tuple(x.shape[2:])
    out = tuple(pool_output_size(*a, ceil_mode)
                for a in zip(size, kernel, stride, padding, dilation))
    if any(o < 1 for o in out):
        if name == "max_pool1d":
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out[0]}")
        c = x.shape[1]
        shown_in = (c,) + ((1,) if len(size) == 1 else ()) + size
        shown_out = (c,) + ((1,) if len(size) == 1 else ()) + out
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, shown_in))}). Calculated "
                           f"output size: ({'x'.join(map(str, shown_out))}). Output size is "
                           "too small")
    pads = tuple((p, (o - 1) * s + _win.span(k, d) - n - p)
                 for n, o, k, s, p, d in zip(size, out, kernel, stride, padding, dilation))
    return out, pads


def _parse(name, nsp, input, kernel_size, stride, padding, dilation):
    kernel = _arg(name, "kernel_size", kernel_size, nsp)
    stride = _arg(name, "stride", stride, nsp, omitted_ok=True) or kernel
    padding = _arg(name, "padding", padding, nsp)
    dilation = _arg(name, "dilation", dilation, nsp)
    _check_values(name, kernel, stride, padding, dilation)
    _check_input(name, input, nsp)
    return kernel, stride, padding, dilation


# -- max pooling --------------------------------------------------------------------------

def _lowest(dtype):
    return -math.inf if _isf(dtype) else int(np.iinfo(dtype).min)


def _pick_max(cols, index_cols, n: int, c: int, out_size: tuple, return_indices: bool):
    """Max over axis 2 of ``cols`` ``(N, C, K, L)``; with ``return_indices`` also the entry
    of ``index_cols`` (``(1, 1, K, L)`` int64) at each maximum."""
    arg = dispatch(_red.Argmax, cols, dim=(2,), keepdim=True)
    out = reshape(dispatch(_red.PickAlongDim, cols, arg, dim=2, keepdim=False),
                  (n, c) + out_size)
    if not return_indices:
        return out
    full = dispatch(_shp.Expand, index_cols, shape=tuple(cols.shape))
    ind = dispatch(_red.PickAlongDim, full, arg, dim=2, keepdim=False)
    return out, reshape(ind, (n, c) + out_size)


def _spatial_index(size: tuple, device):
    """``(1, 1, *size)`` int64 tensor numbering the flattened spatial positions."""
    return reshape(arange(_win.prod(size), dtype=_dt.int64, device=device), (1, 1) + size)


def _max_pool(name, nsp, input, kernel_size, stride, padding, dilation, ceil_mode,
              return_indices):
    kernel, stride, padding, dilation = _parse(name, nsp, input, kernel_size, stride, padding,
                                               dilation)
    x, added = batched(input, nsp + 2)
    out_size, pads = _geometry(name, x, kernel, stride, padding, dilation, ceil_mode)
    n, c = x.shape[:2]
    kn, length = _win.prod(kernel), _win.prod(out_size)
    geo = dict(kernel=kernel, dilation=dilation, padding=pads, stride=stride)
    cols = dispatch(_win.Im2col, x, fill=_lowest(x._data.dtype), **geo)
    cols = reshape(cols, (n, c, kn, length))
    index_cols = None
    if return_indices:
        where = _spatial_index(tuple(x.shape[2:]), x.device)
        index_cols = reshape(dispatch(_win.Im2col, where, fill=-1, **geo), (1, 1, kn, length))
    res = _pick_max(cols, index_cols, n, c, out_size, return_indices)
    if return_indices:
        return unbatched(res[0], added), unbatched(res[1], added)
    return unbatched(res, added)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Applies 1-D max pooling over ``(N, C, L)`` input: the maximum of each window.

    Integer dtypes are supported.  The gradient goes to the first maximal element of each
    window (NaN counts as the largest, as PyTorch).

    Args:
        input (Tensor): the input, ``(N, C, L)`` or unbatched ``(C, L)``.
        kernel_size (int or tuple): the window size, one int or one per spatial dimension.
        stride (int or tuple, optional): the step between windows. Default: ``None``
            (``kernel_size``)
        padding (int or tuple, optional): implicit ``-inf`` padding on both sides of each
            spatial dimension, at most half of ``kernel_size``. Default: ``0``
        dilation (int or tuple, optional): the spacing between window elements. Default: ``1``
        ceil_mode (bool, optional): round the output size up, so a last partial window is
            kept (it must start inside the input or the left padding). Default: ``False``
        return_indices (bool, optional): also return the position of each maximum, as an
            int64 index into the flattened spatial dimensions of its input plane (what
            ``nn.MaxUnpool1d`` takes). Default: ``False``

    Shape:
        - Input: ``(N, C, L)`` or ``(C, L)``.
        - Output: ``(N, C, L_out)`` or without ``N``, each spatial size
          ``floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1``
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> x = eager.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]])
        >>> F.max_pool1d(x, 2)
        tensor([[[3., 5.]]])
        >>> F.max_pool1d(x, 2, ceil_mode=True)
        tensor([[[3., 5., 4.]]])
        >>> F.max_pool1d(x, 3, stride=1, return_indices=True)
        (tensor([[[3., 5., 5.]]]), tensor([[[1, 3, 3]]]))
    """
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Applies 2-D max pooling over ``(N, C, H, W)`` input: the maximum of each window.

    Integer dtypes are supported.  The gradient goes to the first maximal element of each
    window (NaN counts as the largest, as PyTorch).

    Args:
        input (Tensor): the input, ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        kernel_size (int or tuple): the window size, one int or one per spatial dimension.
        stride (int or tuple, optional): the step between windows. Default: ``None``
            (``kernel_size``)
        padding (int or tuple, optional): implicit ``-inf`` padding on both sides of each
            spatial dimension, at most half the dilated window. Default: ``0``
        dilation (int or tuple, optional): the spacing between window elements. Default: ``1``
        ceil_mode (bool, optional): round the output size up, so a last partial window is
            kept (it must start inside the input or the left padding). Default: ``False``
        return_indices (bool, optional): also return the position of each maximum, as an
            int64 index into the flattened spatial dimensions of its input plane (what
            ``nn.MaxUnpool2d`` takes). Default: ``False``

    Shape:
        - Input: ``(N, C, H, W)`` or ``(C, H, W)``.
        - Output: ``(N, C, H_out, W_out)`` or without ``N``, each spatial size
          ``floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1``
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> x = eager.tensor([[[[1.0, 2.0, 0.0, 1.0],
        ...                     [3.0, 4.0, 1.0, 0.0],
        ...                     [0.0, 0.0, 5.0, 6.0],
        ...                     [1.0, 2.0, 7.0, 8.0]]]])
        >>> out, idx = F.max_pool2d(x, 2, return_indices=True)
        >>> out
        tensor([[[[4., 1.],
                  [2., 8.]]]])
        >>> idx
        tensor([[[[ 5,  3],
                  [13, 15]]]])
        >>> F.max_pool2d(eager.randn(2, 3, 9, 9), 3, stride=2, padding=1).shape
        eager.Size([2, 3, 5, 5])
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Applies 3-D max pooling over ``(N, C, D, H, W)`` input: the maximum of each window.

    Integer dtypes are supported.  The gradient goes to the first maximal element of each
    window (NaN counts as the largest, as PyTorch).

    Args:
        input (Tensor): the input, ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)``.
        kernel_size (int or tuple): the window size, one int or one per spatial dimension.
        stride (int or tuple, optional): the step between windows. Default: ``None``
            (``kernel_size``)
        padding (int or tuple, optional): implicit ``-inf`` padding on both sides of each
            spatial dimension, at most half the dilated window. Default: ``0``
        dilation (int or tuple, optional): the spacing between window elements. Default: ``1``
        ceil_mode (bool, optional): round the output size up, so a last partial window is
            kept (it must start inside the input or the left padding). Default: ``False``
        return_indices (bool, optional): also return the position of each maximum, as an
            int64 index into the flattened spatial dimensions of its input plane (what
            ``nn.MaxUnpool3d`` takes). Default: ``False``

    Shape:
        - Input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
        - Output: ``(N, C, D_out, H_out, W_out)`` or without ``N``, each spatial size
          ``floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1``
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> F.max_pool3d(eager.arange(8.).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[7.]]]]])
        >>> F.max_pool3d(eager.randn(1, 2, 4, 4, 4), 2).shape
        eager.Size([1, 2, 2, 2, 2])
    """
    (input,) = _autocast("max_pool3d", input)
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


# -- average pooling ----------------------------------------------------------------------

def _divisor_counts(size, out, kernel, stride, pad, count_include_pad) -> np.ndarray:
    """Per-output-position divisor along one dimension (PyTorch's ``pool_size`` when
    ``count_include_pad`` else the number of input elements in the window)."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(name, nsp, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    kernel, stride, padding, dilation = _parse(name, nsp, input, kernel_size, stride, padding, 1)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if not _isf(input._data.dtype):
        raise RuntimeError(f"\"{name}\" not implemented for '{input.dtype}' (pass a floating "
                           "point tensor)")
    x, added = batched(input, nsp + 2)
    out_size, pads = _geometry(name, x, kernel, stride, padding, dilation, ceil_mode)
    n, c = x.shape[:2]
    kn, length = _win.prod(kernel), _win.prod(out_size)
    cols = dispatch(_win.Im2col, x, kernel=kernel, dilation=dilation, padding=pads,
                    stride=stride, fill=0)
    total = dispatch(_red.Sum, reshape(cols, (n, c, kn, length)), dim=(2,), keepdim=False,
                     dtype=None)
    if divisor_override is not None:
        divisor = int(divisor_override)
    else:
        counts = np.ones((), dtype=np.int64)
        for a in zip(tuple(x.shape[2:]), out_size, kernel, stride, padding):
            counts = np.multiply.outer(counts, _divisor_counts(*a, count_include_pad))
        counts = counts.reshape(-1)
        if (counts == counts[0]).all():
            divisor = int(counts[0])
        else:
            divisor = tensor(counts.astype(x._data.dtype), device=x.device)
    out = reshape(_ew.div(total, divisor), (n, c) + out_size)
    return unbatched(out, added)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True):
    """Applies 1-D average pooling over ``(N, C, L)`` input: the mean of each window.

    The input must be floating point.  By default each window sum is divided by the window
    size, padding included (``count_include_pad``); a ``ceil_mode`` window's part beyond
    the padding never counts.  (Like PyTorch's, it takes no ``divisor_override``.)

    Args:
        input (Tensor): the input, ``(N, C, L)`` or unbatched ``(C, L)``.
        kernel_size (int or tuple): the window size, one int or one per spatial dimension.
        stride (int or tuple, optional): the step between windows. Default: ``None``
            (``kernel_size``)
        padding (int or tuple, optional): implicit zero padding on both sides of each
            spatial dimension, at most half the window. Default: ``0``
        ceil_mode (bool, optional): round the output size up, so a last partial window is
            kept. Default: ``False``
        count_include_pad (bool, optional): count the padding in the divisor; ``False``
            divides by the number of input elements in the window. Default: ``True``

    Shape:
        - Input: ``(N, C, L)`` or ``(C, L)``.
        - Output: ``(N, C, L_out)`` or without ``N``, each spatial size
          ``floor((in + 2 * padding - (kernel - 1) - 1) / stride) + 1``
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> x = eager.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
        >>> F.avg_pool1d(x, 2)
        tensor([[[1.5000, 3.5000]]])
        >>> F.avg_pool1d(x, 3, stride=1, padding=1)
        tensor([[[1., 2., 3., 4., 3.]]])
        >>> F.avg_pool1d(x, 3, stride=1, padding=1, count_include_pad=False)
        tensor([[[1.5000, 2.0000, 3.0000, 4.0000, 4.5000]]])
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """Applies 2-D average pooling over ``(N, C, H, W)`` input: the mean of each window.

    The input must be floating point.  By default each window sum is divided by the window
    size, padding included (``count_include_pad``); a ``ceil_mode`` window's part beyond
    the padding never counts.

    Args:
        input (Tensor): the input, ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        kernel_size (int or tuple): the window size, one int or one per spatial dimension.
        stride (int or tuple, optional): the step between windows. Default: ``None``
            (``kernel_size``)
        padding (int or tuple, optional): implicit zero padding on both sides of each
            spatial dimension, at most half the window. Default: ``0``
        ceil_mode (bool, optional): round the output size up, so a last partial window is
            kept. Default: ``False``
        count_include_pad (bool, optional): count the padding in the divisor; ``False``
            divides by the number of input elements in the window. Default: ``True``
        divisor_override (int, optional): divide every window's sum by this instead.
            Default: ``None``

    Shape:
        - Input: ``(N, C, H, W)`` or ``(C, H, W)``.
        - Output: ``(N, C, H_out, W_out)`` or without ``N``, each spatial size
          ``floor((in + 2 * padding - (kernel - 1) - 1) / stride) + 1``
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> x = eager.tensor([[[[1.0, 2.0, 0.0, 1.0],
        ...                     [3.0, 4.0, 1.0, 0.0],
        ...                     [0.0, 0.0, 5.0, 6.0],
        ...                     [1.0, 2.0, 7.0, 8.0]]]])
        >>> F.avg_pool2d(x, 2)
        tensor([[[[2.5000, 0.5000],
                  [0.7500, 6.5000]]]])
        >>> F.avg_pool2d(x, 2, divisor_override=1)
        tensor([[[[10.,  2.],
                  [ 3., 26.]]]])
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """Applies 3-D average pooling over ``(N, C, D, H, W)`` input: the mean of each window.

    The input must be floating point.  By default each window sum is divided by the window
    size, padding included (``count_include_pad``); a ``ceil_mode`` window's part beyond
    the padding never counts.

    Args:
        input (Tensor): the input, ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)``.
        kernel_size (int or tuple): the window size, one int or one per spatial dimension.
        stride (int or tuple, optional): the step between windows. Default: ``None``
            (``kernel_size``)
        padding (int or tuple, optional): implicit zero padding on both sides of each
            spatial dimension, at most half the window. Default: ``0``
        ceil_mode (bool, optional): round the output size up, so a last partial window is
            kept. Default: ``False``
        count_include_pad (bool, optional): count the padding in the divisor; ``False``
            divides by the number of input elements in the window. Default: ``True``
        divisor_override (int, optional): divide every window's sum by this instead.
            Default: ``None``

    Shape:
        - Input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
        - Output: ``(N, C, D_out, H_out, W_out)`` or without ``N``, each spatial size
          ``floor((in + 2 * padding - (kernel - 1) - 1) / stride) + 1``
          (``ceil`` instead of ``floor`` with ``ceil_mode``).

    Example::

        >>> F.avg_pool3d(eager.arange(8.).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[3.5000]]]]])
        >>> F.avg_pool3d(eager.randn(1, 2, 4, 4, 4), 2).shape
        eager.Size([1, 2, 2, 2, 2])
    """
    (input,) = _autocast("avg_pool3d", input)
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


# -- adaptive pooling ---------------------------------------------------------------------

def _adaptive_args(name: str, input, output_size, nsp: int) -> tuple:
    nd = input.ndim
    if nd not in (nsp + 1, nsp + 2):
        if nsp == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor "
                               f"for argument #1 'self' (while checking arguments for {name})")
        sep = ": " if "max" in name else " "
        raise RuntimeError(f"{name}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got"
                           f"{sep}{shape_list(input)}")
    for d in range(nd - nsp, nd):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {shape_list(input)} with "
                               f"dimension {d} being empty")
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        sizes = (output_size,) * nsp
    else:
        sizes = tuple(output_size)
        if len(sizes) != nsp:
            if nsp == 1:
                raise RuntimeError(f"{name}() argument 'output_size' should contain one int "
                                   f"(got {len(sizes)})")
            if "max" in name and nsp > 1:
                raise RuntimeError(f"{name}(): internal error: output_size.size() must be "
                                   f"{nsp}")
            raise RuntimeError(f"{name}: output_size must be {nsp}")
    spatial = tuple(input.shape[nd - nsp:])
    out = tuple(s if o is None else int(o) for o, s in zip(sizes, spatial))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to "
                           f"0 but received {list(out)}")
    return spatial, out


def _bounds(size: int, out: int):
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)      # floor, ceil


def _averaging_matrix(size: int, out: int, dtype) -> np.ndarray:
    start, end = _bounds(size, out)
    a = np.zeros((out, size), dtype=dtype)
    for i, (s, e) in enumerate(zip(start, end)):
        a[i, s:e] = 1.0 / (e - s)
    return a


def _adaptive_avg(name, nsp, input, output_size):
    spatial, out = _adaptive_args(name, input, output_size, nsp)
    if not _isf(input._data.dtype):
        raise RuntimeError(f"\"{name}\" not implemented for '{input.dtype}'")
    x = input
    nd = x.ndim
    for i in range(nsp):
        d = nd - nsp + i
        s, o = spatial[i], out[i]
        if s == o:
            continue
        if o == 1:
            x = dispatch(_red.Mean, x, dim=(d,), keepdim=True, dtype=None)
            continue
        x = along(x, d, _averaging_matrix(s, o, x._data.dtype))
    return x


def adaptive_avg_pool1d(input, output_size):
    """Applies 1-D adaptive average pooling to a fixed output size.

    The windows are chosen so that the output has spatial size ``output_size`` whatever the
    input size: output element ``i`` of a dimension of size ``S`` pooled to ``O`` averages input
    elements ``floor(i * S / O)`` to ``ceil((i + 1) * S / O) - 1``.  The input must be
    floating point.

    Args:
        input (Tensor): the input, ``(N, C, L)`` or unbatched ``(C, L)``.
        output_size (int, None or tuple): the output size (L), one int for all
            spatial dimensions or one entry each; ``None`` keeps that dimension's size.

    Shape:
        - Input: ``(N, C, L)`` or ``(C, L)``.
        - Output: ``(N, C, *output_size)`` or without ``N``.

    Example::

        >>> F.adaptive_avg_pool1d(eager.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]]), 2)
        tensor([[[2., 4.]]])
    """
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Applies 2-D adaptive average pooling to a fixed output size.

    The windows are chosen so that the output has spatial size ``output_size`` whatever the
    input size: output element ``i`` of a dimension of size ``S`` pooled to ``O`` averages input
    elements ``floor(i * S / O)`` to ``ceil((i + 1) * S / O) - 1``.  The input must be
    floating point.

    Args:
        input (Tensor): the input, ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        output_size (int, None or tuple): the output size (H, W), one int for all
            spatial dimensions or one entry each; ``None`` keeps that dimension's size.

    Shape:
        - Input: ``(N, C, H, W)`` or ``(C, H, W)``.
        - Output: ``(N, C, *output_size)`` or without ``N``.

    Example::

        >>> F.adaptive_avg_pool2d(eager.randn(2, 3, 7, 9), (3, 3)).shape
        eager.Size([2, 3, 3, 3])
        >>> F.adaptive_avg_pool2d(eager.randn(2, 3, 7, 9), (None, 2)).shape
        eager.Size([2, 3, 7, 2])
        >>> F.adaptive_avg_pool2d(eager.arange(4.).reshape(1, 1, 2, 2), 1)
        tensor([[[[1.5000]]]])
    """
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Applies 3-D adaptive average pooling to a fixed output size.

    The windows are chosen so that the output has spatial size ``output_size`` whatever the
    input size: output element ``i`` of a dimension of size ``S`` pooled to ``O`` averages input
    elements ``floor(i * S / O)`` to ``ceil((i + 1) * S / O) - 1``.  The input must be
    floating point.

    Args:
        input (Tensor): the input, ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)``.
        output_size (int, None or tuple): the output size (D, H, W), one int for all
            spatial dimensions or one entry each; ``None`` keeps that dimension's size.

    Shape:
        - Input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
        - Output: ``(N, C, *output_size)`` or without ``N``.

    Example::

        >>> F.adaptive_avg_pool3d(eager.randn(1, 2, 5, 6, 7), (1, 2, 3)).shape
        eager.Size([1, 2, 1, 2, 3])
    """
    (input,) = _autocast("adaptive_avg_pool3d", input)
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


#: PyTorch's CPU kernel names, in its error for an integer or bool input
_ADAPTIVE_MAX_KERNEL = {1: "adaptive_max_pool2d", 2: "adaptive_max_pool2d",
                        3: "adaptive_max_pool3d_cpu"}


def _adaptive_max(name, nsp, input, output_size, return_indices):
    spatial, out = _adaptive_args(name, input, output_size, nsp)
    if not _isf(input._data.dtype):
        raise NotImplementedError(f'"{_ADAPTIVE_MAX_KERNEL[nsp]}" not implemented for '
                                  f"'{_dt.scalar_name(input._data.dtype)}'")
    if 0 in out:  # an empty result (still on the autograd graph)
        lead = tuple(input.shape[:input.ndim - nsp])
        res = reshape(narrow(input, input.ndim - nsp + out.index(0), 0, 0), lead + out)
        if return_indices:
            return res, tensor(np.zeros(lead + out, dtype=np.int64))
        return res
    if all(s % o == 0 for s, o in zip(spatial, out)):
        kernel = tuple(s // o for s, o in zip(spatial, out))
        return _max_pool("adaptive_max_pool", nsp, input, kernel, kernel, 0, 1, False,
                         return_indices)
    x, added = batched(input, nsp + 2)
    n, c = x.shape[:2]
    # windows as index arrays of the largest window size, shorter ones repeating their
    # last element (a repeat changes neither the maximum nor which element is first)
    ranges = []
    for s, o in zip(spatial, out):
        start, end = _bounds(s, o)
        k = int((end - start).max())
        ranges.append(np.minimum(start[:, None] + np.arange(k)[None, :], end[:, None] - 1))
    grids = []
    for i, r in enumerate(ranges):
        shape = [1] * (2 * nsp)
        shape[2 * i:2 * i + 2] = r.shape
        grids.append(r.reshape(shape))
    grids = np.broadcast_arrays(*grids)
    order = tuple(2 * i + 1 for i in range(nsp)) + tuple(2 * i for i in range(nsp))
    kernel = tuple(r.shape[1] for r in ranges)
    kn, length = _win.prod(kernel), _win.prod(out)
    gathered = dispatch(_ix.Index, x, tensor(np.stack(grids).astype(np.int64)),
                        dims=tuple(range(2, 2 + nsp)))
    cols = reshape(dispatch(_shp.Permute, gathered, dims=(0, 1) + tuple(2 + o for o in order)),
                   (n, c, kn, length))
    flat = np.ravel_multi_index(tuple(grids), spatial).transpose(order)
    index_cols = tensor(flat.reshape(1, 1, kn, length).astype(np.int64)) \
        if return_indices else None
    res = _pick_max(cols, index_cols, n, c, out, return_indices)
    if return_indices:
        return unbatched(res[0], added), unbatched(res[1], added)
    return unbatched(res, added)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """Applies 1-D adaptive max pooling to a fixed output size.

    The windows, chosen so that the output has spatial size ``output_size`` whatever the
    input size, are those of :func:`adaptive_avg_pool1d`.

    Args:
        input (Tensor): the input, ``(N, C, L)`` or unbatched ``(C, L)``.
        output_size (int, None or tuple): the output size (L), one int for all
            spatial dimensions or one entry each; ``None`` keeps that dimension's size.
        return_indices (bool, optional): also return the position of each maximum in the
            flattened spatial dimensions of its input plane. Default: ``False``

    Shape:
        - Input: ``(N, C, L)`` or ``(C, L)``.
        - Output: ``(N, C, *output_size)`` or without ``N``.

    Example::

        >>> x = eager.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]])
        >>> F.adaptive_max_pool1d(x, 2, return_indices=True)
        (tensor([[[3., 5.]]]), tensor([[[1, 3]]]))
    """
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Applies 2-D adaptive max pooling to a fixed output size.

    The windows, chosen so that the output has spatial size ``output_size`` whatever the
    input size, are those of :func:`adaptive_avg_pool2d`.

    Args:
        input (Tensor): the input, ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        output_size (int, None or tuple): the output size (H, W), one int for all
            spatial dimensions or one entry each; ``None`` keeps that dimension's size.
        return_indices (bool, optional): also return the position of each maximum in the
            flattened spatial dimensions of its input plane. Default: ``False``

    Shape:
        - Input: ``(N, C, H, W)`` or ``(C, H, W)``.
        - Output: ``(N, C, *output_size)`` or without ``N``.

    Example::

        >>> F.adaptive_max_pool2d(eager.randn(2, 3, 7, 9), (3, 4)).shape
        eager.Size([2, 3, 3, 4])
        >>> F.adaptive_max_pool2d(eager.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """Applies 3-D adaptive max pooling to a fixed output size.

    The windows, chosen so that the output has spatial size ``output_size`` whatever the
    input size, are those of :func:`adaptive_avg_pool3d`: along a dimension of input size
    ``S`` pooled to ``O``, output ``i`` covers ``[floor(i * S / O), ceil((i + 1) * S / O))``.
    On ties the first maximum is picked and receives the gradient.

    Args:
        input (Tensor): the input, ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)``.
        output_size (int, None or tuple): the output size (D, H, W), one int for all
            spatial dimensions or one entry each; ``None`` keeps that dimension's size.
        return_indices (bool, optional): also return the position of each maximum in the
            flattened spatial dimensions (``D * H * W``) of its input plane.
            Default: ``False``

    Shape:
        - Input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
        - Output: ``(N, C, *output_size)`` or without ``N``.

    Example::

        >>> F.adaptive_max_pool3d(eager.randn(2, 3, 5, 7, 9), (2, 3, 4)).shape
        eager.Size([2, 3, 2, 3, 4])
        >>> x = eager.arange(8.).reshape(1, 2, 2, 2)
        >>> F.adaptive_max_pool3d(x, 1, return_indices=True)
        (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    (input,) = _autocast("adaptive_max_pool3d", input)
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)
