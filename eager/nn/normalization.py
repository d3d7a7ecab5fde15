"""Normalization layers: ``LayerNorm``, ``BatchNorm1d/2d/3d`` (running statistics, momentum
or cumulative averaging, train/eval behaviour as PyTorch), ``InstanceNorm1d/2d/3d`` and
``GroupNorm``."""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..factories import empty, ones, zeros
from ..inplace import inplace
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
    """Applies instance normalization over a 3-D input (a batch of 1-D inputs with channels).

    Each channel of each sample is normalized over its length on its own:
    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``, with the biased variance, then
    (with ``affine``) scaled and shifted per channel. Unlike batch normalization, the defaults
    learn no affine parameters and keep no running statistics. With
    ``track_running_stats=True``, training updates ``running_mean`` and ``running_var`` with
    the batch average of the instances' mean and unbiased variance, and eval mode normalizes
    with them instead (``num_batches_tracked`` is kept but, as in PyTorch, never incremented).
    A training forward needs more than one element along ``L`` per channel.
    ``num_features`` must match the channel dimension when ``affine`` (``ValueError``
    otherwise); without ``affine`` a mismatch only warns. This is ``F.instance_norm``.

    Args:
        num_features (int): ``C``, the number of channels.
        eps (float): added to the variance for numerical stability. Default: ``1e-5``.
        momentum (float or None): weight of the new statistics in the running-statistics update
            (``None`` means no update, as 0). Default: ``0.1``.
        affine (bool): if ``True``, learn a per-channel ``weight`` (initialized to ones) and
            ``bias`` (zeros). Default: ``False``.
        track_running_stats (bool): if ``True``, keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` buffers and use them in eval mode. Default: ``False``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).
        bias (bool): keyword-only; with ``affine``, whether to learn the ``bias``.
            Default: ``True``.

    Shape:
        - Input: ``(N, C, L)`` or ``(C, L)``.
        - Output: the shape of the input.

    Example::

        >>> m = nn.InstanceNorm1d(2)
        >>> m(eager.tensor([[[1.0, 3.0], [2.0, 6.0]]]))
        tensor([[[-1.0000,  1.0000],
                 [-1.0000,  1.0000]]])
        >>> m = nn.InstanceNorm1d(100, affine=True)
        >>> m(eager.randn(20, 100, 40)).shape
        eager.Size([20, 100, 40])
    """

    _nsp = 1


class InstanceNorm2d(_InstanceNorm):
    """Applies instance normalization over a 4-D input (a batch of 2-D inputs with channels).

    Each channel of each sample is normalized over its spatial dimensions on its own:
    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``, with the biased variance, then
    (with ``affine``) scaled and shifted per channel. Unlike batch normalization, the defaults
    learn no affine parameters and keep no running statistics. With
    ``track_running_stats=True``, training updates ``running_mean`` and ``running_var`` with
    the batch average of the instances' mean and unbiased variance, and eval mode normalizes
    with them instead (``num_batches_tracked`` is kept but, as in PyTorch, never incremented).
    A training forward needs more than one spatial element per channel.
    ``num_features`` must match the channel dimension when ``affine`` (``ValueError``
    otherwise); without ``affine`` a mismatch only warns. This is ``F.instance_norm``.

    Args:
        num_features (int): ``C``, the number of channels.
        eps (float): added to the variance for numerical stability. Default: ``1e-5``.
        momentum (float or None): weight of the new statistics in the running-statistics update
            (``None`` means no update, as 0). Default: ``0.1``.
        affine (bool): if ``True``, learn a per-channel ``weight`` (initialized to ones) and
            ``bias`` (zeros). Default: ``False``.
        track_running_stats (bool): if ``True``, keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` buffers and use them in eval mode. Default: ``False``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).
        bias (bool): keyword-only; with ``affine``, whether to learn the ``bias``.
            Default: ``True``.

    Shape:
        - Input: ``(N, C, H, W)`` or ``(C, H, W)``.
        - Output: the shape of the input.

    Example::

        >>> m = nn.InstanceNorm2d(3, affine=True)
        >>> m(eager.randn(4, 3, 8, 8)).shape
        eager.Size([4, 3, 8, 8])
        >>> m = nn.InstanceNorm2d(3, track_running_stats=True)
        >>> m.running_mean
        tensor([0., 0., 0.])
        >>> _ = m(eager.full((4, 3, 8, 8), 10.0))
        >>> m.running_mean, m.running_var
        (tensor([1., 1., 1.]), tensor([0.9000, 0.9000, 0.9000]))
        >>> m.eval()(eager.randn(3, 8, 8)).shape
        eager.Size([3, 8, 8])
    """

    _nsp = 2


