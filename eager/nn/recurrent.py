"""Multi-layer recurrent modules: ``RNN``, ``LSTM``, ``GRU`` with PyTorch's arguments,
parameter names (``weight_ih_l0``, ``bias_hh_l1_reverse``, ``weight_hr_l0``...),
initialization U(-1/sqrt(hidden), 1/sqrt(hidden)), shapes, errors and repr.

Each layer and direction is one input projection for all time steps (one matmul) and one
:class:`~eager.ops.recurrent.RnnScan` op for the recurrence.  Padded input runs as a
packed sequence whose batch sizes are all equal, so padded and packed input share one
path; for a :class:`~eager.nn.utils.rnn.PackedSequence` the scan stops each sequence at
its length (outputs past it are not computed, final states are taken at it).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..dispatch import dispatch
from ..factories import empty, tensor, zeros
from ..fn.index import index_select
from ..fn.shape import cat, reshape, squeeze, stack, transpose, unsqueeze
from ..ops.recurrent import RnnScan, scan_steps
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence, sizes_of, with_layout_of

__all__ = ["GRU", "LSTM", "RNN", "RNNBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_SCAN_MODE = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


class RNNBase(Module):
    """The base class of :class:`RNN`, :class:`LSTM` and :class:`GRU`.

    It holds what they share: parameters, argument checks, repr and the multi-layer loop. It
    creates, for each layer ``k`` and direction, the parameters ``weight_ih_l{k}``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` (and ``weight_hr_l{k}`` with
    ``proj_size``), with a ``_reverse`` suffix for the backward direction, all initialized from
    ``U(-1 / sqrt(hidden_size), 1 / sqrt(hidden_size))``. ``all_weights`` lists them per layer
    and direction; ``flatten_parameters()`` is a no-op (PyTorch packs the weights for cuDNN
    there). It has no ``forward`` of its own: use a subclass.

    Args:
        mode (str): ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"`` (another value
            raises ``ValueError``).
        input_size (int): number of features of the input.
        hidden_size (int): number of features of the hidden state.
        num_layers (int): number of stacked recurrent layers. Default: ``1``.
        bias (bool): if ``False``, the layers use no ``b_ih`` and ``b_hh``. Default: ``True``.
        batch_first (bool): if ``True``, input and output are batch-major ``(N, L, H)``.
            Default: ``False``.
        dropout (float): dropout probability on the outputs of each layer but the last.
            Default: ``0.0``.
        bidirectional (bool): if ``True``, each layer also runs backwards in time.
            Default: ``False``.
        proj_size (int): for ``"LSTM"``, project the hidden state to this size (smaller than
            ``hidden_size``). Default: ``0``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input, Output: as in the subclass: see :class:`RNN`, :class:`LSTM` and :class:`GRU`.

    Example::

        >>> isinstance(nn.LSTM(10, 20), nn.RNNBase)
        True
        >>> m = nn.RNNBase("GRU", 10, 20, num_layers=2)
        >>> m
        RNNBase(10, 20, num_layers=2)
        >>> [w.shape for w in m.all_weights[1]]
        [eager.Size([60, 20]), eager.Size([60, 20]), eager.Size([60]), eager.Size([60])]
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                    proj_size)
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(*shape, dtype=dtype, device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op (PyTorch packs the weights for cuDNN here)."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks (PyTorch's messages) ------------------------------------------------------
    def _check_input(self, input, packed: bool) -> None:
        wdt = self._flat_weights[0].dtype
        if input.dtype != wdt:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({wdt}). Convert input: input.to({wdt}), or convert model: "
                             f"model.to({input.dtype})")
        expected = 2 if packed else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _expected_hidden(self, batch: int, size: int) -> tuple:
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_hidden(hx, expected: tuple, msg: str = "Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    # -- the layers -----------------------------------------------------------------------
    def _unpack_input(self, input, hx, name: str):
        """``(data, batch_sizes, hx, packed info)`` from padded, unbatched or packed input;
        ``hx`` batched (a tuple for the LSTM), None for zeros."""
        if isinstance(input, PackedSequence):
            data, _, sorted_indices, unsorted_indices = input
            sizes = sizes_of(input)
            self._check_input(data, packed=True)
            return data, sizes, hx, (sorted_indices, unsorted_indices), True
        if input.ndim not in (2, 3):
            tail = "" if self.mode == "GRU" or self.mode == "LSTM" else " tensor"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D"
                             f"{tail} instead")
        batched = input.ndim == 3
        if not batched:
            input = unsqueeze(input, 0 if self.batch_first else 1)
        self._check_hidden_dims(hx, batched)
        if hx is not None and not batched:
            hx = (tuple(unsqueeze(h, 1) for h in hx) if isinstance(hx, tuple)
                  else unsqueeze(hx, 1))
        self._check_input(input, packed=False)
        if self.batch_first:
            input = transpose(input, 0, 1)
        T, B = input.shape[0], input.shape[1]
        data = reshape(input, (T * B, input.shape[2]))
        return data, (B,) * T, hx, None, batched

    def _check_hidden_dims(self, hx, batched: bool) -> None:
        if hx is None:
            return
        want = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if isinstance(hx, tuple):
            if hx[0].ndim != want or hx[1].ndim != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
        elif hx.ndim != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{hx.ndim}-D tensor")

    def _layers(self, data, sizes: tuple, h0, c0):
        """Run every layer and direction; ``(output data, h_n, c_n or None)``."""
        lstm = self.mode == "LSTM"
        mode = _SCAN_MODE[self.mode]
        num_directions = 2 if self.bidirectional else 1
        P = self.proj_size if self.proj_size > 0 else self.hidden_size
        x = data
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                w = dict(zip(("w_ih", "w_hh", "b_ih", "b_hh", "w_hr"),
                             self._layer_params(layer, direction)))
                gi = F.linear(x, w["w_ih"], w["b_ih"])
                res = dispatch(RnnScan, gi, h0[k], c0[k] if lstm else None, w["w_hh"],
                               w["b_hh"], w["w_hr"], mode=mode, batch_sizes=sizes,
                               reverse=direction == 1)
                last = _final_rows(res, sizes, reverse=direction == 1)
                if lstm:
                    outs.append(_columns(res, 0, P))
                    h_n.append(_columns(last, 0, P))
                    c_n.append(_columns(last, P, P + self.hidden_size))
                else:
                    outs.append(res)
                    h_n.append(last)
            x = outs[0] if num_directions == 1 else cat(outs, 1)
            if self.dropout and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, self.training)
        return x, stack(h_n, 0), (stack(c_n, 0) if lstm else None)

    def _layer_params(self, layer: int, direction: int) -> tuple:
        suffix = f"_l{layer}{'_reverse' if direction == 1 else ''}"
        def get(name):
            return getattr(self, name)
        w_ih, w_hh = get("weight_ih" + suffix), get("weight_hh" + suffix)
        b_ih = get("bias_ih" + suffix) if self.bias else None
        b_hh = get("bias_hh" + suffix) if self.bias else None
        w_hr = get("weight_hr" + suffix) if self.proj_size > 0 else None
        return w_ih, w_hh, b_ih, b_hh, w_hr

    def _run(self, input, hx, name: str):
        """The forward shared by the three modules; ``hx`` a tensor, or (h, c) for LSTM."""
        lstm = self.mode == "LSTM"
        data, sizes, hx, perm, batched = self._unpack_input(input, hx, name)
        B = sizes[0]
        P = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0 = zeros(*self._expected_hidden(B, P), dtype=data.dtype, device=data.device)
            c0 = zeros(*self._expected_hidden(B, self.hidden_size), dtype=data.dtype,
                       device=data.device) if lstm else None
        elif lstm:
            h0, c0 = hx
            self._check_hidden(h0, self._expected_hidden(B, P), "Expected hidden[0] size {}, "
                               "got {}")
            self._check_hidden(c0, self._expected_hidden(B, self.hidden_size),
                               "Expected hidden[1] size {}, got {}")
        else:
            h0, c0 = hx, None
            self._check_hidden(h0, self._expected_hidden(B, P))
        if perm is not None and perm[0] is not None and hx is not None:
            h0 = index_select(h0, 1, perm[0])
            c0 = index_select(c0, 1, perm[0]) if lstm else None
        out, h_n, c_n = self._layers(data, sizes, h0, c0)
        if perm is not None:
            if perm[1] is not None:
                h_n = index_select(h_n, 1, perm[1])
                c_n = index_select(c_n, 1, perm[1]) if lstm else None
            hidden = (h_n, c_n) if lstm else h_n
            packed = PackedSequence(out, input.batch_sizes, perm[0], perm[1])
            return with_layout_of(packed, input), hidden
        T = len(sizes)
        out = reshape(out, (T, B, out.shape[1]))
        if self.batch_first:
            out = transpose(out, 0, 1)
        if not batched:
            out = squeeze(out, 0 if self.batch_first else 1)
            h_n = squeeze(h_n, 1)
            c_n = squeeze(c_n, 1) if lstm else None
        return out, ((h_n, c_n) if lstm else h_n)


def _check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                proj_size) -> None:
    if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
            or isinstance(dropout, bool)):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=4)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int),
                              ("hidden_size", hidden_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                            f"{type(value).__name__}")
        if kind is int and value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable "
                         "projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


def _columns(x, start: int, stop: int):
    return x[:, start:stop]


def _final_rows(res, sizes: tuple, reverse: bool):
    """Each sequence's state after its last step: the rows of the step the scan ran last
    for it (the last step it is in, or step 0 in reverse)."""
    B = sizes[0]
    if reverse:
        return res[:B]
    steps = scan_steps(sizes, False)
    if sizes[-1] == B:  # padded: the last step holds every sequence
        off = steps[-1][0]
        return res[off:off + B]
    rows = np.empty(B, dtype=np.int64)
    for off, b, _ in steps:
        rows[:b] = np.arange(off, off + b)
    return index_select(res, 0, tensor(rows, device=res.device))


class RNN(RNNBase):
    """A multi-layer Elman RNN with tanh or ReLU, over a whole sequence.

    For each element of the input sequence, each layer computes
    ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (ReLU instead of tanh with
    ``nonlinearity="relu"``), where ``x_t`` is the input at time ``t`` (for layers after the
    first, the previous layer's ``h_t``, with dropout when ``dropout > 0``) and ``h_0`` comes
    from ``hx``. ``forward(input, hx=None)`` returns ``(output, h_n)``. The input may be a
    padded tensor or a :class:`~eager.nn.utils.rnn.PackedSequence` (the output then is one
    too, and ``h_n`` holds each sequence's state at its own length). The input's dtype must be
    the weights' (``ValueError`` otherwise). ``proj_size`` is for :class:`LSTM` only
    (``ValueError``).

    Args:
        input_size (int): number of features of the input ``x``.
        hidden_size (int): number of features of the hidden state ``h``.
        num_layers (int): number of stacked layers, each taking the previous layer's outputs.
            Default: ``1``.
        nonlinearity (str): ``"tanh"`` or ``"relu"`` (another value raises ``ValueError``).
            Default: ``"tanh"``.
        bias (bool): if ``False``, the layers use no ``b_ih`` and ``b_hh``. Default: ``True``.
        batch_first (bool): if ``True``, ``input`` and ``output`` are ``(N, L, H)`` instead of
            ``(L, N, H)`` (``hx`` and ``h_n`` are not affected). Default: ``False``.
        dropout (float): dropout probability on the outputs of each layer but the last (in
            training mode; warns with ``num_layers=1``). Default: ``0.0``.
        bidirectional (bool): if ``True``, each layer also runs backwards in time and the two
            directions' outputs are concatenated. Default: ``False``.
        device, dtype: accepted as PyTorch's (the CPU is the only device).

    Shape:
        - Input: ``(L, N, H_in)``, ``(N, L, H_in)`` with ``batch_first``, unbatched
          ``(L, H_in)``, or a packed sequence; ``H_in = input_size``.
        - hx: ``(D * num_layers, N, H_out)`` or unbatched ``(D * num_layers, H_out)``, with
          ``D = 2`` if bidirectional else 1 and ``H_out = hidden_size``; zeros when omitted.
        - Output: ``(L, N, D * H_out)`` (``(N, L, D * H_out)`` with ``batch_first``, or
          ``(L, D * H_out)`` unbatched): the last layer's ``h_t`` for every ``t``.
        - h_n: ``(D * num_layers, N, H_out)`` (or ``(D * num_layers, H_out)``), the final hidden
          state of every layer and direction.

    Attributes:
        weight_ih_l[k]: ``(hidden_size, input_size)`` for ``k = 0``, else
            ``(hidden_size, D * hidden_size)``.
        weight_hh_l[k]: ``(hidden_size, hidden_size)``.
        bias_ih_l[k], bias_hh_l[k]: ``(hidden_size,)``.
        The backward direction's have a ``_reverse`` suffix. All are initialized from
        ``U(-1 / sqrt(hidden_size), 1 / sqrt(hidden_size))``.

    Example::

        >>> rnn = nn.RNN(10, 20, 2)
        >>> output, h_n = rnn(eager.randn(5, 3, 10), eager.randn(2, 3, 20))
        >>> output.shape, h_n.shape
        (eager.Size([5, 3, 20]), eager.Size([2, 3, 20]))
        >>> rnn = nn.RNN(4, 8, nonlinearity="relu", batch_first=True, bidirectional=True)
        >>> output, h_n = rnn(eager.randn(3, 5, 4))
        >>> output.shape, h_n.shape
        (eager.Size([3, 5, 16]), eager.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.__dict__["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        else:
            self.__dict__["nonlinearity"] = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from "
                             "'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, "RNN")


class LSTM(RNNBase):
    """A multi-layer LSTM with PyTorch's gates (i, f, g, o) and parameters
    (``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``, ...).
    ``forward(input, hx=None)`` with ``hx = (h_0, c_0)`` returns ``(output, (h_n, c_n))``.

    Args:
        input_size (int): features of the input ``x``.
        hidden_size (int): features of the hidden state ``h``.
        num_layers (int): stacked layers. Default: 1.
        bias (bool): use ``b_ih`` and ``b_hh``. Default: ``True``.
        batch_first (bool): input and output are ``(N, L, H)`` instead of ``(L, N, H)``.
            Default: ``False``.
        dropout (float): dropout on the outputs of each layer but the last. Default: 0.
        bidirectional (bool): a bidirectional LSTM. Default: ``False``.
        proj_size (int): project ``h_t`` to this size (``h_t = (o_t * tanh(c_t)) W_hr^T``).
            Default: 0.

    Shape:
        - input: ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``) or unbatched
          ``(L, H_in)``.
        - hx: ``(h_0, c_0)``, each ``(D * num_layers, N, H)`` (zeros when omitted).
        - output: ``(L, N, D * H_out)``, the last layer's ``h_t`` for every ``t``
          (``D = 2`` when bidirectional, else 1).
        - h_n, c_n: the final hidden and cell states, ``(D * num_layers, N, H)``.

    Example::

        >>> rnn = nn.LSTM(10, 20, 2)
        >>> x = eager.randn(5, 3, 10)
        >>> output, (h_n, c_n) = rnn(x)
        >>> output.shape
        eager.Size([5, 3, 20])
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if hx is not None and not isinstance(hx, tuple):
            hx = tuple(hx)
        return self._run(input, hx, "LSTM")


class GRU(RNNBase):
    """A multi-layer GRU with PyTorch's gates (r, z, n):
    ``n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn))``,
    ``h_t = (1 - z_t) * n_t + z_t * h_{t-1}``. ``forward(input, hx=None)`` returns
    ``(output, h_n)``.

    Args:
        input_size (int): features of the input ``x``.
        hidden_size (int): features of the hidden state ``h``.
        num_layers (int): stacked layers. Default: 1.
        bias (bool): use ``b_ih`` and ``b_hh``. Default: ``True``.
        batch_first (bool): input and output are ``(N, L, H)`` instead of ``(L, N, H)``.
            Default: ``False``.
        dropout (float): dropout on the outputs of each layer but the last. Default: 0.
        bidirectional (bool): a bidirectional GRU. Default: ``False``.

    Shape:
        - input: ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``) or unbatched
          ``(L, H_in)``.
        - hx: ``h_0``, ``(D * num_layers, N, H_out)`` (zeros when omitted).
        - output: ``(L, N, D * H_out)``, the last layer's ``h_t`` for every ``t``
          (``D = 2`` when bidirectional, else 1).
        - h_n: the final hidden state, ``(D * num_layers, N, H_out)``.

    Example::

        >>> rnn = nn.GRU(10, 20, 2)
        >>> x = eager.randn(5, 3, 10)
        >>> output, h_n = rnn(x)
        >>> output.shape
        eager.Size([5, 3, 20])
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, "GRU")
