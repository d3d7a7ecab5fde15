"""The recurrent scan's nodes in a CPU kernel program: ``rnn_scan`` and ``rnn_scan_grad``
(eager/ops/recurrent.py) call the native scan (:mod:`runtime.cpu.scan`) instead of the
op's NumPy forward.

A scan node becomes a :class:`NativeScan` or :class:`NativeScanGrad` node: the same inputs
and params plus ``kernel``, the compiled entry of a small generated module (its text names
only the mode and whether a bias is present, so every trace of a model, whatever its
sequence lengths and batch, shares one cached kernel per dtype; Numba compiles it in the
compile worker like a fused kernel).  The generated program calls the node's ``forward``
as it calls any op's, which allocates the output and calls the kernel.

Kept on eager's NumPy forward: a projection (``proj_size``), dtypes other than float32 and
float64, and an empty sequence.
"""

from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np
from numba import types as nbt

from eager.ops.base import Op
from eager.ops.recurrent import GATES, RnnScan, RnnScanGrad, scan_steps
from runtime.cpu import DEVICE as CPU
from runtime.cpu import compile_worker
from runtime.cpu import scan as _scan

from ..ir import Node

_MODES = {"rnn_tanh": _scan.RNN_TANH, "rnn_relu": _scan.RNN_RELU, "lstm": _scan.LSTM,
          "gru": _scan.GRU}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

_SOURCE = '''"""dyngraph: the recurrent scan ({what}, generated; the text is its own cache key)."""
import numba

from runtime.cpu import scan
{math}

@numba.njit(cache=True, error_model="numpy", nogil=True)
def kernel({args}):
    scan.{entry}({mode}, {call})
'''

# what the kernel computes with mathlib's functions (not eager's bits: README,
# "Exactness"), in its text for compiler.check.inexact_ops
_TANH, _BOTH = "# computes with mathlib.tanh\n", "# computes with mathlib.tanh, mathlib.sigmoid\n"
_MATH = {("rnn_tanh", False): _TANH, ("rnn_relu", False): "", ("lstm", False): _TANH,
         ("gru", False): _TANH, ("rnn_tanh", True): "", ("rnn_relu", True): "",
         ("lstm", True): _BOTH, ("gru", True): _BOTH}

_FWD_ARGS = "gi, h0, c0, w_hh, b_hh, steps, consts, out"
_FWD_CALL = "gi, h0, c0, w_hh, b_hh, {bias}, steps, consts, out"
_BWD_ARGS = "g, gi, h0, c0, w_hh, b_hh, out, steps, consts, d_gi, gh0, gc0, gw, gb"
_BWD_CALL = "g, gi, h0, c0, w_hh, b_hh, {bias}, out, steps, consts, d_gi, gh0, gc0, gw, gb"


def native(node: Node) -> bool:
    """Whether this scan node runs natively (module doc)."""
    if node.op is RnnScan:
        gi, w_hr = node.inputs[0], node.inputs[5]
    elif node.op is RnnScanGrad:
        gi, w_hr = node.inputs[1], node.inputs[6]
    else:
        return False
    return (w_hr is None and gi.dtype in _FLOATS and gi.shape[0] > 0
            and all(getattr(v, "dtype", gi.dtype) == gi.dtype for v in node.inputs))


def lower(node: Node) -> tuple:
    """(the native node, (kernel name, kernel source)) of a scan node :func:`native`
    accepts; the kernel is compiled here (in the compile worker when there is one)."""
    grad = node.op is RnnScanGrad
    p = node.params
    bias = node.inputs[5 if grad else 4] is not None
    dt = node.inputs[1 if grad else 0].dtype
    args, call = (_BWD_ARGS, _BWD_CALL) if grad else (_FWD_ARGS, _FWD_CALL)
    source = _SOURCE.format(what=f"{p['mode']} {'backward' if grad else 'forward'}",
                            args=args, call=call.format(bias=bias), mode=_MODES[p["mode"]],
                            entry="backward" if grad else "forward",
                            math=_MATH[(p["mode"], grad)])
    mod = CPU.load(source)
    a2 = nbt.Array(numba.from_dtype(dt), 2, "C")
    a1 = nbt.Array(numba.from_dtype(dt), 1, "C")
    steps = nbt.Array(nbt.int64, 2, "C")
    if grad:
        sig = (a2, a2, a2, a2, a2, a1, a2, steps, a1, a2, a2, a2, a2, a1)
    else:
        sig = (a2, a2, a2, a2, a1, steps, a1, a2)
    compile_worker.compile(mod.kernel, sig)
    params = dict(p)
    params["kernel"] = mod.kernel
    op = NativeScanGrad if grad else NativeScan
    return Node(op, node.inputs, params, node.out, node.where), (f"{mod.__name__}.kernel",
                                                                  source)


@lru_cache(maxsize=256)
def _steps(batch_sizes: tuple, reverse: bool) -> np.ndarray:
    return np.array(scan_steps(batch_sizes, reverse), dtype=np.int64).reshape(-1, 3)


@lru_cache(maxsize=4)
def _consts(dt: np.dtype) -> np.ndarray:
    return np.array([0.5, 1.0], dtype=dt)


def _c(a, dt=None, ndim=2):
    """``a`` as the kernel's signature has it (C-contiguous and writeable: Numba types a
    read-only array apart, and would compile the kernel again at this call), or the unused
    stand-in for an absent argument."""
    if a is None:
        return np.zeros((0,) * ndim if ndim == 2 else (1,), dt)
    a = np.ascontiguousarray(a)
    return a if a.flags.writeable else a.copy()


class NativeScan(Op):
    """:class:`eager.ops.recurrent.RnnScan` by :func:`runtime.cpu.scan.forward`."""
    abstract = True
    name = "native_rnn_scan"

    def forward(gi, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes, reverse, kernel):
        H = w_hh.shape[0] // GATES[mode]
        dt = gi.dtype
        out = np.empty((gi.shape[0], 2 * H if mode == "lstm" else H), dt)
        kernel(_c(gi), _c(h0), _c(c0, dt, 2),
               _c(w_hh), _c(b_hh, dt, 1), _steps(batch_sizes, reverse),
               _consts(dt), out)
        return out


class NativeScanGrad(Op):
    """:class:`eager.ops.recurrent.RnnScanGrad` by :func:`runtime.cpu.scan.backward`."""
    abstract = True
    name = "native_rnn_scan_grad"
    differentiable = False

    def forward(g, gi, h0, c0, w_hh, b_hh, w_hr, out, mode, batch_sizes, reverse, needs,
                wanted, kernel):
        dt = gi.dtype
        d_gi, gh0, gw = np.empty(gi.shape, dt), np.empty(h0.shape, dt), np.empty(w_hh.shape, dt)
        gc0 = np.empty(c0.shape if c0 is not None else (0, 0), dt)
        gb = np.empty(b_hh.shape if b_hh is not None else (1,), dt)
        kernel(_c(g), _c(gi), _c(h0),
               _c(c0, dt, 2), _c(w_hh), _c(b_hh, dt, 1),
               _c(out), _steps(batch_sizes, reverse), _consts(dt),
               d_gi, gh0, gc0, gw, gb)
        pieces = (d_gi, gh0, gc0, gw, gb)   # in the order of the scan's arguments
        return np.concatenate([pieces[k].ravel() for k in wanted])
