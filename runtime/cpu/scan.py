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


# The loops over a step's rows are helpers of their own, one per cell, each loop over a
# gate's columns reading and writing row views (``gi[x, H:2 * H]``): so LLVM vectorizes
# them, mathlib's functions included.  Written inline in the scan, indexed as
# ``gi[x, k * H + j]``, they ran element by element (the LSTM's backward: 3-5x slower).

@numba.njit(**_JIT)
def _lstm_step(gi, gh, h, c, out, half):
    """One LSTM step over ``gi``'s rows (this step's): ``h``, ``c`` and ``out`` updated."""
    H = h.shape[1]
    for r in range(gi.shape[0]):
        a0, a1, a2, a3 = gi[r, 0:H], gi[r, H:2 * H], gi[r, 2 * H:3 * H], gi[r, 3 * H:]
        q0, q1, q2, q3 = gh[r, 0:H], gh[r, H:2 * H], gh[r, 2 * H:3 * H], gh[r, 3 * H:]
        hr, cr, oh, oc = h[r], c[r], out[r, 0:H], out[r, H:2 * H]
        for j in range(H):
            si = _sig(a0[j] + q0[j], half)
            sf = _sig(a1[j] + q1[j], half)
            g = mathlib.tanh(a2[j] + q2[j])
            so = _sig(a3[j] + q3[j], half)
            cn = sf * cr[j] + si * g
            cr[j] = cn
            hn = so * mathlib.tanh(cn)
            oc[j] = cn
            hr[j] = hn
            oh[j] = hn


@numba.njit(**_JIT)
def _gru_step(gi, gh, h, out, half):
    """One GRU step (as :func:`_lstm_step`)."""
    H = h.shape[1]
    for r in range(gi.shape[0]):
        a0, a1, a2 = gi[r, 0:H], gi[r, H:2 * H], gi[r, 2 * H:3 * H]
        q0, q1, q2 = gh[r, 0:H], gh[r, H:2 * H], gh[r, 2 * H:3 * H]
        hr, oh = h[r], out[r]
        for j in range(H):
            rr = _sig(a0[j] + q0[j], half)
            z = _sig(a1[j] + q1[j], half)
            n = mathlib.tanh(a2[j] + rr * q2[j])
            hn = n + z * (hr[j] - n)
            hr[j] = hn
            oh[j] = hn


@numba.njit(**_JIT)
def _simple_step(gi, gh, h, out, tanh):
    """One step of the tanh or ReLU RNN (as :func:`_lstm_step`)."""
    H = h.shape[1]
    for r in range(gi.shape[0]):
        a0, q0, hr, oh = gi[r], gh[r], h[r], out[r]
        for j in range(H):
            v = a0[j] + q0[j]
            if tanh:
                hn = mathlib.tanh(v)
            else:   # np.maximum(v, 0): NaN stays NaN
                hn = v if (v > 0 or v != v) else v * 0
            hr[j] = hn
            oh[j] = hn


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
        gh = _linear(h[:b], w_t, b_hh, has_bias)   # then x + gh, in the helper
        if mode == LSTM:
            _lstm_step(gi[off:off + b], gh, h, c, out[off:off + b], half)
        elif mode == GRU:
            _gru_step(gi[off:off + b], gh, h, out[off:off + b], half)
        else:
            _simple_step(gi[off:off + b], gh, h, out[off:off + b], mode == RNN_TANH)


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
def _lstm_coefs(gi, pre, out, c_prev, coef, extra, gate, one):
    """The LSTM's local derivatives, row by row: ``coef`` (N, 4H) those of the gates'
    pre-activations, ``extra`` d c / d m, ``gate`` f."""
    H = gate.shape[1]
    for x in range(gi.shape[0]):
        a0, a1, a2, a3 = gi[x, 0:H], gi[x, H:2 * H], gi[x, 2 * H:3 * H], gi[x, 3 * H:]
        p0, p1, p2, p3 = pre[x, 0:H], pre[x, H:2 * H], pre[x, 2 * H:3 * H], pre[x, 3 * H:]
        k0, k1, k2, k3 = coef[x, 0:H], coef[x, H:2 * H], coef[x, 2 * H:3 * H], coef[x, 3 * H:]
        cp, oc, ex, gt = c_prev[x], out[x, H:2 * H], extra[x], gate[x]
        for j in range(H):
            si = mathlib.sigmoid(a0[j] + p0[j])
            sf = mathlib.sigmoid(a1[j] + p1[j])
            so = mathlib.sigmoid(a3[j] + p3[j])
            gg = mathlib.tanh(a2[j] + p2[j])
            tc = mathlib.tanh(oc[j])
            k0[j] = gg * (si * (one - si))
            k1[j] = cp[j] * (sf * (one - sf))
            k2[j] = si * (one - gg * gg)
            k3[j] = tc * (so * (one - so))
            ex[j] = so * (one - tc * tc)   # d c / d m
            gt[j] = sf


