"""Convolutions and the sliding-window functions ``unfold``/``fold``, with PyTorch's
signatures, shape rules and error messages.

``conv{1,2,3}d`` is ``im2col`` (:class:`eager.ops.window.Im2col`) and one matmul with the
weight seen as a ``(out_channels, in_channels/groups * prod(kernel))`` matrix (a batch of
``groups`` such matrices for grouped convolution); ``conv_transpose{1,2,3}d`` is the
transposed matmul followed by ``col2im``.  Their gradients come from those ops' backward
formulas: the input gradient of a convolution is a matmul and a ``col2im`` (a transposed
convolution), the weight gradient a matmul against the saved columns, and every one of
them is differentiable again (gradient penalties, double backward), traced by the
compiler like any other op.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._state import STATE
from ...amp import autocast_mode as _autocast
from ...dispatch import dispatch
from ...dtypes import cpp_name
from ...dtypes import is_float as _isf
from ...fn import elementwise as _ew
from ...ops import conv as _cv
from ...ops import shape as _shp
from ...ops import window as _win
from .args import batched, matmul, ntuple, reshape, shape_list, size_str, unbatched

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "fold", "unfold"]


def _tuple_arg(value, n: int, what: str) -> tuple:
    t = ntuple(value, n)
    if t is None:
        shown = list(value) if isinstance(value, (tuple, list)) else value
        raise RuntimeError(f"expected {what} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{what}={shown}")
    return t


def _check_common(input, weight, bias, nsp: int, name: str, stride, dilation, groups):
    if input.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to "
                           f"{name}, but got input of size: {shape_list(input)}")
    if weight.ndim != nsp + 2:
        raise RuntimeError(f"Expected {nsp + 2}-dimensional weight for {name}, but got "
                           f"{weight.ndim}-dimensional weight of size {shape_list(weight)} "
                           "instead")
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f"Input type ({cpp_name(input._data.dtype)}) and weight type "
                           f"({cpp_name(weight._data.dtype)}) should be the same")
    if bias is not None and bias._data.dtype != input._data.dtype:
        raise RuntimeError(f"Input type ({cpp_name(input._data.dtype)}) and bias type "
                           f"({cpp_name(bias._data.dtype)}) should be the same")
    if not _isf(input._data.dtype):
        raise RuntimeError(f"\"{name}\" not implemented for '{input.dtype}' (a floating point "
                           "input and weight are needed)")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {shape_list(weight)} "
                           "instead")


def _padding_pairs(padding, kernel: tuple, stride: tuple, dilation: tuple) -> tuple:
    """PyTorch's ``padding`` (ints, 'valid' or 'same') as (lo, hi) pairs per dimension."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pairs = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pairs.append((total // 2, total - total // 2))
        if any(lo != hi for lo, hi in pairs):
            warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                          "require a zero-padded copy of the input be created", stacklevel=4)
        return tuple(pairs)
    pad = _tuple_arg(padding, n, "padding")
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pad)


