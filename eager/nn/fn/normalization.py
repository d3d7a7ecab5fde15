"""Batch, instance and group normalization with PyTorch's signatures, running-statistics
updates and error messages.  Composed of reductions and elementwise ops (the compiler
fuses the elementwise parts); running statistics are updated in place under ``no_grad``.
"""

from __future__ import annotations

import math

import numpy as np

from ..._state import STATE
from ...autograd.grad_mode import no_grad
from ...dispatch import dispatch
from ...fn import elementwise as _ew
from ...fn import reduce as _red
from ...ops import norm as _norm
from .args import reshape, shape_list

__all__ = ['batch_norm', 'group_norm', 'instance_norm', 'layer_norm']

_ndarray = np.ndarray
_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _check_numel(what: str, t, expected: int, repeat: int = 1) -> None:
    if t is not None and t.numel() != expected:
        raise RuntimeError(f"{what} should contain {expected * repeat} elements not "
                           f"{t.numel() * repeat}")


def _normalized(x, dims: tuple, eps: float):
    """``(x - mean) / sqrt(var + eps)`` over ``dims`` and the (biased) mean and variance."""
    mu = _red.mean(x, dims, True)
    xc = _ew.sub(x, mu)
    var = _red.mean(_ew.mul(xc, xc), dims, True)
    return _ew.mul(xc, _ew.rsqrt(_ew.add(var, eps))), mu, var


def _affine(out, weight, bias, shape: tuple):
    if weight is not None:
        out = _ew.mul(out, reshape(weight, shape))
    if bias is not None:
        out = _ew.add(out, reshape(bias, shape))
    return out


def _update_running(running_mean, running_var, mu, var, momentum, n: int) -> None:
    """``running = (1 - momentum) * running + momentum * batch`` (the variance unbiased)."""
    with no_grad():
        m = 0.0 if momentum is None else momentum
        running_mean.mul_(1.0 - m).add_(_ew.mul(mu, m))
        running_var.mul_(1.0 - m).add_(_ew.mul(var, m * n / (n - 1)))