@numba.njit(**_JIT)
def _gru_coefs(gi, pre, h_prev, coef, extra, gate, one):
    """The GRU's (as :func:`_lstm_coefs`): ``extra`` d n, ``gate`` z."""
    H = gate.shape[1]
    for x in range(gi.shape[0]):
        a0, a1, a2 = gi[x, 0:H], gi[x, H:2 * H], gi[x, 2 * H:3 * H]
        p0, p1, p2 = pre[x, 0:H], pre[x, H:2 * H], pre[x, 2 * H:3 * H]
        k0, k1, k2 = coef[x, 0:H], coef[x, H:2 * H], coef[x, 2 * H:3 * H]
        hp, ex, gt = h_prev[x], extra[x], gate[x]
        for j in range(H):
            r_ = mathlib.sigmoid(a0[j] + p0[j])
            z = mathlib.sigmoid(a1[j] + p1[j])
            ghn = p2[j]
            n = mathlib.tanh(a2[j] + r_ * ghn)
            dn = (one - z) * (one - n * n)
            k0[j] = (dn * ghn) * (r_ * (one - r_))
            k1[j] = (hp[j] - n) * (z * (one - z))
            k2[j] = dn * r_
            ex[j] = dn
            gt[j] = z


@numba.njit(**_JIT)
def _lstm_grads(g, k, carry_h, carry_c, extra, gate, coef, dhs, d_pre):
    """One LSTM step of the walk back over its rows: ``dhs`` the gradient reaching each
    ``h``, ``d_pre`` the gates' pre-activations'; ``carry_c`` becomes the gradient into
    the cell state the step started from (its first ``k`` rows carried it in)."""
    H = carry_h.shape[1]
    for r in range(g.shape[0]):
        carried = r < k
        gx, gc, ch, cc, dx = g[r, 0:H], g[r, H:2 * H], carry_h[r], carry_c[r], dhs[r]
        d0, d1, d2, d3 = d_pre[r, 0:H], d_pre[r, H:2 * H], d_pre[r, 2 * H:3 * H], \
            d_pre[r, 3 * H:]
        k0, k1, k2, k3 = coef[r, 0:H], coef[r, H:2 * H], coef[r, 2 * H:3 * H], coef[r, 3 * H:]
        ex, gt = extra[r], gate[r]
        for j in range(H):
            dh = gx[j]
            if carried:
                dh = dh + ch[j]
            dx[j] = dh
            dc = gc[j] + dh * ex[j]
            if carried:
                dc = dc + cc[j]
            d0[j] = dc * k0[j]
            d1[j] = dc * k1[j]
            d2[j] = dc * k2[j]
            d3[j] = dh * k3[j]
            cc[j] = dc * gt[j]   # (row r is read above, then written)


@numba.njit(**_JIT)
def _grads(g, k, carry_h, coef, dhs, d_pre):
    """The GRU's and the simple RNN's step back (as :func:`_lstm_grads`): each gate's
    pre-activation gradient is ``dh`` times its coefficient."""
    H = carry_h.shape[1]
    for r in range(g.shape[0]):
        carried = r < k
        gx, ch, dx = g[r], carry_h[r], dhs[r]
        for j in range(H):
            dh = gx[j]
            if carried:
                dh = dh + ch[j]
            dx[j] = dh
        for m in range(d_pre.shape[1] // H):
            dm, km = d_pre[r, m * H:(m + 1) * H], coef[r, m * H:(m + 1) * H]
            for j in range(H):
                dm[j] = dx[j] * km[j]


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
            _lstm_coefs(gi, pre, out, _previous(out, c0, steps, H, H), coef, extra, gate,
                        one)
        else:
            _gru_coefs(gi, pre, h_prev, coef, extra, gate, one)
    d_pre = np.empty((N, G), gi.dtype)
    carry_h = np.empty((h0.shape[0], H), gi.dtype)
    carry_c = np.empty((h0.shape[0], H), gi.dtype)
    dhs = np.empty((N, H), gi.dtype)
    k = 0
    for s in range(steps.shape[0] - 1, -1, -1):
        off, b, prev = steps[s, 0], steps[s, 1], steps[s, 2]
        rows = slice(off, off + b)
        if mode == LSTM:
            _lstm_grads(g[rows], k, carry_h, carry_c, extra[rows], gate[rows], coef[rows],
                        dhs[rows], d_pre[rows])
        else:
            _grads(g[rows], k, carry_h, coef[rows], dhs[rows], d_pre[rows])
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