class InstanceNorm3d(_InstanceNorm):
    """Applies instance normalization over a 5-D input (a batch of 3-D inputs with channels).

    Each channel of each sample is normalized over its spatial dimensions on its own:
    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``, with the biased variance, then
    (with ``affine``) scaled and shifted per channel. Unlike batch normalization, the defaults
    learn no affine parameters and keep no running statistics. With
    ``track_running_stats=True``, training updates ``running_mean`` and ``running_var`` with
    the batch average of the instances' mean and unbiased variance, and eval mode normalizes
    with them instead (``num_batches_tracked`` is kept but, as in PyTorch, never incremented).
    A training forward needs more than one spatial element per channel.
    ``num_features`` must match the channel dimension when ``affine`` (``ValueError``
    otherwise); without ``affine`` a mismatch only warns. This is ``F.instance_norm``.

    Args:
        num_features (int): ``C``, the number of channels.
        eps (float): added to the variance for numerical stability. Default: ``1e-5``.
        momentum (float or None): weight of the new statistics in the running-statistics update
            (``None`` means no update, as 0). Default: ``0.1``.
        affine (bool): if ``True``, learn a per-channel ``weight`` (initialized to ones) and
            ``bias`` (zeros). Default: ``False``.
        track_running_stats (bool): if ``True``, keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` buffers and use them in eval mode. Default: ``False``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).
        bias (bool): keyword-only; with ``affine``, whether to learn the ``bias``.
            Default: ``True``.

    Shape:
        - Input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
        - Output: the shape of the input.

    Example::

        >>> m = nn.InstanceNorm3d(3)
        >>> m(eager.randn(2, 3, 4, 4, 4)).shape
        eager.Size([2, 3, 4, 4, 4])
        >>> nn.InstanceNorm3d(3, affine=True)(eager.randn(3, 4, 4, 4)).shape
        eager.Size([3, 4, 4, 4])
    """

    _nsp = 3


class GroupNorm(Module):
    """Applies group normalization: normalizes groups of channels of each sample.

    The ``num_channels`` channels are split into ``num_groups`` groups of consecutive channels;
    each group of each sample is normalized over its channels and all its other dimensions:
    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``, with the biased variance, and then
    (with ``affine``) scaled and shifted per channel. The result does not depend on the batch
    size and is the same in training and eval mode; there are no running statistics.
    ``num_groups=1`` normalizes each whole sample (like :class:`LayerNorm` over ``(C, *)``
    with per-channel parameters), ``num_groups=num_channels`` each channel (like
    :class:`InstanceNorm2d`). This is ``F.group_norm``.

    Args:
        num_groups (int): number of groups; must divide ``num_channels`` (``ValueError``
            otherwise).
        num_channels (int): ``C``, the number of channels expected in the input.
        eps (float): added to the variance for numerical stability. Default: ``1e-5``.
        affine (bool): if ``True``, learn a per-channel ``weight`` (initialized to ones) and
            ``bias`` (zeros). Default: ``True``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).
        bias (bool): keyword-only; with ``affine``, whether to learn the ``bias``.
            Default: ``True``.

    Shape:
        - Input: ``(N, C, *)``, at least 2-D.
        - Output: the shape of the input.

    Example::

        >>> m = nn.GroupNorm(2, 4, affine=False)
        >>> m(eager.tensor([[1.0, 3.0, 5.0, 7.0]]))
        tensor([[-1.0000,  1.0000, -1.0000,  1.0000]])
        >>> x = eager.randn(20, 6, 10, 10)
        >>> nn.GroupNorm(3, 6)(x).shape
        eager.Size([20, 6, 10, 10])
        >>> nn.GroupNorm(6, 6)(x).shape
        eager.Size([20, 6, 10, 10])
    """

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
