"""The recurrent scan (:class:`eager.ops.recurrent.RnnScan`: one direction of one RNN, GRU or
LSTM layer, which ``nn.RNN/GRU/LSTM`` call per layer and direction) on CUDA.

The time loop stays on the host, as the CPU forward's, and drives device work: per step one
GEMM for ``h W_hh^T + b_hh`` (:func:`runtime.cuda.blas.gemm`, the bias in the product) and
one fused kernel for the gate nonlinearity (a scalar core per mode in the grid-stride
template, :func:`runtime.cuda.launch.run_core`: one thread per (row, hidden unit), reading
the gate columns of the input projection ``gi`` and of the GEMM's result through strided
views), which writes the step's rows of the preallocated output and the running state; an
LSTM projection (``w_hr``) is one more GEMM per step.  The input projection of all steps is
the caller's one matmul (``gi``).

Packed (variable-length) sequences need no carry logic: the running states ``h`` and ``c``
are device copies of ``h0`` and ``c0``, and each step reads and writes their first ``b``
rows.  Steps run in an order whose batch sizes never grow (forward) or never shrink
(reverse), so a row a step reads holds either the state its sequence reached at the step
before or, never written yet, its initial state: what ``_carry_array`` builds on the CPU.

The output is the CPU's (``h``, and for the LSTM ``c`` in ``H`` more columns), so the op's
saved arrays are the CPU's and its backward (the walk over the op namespace: matmuls,
gate derivatives, row slices, each a CUDA op) runs unchanged on the device.  Gates compute
as the CPU's (``sigmoid`` by :mod:`runtime.cuda.mathlib`, ``tanh`` by libdevice, each
operation rounded once): equal within float tolerance.  Arguments of another dtype than
``gi`` are cast to it (the modules never pass any).
"""

from __future__ import annotations

import numpy as np

from runtime.cuda import launch
from runtime.cuda.array import CudaArray

from ..ops.recurrent import GATES, scan_steps
from .elementwise import cast, clone, copy_into
from .kernels_linalg import _gemm


def _cores(dt: np.dtype) -> dict:
    """mode -> (the step's scalar core, its output variables' names)."""
    f32 = dt == np.float32
    sig = "sigmoid32" if f32 else "sigmoid64"
    zero = "np.float32(0.0)" if f32 else "0.0"
    return {
        # a0: gi's column, a1: gh's
        "rnn_tanh": ("t0 = math.tanh(a0 + a1)",),
        "rnn_relu": ("p_ = a0 + a1", f"t0 = (p_ if (p_ > {zero} or p_ != p_) else {zero})"),
        # a0..a2: gi's r, z, n columns; a3..a5: gh's; a6: h
        "gru": (f"r_g = {sig}(a0 + a3)", f"z_g = {sig}(a1 + a4)",
                "n_g = math.tanh(a2 + r_g * a5)", "t0 = n_g + z_g * (a6 - n_g)"),
        # a0..a3: gi's i, f, g, o columns; a4..a7: gh's; a8: c
        "lstm": (f"i_g = {sig}(a0 + a4)", f"f_g = {sig}(a1 + a5)", "g_g = math.tanh(a2 + a6)",
                 f"o_g = {sig}(a3 + a7)", "t1 = f_g * a8 + i_g * g_g",
                 "t0 = o_g * math.tanh(t1)"),
    }


_CORES: dict = {}


def _core(mode: str, dt: np.dtype) -> tuple:
    cores = _CORES.get(dt.char)
    if cores is None:
        cores = _CORES[dt.char] = _cores(dt)
    return cores[mode]


def _rows(a, start: int, stop: int):
    return a.basic_index(((start, stop, 1),))


def _cols(a, start: int, stop: int):
    return a.basic_index(((0, a.shape[0], 1), (start, stop, 1)))


def _as(a, dt):
    return a if a is None or a.dtype == dt else cast(a, dt)


def rnn_scan(gi, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes, reverse):
    dt = gi.dtype
    h0, c0, w_hh, b_hh, w_hr = (_as(a, dt) for a in (h0, c0, w_hh, b_hh, w_hr))
    G = GATES[mode]
    H = w_hh.shape[0] // G
    P = h0.shape[1]
    lstm = mode == "lstm"
    out = CudaArray.empty((gi.shape[0], P + H if lstm else P), dt)
    h = clone(h0)
    c = clone(c0) if lstm else None
    whh_t = w_hh.transpose((1, 0)).unsqueeze((0,))
    core = _core(mode, np.dtype(dt))
    for off, b, _prev in scan_steps(tuple(batch_sizes), bool(reverse)):
        if not b:
            continue
        hb = _rows(h, 0, b)
        gh = _gemm(hb.unsqueeze((0,)), whh_t, b_hh).reshape((b, G * H))
        x = _rows(gi, off, off + b)
        gates = [_cols(x, k * H, (k + 1) * H) for k in range(G)] + \
                [_cols(gh, k * H, (k + 1) * H) for k in range(G)]
        rows = _rows(out, off, off + b)
        if not lstm:
            launch.run_core(core, ["t0", "t0"], gates + ([hb] if mode == "gru" else []),
                            [dt, dt], (b, P), f"rnn_scan step ({mode}, {dt})",
                            outs=[rows, hb])
            continue
        cb = _rows(c, 0, b)
        if w_hr is None:
            launch.run_core(core, ["t0", "t0", "t1", "t1"], gates + [cb], [dt] * 4, (b, H),
                            f"rnn_scan step (lstm, {dt})",
                            outs=[_cols(rows, 0, P), hb, _cols(rows, P, P + H), cb])
            continue
        m = CudaArray.empty((b, H), dt)
        launch.run_core(core, ["t0", "t1", "t1"], gates + [cb], [dt] * 3, (b, H),
                        f"rnn_scan step (lstm, {dt})", outs=[m, _cols(rows, P, P + H), cb])
        hp = _gemm(m.unsqueeze((0,)), w_hr.transpose((1, 0)).unsqueeze((0,))).reshape((b, P))
        copy_into(_cols(rows, 0, P), hp)
        copy_into(hb, hp)
    return out
