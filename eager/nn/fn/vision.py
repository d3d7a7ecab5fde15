"""Padding and resampling: ``pad`` (constant, reflect, replicate, circular) and
``interpolate``/``upsample`` (nearest, nearest-exact, linear, bilinear, trilinear, area),
with PyTorch's signatures, index and weight arithmetic and error messages.

Nearest-neighbour resampling by an integer factor is a broadcast and a reshape; any other
nearest resampling gathers along each dimension.  Linear modes multiply each spatial
dimension by a constant interpolation matrix (two non-zeros per row, weights computed in
the input's dtype as PyTorch does), so an infinity in the input turns the whole matrix
row's output NaN where PyTorch keeps it local.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...amp.autocast_mode import cast_inputs as _autocast
from ...dispatch import dispatch
from ...dtypes import is_float as _isf
from ...factories import tensor
from ...ops import index as _ix
from ...ops import pad as _pad
from ...ops import shape as _shp
from .args import along, reshape
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "pad", "upsample"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode: str = "constant", value=None):
    """Pads (or, with negative amounts, crops) the last dimensions of ``input``.

    ``len(pad) // 2`` dimensions are padded.

    ``pad`` lists ``(left, right)`` amounts starting from the last dimension:
    ``(left, right)`` pads the last dimension, ``(left, right, top, bottom)`` the last two,
    and so on.  Modes:

    - ``"constant"``: fill with ``value``; any number of dimensions.
    - ``"reflect"``: mirror without repeating the edge; each amount must be smaller than
      that dimension's size.
    - ``"replicate"``: repeat the edge element.
    - ``"circular"``: wrap around; each amount at most the dimension's size.

    The three non-constant modes pad the last 1, 2 or 3 dimensions of a tensor with one or
    two more (channel, batch) dimensions, as in PyTorch.

    Args:
        input (Tensor): the input.
        pad (sequence of ints): the amounts, an even number of them, at most
            ``2 * input.ndim``.
        mode (str, optional): ``"constant"``, ``"reflect"``, ``"replicate"`` or
            ``"circular"``. Default: ``"constant"``
        value (float, optional): the fill value of ``"constant"`` mode (``None`` is 0); other
            modes accept only ``None`` or 0. Default: ``None``

    Example::

        >>> F.pad(eager.ones(2, 2), (1, 1, 0, 1), value=9.0)
        tensor([[9., 1., 1., 9.],
                [9., 1., 1., 9.],
                [9., 9., 9., 9.]])
        >>> x = eager.arange(4.).reshape(1, 1, 4)
        >>> F.pad(x, (2, 1), mode="reflect")
        tensor([[[2., 1., 0., 1., 2., 3., 2.]]])
        >>> F.pad(x, (2, 1), mode="circular")
        tensor([[[2., 3., 0., 1., 2., 3., 0.]]])
    """
    pad = [int(p) for p in pad]
    nd = input.ndim
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode in ("reflect", "replicate"):  # PyTorch's autocast runs these in float32
        (input,) = _autocast(f"{'reflection' if mode == 'reflect' else 'replication'}_pad",
                             input)
    k = len(pad) // 2
    pairs = tuple((pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k)))
    shape = tuple(input.shape)
    if mode == "constant":
        for i, (lo, hi) in enumerate(pairs):
            d = nd - k + i
            if shape[d] + lo + hi < 0:
                raise RuntimeError(f"The input size {shape[d]}, plus negative padding {lo} and "
                                   f"{hi} resulted in a negative output size, which is invalid. "
                                   f"Check dimension {d} of your input.")
        return dispatch(_pad.Pad, input, pads=pairs, mode=mode, value=0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {nd}D input "
                                  "tensor.")
    for i, (lo, hi) in enumerate(pairs):
        d = nd - k + i
        if mode == "reflect" and (lo >= shape[d] or hi >= shape[d]):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {d} of input {list(shape)}")
        if mode == "circular" and (lo > shape[d] or hi > shape[d]):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if shape[d] == 0 or shape[d] + lo + hi <= 0:
            raise RuntimeError(f"pad: {mode} padding {(lo, hi)} of dimension {d} of input "
                               f"{list(shape)} leaves no elements")
    return dispatch(_pad.Pad, input, pads=pairs, mode=mode, value=0)


# -- interpolate --------------------------------------------------------------------------

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _sizes(input, size, scale_factor, recompute_scale_factor) -> tuple:
    """Output sizes and the scale factors the index arithmetic uses (None: in/out)."""
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{spatial} and output size of {size}. Please provide input "
                                 "tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            out = tuple(int(s) for s in size)
        else:
            out = (int(size),) * dim
        return out, (None,) * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of {spatial} "
                             f"and scale_factor of shape {scale_factor}. Please provide input "
                             "tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             "(s1, s2, ...,sK) format.")
        scales = tuple(float(s) for s in scale_factor)
    else:
        scales = (float(scale_factor),) * dim
    out = tuple(int(math.floor(float(s) * f)) for s, f in zip(spatial, scales))
    if recompute_scale_factor:
        scales = (None,) * dim
    return out, scales


def _check_sizes(spatial: tuple, out: tuple) -> None:
    if all(s > 0 for s in spatial) and all(o > 0 for o in out):
        return
    names = ("D", "H", "W")[3 - len(spatial):]
    ins = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
    outs = ", ".join(f"{n}: {o}" for n, o in zip(names, out))
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                       f"({ins}) output ({outs})")


def _scale(size: int, out: int, scale, dtype, align_corners: bool = False):
    """PyTorch's ``area_pixel_compute_scale`` in ``dtype``."""
    t = np.dtype(dtype).type
    if align_corners:
        return t(size - 1) / t(out - 1) if out > 1 else t(0)
    if scale is not None and scale > 0:
        return t(1.0 / scale)
    return t(size) / t(out)


