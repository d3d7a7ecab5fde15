"""Normalization layers: ``LayerNorm``, ``BatchNorm1d/2d/3d`` (running statistics, momentum
or cumulative averaging, train/eval behaviour as PyTorch), ``InstanceNorm1d/2d/3d`` and
``GroupNorm``."""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..factories import empty, ones, zeros
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "LayerNorm"]


class LayerNorm(Module):
    """Layer normalization over the last ``len(normalized_shape)`` dimensions:
    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias`` (biased variance).

    Args:
        normalized_shape (int or tuple): the trailing shape normalized over.
        eps (float): added to the variance. Default: 1e-5.
        elementwise_affine (bool): learn ``weight`` (ones) and ``bias`` (zeros) of
            ``normalized_shape``. Default: ``True``.
        bias (bool): learn the bias when ``elementwise_affine``. Default: ``True``.

    Shape:
        - Input: ``(N, *)``; Output: ``(N, *)`` (same shape).

    Example::

        >>> x = eager.randn(20, 5, 10)
        >>> nn.LayerNorm(10)(x).shape
        eager.Size([20, 5, 10])
    """
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(*self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(*self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _NormBase(Module):
    """Parameters (``weight``, ``bias``), running statistics and repr shared by batch and
    instance normalization (PyTorch's ``_NormBase``)."""
    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", zeros((), dtype=_dt.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            from ..methods import inplace
            inplace(self.num_batches_tracked, zeros((), dtype=_dt.int64), "zero_")

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_buffers else None,
                            self.running_var if use_buffers else None, self.weight, self.bias,
                            bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over ``(N, C)`` or ``(N, C, L)`` input: per-channel statistics over
    the batch (and length):
    ``y = (x - mean) / sqrt(var + eps) * weight + bias``. In training the running
    statistics are updated (unbiased variance) with ``momentum``; in eval mode they are
    used.

    Args:
        num_features (int): ``C``, the number of channels.
        eps (float): added to the variance. Default: 1e-5.
        momentum (float or None): running-statistics update factor; ``None`` for a
            cumulative average. Default: 0.1.
        affine (bool): learn ``weight`` (ones) and ``bias`` (zeros). Default: ``True``.
        track_running_stats (bool): keep ``running_mean``/``running_var`` buffers.
            Default: ``True``.

    Shape:
        - Input: ``(N, C)`` or ``(N, C, L)``; Output: same shape.

    Example::

        >>> m = nn.BatchNorm1d(100)
        >>> m(eager.randn(20, 100)).shape
        eager.Size([20, 100])
    """

    def _check_input_dim(self, input) -> None:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over ``(N, C, H, W)`` input: per-channel statistics over
    the batch and both spatial dimensions:
    ``y = (x - mean) / sqrt(var + eps) * weight + bias``. In training the running
    statistics are updated (unbiased variance) with ``momentum``; in eval mode they are
    used.

    Args:
        num_features (int): ``C``, the number of channels.
        eps (float): added to the variance. Default: 1e-5.
        momentum (float or None): running-statistics update factor; ``None`` for a
            cumulative average. Default: 0.1.
        affine (bool): learn ``weight`` (ones) and ``bias`` (zeros). Default: ``True``.
        track_running_stats (bool): keep ``running_mean``/``running_var`` buffers.
            Default: ``True``.

    Shape:
        - Input: ``(N, C, H, W)``; Output: same shape.

    Example::

        >>> m = nn.BatchNorm2d(100)
        >>> m(eager.randn(20, 100, 35, 45)).shape
        eager.Size([20, 100, 35, 45])
    """

    def _check_input_dim(self, input) -> None:
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over ``(N, C, D, H, W)`` input: per-channel statistics over
    the batch and the three spatial dimensions:
    ``y = (x - mean) / sqrt(var + eps) * weight + bias``. In training the running
    statistics are updated (unbiased variance) with ``momentum``; in eval mode they are
    used.

    Args:
        num_features (int): ``C``, the number of channels.
        eps (float): added to the variance. Default: 1e-5.
        momentum (float or None): running-statistics update factor; ``None`` for a
            cumulative average. Default: 0.1.
        affine (bool): learn ``weight`` (ones) and ``bias`` (zeros). Default: ``True``.
        track_running_stats (bool): keep ``running_mean``/``running_var`` buffers.
            Default: ``True``.

    Shape:
        - Input: ``(N, C, D, H, W)``; Output: same shape.

    Example::

        >>> m = nn.BatchNorm3d(100)
        >>> m(eager.randn(2, 100, 3, 4, 5)).shape
        eager.Size([2, 100, 3, 4, 5])
    """
    def _check_input_dim(self, input) -> None:
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class _InstanceNorm(_NormBase):
    """Per-sample, per-channel normalization over the spatial dimensions; unbatched input
    (one dimension less) is accepted.  Defaults differ from batch norm: no affine
    parameters and no running statistics."""
    _nsp = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input) -> None:
        n = self._nsp
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = self._nsp + 1
        feature_dim = input.ndim - unbatched
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        x = input.unsqueeze(0) if input.ndim == unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if input.ndim == unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _nsp = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over ``(N, C, H, W)`` (or unbatched ``(C, H, W)``) input."""
    _nsp = 2


class InstanceNorm3d(_InstanceNorm):
    _nsp = 3


class GroupNorm(Module):
    """Normalize groups of ``num_channels // num_groups`` channels of each sample; per
    channel affine parameters (``weight`` ones, ``bias`` zeros)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(empty(num_channels, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_channels, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")
