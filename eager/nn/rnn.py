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

__all__ = ["GRUCell", "LSTMCell", "RNNCell", "RNNCellBase"]


class RNNCellBase(Module):
    """The base class of :class:`RNNCell`, :class:`GRUCell` and :class:`LSTMCell`.

    It holds the parameters of a cell whose gates are ``num_chunks`` blocks of
    ``hidden_size`` rows stacked (1 for ``RNNCell``, 3 for ``GRUCell``, 4 for
    ``LSTMCell``), initialized from ``U(-sqrt(k), sqrt(k))`` with ``k = 1 / hidden_size``,
    and the checks of ``input`` and hidden states against them.  It defines no
    ``forward``: a subclass gives the cell's step.

    Args:
        input_size (int): number of features of the input ``x``.
        hidden_size (int): number of features of the hidden state ``h``.
        bias (bool): if ``False``, the cell has no ``bias_ih`` and ``bias_hh`` (they are
            ``None``).
        num_chunks (int): the number of gate blocks stacked in the weights.
        device (str or eager.device, optional): where the parameters are made. Default:
            ``None`` (CPU)
        dtype (eager.dtype, optional): the parameters' dtype. Default: ``None`` (the default
            float dtype)

    Shape:
        - weight_ih: ``(num_chunks * hidden_size, input_size)``.
        - weight_hh: ``(num_chunks * hidden_size, hidden_size)``.
        - bias_ih, bias_hh: ``(num_chunks * hidden_size)``.

    Example::

        >>> cell = nn.RNNCellBase(4, 3, bias=True, num_chunks=2)
        >>> cell.weight_ih.shape, cell.weight_hh.shape, cell.bias_hh.shape
        (eager.Size([6, 4]), eager.Size([6, 3]), eager.Size([6]))
        >>> isinstance(nn.GRUCell(4, 3), nn.RNNCellBase)
        True
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"dtype": dtype, "device": device}
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
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
        self._check_input(input)
        self._check_hidden(input, hx, 0)
        return input, hx, batched

    def _check_input(self, input) -> None:
        """PyTorch's check of the (batched) input's feature size against ``weight_ih``."""
        expected = self.weight_ih.shape[1]
        if input.shape[1] != expected:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {expected}")

    def _check_hidden(self, input, hx, label: int) -> None:
        """PyTorch's checks of hidden state ``label`` (batched) against the input's batch
        size and ``weight_hh``'s hidden size."""
        if input.shape[0] != hx.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} "
                               f"batch size {hx.shape[0]}")
        if hx.ndim < 2:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got 1)")
        expected = self.weight_hh.shape[1]
        if hx.shape[1] != expected:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got "
                               f"{hx.shape[1]}, expected {expected}")

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
    loop or use :class:`RNN`. As in PyTorch, ``input``'s feature size, ``hx``'s batch size
    and ``hx``'s feature size are checked (``RuntimeError`` naming the mismatch).

    Args:
        input_size (int): number of features of the input ``x``.
        hidden_size (int): number of features of the hidden state ``h``.
        bias (bool): if ``False``, the cell uses no ``b_ih`` and ``b_hh``. Default: ``True``.
        nonlinearity (str): ``"tanh"`` or ``"relu"`` (another value raises ``ValueError``).
            Default: ``"tanh"``.
        device, dtype: where the parameters are made, and their dtype.

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
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
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
    paper's). ``forward(input, hx=None)`` returns ``h'``; a missing ``hx`` is zeros. The
    sizes of ``input`` and ``hx`` are checked as in :class:`RNNCell`.

    Args:
        input_size (int): number of features of the input ``x``.
        hidden_size (int): number of features of the hidden state ``h``.
        bias (bool): if ``False``, the cell uses no ``b_ih`` and ``b_hh``. Default: ``True``.
        device, dtype: where the parameters are made, and their dtype.

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
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

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
    The sizes of ``input``, ``h`` and ``c`` are checked as in :class:`RNNCell`.

    Args:
        input_size (int): number of features of the input ``x``.
        hidden_size (int): number of features of the hidden and cell states.
        bias (bool): if ``False``, the cell uses no ``b_ih`` and ``b_hh``. Default: ``True``.
        device, dtype: where the parameters are made, and their dtype.

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
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        if input.ndim not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.ndim}D "
                             "instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.ndim not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = _unsqueeze0(input)
        if hx is None:
            h = c = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
        else:
            if not isinstance(hx, (tuple, list)):
                raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of "
                                f"Tensors, not {type(hx).__name__}")
            if len(hx) != 2:
                raise RuntimeError("lstm_cell expects two hidden states")
            h, c = hx
            if not batched:
                h, c = _unsqueeze0(h), _unsqueeze0(c)
        self._check_input(input)
        self._check_hidden(input, h, 0)
        self._check_hidden(input, c, 1)
        gi, gh = self._gates(input, h)
        i, f, g, o = chunk(_ew.add(gi, gh), 4, 1)
        c2 = _ew.add(_ew.mul(_ew.sigmoid(f), c), _ew.mul(_ew.sigmoid(i), _ew.tanh(g)))
        h2 = _ew.mul(_ew.sigmoid(o), _ew.tanh(c2))
        if not batched:
            return _squeeze0(h2), _squeeze0(c2)
        return h2, c2
