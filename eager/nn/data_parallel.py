"""``DataParallel``: PyTorch's single-process data-parallel wrapper, as it behaves on a
machine without GPUs: it holds the module and its forward calls the module on the whole
batch.  Scripts written for several GPUs (``model = nn.DataParallel(model)``,
``model.module``, checkpoints whose keys start with ``module.``) run unchanged.  For data
parallelism over processes see :class:`eager.nn.parallel.DistributedDataParallel`."""

from __future__ import annotations

from .module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wrap ``module`` for data parallelism; here, with no GPUs to split the batch over,
    ``forward`` calls ``module`` with the inputs as they are (what PyTorch does when it
    finds no GPU).  The wrapped module is the attribute ``module``, so the wrapper's
    ``state_dict`` keys are the module's prefixed with ``module.``.

    Args:
        module (Module): the module to wrap.
        device_ids (list of int or device, optional): the GPUs to use; ignored, as
            PyTorch ignores them without GPUs (``device_ids`` is then ``[]``).
        output_device (int or device, optional): ignored likewise.
        dim (int): the batch dimension to split; ignored likewise. Default: 0.

    Shape:
        - Input and Output: those of ``module``.

    Example::

        >>> net = nn.DataParallel(nn.Linear(4, 2))
        >>> net(eager.randn(3, 4)).shape
        eager.Size([3, 2])
        >>> sorted(net.state_dict())
        ['module.bias', 'module.weight']
        >>> net.device_ids
        []
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