def batch_norm(input, running_mean, running_var, weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5):
    """Batch normalization of each channel over the batch and spatial dimensions.

    Each channel (dimension 1) is normalized, then an optional per-channel affine map is
    applied.

    With ``training=True`` the batch's own mean and (biased) variance are used, and
    ``running_mean``/``running_var``, when both are given, are updated in place:
    ``running = (1 - momentum) * running + momentum * batch_stat`` (the unbiased variance,
    as PyTorch).  With ``training=False`` the running statistics are used instead and must
    be given.

    Args:
        input (Tensor): the input, ``(N, C, *)``, at least 2-D.
        running_mean (Tensor or None): the running mean, ``(C,)``.
        running_var (Tensor or None): the running variance, ``(C,)``.
        weight (Tensor, optional): the per-channel scale, ``(C,)``. Default: ``None``
        bias (Tensor, optional): the per-channel shift, ``(C,)``. Default: ``None``
        training (bool, optional): use batch statistics (and update the running ones).
            Default: ``False``
        momentum (float, optional): the weight of the batch statistics in the update;
            ``None`` leaves the running statistics unchanged here (PyTorch's cumulative
            average is up to the caller, as ``nn.BatchNorm*`` does). Default: ``0.1``
        eps (float, optional): added to the variance for stability. Default: ``1e-5``

    Shape:
        - Input: ``(N, C)`` or ``(N, C, *)``.
        - Output: the shape of the input.

    Example::

        >>> x = eager.tensor([[1.0, 2.0], [3.0, 6.0]])
        >>> rm, rv = eager.zeros(2), eager.ones(2)
        >>> F.batch_norm(x, rm, rv, training=True)
        tensor([[-1.0000, -1.0000],
                [ 1.0000,  1.0000]])
        >>> rm, rv
        (tensor([0.2000, 0.4000]), tensor([1.1000, 1.7000]))
    """
    nd = input.ndim
    if nd < 2:
        raise ValueError(f"batch_norm: expected at least 2D input (got {nd}D input)")
    C = input.shape[1]
    _check_numel("running_mean", running_mean, C)
    _check_numel("running_var", running_var, C)
    _check_numel("weight", weight, C)
    _check_numel("bias", bias, C)
    shape = (1, C) + (1,) * (nd - 2)
    if training:
        dims = (0,) + tuple(range(2, nd))
        n = input.numel() // C if C else 0
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape!r}")
        out, mu, var = _normalized(input, dims, eps)
        if running_mean is not None and running_var is not None:
            _update_running(running_mean, running_var, reshape(mu, (C,)), reshape(var, (C,)),
                            momentum, n)
    else:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        inv = reshape(_ew.rsqrt(_ew.add(running_var, eps)), shape)
        out = _ew.mul(_ew.sub(input, reshape(running_mean, shape)), inv)
    return _affine(out, weight, bias, shape)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """Instance normalization of each channel of each sample over its spatial dimensions.

    An optional per-channel affine map is then applied.

    With ``use_input_stats`` (the default) each ``(sample, channel)`` slice uses its own
    mean and biased variance, and ``running_mean``/``running_var``, when both are given,
    are updated in place with the batch average of those statistics.  Without it, the
    running statistics normalize instead and must be given.

    Args:
        input (Tensor): the input, ``(N, C, *)`` with at least one spatial dimension.
        running_mean (Tensor, optional): the running mean, ``(C,)``. Default: ``None``
        running_var (Tensor, optional): the running variance, ``(C,)``. Default: ``None``
        weight (Tensor, optional): the per-channel scale, ``(C,)``. Default: ``None``
        bias (Tensor, optional): the per-channel shift, ``(C,)``. Default: ``None``
        use_input_stats (bool, optional): use each instance's statistics. Default: ``True``
        momentum (float, optional): the weight of the new statistics in the running update.
            Default: ``0.1``
        eps (float, optional): added to the variance for stability. Default: ``1e-5``

    Shape:
        - Input: ``(N, C, *)``, at least 3-D (no unbatched form here).
        - Output: the shape of the input.

    Example::

        >>> F.instance_norm(eager.tensor([[[1.0, 3.0], [2.0, 2.0]]]))
        tensor([[[-1.0000,  1.0000],
                 [ 0.0000,  0.0000]]])
    """
    nd = input.ndim
    if nd < 3:
        raise ValueError(f"instance_norm: expected input with a batch, a channel and at least "
                         f"one spatial dimension, got {nd}D input")
    N, C = input.shape[:2]
    for what, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_numel(what, t, C, N)
    shape = (1, C) + (1,) * (nd - 2)
    dims = tuple(range(2, nd))
    if use_input_stats:
        n = input.numel() // (N * C) if N * C else 0
        if n <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape!r}")
        out, mu, var = _normalized(input, dims, eps)
        if running_mean is not None and running_var is not None:
            _update_running(running_mean, running_var, _red.mean(reshape(mu, (N, C)), 0),
                            _red.mean(reshape(var, (N, C)), 0), momentum, n)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        inv = reshape(_ew.rsqrt(_ew.add(running_var, eps)), shape)
        out = _ew.mul(_ew.sub(input, reshape(running_mean, shape)), inv)
    return _affine(out, weight, bias, shape)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Group normalization over groups of channels of each sample.

    The channels are split into ``num_groups`` groups, and each group of each sample is
    normalized over its channels and spatial positions.

    Uses the biased variance; ``weight`` and ``bias`` then apply per channel.  The result
    does not depend on the batch size.  As in PyTorch, groups of a single value (e.g. one
    sample of one channel per group and no spatial size) raise ``ValueError``.

    Args:
        input (Tensor): the input, ``(N, C, *)``.
        num_groups (int): the number of groups; must divide ``C``.
        weight (Tensor, optional): the per-channel scale, ``(C,)``. Default: ``None``
        bias (Tensor, optional): the per-channel shift, ``(C,)``. Default: ``None``
        eps (float, optional): added to the variance for stability. Default: ``1e-5``

    Shape:
        - Input: ``(N, C, *)``.
        - Output: the shape of the input.

    Example::

        >>> F.group_norm(eager.tensor([[1.0, 3.0, 5.0, 7.0]]), 2)
        tensor([[-1.0000,  1.0000, -1.0000,  1.0000]])
        >>> F.group_norm(eager.randn(2, 6, 4, 4), 3, weight=eager.ones(6)).shape
        eager.Size([2, 6, 4, 4])
    """
    nd = input.ndim
    if nd < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {nd}")
    N, C = input.shape[:2]
    if num_groups > 0:  # PyTorch's check, made whatever the mode (a group of one value)
        size = [N * C // num_groups, num_groups] + list(input.shape[2:])
        if size[0] * math.prod(size[2:]) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {size}")
    if num_groups <= 0 or C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {shape_list(input)} and "
                           f"num_groups={num_groups}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of "
                               f"channels in input, but got {what} of shape {shape_list(t)} and "
                               f"input of shape {shape_list(input)}")
    rest = input.numel() // (N * C) if N * C else 0
    x = reshape(input, (N, num_groups, (C // num_groups) * rest))
    out, _, _ = _normalized(x, (2,), eps)
    out = reshape(out, tuple(input.shape))
    return _affine(out, weight, bias, (1, C) + (1,) * (nd - 2))


def _mean(x, dims, keepdim=True):
    return _red.mean(x, dims, keepdim)


def _fused_ok(input, weight, bias) -> bool:
    """Whether layer_norm runs as the one op (:class:`eager.ops.norm.LayerNorm`): float32
    or float64 CPU arrays (no vmap storage), weight and bias of the input's dtype, no
    autocast; otherwise the composite below (half types, mixed dtypes, devices)."""
    d = input._data
    if type(d) is not _ndarray or d.dtype not in _FUSED_DTYPES or not d.size or \
            STATE.autocast is not None:
        return False
    for t in (weight, bias):
        if t is not None and (type(t._data) is not _ndarray or t._data.dtype != d.dtype):
            return False
    return True


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Layer normalization over the last ``len(normalized_shape)`` dimensions.

    Each slice is normalized to zero mean and unit variance, then an optional elementwise
    affine map is applied.

    Each slice is ``(x - mean) / sqrt(var + eps)`` with the biased variance over those
    dimensions; ``weight`` and ``bias`` (if given) are multiplied and added elementwise.

    Args:
        input (Tensor): the input, ``(*, *normalized_shape)``.
        normalized_shape (int or sequence of ints): the trailing shape to normalize over; it
            must match the end of ``input.shape`` (else ``RuntimeError``).
        weight (Tensor, optional): the scale, of shape ``normalized_shape``. Default: ``None``
        bias (Tensor, optional): the shift, of shape ``normalized_shape``. Default: ``None``
        eps (float, optional): added to the variance for stability. Default: ``1e-5``

    Shape:
        - Input: ``(*, *normalized_shape)``.
        - Output: the shape of the input.

    Example::

        >>> F.layer_norm(eager.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]]), (3,))
        tensor([[-1.2247,  0.0000,  1.2247],
                [ 0.0000,  0.0000,  0.0000]])
        >>> F.layer_norm(eager.randn(2, 3, 4), [3, 4], weight=eager.ones(3, 4)).shape
        eager.Size([2, 3, 4])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape or k > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    dims = tuple(range(input.ndim - k, input.ndim))
    if _fused_ok(input, weight, bias):
        return dispatch(_norm.LayerNorm, input, weight, bias, dim=dims, eps=float(eps))
    xc = _ew.sub(input, _mean(input, dims))
    var = _mean(_ew.mul(xc, xc), dims)
    out = _ew.mul(xc, _ew.rsqrt(_ew.add(var, eps)))
    if weight is not None:
        out = _ew.mul(out, weight)
    if bias is not None:
        out = _ew.add(out, bias)
    return out
