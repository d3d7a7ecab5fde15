"""The recurrent scan: one direction of one RNN, LSTM or GRU layer over a whole sequence,
as one op.

Why one op and not a loop of cell ops: a loop over slices of the stacked input
projection gives every slice a gradient the size of the whole projection (zeros plus the
slice), so its backward grows as T^2 in the sequence length, and each step costs a dozen
dispatches.  The scan runs the recurrence on arrays; its backward (written once over the
op namespace ``F``, like every backward, so ``create_graph=True`` differentiates it)
recomputes the gates of all steps with one matmul, then walks the steps back with one
matmul each.  A backward on tensors that is not differentiated (a compiler tracer's)
dispatches :class:`RnnScanGrad` instead: the same walk on arrays as one op, which compiled
code runs natively (``runtime/cpu/scan.py``).

Layout: PyTorch's packed layout, of which a padded batch is the special case with equal
batch sizes.  The rows of ``gi`` (the input projection ``x W_ih^T + b_ih`` of every
step, computed by the caller in one matmul) are the time steps one after another, step
``t`` holding ``batch_sizes[t]`` rows (non-increasing).  A sequence that has ended keeps
its state; in reverse, a sequence starts from its row of ``h0`` at its last step.

Gate layouts are PyTorch's: LSTM (i, f, g, o), GRU (r, z, n).  The output has one row
per input row: ``h`` (``P`` = proj_size or hidden_size columns), and for the LSTM the
cell state ``c`` in ``H`` more columns after it (so the backward can read it).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._state import STATE
from .base import OUT, A, Op

GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}


def _sigmoid(x):
    """``sigmoid(x) = (1 + tanh(x / 2)) / 2``: stable for any sign and one ufunc pass
    (2.5x faster than the elementwise op's form on a (16, 128) gate block; within 1 ulp)."""
    return np.tanh(x * 0.5) * 0.5 + 0.5


@lru_cache(maxsize=256)
def scan_steps(batch_sizes: tuple, reverse: bool) -> tuple:
    """``(first row, rows, rows of the step before)`` per step, in the order the scan runs
    (the step before the first has 0 rows)."""
    offsets = np.concatenate(([0], np.cumsum(batch_sizes)[:-1])).tolist()
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    steps = []
    prev = 0
    for t in order:
        steps.append((offsets[t], batch_sizes[t], prev))
        prev = batch_sizes[t]
    return tuple(steps)


def _carry_array(state, init, b, prev):
    """The state a step of ``b`` rows starts from: the previous step's first ``b`` rows,
    and rows of ``init`` for sequences that start here (reverse direction)."""
    if b <= prev:
        return state[:b]
    return np.concatenate((state, init[prev:b]))


class RnnScan(Op):
    """``out = scan(gi, h0, c0, w_hh, b_hh, w_hr)``; ``mode`` one of ``GATES``,
    ``batch_sizes`` a tuple of ints, ``reverse`` the direction.  ``c0`` (LSTM only),
    ``b_hh`` and ``w_hr`` (LSTM projection) may be None."""
    saves = (0, 1, 2, 3, 4, 5, OUT)

    def forward(gi, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes, reverse):
        H = w_hh.shape[0] // GATES[mode]
        P = h0.shape[1]
        lstm = mode == "lstm"
        out = np.empty((gi.shape[0], P + H if lstm else P), dtype=gi.dtype)
        h = h0[:0]
        c = c0[:0] if lstm else None
        whh_t = w_hh.T
        for off, b, prev in scan_steps(batch_sizes, reverse):
            h = _carry_array(h, h0, b, prev)
            gh = h @ whh_t
            if b_hh is not None:
                gh += b_hh
            x = gi[off:off + b]
            if lstm:
                c = _carry_array(c, c0, b, prev)
                pre = x + gh
                s = _sigmoid(pre)
                c = s[:, H:2 * H] * c + s[:, :H] * np.tanh(pre[:, 2 * H:3 * H])
                h = s[:, 3 * H:] * np.tanh(c)
                if w_hr is not None:
                    h = h @ w_hr.T
                out[off:off + b, :P] = h
                out[off:off + b, P:] = c
            elif mode == "gru":
                rz = _sigmoid(x[:, :2 * H] + gh[:, :2 * H])
                n = np.tanh(x[:, 2 * H:] + rz[:, :H] * gh[:, 2 * H:])
                h = n + rz[:, H:] * (h - n)
                out[off:off + b] = h
            else:
                pre = x + gh
                h = np.tanh(pre) if mode == "rnn_tanh" else np.maximum(pre, 0)
                out[off:off + b] = h
        return out

    def backward(F, g, saved, node):
        if F is not A and not STATE.grad_enabled and _packable(g, saved):
            return _packed_backward(F, g, saved, node)
        gi, h0, c0, w_hh, b_hh, w_hr, out = saved
        mode = node.params["mode"]
        steps = scan_steps(node.params["batch_sizes"], node.params["reverse"])
        P = node.shapes[1][1]
        walk = _BACKWARD_WALKS[mode]
        return walk(F, g, gi, h0, c0, w_hh, b_hh, w_hr, out, steps, P, node)


class RnnScanGrad(Op):
    """The gradients of :class:`RnnScan` as one op: its backward walk run on arrays (as
    eager's own backward runs it), the gradients of the arguments listed in ``wanted``
    raveled one after another into one 1-D array.

    Why: run through the op namespace on tensors, the walk is a few dozen ops per time step;
    a compiler tracer would record each one (about 600 nodes for 24 steps of an LSTM) and
    replay them one by one, slower than eager's walk, with a long program to generate and
    many small kernels to build.  A backward that is not itself differentiated (grad mode
    off: not ``create_graph``) dispatches this op instead, so a trace holds the walk as one
    node whose bits are eager's."""
    differentiable = False

    def forward(g, gi, h0, c0, w_hh, b_hh, w_hr, out, mode, batch_sizes, reverse, needs,
                wanted):
        node = _ScanNode((None if a is None else a.shape for a in (gi, h0, c0, w_hh)),
                         mode, needs)
        grads = _BACKWARD_WALKS[mode](A, g, gi, h0, c0, w_hh, b_hh, w_hr, out,
                                      scan_steps(batch_sizes, reverse), h0.shape[1], node)
        return np.concatenate([grads[k].ravel() for k in wanted])


class _ScanNode:
    """What a backward walk reads of its node (shapes, params, needs), for
    :class:`RnnScanGrad`, which runs one outside the engine."""

    def __init__(self, shapes, mode, needs):
        self.shapes = tuple(shapes)
        self.params = {"mode": mode}
        self.needs = needs


def _packable(g, saved) -> bool:
    """Whether the gradients can be packed into one array: CPU tensors of one dtype (on
    another device the walk's own ops run, as that device has no kernel for the pack)."""
    present = [a for a in (g,) + tuple(saved) if a is not None]
    return (len({a.dtype for a in present}) == 1
            and all(a.device.type == "cpu" for a in present))


def _packed_backward(F, g, saved, node):
    """:class:`RnnScanGrad` once, and each wanted gradient a view of its piece."""
    args = saved[:6]
    wanted = tuple(k for k in range(6) if node.needs[k] and args[k] is not None)
    if not wanted:
        return (None,) * 6
    packed = F.rnn_scan_grad(g, *saved, mode=node.params["mode"],
                             batch_sizes=tuple(node.params["batch_sizes"]),
                             reverse=bool(node.params["reverse"]),
                             needs=tuple(bool(n) for n in node.needs), wanted=wanted)
    grads = [None] * 6
    start = 0
    for k in wanted:
        shape = tuple(node.shapes[k])
        stop = start + int(np.prod(shape, dtype=np.int64))
        grads[k] = F.reshape(F.basic_index(packed, key=((start, stop, 1),)), shape=shape)
        start = stop
    return tuple(grads)


# -- backward (over the op namespace F) ---------------------------------------------------

def _cols(F, x, start, stop):
    return F.basic_index(x, key=((0, x.shape[0], 1), (start, stop, 1)))


def _rows(F, x, start, stop):
    return F.basic_index(x, key=((start, stop, 1), (0, x.shape[1], 1)))


def _previous(F, states, init, steps):
    """Row by row, the state each step started from (``states`` the scan's per-row
    states, ``init`` the initial ones): the rows the recurrence read, in ``gi``'s layout."""
    pieces = []
    last = None
    for off, b, prev in steps:
        if b <= prev:
            piece = _rows(F, states, last, last + b)
        elif prev == 0:
            piece = _rows(F, init, 0, b)
        else:
            piece = F.cat(_rows(F, states, last, last + prev), _rows(F, init, prev, b), dim=0)
        pieces.append((off, piece))
        last = off
    pieces.sort(key=lambda e: e[0])
    return pieces[0][1] if len(pieces) == 1 else F.cat(*[p for _, p in pieces], dim=0)


def _add_carry(F, x, carry):
    """``x`` plus the gradient carried from the next step into its first rows."""
    if carry is None:
        return x
    k, n = carry.shape[0], x.shape[0]
    if k == n:
        return F.add(x, carry)
    if k == 0:
        return x
    return F.cat(F.add(_rows(F, x, 0, k), carry), _rows(F, x, k, n), dim=0)


class _Carry:
    """The gradient flowing back into the states a step started from: rows that came from
    the step before go on; rows read from ``init`` are collected for its gradient."""

    def __init__(self):
        self.value = None
        self.init_pieces = []

    def send(self, F, grad, b, prev):
        if b > prev:
            self.init_pieces.append((prev, _rows(F, grad, prev, b)))
            grad = _rows(F, grad, 0, prev) if prev else None
        self.value = grad

    def init_grad(self, F):
        pieces = sorted(self.init_pieces, key=lambda e: e[0])
        return pieces[0][1] if len(pieces) == 1 else F.cat(*[p for _, p in pieces], dim=0)


def _in_time_order(F, per_step, steps):
    """Per-step gradients (collected while walking back) as one array in ``gi``'s rows."""
    ordered = sorted(zip((s[0] for s in steps), per_step), key=lambda e: e[0])
    return ordered[0][1] if len(ordered) == 1 else F.cat(*[p for _, p in ordered], dim=0)


def _weight_grads(F, d_gh, h_prev, node):
    """Gradients of ``w_hh`` and ``b_hh`` from the gradient of ``h W_hh^T + b_hh``."""
    gw = F.matmul(F.permute(d_gh, dims=(1, 0)), h_prev) if node.needs[3] else None
    gb = F.sum(d_gh, dim=(0,), keepdim=False, dtype=None) if node.needs[4] else None
    return gw, gb


def _simple_walk(F, g, gi, h0, c0, w_hh, b_hh, w_hr, out, steps, P, node):
    """Elman RNN: ``h = act(gi + h W_hh^T + b_hh)``."""
    if node.params["mode"] == "rnn_tanh":
        slope = F.sub(1.0, F.mul(out, out))
    else:
        slope = F.gt(out, 0)
    carry = _Carry()
    d_pre = []
    for off, b, prev in reversed(steps):
        dh = _add_carry(F, _rows(F, g, off, off + b), carry.value)
        dp = F.mul(dh, _rows(F, slope, off, off + b))
        d_pre.append(dp)
        carry.send(F, F.matmul(dp, w_hh), b, prev)
    d_pre.reverse()
    d_pre = _in_time_order(F, d_pre, steps)
    h_prev = _previous(F, out, h0, steps)
    gw, gb = _weight_grads(F, d_pre, h_prev, node)
    gh0 = carry.init_grad(F) if node.needs[1] else None
    return d_pre, gh0, None, gw, gb, None


def _lstm_walk(F, g, gi, h0, c0, w_hh, b_hh, w_hr, out, steps, P, node):
    """LSTM: ``c = f c_prev + i g``, ``m = o tanh(c)``, ``h = m`` (or ``m W_hr^T``)."""
    H = node.shapes[3][0] // 4
    hs, cs = _cols(F, out, 0, P), _cols(F, out, P, P + H)
    h_prev = _previous(F, hs, h0, steps)
    c_prev = _previous(F, cs, c0, steps)
    pre = F.add(gi, F.linear(h_prev, w_hh, b_hh))
    s = F.sigmoid(pre)
    i, f, o = _cols(F, s, 0, H), _cols(F, s, H, 2 * H), _cols(F, s, 3 * H, 4 * H)
    gg = F.tanh(_cols(F, pre, 2 * H, 3 * H))
    tc = F.tanh(cs)
    ds = F.mul(s, F.sub(1.0, s))                       # sigmoid' for i, f, o
    # d pre = [dc, dc, dc, dm] * coef; dc gains dm * o (1 - tanh(c)^2)
    coef = F.cat(F.mul(gg, _cols(F, ds, 0, H)), F.mul(c_prev, _cols(F, ds, H, 2 * H)),
                 F.mul(i, F.sub(1.0, F.mul(gg, gg))), F.mul(tc, _cols(F, ds, 3 * H, 4 * H)),
                 dim=1)
    dc_from_dm = F.mul(o, F.sub(1.0, F.mul(tc, tc)))
    g_h, g_c = _cols(F, g, 0, P), _cols(F, g, P, P + H)
    carry_h, carry_c = _Carry(), _Carry()
    d_pre, d_h = [], []
    for off, b, prev in reversed(steps):
        dh = _add_carry(F, _rows(F, g_h, off, off + b), carry_h.value)
        dm = dh if w_hr is None else F.matmul(dh, w_hr)
        dc = F.add(_rows(F, g_c, off, off + b), F.mul(dm, _rows(F, dc_from_dm, off, off + b)))
        dc = _add_carry(F, dc, carry_c.value)
        dp = F.mul(F.cat(dc, dc, dc, dm, dim=1), _rows(F, coef, off, off + b))
        d_pre.append(dp)
        d_h.append(dh)
        carry_h.send(F, F.matmul(dp, w_hh), b, prev)
        carry_c.send(F, F.mul(dc, _rows(F, f, off, off + b)), b, prev)
    d_pre.reverse()
    d_pre = _in_time_order(F, d_pre, steps)
    gw, gb = _weight_grads(F, d_pre, h_prev, node)
    gh0 = carry_h.init_grad(F) if node.needs[1] else None
    gc0 = carry_c.init_grad(F) if node.needs[2] else None
    gwr = None
    if w_hr is not None and node.needs[5]:
        d_h.reverse()
        m = F.mul(o, tc)
        gwr = F.matmul(F.permute(_in_time_order(F, d_h, steps), dims=(1, 0)), m)
    return d_pre, gh0, gc0, gw, gb, gwr


def _gru_walk(F, g, gi, h0, c0, w_hh, b_hh, w_hr, out, steps, P, node):
    """GRU: ``n = tanh(gi_n + r (W_hn h + b_hn))``, ``h' = n + z (h - n)``."""
    H = P
    h_prev = _previous(F, out, h0, steps)
    gh = F.linear(h_prev, w_hh, b_hh)
    rz = F.sigmoid(F.add(_cols(F, gi, 0, 2 * H), _cols(F, gh, 0, 2 * H)))
    r, z = _cols(F, rz, 0, H), _cols(F, rz, H, 2 * H)
    gh_n = _cols(F, gh, 2 * H, 3 * H)
    n = F.tanh(F.add(_cols(F, gi, 2 * H, 3 * H), F.mul(r, gh_n)))
    dn = F.mul(F.sub(1.0, z), F.sub(1.0, F.mul(n, n)))          # d n_pre / d h'
    drz = F.mul(rz, F.sub(1.0, rz))
    dr = F.mul(F.mul(dn, gh_n), _cols(F, drz, 0, H))            # d r_pre / d h'
    dz = F.mul(F.sub(h_prev, n), _cols(F, drz, H, 2 * H))       # d z_pre / d h'
    coef_gh = F.cat(dr, dz, F.mul(dn, r), dim=1)
    carry = _Carry()
    d_gh, d_h = [], []
    for off, b, prev in reversed(steps):
        dh = _add_carry(F, _rows(F, g, off, off + b), carry.value)
        dg = F.mul(F.cat(dh, dh, dh, dim=1), _rows(F, coef_gh, off, off + b))
        d_gh.append(dg)
        d_h.append(dh)
        carry.send(F, F.add(F.matmul(dg, w_hh), F.mul(dh, _rows(F, z, off, off + b))), b, prev)
    d_gh.reverse()
    d_h.reverse()
    d_gh = _in_time_order(F, d_gh, steps)
    gw, gb = _weight_grads(F, d_gh, h_prev, node)
    d_gi = None
    if node.needs[0]:
        dhs = _in_time_order(F, d_h, steps)
        d_gi = F.cat(_cols(F, d_gh, 0, 2 * H), F.mul(dhs, dn), dim=1)
    gh0 = carry.init_grad(F) if node.needs[1] else None
    return d_gi, gh0, None, gw, gb, None


_BACKWARD_WALKS = {"rnn_tanh": _simple_walk, "rnn_relu": _simple_walk, "lstm": _lstm_walk,
                   "gru": _gru_walk}
