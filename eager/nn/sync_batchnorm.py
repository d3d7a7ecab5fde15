"""``nn.SyncBatchNorm``: batch normalization whose statistics would be reduced over the
processes of a group.

On one process (``eager.distributed`` not initialized, a world of one, eval mode, or
running statistics in use) it is exactly :class:`BatchNorm` over any ``(N, C, *)``
input, as PyTorch's.  Reducing the statistics over several ranks needs a differentiable
all-reduce (the backward all-reduces two gradient sums as well), which eager.distributed
does not have: training with a world of more than one process raises
``NotImplementedError``.  ``convert_sync_batchnorm`` replaces every ``BatchNorm*d`` of a
model, sharing its parameters and buffers, as PyTorch's.
"""

from __future__ import annotations

from ..distributed.group import get_world_size, is_initialized
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over ``(N, C, *)`` input with the statistics of the whole
    process group: ``y = (x - mean) / sqrt(var + eps) * weight + bias``.  On a single
    process it is :class:`BatchNorm1d`/``2d``/``3d``; training across several processes
    raises ``NotImplementedError`` (eager.distributed has no differentiable all-reduce).

    Args:
        num_features (int): ``C``, the number of channels.
        eps (float): added to the variance. Default: 1e-5.
        momentum (float or None): running-statistics update factor; ``None`` for a
            cumulative average. Default: 0.1.
        affine (bool): learn ``weight`` (ones) and ``bias`` (zeros). Default: ``True``.
        track_running_stats (bool): keep ``running_mean``/``running_var`` buffers.
            Default: ``True``.
        process_group (optional): the group whose statistics are reduced. Default:
            ``None`` (the whole world).

    Shape:
        - Input: ``(N, C, *)``; Output: same shape.

    Example::

        >>> m = nn.SyncBatchNorm(4)
        >>> m(eager.randn(8, 4, 5, 5)).shape
        eager.Size([8, 4, 5, 5])
        >>> net = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(4)))
        >>> type(net[0]).__name__
        'SyncBatchNorm'
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None,
                 dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def _check_non_zero_input_channels(self, input) -> None:
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        if bn_training and self.training and is_initialized() \
                and get_world_size(self.process_group) > 1:
            raise NotImplementedError(
                "SyncBatchNorm: training with more than one process needs the batch "
                "statistics all-reduced over the group with a differentiable all-reduce, "
                "which eager.distributed does not provide; use BatchNorm (per-process "
                "statistics) or evaluate in eval() mode")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*d`` in it replaced by a :class:`SyncBatchNorm`
        sharing its parameters, buffers and training mode (``module`` itself when it is
        not one).

        Args:
            module (nn.Module): the module (tree) to convert.
            process_group (optional): the group of the new layers. Default: ``None``.

        Example::

            >>> net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
            >>> net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
            >>> type(net[1]).__name__
            'SyncBatchNorm'
        """
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
