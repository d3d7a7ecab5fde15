"""The recurrent scan in native code: one direction of one RNN, LSTM or GRU layer over a
whole (packed) sequence, forward and backward, as ``@njit`` functions.

Why
    Eager's scan (``eager/ops/recurrent.py``) runs each time step as a dozen NumPy calls on
    small blocks (a (32, 128) gate block per step), and its backward walk as a dozen more:
    at the sizes of the LSTM example (batch 32, hidden 32, 24 steps) the calls cost more
    than the arithmetic.  Here a step is one BLAS call and one loop over the gates.  A
    compiled trace calls these (``compiler/codegen/scan_cpu.py``) in place of the op's
    NumPy forward; eager keeps its own.

What it computes
    The same formulas, in the same order, as eager's forward and its backward walk, with
    the matrix products made by NumPy's own BLAS call (:func:`runtime.cpu.blas.matmul`,
    eager's bits) and without FMA contraction.  Only ``tanh`` and ``sigmoid`` differ: they
    are :mod:`runtime.cpu.mathlib`'s (within 3 ulp of NumPy's), as in any fused kernel
    (README, "Exactness").

Layout (as eager's op)
    ``steps`` is an int64 ``(n, 3)`` array of ``(first row, rows, rows of the step
    before)`` in the order the scan runs (``eager.ops.recurrent.scan_steps``); ``gi`` holds
    the input projections of all steps, ``out`` one row per input row: ``h`` and, for the
    LSTM, the cell state ``c`` in the columns after it.  ``consts`` is ``[0.5, 1.0]`` in the
    arrays' dtype (so literals keep float32 arithmetic float32).  ``c0`` is an unused
    ``(0, 0)`` array outside the LSTM; ``b_hh`` an unused one-element array when
    ``has_bias`` is False.  No projection (``proj_size``): the caller keeps eager's op.
"""

from __future__ import annotations

import numba
import numpy as np

from . import mathlib
from .blas import matmul

_JIT = dict(cache=True, nogil=True, error_model="numpy")

# mode numbers (the generated kernel passes one as a literal)
RNN_TANH, RNN_RELU, LSTM, GRU = 0, 1, 2, 3


@numba.njit(**_JIT)
def _sig(x, half):
    """Eager's forward sigmoid, ``tanh(x / 2) / 2 + 1/2``."""
    return mathlib.tanh(x * half) * half + half


@numba.njit(**_JIT)
def _linear(h, w_t, b_hh, has_bias):
    """``h W_hh^T + b_hh`` (eager: the product, then ``+= b_hh``; ``F.linear`` alike)."""
    out = matmul(h, w_t)
    if has_bias:
        for r in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[r, j] = out[r, j] + b_hh[j]
    return out


@numba.njit(**_JIT)
def forward(mode, gi, h0, c0, w_hh, b_hh, has_bias, steps, consts, out):
    """The scan (module doc); writes ``out``."""
    half = consts[0]
    H = h0.shape[1]
    B0 = h0.shape[0]
    h = np.empty((B0, H), gi.dtype)
    c = np.empty((max(c0.shape[0], 1), H), gi.dtype)
    w_t = w_hh.T
    for s in range(steps.shape[0]):
        off, b, prev = steps[s, 0], steps[s, 1], steps[s, 2]
        for r in range(prev, b):   # sequences that start at this step (reverse direction)
            for j in range(H):
                h[r, j] = h0[r, j]
                if mode == LSTM:
                    c[r, j] = c0[r, j]
        gh = _linear(h[:b], w_t, b_hh, has_bias)   # then x + gh, in the loop below
        for r in range(b):
            x = off + r
            for j in range(H):
                if mode == LSTM:
                    si = _sig(gi[x, j] + gh[r, j], half)
                    sf = _sig(gi[x, H + j] + gh[r, H + j], half)
                    g = mathlib.tanh(gi[x, 2 * H + j] + gh[r, 2 * H + j])
                    so = _sig(gi[x, 3 * H + j] + gh[r, 3 * H + j], half)
                    cn = sf * c[r, j] + si * g
                    c[r, j] = cn
                    hn = so * mathlib.tanh(cn)
                    out[x, H + j] = cn
                elif mode == GRU:
                    rr = _sig(gi[x, j] + gh[r, j], half)
                    z = _sig(gi[x, H + j] + gh[r, H + j], half)
                    n = mathlib.tanh(gi[x, 2 * H + j] + rr * gh[r, 2 * H + j])
                    hn = n + z * (h[r, j] - n)
                else:
                    v = gi[x, j] + gh[r, j]
                    if mode == RNN_TANH:
                        hn = mathlib.tanh(v)
                    else:   # np.maximum(v, 0): NaN stays NaN
                        hn = v if (v > 0 or v != v) else v * 0
                h[r, j] = hn
                out[x, j] = hn