def _conv(input, weight, bias, stride, padding, dilation, groups, nsp: int, name: str):
    input, weight, bias = _autocast.cast_inputs(name, input, weight, bias)
    stride = _tuple_arg(stride, nsp, "stride")
    dilation = _tuple_arg(dilation, nsp, "dilation")
    _check_common(input, weight, bias, nsp, name, stride, dilation, groups)
    kernel = tuple(weight.shape[2:])
    pads = _padding_pairs(padding, kernel, stride, dilation)
    x, added = batched(input, nsp + 2)
    n, c = x.shape[:2]
    out_c, cg = weight.shape[:2]
    if c != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {shape_list(weight)}, expected "
                           f"input{shape_list(x)} to have {cg * groups} channels, but got {c} "
                           "channels instead")
    if bias is not None and tuple(bias.shape) != (out_c,):
        raise RuntimeError(f"Given weight of size {shape_list(weight)}, expected bias to be "
                           f"1-dimensional with {out_c} elements, but got bias of size "
                           f"{shape_list(bias)} instead")
    size = tuple(x.shape[2:])
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    spans = tuple(_win.span(k, d) for k, d in zip(kernel, dilation))
    if any(p < k for p, k in zip(padded, spans)):
        raise RuntimeError(f"Calculated padded input size per channel: {size_str(padded)}. "
                           f"Kernel size: {size_str(spans)}. Kernel size can't be greater "
                           "than actual input size")
    out_size = _win.window_counts(size, kernel, dilation, pads, stride)
    length = _win.prod(out_size)
    if all(k == 1 for k in kernel) and all(s == 1 for s in stride) and \
            all(p == (0, 0) for p in pads):
        cols = reshape(x, (n, c, length))        # a 1x1 convolution needs no copy
    else:
        cols = dispatch(_win.Im2col, x, kernel=kernel, dilation=dilation, padding=pads,
                        stride=stride, fill=0)
    kn = _win.prod(kernel)
    if groups == 1 and _one_op(cols, weight, bias):
        out = dispatch(_cv.ConvProduct, cols, weight, bias, out_size=tuple(out_size))
        return _own(unbatched(out, added))
    if groups == 1:
        out = matmul(reshape(weight, (out_c, cg * kn)), cols)
    else:
        cols = reshape(cols, (n, groups, cg * kn, length))
        out = matmul(reshape(weight, (groups, out_c // groups, cg * kn)), cols)
    out = reshape(out, (n, out_c) + out_size)
    if bias is not None:
        out = _ew.add(out, reshape(bias, (out_c,) + (1,) * nsp))
    return _own(unbatched(out, added))


_ONE_OP_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _one_op(cols, weight, bias) -> bool:
    """Whether the product step runs as one op (:class:`eager.ops.conv.ConvProduct`):
    float32/float64 CPU arrays (no vmap storage), no autocast."""
    if STATE.autocast is not None:
        return False
    for t in (cols, weight, bias):
        if t is not None and (type(t._data) is not np.ndarray
                              or t._data.dtype not in _ONE_OP_DTYPES):
            return False
    return True


def _own(out):
    """A convolution's result owns its storage: without a bias (or for unbatched input) it is
    a reshape of the product, a view of an intermediate nobody else can reach, so an in-place
    op on it (``nn.ReLU(inplace=True)``) must not be refused as a write into a view."""
    if out._base is not None:
        out._base = None
    return out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """Applies a 1-D convolution (strictly, cross-correlation) over ``(N, C_in, L)`` input.

    Computed as ``im2col`` plus one matrix multiply; differentiable twice (gradient penalties
    work).  ``input``, ``weight`` and ``bias`` must share one floating dtype.

    Args:
        input (Tensor): the input, ``(N, C_in, L)`` or unbatched ``(C_in, L)``.
        weight (Tensor): the filters, ``(out_channels, C_in / groups, kL)``.
        bias (Tensor, optional): added per output channel, ``(out_channels,)``.
            Default: ``None``
        stride (int or tuple, optional): the step between windows, one int or one per
            spatial dimension. Default: ``1``
        padding (int, tuple or str, optional): zeros added on both sides of each spatial
            dimension; or ``"valid"`` (none) or ``"same"`` (the output has the input's size;
            only with stride 1; an odd total puts the extra zero at the end).
            Default: ``0``
        dilation (int or tuple, optional): the spacing between kernel elements.
            Default: ``1``
        groups (int, optional): split the input channels into this many groups, each
            convolved with its own ``out_channels / groups`` filters; must divide both
            channel counts. Default: ``1``

    Shape:
        - Input: ``(N, C_in, L)`` or unbatched ``(C_in, L)``.
        - Weight: ``(out_channels, C_in / groups, kL)``.
        - Output: ``(N, out_channels, L_out)``, each spatial size
          ``floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1``.

    Example::

        >>> x = eager.tensor([[[1.0, 2.0, 3.0, 4.0]]])
        >>> F.conv1d(x, eager.tensor([[[1.0, 0.0, -1.0]]]))
        tensor([[[-2., -2.]]])
        >>> F.conv1d(eager.randn(8, 3, 50), eager.randn(6, 3, 5), padding="same").shape
        eager.Size([8, 6, 50])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """Applies a 2-D convolution (strictly, cross-correlation) over ``(N, C_in, H, W)`` input.

    Computed as ``im2col`` plus one matrix multiply; differentiable twice (gradient penalties
    work).  ``input``, ``weight`` and ``bias`` must share one floating dtype.

    Args:
        input (Tensor): the input, ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)``.
        weight (Tensor): the filters, ``(out_channels, C_in / groups, kH, kW)``.
        bias (Tensor, optional): added per output channel, ``(out_channels,)``.
            Default: ``None``
        stride (int or tuple, optional): the step between windows, one int or one per
            spatial dimension. Default: ``1``
        padding (int, tuple or str, optional): zeros added on both sides of each spatial
            dimension; or ``"valid"`` (none) or ``"same"`` (the output has the input's size;
            only with stride 1; an odd total puts the extra zero at the end).
            Default: ``0``
        dilation (int or tuple, optional): the spacing between kernel elements.
            Default: ``1``
        groups (int, optional): split the input channels into this many groups, each
            convolved with its own ``out_channels / groups`` filters; must divide both
            channel counts. Default: ``1``

    Shape:
        - Input: ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)``.
        - Weight: ``(out_channels, C_in / groups, kH, kW)``.
        - Output: ``(N, out_channels, H_out, W_out)``, each spatial size
          ``floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1``.

    Example::

        >>> F.conv2d(eager.randn(8, 1, 28, 28), eager.randn(4, 1, 3, 3), padding=1).shape
        eager.Size([8, 4, 28, 28])
        >>> F.conv2d(eager.ones(1, 1, 3, 3), eager.ones(1, 1, 2, 2), eager.tensor([0.5]))
        tensor([[[[4.5000, 4.5000],
                  [4.5000, 4.5000]]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """Applies a 3-D convolution (strictly, cross-correlation) over ``(N, C_in, D, H, W)`` input.

    Computed as ``im2col`` plus one matrix multiply; differentiable twice (gradient penalties
    work).  ``input``, ``weight`` and ``bias`` must share one floating dtype.

    Args:
        input (Tensor): the input, ``(N, C_in, D, H, W)`` or unbatched ``(C_in, D, H, W)``.
        weight (Tensor): the filters, ``(out_channels, C_in / groups, kD, kH, kW)``.
        bias (Tensor, optional): added per output channel, ``(out_channels,)``.
            Default: ``None``
        stride (int or tuple, optional): the step between windows, one int or one per
            spatial dimension. Default: ``1``
        padding (int, tuple or str, optional): zeros added on both sides of each spatial
            dimension; or ``"valid"`` (none) or ``"same"`` (the output has the input's size;
            only with stride 1; an odd total puts the extra zero at the end).
            Default: ``0``
        dilation (int or tuple, optional): the spacing between kernel elements.
            Default: ``1``
        groups (int, optional): split the input channels into this many groups, each
            convolved with its own ``out_channels / groups`` filters; must divide both
            channel counts. Default: ``1``

    Shape:
        - Input: ``(N, C_in, D, H, W)`` or unbatched ``(C_in, D, H, W)``.
        - Weight: ``(out_channels, C_in / groups, kD, kH, kW)``.
        - Output: ``(N, out_channels, D_out, H_out, W_out)``, each spatial size
          ``floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1``.

    Example::

        >>> x = eager.randn(2, 3, 8, 8, 8)
        >>> F.conv3d(x, eager.randn(5, 3, 3, 3, 3), padding=1).shape
        eager.Size([2, 5, 8, 8, 8])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


# -- transposed convolution ---------------------------------------------------------------

_DIM_NAMES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _output_padding_error(op, stride, dilation) -> RuntimeError:
    names = _DIM_NAMES[len(op)]
    parts = [f"output_padding_{n}: {v}" for n, v in zip(names, op)]
    parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
    parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
    return RuntimeError("output padding must be smaller than either stride or dilation, but "
                        "got " + " ".join(parts))


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    nsp: int, name: str):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    input, weight, bias = _autocast.cast_inputs(name, input, weight, bias)
    stride = _tuple_arg(stride, nsp, "stride")
    dilation = _tuple_arg(dilation, nsp, "dilation")
    pad = _tuple_arg(padding, nsp, "padding")
    out_pad = _tuple_arg(output_padding, nsp, "output_padding")
    _check_common(input, weight, bias, nsp, name, stride, dilation, groups)
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in out_pad):
        raise RuntimeError("negative output_padding is not supported")
    if any(o >= s and o >= d for o, s, d in zip(out_pad, stride, dilation)):
        raise _output_padding_error(out_pad, stride, dilation)
    x, added = batched(input, nsp + 2)
    n, c = x.shape[:2]
    in_c, og = weight.shape[:2]
    if c != in_c:
        raise RuntimeError(f"Given transposed=1, weight of size {shape_list(weight)}, expected "
                           f"input{shape_list(x)} to have {in_c} channels, but got {c} "
                           "channels instead")
    out_c = og * groups
    if bias is not None and tuple(bias.shape) != (out_c,):
        raise RuntimeError(f"Given transposed=1, weight of size {shape_list(weight)}, expected "
                           f"bias to be 1-dimensional with {out_c} elements, but got bias of "
                           f"size {shape_list(bias)} instead")
    kernel = tuple(weight.shape[2:])
    size = tuple(x.shape[2:])
    out_size = tuple((s - 1) * st - 2 * p + _win.span(k, d) + o
                     for s, st, p, k, d, o in zip(size, stride, pad, kernel, dilation, out_pad))
    if any(o <= 0 for o in out_size):
        raise RuntimeError(f"Given input size per channel: {size_str(size)}. Calculated output "
                           f"size per channel: {size_str(out_size)}. Output size is too small")
    kn = _win.prod(kernel)
    length = _win.prod(size)
    cg = in_c // groups
    if groups == 1:
        wt = dispatch(_shp.Permute, reshape(weight, (in_c, og * kn)), dims=(1, 0))
        cols = matmul(wt, reshape(x, (n, in_c, length)))
    else:
        wt = dispatch(_shp.Permute, reshape(weight, (groups, cg, og * kn)), dims=(0, 2, 1))
        cols = matmul(wt, reshape(x, (n, groups, cg, length)))
    cols = reshape(cols, (n, out_c * kn, length))
    pads = tuple((p, p - o) for p, o in zip(pad, out_pad))
    out = dispatch(_win.Col2im, cols, size=out_size, kernel=kernel, dilation=dilation,
                   padding=pads, stride=stride)
    if bias is not None:
        out = _ew.add(out, reshape(bias, (out_c,) + (1,) * nsp))
    return _own(unbatched(out, added))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1):
    """Applies a 1-D transposed convolution, the adjoint of ``conv1d``.

    It is the gradient of ``conv1d`` with respect to its input (sometimes called a
    fractionally strided convolution or "deconvolution").  ``input``, ``weight`` and
    ``bias`` must share one floating dtype.  String ``padding`` (``"same"``/``"valid"``)
    is not accepted, as in PyTorch.

    Args:
        input (Tensor): the input, ``(N, C_in, L)`` or unbatched ``(C_in, L)``.
        weight (Tensor): the filters, ``(C_in, out_channels / groups, kL)``.
        bias (Tensor, optional): added per output channel, ``(out_channels,)``.
            Default: ``None``
        stride (int or tuple, optional): the stride of the matching convolution.
            Default: ``1``
        padding (int or tuple, optional): ``dilation * (kernel - 1) - padding`` zeros are
            implicitly added on both sides of each spatial dimension, i.e. ``padding`` is
            removed from each side of the output. Default: ``0``
        output_padding (int or tuple, optional): extra size added to one side of each output
            dimension (to choose among the sizes a strided convolution maps to the same
            input size); must be smaller than the stride or the dilation. Default: ``0``
        groups (int, optional): split the channels into this many independent groups.
            Default: ``1``
        dilation (int or tuple, optional): the spacing between kernel elements.
            Default: ``1``

    Shape:
        - Input: ``(N, C_in, L)`` or unbatched ``(C_in, L)``.
        - Weight: ``(C_in, out_channels / groups, kL)``.
        - Output: ``(N, out_channels, L_out)``, each spatial size
          ``(in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1``.

    Example::

        >>> F.conv_transpose1d(eager.tensor([[[1.0, 2.0]]]), eager.tensor([[[1.0, 1.0, 1.0]]]))
        tensor([[[1., 3., 3., 2.]]])
        >>> F.conv_transpose1d(eager.randn(2, 4, 10), eager.randn(4, 3, 3), stride=2).shape
        eager.Size([2, 3, 21])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1):
    """Applies a 2-D transposed convolution, the adjoint of ``conv2d``.

    It is the gradient of ``conv2d`` with respect to its input (sometimes called a
    fractionally strided convolution or "deconvolution").  ``input``, ``weight`` and
    ``bias`` must share one floating dtype.  String ``padding`` (``"same"``/``"valid"``)
    is not accepted, as in PyTorch.

    Args:
        input (Tensor): the input, ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)``.
        weight (Tensor): the filters, ``(C_in, out_channels / groups, kH, kW)``.
        bias (Tensor, optional): added per output channel, ``(out_channels,)``.
            Default: ``None``
        stride (int or tuple, optional): the stride of the matching convolution.
            Default: ``1``
        padding (int or tuple, optional): ``dilation * (kernel - 1) - padding`` zeros are
            implicitly added on both sides of each spatial dimension, i.e. ``padding`` is
            removed from each side of the output. Default: ``0``
        output_padding (int or tuple, optional): extra size added to one side of each output
            dimension (to choose among the sizes a strided convolution maps to the same
            input size); must be smaller than the stride or the dilation. Default: ``0``
        groups (int, optional): split the channels into this many independent groups.
            Default: ``1``
        dilation (int or tuple, optional): the spacing between kernel elements.
            Default: ``1``

    Shape:
        - Input: ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)``.
        - Weight: ``(C_in, out_channels / groups, kH, kW)``.
        - Output: ``(N, out_channels, H_out, W_out)``, each spatial size
          ``(in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1``.

    Example::

        >>> x = eager.randn(2, 4, 5, 5)
        >>> F.conv_transpose2d(x, eager.randn(4, 8, 3, 3), stride=2, padding=1,
        ...                    output_padding=1).shape
        eager.Size([2, 8, 10, 10])
        >>> F.conv_transpose2d(eager.ones(1, 1, 2, 2), eager.ones(1, 1, 2, 2))
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1):
    """Applies a 3-D transposed convolution, the adjoint of ``conv3d``.

    It is the gradient of ``conv3d`` with respect to its input (sometimes called a
    fractionally strided convolution or "deconvolution").  ``input``, ``weight`` and
    ``bias`` must share one floating dtype.  String ``padding`` (``"same"``/``"valid"``)
    is not accepted, as in PyTorch.

    Args:
        input (Tensor): the input, ``(N, C_in, D, H, W)`` or unbatched ``(C_in, D, H, W)``.
        weight (Tensor): the filters, ``(C_in, out_channels / groups, kD, kH, kW)``.
        bias (Tensor, optional): added per output channel, ``(out_channels,)``.
            Default: ``None``
        stride (int or tuple, optional): the stride of the matching convolution.
            Default: ``1``
        padding (int or tuple, optional): ``dilation * (kernel - 1) - padding`` zeros are
            implicitly added on both sides of each spatial dimension, i.e. ``padding`` is
            removed from each side of the output. Default: ``0``
        output_padding (int or tuple, optional): extra size added to one side of each output
            dimension (to choose among the sizes a strided convolution maps to the same
            input size); must be smaller than the stride or the dilation. Default: ``0``
        groups (int, optional): split the channels into this many independent groups.
            Default: ``1``
        dilation (int or tuple, optional): the spacing between kernel elements.
            Default: ``1``

    Shape:
        - Input: ``(N, C_in, D, H, W)`` or unbatched ``(C_in, D, H, W)``.
        - Weight: ``(C_in, out_channels / groups, kD, kH, kW)``.
        - Output: ``(N, out_channels, D_out, H_out, W_out)``, each spatial size
          ``(in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1``.

    Example::

        >>> x = eager.randn(1, 2, 3, 3, 3)
        >>> F.conv_transpose3d(x, eager.randn(2, 4, 2, 2, 2), stride=2).shape
        eager.Size([1, 4, 6, 6, 6])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")


# -- unfold / fold ------------------------------------------------------------------------

def _window_args(name, kernel_size, dilation, padding, stride) -> tuple:
    out = []
    for what, v in (("kernel_size", kernel_size), ("dilation", dilation),
                    ("padding", padding), ("stride", stride)):
        t = ntuple(v, 2)
        if t is None:
            raise RuntimeError(f"{name}: {what} must be an int or a tuple of two ints, got {v}")
        out.append(t)
    k, d, p, s = out
    if any(v <= 0 for v in k + d + s):
        raise RuntimeError(f"{name}: kernel_size, dilation and stride must be greater than "
                           f"zero, but got kernel_size={k}, dilation={d}, stride={s}")
    if any(v < 0 for v in p):
        raise RuntimeError(f"{name}: padding must be non-negative, but got padding={p}")
    return k, d, tuple((v, v) for v in p), s, p


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks of a 4-D input as columns (``im2col``).

    Each column holds one ``kH x kW`` window of every channel, flattened channel-major; the
    columns run over the window positions row by row.  Only 4-D (or unbatched 3-D) input is
    supported, as in PyTorch.

    Args:
        input (Tensor): the input, ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        kernel_size (int or tuple): the window size ``(kH, kW)``.
        dilation (int or tuple, optional): the spacing between window elements.
            Default: ``1``
        padding (int or tuple, optional): zeros added on both sides of each spatial
            dimension. Default: ``0``
        stride (int or tuple, optional): the step between windows. Default: ``1``

    Shape:
        - Input: ``(N, C, H, W)`` or ``(C, H, W)``.
        - Output: ``(N, C * kH * kW, L)`` or ``(C * kH * kW, L)``, ``L`` being the number of
          window positions.

    Example::

        >>> F.unfold(eager.arange(9.).reshape(1, 1, 3, 3), kernel_size=2)
        tensor([[[0., 1., 3., 4.],
                 [1., 2., 4., 5.],
                 [3., 4., 6., 7.],
                 [4., 5., 7., 8.]]])
        >>> F.unfold(eager.randn(2, 3, 5, 5), (2, 3), padding=1).shape
        eager.Size([2, 18, 30])
    """
    k, d, pads, s, p = _window_args("unfold", kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or any(v == 0 for v in input.shape[1:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {shape_list(input)}")
    x, added = batched(input, 4)
    counts = _win.window_counts(tuple(x.shape[2:]), k, d, pads, s)
    if any(c < 1 for c in counts):
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[2:])}, kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of sliding "
                           f"blocks as {counts}, but its components must be at least one.")
    out = dispatch(_win.Im2col, x, kernel=k, dilation=d, padding=pads, stride=s, fill=0)
    return unbatched(out, added)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combines sliding local blocks (columns) into a 4-D tensor (``col2im``).

    Overlapping blocks are summed; this is the adjoint of :func:`unfold`.

    Args:
        input (Tensor): the blocks, ``(N, C * kH * kW, L)`` or unbatched
            ``(C * kH * kW, L)``, ``L`` matching the number of window positions.
        output_size (int or tuple): the spatial size ``(H, W)`` of the output.
        kernel_size (int or tuple): the block size ``(kH, kW)``.
        dilation (int or tuple, optional): the spacing between block elements.
            Default: ``1``
        padding (int or tuple, optional): the padding that ``unfold`` added (cut off here).
            Default: ``0``
        stride (int or tuple, optional): the step between blocks. Default: ``1``

    Shape:
        - Input: ``(N, C * kH * kW, L)`` or ``(C * kH * kW, L)``.
        - Output: ``(N, C, H, W)`` or ``(C, H, W)``.

    Example::

        >>> F.fold(eager.ones(1, 4, 4), output_size=3, kernel_size=2)
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    k, d, pads, s, p = _window_args("fold", kernel_size, dilation, padding, stride)
    size = ntuple(output_size, 2)
    if size is None:
        raise RuntimeError(f"fold: output_size must be an int or a tuple of two ints, got "
                           f"{output_size}")
    if input.ndim not in (2, 3) or any(v == 0 for v in input.shape[1:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{shape_list(input)}")
    x, added = batched(input, 3)
    kn = k[0] * k[1]
    if x.shape[1] % kn:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={k}.")
    counts = tuple(max(c, 0) for c in _win.window_counts(size, k, d, pads, s))
    if any(c < 1 for c in counts) or x.shape[2] != counts[0] * counts[1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {counts[0]} * "
                           f"{counts[1]} = {counts[0] * counts[1]}, but got "
                           f"input.size(2)={x.shape[2]}.")
    out = dispatch(_win.Col2im, x, size=size, kernel=k, dilation=d, padding=pads, stride=s)
    return unbatched(out, added)
