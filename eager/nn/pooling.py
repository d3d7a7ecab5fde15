"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d``, with PyTorch's arguments and reprs."""

from __future__ import annotations

from . import functional as F
from .module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool1d", "MaxPool2d",
           "MaxPool3d"]


class _MaxPoolNd(Module):
    _functional = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._functional(input, self.kernel_size, self.stride, self.padding,
                                      self.dilation, ceil_mode=self.ceil_mode,
                                      return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _functional = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over ``kernel_size`` windows (``stride`` defaults to ``kernel_size``); with
    ``return_indices`` the forward returns ``(output, indices)``."""
    _functional = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    _functional = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__()
        one = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,))
        self.kernel_size = one(kernel_size)
        self.stride = one(stride if stride is not None else kernel_size)
        self.padding = one(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    _functional = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._functional(input, self.kernel_size, self.stride, self.padding,
                                      self.ceil_mode, self.count_include_pad,
                                      self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    _functional = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    _functional = staticmethod(F.avg_pool3d)


class _AdaptivePoolNd(Module):
    _functional = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._functional(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    _functional = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Average pooling to a fixed output size (``(1, 1)``: global average pooling)."""
    _functional = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    _functional = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._functional(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _functional = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _functional = staticmethod(F.adaptive_max_pool2d)