@numba.njit(**_JIT)
def _previous(states, init, steps, cols0, ncols):
    """Row by row (in ``gi``'s layout), the state each step started from: ``ncols``
    columns of ``states`` from ``cols0`` for rows carried, rows of ``init`` otherwise."""
    n = states.shape[0]
    prevs = np.empty((n, ncols), states.dtype)
    last = 0
    for s in range(steps.shape[0]):
        off, b, prev = steps[s, 0], steps[s, 1], steps[s, 2]
        for r in range(b):
            for j in range(ncols):
                prevs[off + r, j] = states[last + r, cols0 + j] if r < prev else init[r, j]
        last = off
    return prevs


@numba.njit(**_JIT)
def _sum_rows(a, out):
    """``np.sum(a, axis=0)`` of a C-contiguous matrix (NumPy adds the rows in order)."""
    for j in range(a.shape[1]):
        out[j] = a[0, j]
    for r in range(1, a.shape[0]):
        for j in range(a.shape[1]):
            out[j] = out[j] + a[r, j]


@numba.njit(**_JIT)
def _send(new, b, prev, carry, init_grad):
    """The gradient into the states a step started from: rows carried on (the first
    ``min(b, prev)``) into ``carry``, rows read from the initial state into ``init_grad``;
    returns how many rows are carried."""
    k = min(b, prev)
    for r in range(b):
        for j in range(new.shape[1]):
            if r < k:
                carry[r, j] = new[r, j]
            else:
                init_grad[r, j] = new[r, j]
    return k


