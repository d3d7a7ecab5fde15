"""``eager.nn.init``: in-place initializers with PyTorch's names, formulas and defaults.

Each runs under ``no_grad`` and writes into the tensor through the in-place path
(version bump; a tracer sees it).  Random values come from the factory ops, i.e. the
generator passed as ``generator=`` (default: the one :func:`eager.manual_seed` seeds).
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..factories import eye, full_like, rand, randn
from ..factories import tensor as _tensor
from ..fn import elementwise as _ew
from ..inplace import inplace

__all__ = ["calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_",
           "ones_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_"]


def _write(tensor, value, name: str):
    return inplace(tensor, value, name)


def calculate_gain(nonlinearity: str, param=None) -> float:
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    with no_grad():
        r = rand(*tensor.shape, dtype=tensor.dtype, generator=generator, device=tensor.device)
        return _write(tensor, _ew.add(_ew.mul(r, b - a), a), "uniform_")


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    with no_grad():
        r = randn(*tensor.shape, dtype=tensor.dtype, generator=generator,
                  device=tensor.device)
        return _write(tensor, _ew.add(_ew.mul(r, std), mean), "normal_")


def constant_(tensor, val: float):
    with no_grad():
        return _write(tensor, full_like(tensor, val), "constant_")


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return _write(tensor, eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype), "eye_")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """Fill ``tensor`` (at least 2-D) with a (semi-)orthogonal matrix times ``gain``: the Q of
    the QR decomposition of a standard normal ``(rows, cols)`` matrix (transposed when there
    are more columns), signs fixed by R's diagonal, as PyTorch (Saxe et al., 2013).  The
    normal draws come from eager's generator, so the values differ from PyTorch's."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    import numpy as np

    rows = int(tensor.shape[0])
    cols = tensor.numel() // rows
    with no_grad():
        flat = randn(rows, cols, dtype=_dt.float64, generator=generator).numpy()
        if rows < cols:
            flat = flat.T
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        value = _tensor(q.reshape(tuple(tensor.shape)) * gain, dtype=tensor.dtype)
        return _write(tensor, value, "orthogonal_")


__all__ += ["orthogonal_"]
