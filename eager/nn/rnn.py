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
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    With ``nonlinearity="relu"``, ReLU replaces tanh. ``forward(input, hx=None)`` returns the
    new hidden state ``h'``; a missing ``hx`` is zeros. To run a whole sequence, call it in a
    loop or use :class:`RNN`. Unlike PyTorch, a batch-size mismatch between ``input`` and
    ``hx`` is not checked: an ``hx`` with batch size 1 broadcasts.

    Args:
        input_size (int): number of features of the input ``x``.
        hidden_size (int): number of features of the hidden state ``h``.
        bias (bool): if ``False``, the cell uses no ``b_ih`` and ``b_hh``. Default: ``True``.
        nonlinearity (str): ``"tanh"`` or ``"relu"`` (another value raises ``ValueError``).
            Default: ``"tanh"``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(N, H_in)`` or ``(H_in)``, with ``H_in = input_size``.
        - hx: ``(N, H_out)`` or ``(H_out)``, with ``H_out = hidden_size``; zeros when omitted.
        - Output: ``(N, H_out)`` or ``(H_out)``, the next hidden state.

    Attributes:
        weight_ih: ``(hidden_size, input_size)``.
        weight_hh: ``(hidden_size, hidden_size)``.
        bias_ih, bias_hh: ``(hidden_size,)``.
        All are initialized from ``U(-sqrt(k), sqrt(k))`` with ``k = 1 / hidden_size``.

    Example::

        >>> cell = nn.RNNCell(10, 20)
        >>> x = eager.randn(6, 3, 10)
        >>> hx = eager.randn(3, 20)
        >>> outputs = []
        >>> for t in range(6):
        ...     hx = cell(x[t], hx)
        ...     outputs.append(hx)
        >>> eager.stack(outputs).shape
        eager.Size([6, 3, 20])
        >>> nn.RNNCell(10, 20, nonlinearity="relu")(eager.randn(10)).shape
        eager.Size([20])
    """

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
    """One step of a gated recurrent unit (GRU).

    With ``x`` the input and ``h`` the hidden state::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
        z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h

    The reset gate ``r`` multiplies ``W_hn h + b_hn`` (PyTorch's layout, not the original
    paper's). ``forward(input, hx=None)`` returns ``h'``; a missing ``hx`` is zeros. As with
    :class:`RNNCell`, the batch sizes of ``input`` and ``hx`` are not checked against each
    other.

    Args:
        input_size (int): number of features of the input ``x``.
        hidden_size (int): number of features of the hidden state ``h``.
        bias (bool): if ``False``, the cell uses no ``b_ih`` and ``b_hh``. Default: ``True``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(N, H_in)`` or ``(H_in)``, with ``H_in = input_size``.
        - hx: ``(N, H_out)`` or ``(H_out)``, with ``H_out = hidden_size``; zeros when omitted.
        - Output: ``(N, H_out)`` or ``(H_out)``, the next hidden state.

    Attributes:
        weight_ih: ``(3 * hidden_size, input_size)``, the gates ``(W_ir | W_iz | W_in)``
            stacked.
        weight_hh: ``(3 * hidden_size, hidden_size)``, ``(W_hr | W_hz | W_hn)``.
        bias_ih, bias_hh: ``(3 * hidden_size,)``, stacked the same way.
        All are initialized from ``U(-sqrt(k), sqrt(k))`` with ``k = 1 / hidden_size``.

    Example::

        >>> cell = nn.GRUCell(10, 20)
        >>> x = eager.randn(6, 3, 10)
        >>> hx = eager.randn(3, 20)
        >>> for t in range(6):
        ...     hx = cell(x[t], hx)
        >>> hx.shape
        eager.Size([3, 20])
        >>> cell.weight_ih.shape
        eager.Size([60, 10])
    """

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
    """One step of a long short-term memory (LSTM) cell.

    With ``x`` the input, ``h`` the hidden state and ``c`` the cell state::

        i = sigmoid(W_ii x + b_ii + W_hi h + b_hi)
        f = sigmoid(W_if x + b_if + W_hf h + b_hf)
        g = tanh(W_ig x + b_ig + W_hg h + b_hg)
        o = sigmoid(W_io x + b_io + W_ho h + b_ho)
        c' = f * c + i * g
        h' = o * tanh(c')

    ``forward(input, hx=None)`` takes ``hx = (h, c)`` (both zeros when omitted) and returns
    ``(h', c')``. There is no ``proj_size`` here (only :class:`LSTM` has it, as in PyTorch).
    As with :class:`RNNCell`, the batch sizes of ``input`` and ``hx`` are not checked against
    each other.

    Args:
        input_size (int): number of features of the input ``x``.
        hidden_size (int): number of features of the hidden and cell states.
        bias (bool): if ``False``, the cell uses no ``b_ih`` and ``b_hh``. Default: ``True``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(N, H_in)`` or ``(H_in)``, with ``H_in = input_size``.
        - hx: a tuple ``(h, c)`` of ``(N, H_out)`` or ``(H_out)`` tensors, with
          ``H_out = hidden_size``; zeros when omitted.
        - Output: a tuple ``(h', c')`` of ``(N, H_out)`` or ``(H_out)`` tensors.

    Attributes:
        weight_ih: ``(4 * hidden_size, input_size)``, the gates ``(W_ii | W_if | W_ig | W_io)``
            stacked.
        weight_hh: ``(4 * hidden_size, hidden_size)``, ``(W_hi | W_hf | W_hg | W_ho)``.
        bias_ih, bias_hh: ``(4 * hidden_size,)``, stacked the same way.
        All are initialized from ``U(-sqrt(k), sqrt(k))`` with ``k = 1 / hidden_size``.

    Example::

        >>> cell = nn.LSTMCell(10, 20)
        >>> x = eager.randn(6, 3, 10)
        >>> hx, cx = eager.randn(3, 20), eager.randn(3, 20)
        >>> outputs = []
        >>> for t in range(6):
        ...     hx, cx = cell(x[t], (hx, cx))
        ...     outputs.append(hx)
        >>> eager.stack(outputs).shape
        eager.Size([6, 3, 20])
        >>> h, c = nn.LSTMCell(10, 20)(eager.randn(10))
        >>> h.shape, c.shape
        (eager.Size([20]), eager.Size([20]))
    """

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