def _nearest_index(size: int, out: int, scale, exact: bool) -> np.ndarray:
    if not exact and out == size:
        return np.arange(out)
    if not exact and out == 2 * size:
        return np.arange(out) >> 1
    s = _scale(size, out, scale, np.float32)
    dst = np.arange(out, dtype=np.float32)
    if exact:
        dst = dst + np.float32(0.5)
    return np.minimum(np.floor(dst * s).astype(np.int64), size - 1)


def _nearest(input, out: tuple, scales: tuple, exact: bool):
    x = input
    spatial = tuple(input.shape[2:])
    for i, (s, o, sc) in enumerate(zip(spatial, out, scales)):
        d = 2 + i
        idx = _nearest_index(s, o, sc, exact)
        if o == s and (idx == np.arange(o)).all():
            continue
        shape = tuple(x.shape)
        if o % s == 0 and (idx == np.arange(o) // (o // s)).all():
            r = o // s          # every element repeated r times: a broadcast
            y = dispatch(_shp.Unsqueeze, x, dims=(d + 1,))
            y = dispatch(_shp.Expand, y, shape=shape[:d + 1] + (r,) + shape[d + 1:])
            x = reshape(y, shape[:d] + (o,) + shape[d + 1:])
        else:
            x = dispatch(_ix.Index, x, tensor(idx.reshape(1, o)), dims=(d,))
    return x


def _linear_matrix(size: int, out: int, scale, align_corners: bool, dtype) -> np.ndarray:
    """Rows of PyTorch's linear-interpolation weights (``compute_indices_weights_linear``)."""
    t = np.dtype(dtype).type
    s = _scale(size, out, scale, dtype, align_corners)
    dst = np.arange(out).astype(dtype)
    if align_corners:
        src = s * dst
    else:
        src = np.maximum(s * (dst + t(0.5)) - t(0.5), t(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), size - 1)
    lam = np.clip(src - i0.astype(dtype), t(0), t(1))
    i1 = i0 + (i0 < size - 1)
    a = np.zeros((out, size), dtype=dtype)
    rows = np.arange(out)
    np.add.at(a, (rows, i0), t(1) - lam)
    np.add.at(a, (rows, i1), lam)
    return a


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest",
                align_corners=None, recompute_scale_factor=None, antialias: bool = False):
    """Resamples the spatial dimensions of ``input`` to ``size`` or by ``scale_factor``.

    Supported modes: ``"nearest"`` (PyTorch's legacy nearest neighbour, source index
    ``floor(i * scale)``), ``"nearest-exact"`` (sampling at pixel centres),
    ``"linear"`` (3-D input), ``"bilinear"`` (4-D), ``"trilinear"`` (5-D) and ``"area"``
    (adaptive average pooling).  ``"bicubic"`` and ``antialias=True`` are not
    supported here and raise ``NotImplementedError``.

    Args:
        input (Tensor): the input, ``(N, C, W)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        size (int or tuple of ints, optional): the output spatial size. Default: ``None``
        scale_factor (float or tuple of floats, optional): the multiplier of each spatial
            size (the output size is ``floor(in * scale_factor)``); give exactly one of
            ``size`` and ``scale_factor``. Default: ``None``
        mode (str, optional): the resampling algorithm (see above). Default: ``"nearest"``
        align_corners (bool, optional): for the linear modes only: align the corner pixels'
            centres of input and output (``True``) or their outer edges (``False``). Setting
            it for other modes raises ``ValueError``. Default: ``None`` (``False``)
        recompute_scale_factor (bool, optional): compute the interpolation from the input
            and output sizes rather than the given ``scale_factor``. Default: ``None``
        antialias (bool, optional): not supported (``True`` raises). Default: ``False``

    Shape:
        - Input: ``(N, C, *spatial)``, 1 to 3 spatial dimensions.
        - Output: ``(N, C, *out_spatial)``.

    Example::

        >>> x = eager.tensor([[[1.0, 2.0]]])
        >>> F.interpolate(x, scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
        >>> F.interpolate(x, scale_factor=2, mode="linear")
        tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
        >>> F.interpolate(x, size=4, mode="linear", align_corners=True)
        tensor([[[1.0000, 1.3333, 1.6667, 2.0000]]])
        >>> F.interpolate(eager.randn(2, 3, 8, 8), scale_factor=0.5, mode="bilinear").shape
        eager.Size([2, 3, 4, 4])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.ndim
    if nd not in (3, 4, 5) or mode not in ("nearest", "nearest-exact", "area", "bicubic") \
            and mode not in _LINEAR:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {nd}D) for the modes: {_MODES} (got {mode})")
    if mode == "bicubic" or antialias:
        raise NotImplementedError(f"interpolate: mode {mode!r}"
                                  f"{' with antialias' if antialias else ''} is not supported")
    if mode in _LINEAR and _LINEAR[mode] != nd - 2:
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs "
                                  f"{_LINEAR[mode] + 2}D input")
    out, scales = _sizes(input, size, scale_factor, recompute_scale_factor)
    spatial = tuple(input.shape[2:])
    _check_sizes(spatial, out)
    if mode == "area":
        pool = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}[nd]
        return pool(input, out)
    if mode in ("nearest", "nearest-exact"):
        return _nearest(input, out, scales, mode == "nearest-exact")
    if not _isf(input._data.dtype):
        raise RuntimeError(f"\"upsample_{mode}\" not implemented for '{input.dtype}'")
    x = input
    for i, (s, o, sc) in enumerate(zip(spatial, out, scales)):
        if s == o and (align_corners or sc is None or sc == 1.0):
            continue
        x = along(x, 2 + i, _linear_matrix(s, o, sc, align_corners, x._data.dtype))
    return x


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate` (warns), as in PyTorch.

    Args:
        input (Tensor): the input, ``(N, C, *spatial)``.
        size (int or tuple of ints, optional): the output spatial size. Default: ``None``
        scale_factor (float or tuple of floats, optional): the multiplier of each spatial
            size. Default: ``None``
        mode (str, optional): the resampling algorithm, as in :func:`interpolate`.
            Default: ``"nearest"``
        align_corners (bool, optional): as in :func:`interpolate`. Default: ``None``

    Example::

        >>> F.upsample(eager.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)
