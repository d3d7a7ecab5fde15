"""Recurrent cells: ``RNNCell``, ``GRUCell``, ``LSTMCell`` with PyTorch's gate layouts
(GRU: r, z, n; LSTM: i, f, g, o) and initialization U(-1/sqrt(hidden), 1/sqrt(hidden))."""

from __future__ import annotations

import math

from ..dispatch import dispatch
from ..factories import empty, zeros
from ..fn import elementwise as _ew
from ..fn.shape import chunk
from ..ops import shape as _shp
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["GRUCell", "LSTMCell", "RNNCell"]


class RNNCellBase(Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, name):
        """Batch an unbatched input; default zero hidden state."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if hx is not None and hx.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = _unsqueeze0(input)
        if hx is None:
            hx = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
        elif not batched:
            hx = _unsqueeze0(hx)
        return input, hx, batched

    def _gates(self, input, hx):
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        gh = F.linear(hx, self.weight_hh, self.bias_hh)
        return gi, gh


def _unsqueeze0(x):
    return dispatch(_shp.Reshape, x, shape=(1,) + tuple(x.shape))


def _squeeze0(x):
    return dispatch(_shp.Reshape, x, shape=tuple(x.shape[1:]))


class RNNCell(RNNCellBase):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx, "RNNCell")
        gi, gh = self._gates(input, hx)
        pre = _ew.add(gi, gh)
        h = _ew.tanh(pre) if self.nonlinearity == "tanh" else _ew.relu(pre)
        return h if batched else _squeeze0(h)


class GRUCell(RNNCellBase):
    """Gates (r, z, n) stacked in ``weight_ih``/``weight_hh``:
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx, "GRUCell")
        gi, gh = self._gates(input, hx)
        i_r, i_z, i_n = chunk(gi, 3, 1)
        h_r, h_z, h_n = chunk(gh, 3, 1)
        r = _ew.sigmoid(_ew.add(i_r, h_r))
        z = _ew.sigmoid(_ew.add(i_z, h_z))
        n = _ew.tanh(_ew.add(i_n, _ew.mul(r, h_n)))
        h = _ew.add(n, _ew.mul(z, _ew.sub(hx, n)))          # (1 - z) * n + z * h
        return h if batched else _squeeze0(h)


class LSTMCell(RNNCellBase):
    """Gates (i, f, g, o) stacked in ``weight_ih``/``weight_hh``:
    ``c' = f * c + i * g``, ``h' = o * tanh(c')``; returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input, hx=None):
        if input.ndim not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.ndim}D "
                             "instead")
        batched = input.ndim == 2
        if not batched:
            input = _unsqueeze0(input)
        if hx is None:
            h = c = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
        else:
            h, c = hx
            if not batched:
                h, c = _unsqueeze0(h), _unsqueeze0(c)
        gi, gh = self._gates(input, h)
        i, f, g, o = chunk(_ew.add(gi, gh), 4, 1)
        c2 = _ew.add(_ew.mul(_ew.sigmoid(f), c), _ew.mul(_ew.sigmoid(i), _ew.tanh(g)))
        h2 = _ew.mul(_ew.sigmoid(o), _ew.tanh(c2))
        if not batched:
            return _squeeze0(h2), _squeeze0(c2)
        return h2, c2