@numba.njit(**_JIT)
def backward(mode, g, gi, h0, c0, w_hh, b_hh, has_bias, out, steps, consts, d_gi, gh0, gc0,
             gw, gb):
    """Eager's backward walk of :func:`forward` (``eager.ops.recurrent``'s ``_lstm_walk``,
    ``_gru_walk``, ``_simple_walk``); writes the gradients of ``gi``, ``h0``, ``c0``
    (LSTM), ``w_hh`` and ``b_hh`` (when ``has_bias``)."""
    one = consts[1]
    H = h0.shape[1]
    G = w_hh.shape[0]
    N = gi.shape[0]
    h_prev = _previous(out, h0, steps, 0, H)
    if mode == RNN_TANH or mode == RNN_RELU:
        coef = np.empty((N, H), gi.dtype)
        for x in range(N):
            for j in range(H):
                o = out[x, j]
                if mode == RNN_TANH:
                    coef[x, j] = one - o * o
                else:
                    coef[x, j] = one if o > 0 else one * 0
        extra = coef   # unused
        gate = coef    # unused
    else:
        pre = _linear(h_prev, w_hh.T, b_hh, has_bias)   # eager: F.linear(h_prev, w_hh, b_hh)
        coef = np.empty((N, G), gi.dtype)
        extra = np.empty((N, H), gi.dtype)
        # the gate a state's gradient is carried through: LSTM f (to c_prev), GRU z (to h)
        gate = np.empty((N, H), gi.dtype)
        if mode == LSTM:
            c_prev = _previous(out, c0, steps, H, H)
            for x in range(N):
                for j in range(H):
                    si = mathlib.sigmoid(gi[x, j] + pre[x, j])
                    sf = mathlib.sigmoid(gi[x, H + j] + pre[x, H + j])
                    so = mathlib.sigmoid(gi[x, 3 * H + j] + pre[x, 3 * H + j])
                    gg = mathlib.tanh(gi[x, 2 * H + j] + pre[x, 2 * H + j])
                    tc = mathlib.tanh(out[x, H + j])
                    coef[x, j] = gg * (si * (one - si))
                    coef[x, H + j] = c_prev[x, j] * (sf * (one - sf))
                    coef[x, 2 * H + j] = si * (one - gg * gg)
                    coef[x, 3 * H + j] = tc * (so * (one - so))
                    extra[x, j] = so * (one - tc * tc)   # d c / d m
                    gate[x, j] = sf
        else:
            for x in range(N):
                for j in range(H):
                    r_ = mathlib.sigmoid(gi[x, j] + pre[x, j])
                    z = mathlib.sigmoid(gi[x, H + j] + pre[x, H + j])
                    ghn = pre[x, 2 * H + j]
                    n = mathlib.tanh(gi[x, 2 * H + j] + r_ * ghn)
                    dn = (one - z) * (one - n * n)
                    coef[x, j] = (dn * ghn) * (r_ * (one - r_))
                    coef[x, H + j] = (h_prev[x, j] - n) * (z * (one - z))
                    coef[x, 2 * H + j] = dn * r_
                    extra[x, j] = dn
                    gate[x, j] = z
    d_pre = np.empty((N, G), gi.dtype)
    carry_h = np.empty((h0.shape[0], H), gi.dtype)
    carry_c = np.empty((h0.shape[0], H), gi.dtype)
    dhs = np.empty((N, H), gi.dtype)
    k = 0
    for s in range(steps.shape[0] - 1, -1, -1):
        off, b, prev = steps[s, 0], steps[s, 1], steps[s, 2]
        for r in range(b):
            x = off + r
            for j in range(H):
                dh = g[x, j]
                if r < k:
                    dh = dh + carry_h[r, j]
                dhs[x, j] = dh
                if mode == LSTM:
                    dc = g[x, H + j] + dh * extra[x, j]
                    if r < k:
                        dc = dc + carry_c[r, j]
                    d_pre[x, j] = dc * coef[x, j]
                    d_pre[x, H + j] = dc * coef[x, H + j]
                    d_pre[x, 2 * H + j] = dc * coef[x, 2 * H + j]
                    d_pre[x, 3 * H + j] = dh * coef[x, 3 * H + j]
                    carry_c[r, j] = dc * gate[x, j]   # (row r is read above, then written)
                elif mode == GRU:
                    d_pre[x, j] = dh * coef[x, j]
                    d_pre[x, H + j] = dh * coef[x, H + j]
                    d_pre[x, 2 * H + j] = dh * coef[x, 2 * H + j]
                else:
                    d_pre[x, j] = dh * coef[x, j]
        new = matmul(d_pre[off:off + b], w_hh)
        if mode == GRU:   # h' = n + z (h - n): z reaches h directly
            for r in range(b):
                for j in range(H):
                    new[r, j] = new[r, j] + dhs[off + r, j] * gate[off + r, j]
        if mode == LSTM:
            _send(carry_c, b, prev, carry_c, gc0)   # (in place: rows carried stay)
        k = _send(new, b, prev, carry_h, gh0)
    gw[:, :] = matmul(d_pre.T, h_prev)
    if has_bias:
        _sum_rows(d_pre, gb)
    if mode == GRU:   # d gi = [d gh[:, :2H], dh * dn]
        for x in range(N):
            for j in range(2 * H):
                d_gi[x, j] = d_pre[x, j]
            for j in range(H):
                d_gi[x, 2 * H + j] = dhs[x, j] * extra[x, j]
    else:
        d_gi[:, :] = d_pre
