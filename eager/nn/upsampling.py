"""Resampling layers: ``Upsample`` (``F.interpolate`` with fixed arguments) and its
deprecated forms ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resizes 1-D, 2-D or 3-D spatial data to a given size or by a scale factor.

    The module calls ``F.interpolate`` with its fixed arguments.  Give exactly one of
    ``size`` and ``scale_factor``; with ``scale_factor`` the output size is
    ``floor(input_size * scale_factor)`` in each spatial dimension.  Supported modes:
    ``"nearest"``, ``"nearest-exact"`` and ``"area"`` for 3-D, 4-D or 5-D input, and
    ``"linear"`` (3-D input only), ``"bilinear"`` (4-D) and ``"trilinear"`` (5-D).
    Unlike PyTorch, ``"bicubic"`` is not implemented (calling the module raises
    ``NotImplementedError``).

    Args:
        size (int or tuple, optional): the output spatial size. Default: ``None``.
        scale_factor (float or tuple, optional): multiplier for the spatial size, one for
            all spatial dimensions or one per dimension; stored as float(s). Default:
            ``None``.
        mode (str): the interpolation algorithm, see above. Default: ``"nearest"``.
        align_corners (bool, optional): for the linear modes, if ``True`` the corner
            pixels of input and output are aligned (their centres coincide) and the values
            in between are interpolated; if ``False`` (what ``None`` means) pixels are
            treated as areas and sampled at their centres. Must stay ``None`` for
            ``"nearest"``, ``"nearest-exact"`` and ``"area"`` (else ``ValueError``).
            Default: ``None``.
        recompute_scale_factor (bool, optional): if ``True``, the output size computed from
            ``scale_factor`` is used to derive the sampling scale (``in / out``) instead
            of the given ``scale_factor``. Default: ``None``.

    Shape:
        - Input: ``(N, C, W_in)``, ``(N, C, H_in, W_in)`` or ``(N, C, D_in, H_in, W_in)``.
        - Output: ``(N, C, W_out)``, ``(N, C, H_out, W_out)`` or
          ``(N, C, D_out, H_out, W_out)``, with ``X_out = size`` or
          ``floor(X_in * scale_factor)``.

    Example::

        >>> x = eager.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> nn.Upsample(scale_factor=2, mode="nearest")(x)
        tensor([[[[1., 1., 2., 2.],
                  [1., 1., 2., 2.],
                  [3., 3., 4., 4.],
                  [3., 3., 4., 4.]]]])
        >>> nn.Upsample(scale_factor=2, mode="bilinear")(x)
        tensor([[[[1.0000, 1.2500, 1.7500, 2.0000],
                  [1.5000, 1.7500, 2.2500, 2.5000],
                  [2.5000, 2.7500, 3.2500, 3.5000],
                  [3.0000, 3.2500, 3.7500, 4.0000]]]])
        >>> nn.Upsample(size=(3, 5))(x).shape
        eager.Size([1, 1, 3, 5])
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of images; deprecated, use ``Upsample``.

    Equivalent to ``nn.Upsample(size, scale_factor, mode="nearest")``.  The input is
    meant to be 4-D, but, as in PyTorch, it is not checked (``F.interpolate`` also accepts
    3-D and 5-D input in this mode).

    Args:
        size (int or tuple, optional): the output size ``(H_out, W_out)``. Default: ``None``.
        scale_factor (float or tuple, optional): multiplier for height and width.
            Default: ``None``.

    Shape:
        - Input: ``(N, C, H_in, W_in)``.
        - Output: ``(N, C, H_out, W_out)``, with ``H_out = size[0]`` or
          ``floor(H_in * scale_factor)``, and ``W_out`` likewise.

    Example::

        >>> m = nn.UpsamplingNearest2d(scale_factor=2)
        >>> m(eager.tensor([[[[1.0, 2.0], [3.0, 4.0]]]]))
        tensor([[[[1., 1., 2., 2.],
                  [1., 1., 2., 2.],
                  [3., 3., 4., 4.],
                  [3., 3., 4., 4.]]]])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of images with aligned corners; deprecated, use ``Upsample``.

    Equivalent to ``nn.Upsample(size, scale_factor, mode="bilinear",
    align_corners=True)``.

    Args:
        size (int or tuple, optional): the output size ``(H_out, W_out)``. Default: ``None``.
        scale_factor (float or tuple, optional): multiplier for height and width.
            Default: ``None``.

    Shape:
        - Input: ``(N, C, H_in, W_in)``.
        - Output: ``(N, C, H_out, W_out)``, with ``H_out = size[0]`` or
          ``floor(H_in * scale_factor)``, and ``W_out`` likewise.

    Example::

        >>> m = nn.UpsamplingBilinear2d(scale_factor=2)
        >>> m(eager.tensor([[[[1.0, 2.0], [3.0, 4.0]]]]))
        tensor([[[[1.0000, 1.3333, 1.6667, 2.0000],
                  [1.6667, 2.0000, 2.3333, 2.6667],
                  [2.3333, 2.6667, 3.0000, 3.3333],
                  [3.0000, 3.3333, 3.6667, 4.0000]]]])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
