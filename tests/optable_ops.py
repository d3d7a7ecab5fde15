"""The op table's rows for every op that is not elementwise (the elementwise rows are in
``tests/optable.py``, whose ``ROWS`` is the one table of both; what a row holds:
``tests/opinfo.py``).

Each row's ``fn`` takes the namespace first (``M``: ``eager``, or ``torch`` for the
reference), then the sample's tensors and keywords, and calls the public function that
reaches the op.  Ops that only a backward formula dispatches (``basic_scatter``,
``index_put_add``, ``nll_loss_grad``, ...) are reached by the public call's gradient taken
with ``create_graph=True`` (:func:`vjp`): their own gradients are the second derivative.
Ops without a row are in ``UNTABLED``, each with the reason.
"""

from __future__ import annotations

import numpy as np

import eager as E
from tests.opinfo import BOOL, F32, F64, FLOATS, I64, NUMBERS, U8, OpInfo, S

#: ops with no CUDA implementation, and why: their rows run on the CPU only (every other
#: row runs on CUDA too: tests/gpu/test_optable_cuda.py); a collective or an internal op
#: without a row is listed too (tests/gpu/test_cuda_ops_coverage.py checks the whole list)
NOT_ON_CUDA = {
    # collectives: eager.distributed's process groups exchange host arrays
    "all_gather": "collective (host process groups)",
    "all_reduce": "collective (host process groups)",
    "barrier": "collective (host process groups)",
    "broadcast": "collective (host process groups)",
    "reduce_scatter": "collective (host process groups)",
    # eager's CPU fast paths: one op for float32/float64 NumPy arrays; a CUDA tensor takes
    # the composite of ops (each with its CUDA kernel), which is what the compiler fuses
    "conv_product": "CPU fast path of a convolution's product step (CUDA: the composite)",
    "layer_norm": "CPU fast path of F.layer_norm (CUDA: the composite)",
    "scaled_dot_product_attention": "CPU fast path of F.scaled_dot_product_attention "
                                    "(CUDA: the composite)",
    "rnn_scan_grad": "CPU fast path of a traced rnn_scan backward (CUDA: the walk's ops)",
}

#: registered ops without a row, and why
UNTABLED = {
    "add_batch_dim": "internal to vmap (eager/func/vmap.py): every vmap check of the table "
                     "runs it; tests/eager/test_func.py",
    "remove_batch_dim": "internal to vmap (eager/func/vmap.py): every vmap check of the "
                        "table runs it; tests/eager/test_func.py",
    "all_gather": "a collective: needs a process group (tests/distributed)",
    "all_reduce": "a collective: needs a process group (tests/distributed)",
    "barrier": "a collective: needs a process group (tests/distributed)",
    "broadcast": "a collective: needs a process group (tests/distributed)",
    "reduce_scatter": "a collective: needs a process group (tests/distributed)",
    "rnn_scan_grad": "dispatched only by a traced backward of rnn_scan (grad mode off, "
                     "tensors): the rnn_scan row's compiled checks run it; "
                     "tests/compiler/test_rnn_backward.py compares it with eager's walk",
    "to_device": "copies between devices: only reached with a second device (tests/gpu, "
                 "the CUDA rows of tests/ops/test_optable.py)",
}

#: a compiler bug several rows hit (their ``xfail``)
SPLIT_BACKWARD = {
    "compiled": "compiled backward of several differentiable outputs sharing a node is not "
                "eager's bits: one BackwardProgram per user output (compiler/api.py, "
                "backward_program) runs the shared node's backward once per output and the "
                "engine adds the results, where eager adds the output gradients first and "
                "runs it once (float32 gradients 1-4 ulp off, and the shared backward "
                "runs once per output); smallest case: y = x.sin(); return y * 3, y * 7"}

#: ``vmap`` of a row whose op has no batching rule (``eager.func.RULES``): a clear error
NO_RULE = False

FLOAT_INTS = (F32, F64, I64)
SORTABLE = FLOATS   # index outputs are only unique without ties


def op(name, fn, samples, **kw):
    """A row calling ``fn(M, *tensors, **kwargs)`` on ``samples(gen)``."""
    kw.setdefault("dtypes", FLOATS)
    kw.setdefault("ref", True)
    kw.setdefault("devices", ("cpu",) if name in NOT_ON_CUDA else ("cpu", "cuda"))
    return OpInfo(name, fn, shapes=(), samples=samples, lib=True, **kw)


def vjp(M, f, x, w):
    """The gradient of ``sum(f(x) * w)`` w.r.t. ``x``, itself differentiable
    (``create_graph``): the public way to reach an op that only a backward dispatches."""
    if not x.requires_grad:
        x.requires_grad_()
    return M.autograd.grad((f(x) * w).sum(), x, create_graph=True)[0]


def eye(M, x, scale=3.0):
    """``scale * I`` shaped like ``x``'s matrices, in its dtype."""
    return scale * M.eye(x.shape[-1], dtype=x.dtype)


def _dtype(M, name):
    return getattr(M, name)


def _wc(g, *shape):
    """A well-conditioned (batch of) square matrices: ``x + 3 I``."""
    return g.x(*shape) + 3 * np.eye(shape[-1], dtype=g.dtype)


RNN_MODES = ("GRU", "LSTM", "RNN")
#: the modules, made once (constructing one inside a compiled function runs it eagerly);
#: eager's now (without moving the default generator), torch's at the first reference call
with E.random.fork_rng():
    _MODULES: dict = {("eager", mode): getattr(E.nn, mode)(2, 3) for mode in RNN_MODES}


def _rnn(M, x, h0, w_ih, w_hh, b_ih, b_hh, *rest, mode):
    """``nn.<mode>`` (input size 2, hidden size 3) through ``func.functional_call`` with the
    sample's weights."""
    key = (M.__name__, mode)
    if key not in _MODULES:
        _MODULES[key] = getattr(M.nn, mode)(2, 3)
    mod = _MODULES[key]
    params = {"weight_ih_l0": w_ih, "weight_hh_l0": w_hh, "bias_ih_l0": b_ih,
              "bias_hh_l0": b_hh}
    state = (h0, rest[0]) if mode == "LSTM" else h0
    out, last = M.func.functional_call(mod, params, (x, state))
    return (out,) + (last if mode == "LSTM" else (last,))


def _rnn_samples(g):
    t, b, i, h = 3, 2, 2, 3
    out = []
    for mode, k in (("GRU", 3), ("LSTM", 4), ("RNN", 1)):
        w = (g.x(t, b, i), g.x(1, b, h), g.x(k * h, i), g.x(k * h, h), g.x(k * h),
             g.x(k * h))
        out.append(S(*w, *((g.x(1, b, h),) if mode == "LSTM" else ()), mode=mode))
    return out


def _svd(M, x, **k):
    u, s, vh = M.linalg.svd(x, full_matrices=False)
    return s, (u * s.sqrt().unsqueeze(-2)) @ vh     # unchanged by the factors' signs


def _eigh(M, x, **k):
    vals, vecs = M.linalg.eigh(x + x.mT, **k)
    return vals, vecs * vecs                         # unchanged by the vectors' signs


def _setitem(M, x, v, *idx, key):
    y = x.clone()
    y[key if not idx else (idx[0],) + key] = v
    return y


def _singular(g):
    a = _wc(g, 2, 3, 3)
    a[1, :, 1] = 0.0   # an exactly zero column: LU's second pivot is exactly zero
    return a


def _not_pd(g):
    a = g.x(2, 3, 3)
    a = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3, dtype=a.dtype)
    a[1, 2, 2] = -5.0  # third leading minor negative
    return a


OP_ROWS = [
    # -- reductions -----------------------------------------------------------------------
    op("sum", lambda M, x, **k: x.sum(**k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, 2), dim=(0, -1), keepdim=True),
                  S(g.x(3, 2)), S(g.x(), dim=-1), S(g.x(0, 3), dim=0)], dtypes=NUMBERS,
       numba=True),
    op("mean", lambda M, x, **k: x.mean(**k),
       lambda g: [S(g.x(2, 3), dim=-1, keepdim=True), S(g.x(2, 3, 2), dim=(0, 2)),
                  S(g.x(3, 2))]),
    op("prod", lambda M, x, **k: x.prod(**k),
       lambda g: [S(g.x(2, 3, domain="nonzero"), dim=1),
                  S(g.x(2, 3, domain="nonzero"), dim=-1, keepdim=True),
                  S(g.x(2, 2, domain="nonzero"))], dtypes=NUMBERS),
    op("amax", lambda M, x, **k: x.amax(**k),
       lambda g: [S(g.x(2, 3, domain="distinct"), dim=1),
                  S(g.x(2, 3, 2, domain="distinct"), dim=(0, -1), keepdim=True),
                  S(g.x(), dim=0)], dtypes=NUMBERS),
    op("amin", lambda M, x, **k: x.amin(**k),
       lambda g: [S(g.x(2, 3, domain="distinct"), dim=-1),
                  S(g.x(2, 3, 2, domain="distinct"), dim=(1, 2), keepdim=True)],
       dtypes=NUMBERS),
    op("argmax", lambda M, x, **k: x.argmax(**k),
       lambda g: [S(g.x(2, 3, domain="distinct"), dim=1),
                  S(g.x(2, 3, domain="distinct"), dim=-2, keepdim=True),
                  S(g.x(2, 3, domain="distinct"))], dtypes=SORTABLE, grad=False),
    op("argmin", lambda M, x, **k: x.argmin(**k),
       lambda g: [S(g.x(2, 3, domain="distinct"), dim=0),
                  S(g.x(2, 3, domain="distinct"), dim=-1, keepdim=True),
                  S(g.x(2, 3, domain="distinct"))], dtypes=SORTABLE, grad=False),
    op("all", lambda M, x, **k: x.all(**k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3), dim=-1, keepdim=True), S(g.x(2, 3)),
                  S(g.x(0, 3), dim=0)], dtypes=(BOOL, U8, F32), grad=False),
    op("any", lambda M, x, **k: x.any(**k),
       lambda g: [S(g.x(2, 3, domain="sparse"), dim=0),
                  S(g.x(2, 3, domain="sparse"), dim=-1, keepdim=True),
                  S(g.x(2, 3, domain="sparse"))], dtypes=(BOOL, U8, F32), grad=False),
    op("count_nonzero", lambda M, x, **k: M.count_nonzero(x, **k),
       lambda g: [S(g.x(2, 3, domain="sparse"), dim=1),
                  S(g.x(2, 3, 2, domain="sparse"), dim=(0, -1)),
                  S(g.x(2, 3, domain="sparse"))], dtypes=(BOOL,) + NUMBERS, grad=False),
    op("logsumexp", lambda M, x, **k: M.logsumexp(x, **k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, 2), dim=(0, -1), keepdim=True),
                  S(g.x(), dim=0)], numba=True),
    op("var", lambda M, x, **k: x.var(**k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, 2), dim=(0, -1), correction=0,
                                          keepdim=True), S(g.x(3, 2)),
                  S(g.x(2, 3), dim=1, correction=2)]),
    op("std", lambda M, x, **k: x.std(**k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, 2), dim=(0, -1), correction=0,
                                          keepdim=True), S(g.x(3, 2))]),
    op("scaled_dot_product_attention",
       lambda M, q, k, v, **kw: M.nn.functional.scaled_dot_product_attention(q, k, v, **kw),
       lambda g: [S(g.x(2, 3, 4), g.x(2, 5, 4), g.x(2, 5, 2)),
                  S(g.x(2, 2, 3, 4), g.x(2, 2, 3, 4), g.x(2, 2, 3, 4), is_causal=True),
                  S(g.x(1, 4, 2), g.x(1, 3, 2), g.x(1, 3, 3), is_causal=True, scale=0.7)],
       vmap=False),   # vmap's batched storage runs the composite (no batching rule)
    op("conv_product", lambda M, x, w, *b, **kw: M.nn.functional.conv2d(x, w, *b, **kw),
       lambda g: [S(g.x(2, 2, 4, 3), g.x(3, 2, 2, 2), g.x(3), padding=1),
                  S(g.x(1, 3, 5, 4), g.x(2, 3, 3, 1), stride=(2, 1))]),
    op("layer_norm", lambda M, x, *wb, shape: M.nn.functional.layer_norm(x, shape, *wb),
       lambda g: [S(g.x(2, 3), g.x(3), g.x(3), shape=(3,)), S(g.x(2, 3, 4), shape=(3, 4)),
                  S(g.x(2, 3, 4), g.x(4), shape=(4,))],
       vmap=False),   # vmap's batched storage runs the composite (no batching rule)
    op("norm", lambda M, x, **k: M.linalg.vector_norm(x, **k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, domain="nonzero"), ord=1, dim=-1,
                                          keepdim=True),
                  S(g.x(2, 3, domain="distinct"), ord=float("inf"), dim=0),
                  S(g.x(2, 3, domain="nonzero"), ord=3.0)]),
    op("softmax", lambda M, x, **k: x.softmax(**k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, 2), dim=-1), S(g.x(2, 3), dim=0),
                  S(g.x(), dim=0)],
       numba=True),
    op("log_softmax", lambda M, x, **k: x.log_softmax(**k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, 2), dim=-2), S(g.x(), dim=-1)]),
    op("cumsum", lambda M, x, **k: x.cumsum(**k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, 2), dim=-3), S(g.x(), dim=0),
                  S(g.x(0, 2), dim=0)], dtypes=NUMBERS),
    op("cumprod", lambda M, x, **k: x.cumprod(**k),
       lambda g: [S(g.x(2, 3, domain="nonzero"), dim=1),
                  S(g.x(2, 3, domain="nonzero"), dim=-2)], dtypes=NUMBERS),
    op("logcumsumexp", lambda M, x, **k: x.logcumsumexp(**k),
       lambda g: [S(g.x(2, 3), dim=1), S(g.x(2, 3, 2), dim=-1)]),
    op("pick_along_dim", lambda M, x, **k: tuple(x.max(**k)),
       lambda g: [S(g.x(2, 3, domain="distinct"), dim=1),
                  S(g.x(2, 3, domain="distinct"), dim=-2, keepdim=True)], dtypes=SORTABLE),
    op("place_along_dim", lambda M, x, w, **k: vjp(M, lambda y: y.max(**k).values, x, w),
       lambda g: [S(g.x(2, 3, domain="distinct"), g.x(2), dim=1),
                  S(g.x(2, 3, domain="distinct"), g.x(1, 3), dim=0, keepdim=True)]),

    # -- shapes and copies ----------------------------------------------------------------
    op("expand", lambda M, x, *, shape: x.expand(*shape),
       lambda g: [S(g.x(3), shape=(2, 3)), S(g.x(2, 1), shape=(-1, 4)),
                  S(g.x(1, 3), shape=(2, 2, 3))], dtypes=NUMBERS),
    op("reshape", lambda M, x, y: M.outer(x, y),
       lambda g: [S(g.x(3), g.x(2))]),
    op("reshape_copy", lambda M, x, *, shape: x.mT.reshape(shape),
       lambda g: [S(g.x(2, 3), shape=(-1,)), S(g.x(2, 2, 3), shape=(2, 6))],
       dtypes=NUMBERS),
    op("view", lambda M, x, *, shape: x.view(shape),
       lambda g: [S(g.x(2, 3), shape=(3, 2)), S(g.x(2, 3, 2), shape=(-1,))], dtypes=NUMBERS),
    op("view_dtype", lambda M, x: x.view(M.int32 if x.dtype == M.float32 else M.int64),
       lambda g: [S(g.x(2, 3))], grad=False, vmap=NO_RULE),
    op("permute", lambda M, x, *, dims: x.permute(*dims),
       lambda g: [S(g.x(2, 3, 2), dims=(2, 0, 1)), S(g.x(2, 3), dims=(-1, 0))],
       dtypes=NUMBERS),
    op("squeeze", lambda M, x, **k: x.squeeze(**k),
       lambda g: [S(g.x(2, 1, 3), dim=1), S(g.x(1, 3, 1), dim=-1), S(g.x(1, 3, 1))],
       dtypes=NUMBERS),
    op("unsqueeze", lambda M, x, **k: x.unsqueeze(**k),
       lambda g: [S(g.x(2, 3), dim=0), S(g.x(2, 3), dim=-1)], dtypes=NUMBERS),
    op("contiguous", lambda M, x: x.mT.contiguous(), lambda g: [S(g.x(2, 3))],
       dtypes=NUMBERS),
    op("clone", lambda M, x: x.clone(), lambda g: [S(g.x(2, 3))], dtypes=NUMBERS),
    op("repeat", lambda M, x, *, reps: x.repeat(*reps),
       lambda g: [S(g.x(2, 3), reps=(2, 1)), S(g.x(3), reps=(2, 1, 2))], dtypes=NUMBERS),
    op("cat", lambda M, *xs, **k: M.cat(list(xs), **k),
       lambda g: [S(g.x(2, 3), g.x(1, 3), dim=0), S(g.x(2, 1), g.x(2, 2), g.x(2, 3), dim=-1),
                  S(g.x(2, 3), g.x(0, 3), dim=0)],
       dtypes=NUMBERS),
    op("stack", lambda M, *xs, **k: M.stack(list(xs), **k),
       lambda g: [S(g.x(2, 3), g.x(2, 3), dim=0), S(g.x(3), g.x(3), g.x(3), dim=-1)],
       dtypes=NUMBERS),
    op("flip", lambda M, x, **k: M.flip(x, **k),
       lambda g: [S(g.x(2, 3), dims=(0,)), S(g.x(2, 3, 2), dims=(0, -1))], dtypes=NUMBERS),
    op("roll", lambda M, x, **k: M.roll(x, **k),
       lambda g: [S(g.x(2, 3), shifts=1, dims=0), S(g.x(2, 3), shifts=(1, -1), dims=(0, 1)),
                  S(g.x(2, 3), shifts=2), S(g.x(2, 3), shifts=-4, dims=-1)], dtypes=NUMBERS),
    op("sum_to", lambda M, x, y, w: vjp(M, lambda z: x * z, y, w),
       lambda g: [S(g.x(2, 3), g.x(3), g.x(2, 3)), S(g.x(2, 3), g.x(2, 1), g.x(2, 3))]),

    # -- indexing -------------------------------------------------------------------------
    op("basic_index", lambda M, x, *, key: x[key],
       lambda g: [S(g.x(3, 4), key=(slice(1, None), slice(None, None, 2))),
                  S(g.x(3, 4), key=(0,)), S(g.x(2, 3, 2), key=(Ellipsis, -1)),
                  S(g.x(3, 4), key=(None, 1))], dtypes=NUMBERS),
    op("basic_scatter", lambda M, x, w, *, key: vjp(M, lambda y: y[key], x, w),
       lambda g: [S(g.x(3, 4), g.x(2, 2), key=(slice(1, None), slice(None, None, 2))),
                  S(g.x(3, 4), g.x(4), key=(-1,))]),
    op("index", lambda M, x, *idx, dim: x[(slice(None),) * dim + idx],
       lambda g: [S(g.x(4, 3), g.i(4, 5), dim=0), S(g.x(4, 3), g.i(4, 2, 1), g.i(3, 3), dim=0),
                  S(g.x(2, 4), g.i(4, 2, 2), dim=1)], dtypes=NUMBERS),
    op("index_put_add", lambda M, x, i, w: vjp(M, lambda y: y[i], x, w),
       lambda g: [S(g.x(4, 3), np.array([0, 2, 0, 3]), g.x(4, 3)),
                  S(g.x(4), np.array([[1, 1], [3, 0]]), g.x(2, 2))]),
    op("set_item", _setitem,
       lambda g: [S(g.x(4, 3), g.x(3), g.perm(4, 2), key=()),
                  S(g.x(3, 4), g.x(2), key=(slice(1, None), 0)),
                  S(g.x(3, 4), g.x(1), g.perm(3, 2), key=(slice(None, 2),))],
       dtypes=NUMBERS),
    op("gather", lambda M, x, i, *, dim: M.gather(x, dim, i),
       lambda g: [S(g.x(2, 3), g.i(3, 2, 4), dim=1), S(g.x(3, 2), g.i(3, 2, 2), dim=0),
                  S(g.x(2, 3), g.i(3, 1, 2), dim=-1)], dtypes=NUMBERS),
    op("scatter", lambda M, x, i, *src, dim: x.scatter(dim, i, src[0] if src else 2.5),
       lambda g: [S(g.x(2, 4), np.stack([g.perm(4, 3), g.perm(4, 3)]), g.x(2, 3), dim=1),
                  S(g.x(3, 2), np.stack([g.perm(3, 2), g.perm(3, 2)], -1), dim=0)],
       dtypes=NUMBERS),
    op("scatter_add", lambda M, x, i, src, *, dim: x.scatter_add(dim, i, src),
       lambda g: [S(g.x(2, 4), g.i(4, 2, 3), g.x(2, 3), dim=1),
                  S(g.x(3, 2), g.i(3, 4, 2), g.x(4, 2), dim=-2)], dtypes=NUMBERS),
    op("masked_fill", lambda M, x, m, *, value: x.masked_fill(m, value),
       lambda g: [S(g.x(2, 3), g.mask(2, 3), value=-1.5), S(g.x(2, 3), g.mask(3), value=2.0)]),
    op("nonzero", lambda M, x, **k: M.nonzero(x, **k),
       lambda g: [S(g.x(2, 3, domain="sparse")), S(g.x(4, domain="sparse"))],
       dtypes=(BOOL,) + NUMBERS, grad=False, vmap=False, compiled=False),
    op("masked_scatter", lambda M, x, m, s: x.masked_scatter(m, s),
       lambda g: [S(g.x(2, 3), g.mask(2, 3), g.x(2, 3)), S(g.x(2, 3), g.mask(3), g.x(7))],
       vmap=NO_RULE),
    op("masked_gather", lambda M, x, m, s, w: vjp(M, lambda t: x.masked_scatter(m, t), s, w),
       lambda g: [S(g.x(2, 3), g.mask(2, 3), g.x(2, 3), g.x(2, 3)),
                  S(g.x(2, 3), g.mask(3), g.x(7), g.x(2, 3))], vmap=NO_RULE),
    op("index_add", lambda M, x, i, s, **k: x.index_add(0, i, s, **k),
       lambda g: [S(g.x(4, 3), np.array([0, 2, 0]), g.x(3, 3)),
                  S(g.x(4), g.i(4, 5), g.x(5), alpha=2.0)], dtypes=NUMBERS, vmap=NO_RULE),
    op("index_copy", lambda M, x, i, s, *, dim: x.index_copy(dim, i, s),
       lambda g: [S(g.x(4, 3), g.perm(4, 2), g.x(2, 3), dim=0),
                  S(g.x(2, 4), g.perm(4, 3), g.x(2, 3), dim=-1)], dtypes=NUMBERS,
       vmap=NO_RULE),

    # -- sorting and counting -------------------------------------------------------------
    op("argsort", lambda M, x, **k: tuple(x.sort(**k)),
       lambda g: [S(g.x(2, 4, domain="distinct"), dim=1),
                  S(g.x(3, 2, domain="distinct"), dim=0, descending=True)], dtypes=SORTABLE,
       vmap=NO_RULE),
    op("topk_indices", lambda M, x, *, k, **kw: tuple(x.topk(k, **kw)),
       lambda g: [S(g.x(2, 4, domain="distinct"), k=2, dim=1),
                  S(g.x(4, 2, domain="distinct"), k=3, dim=0, largest=False)],
       dtypes=SORTABLE, vmap=NO_RULE),
    op("kthvalue_index", lambda M, x, *, k, **kw: tuple(x.kthvalue(k, **kw)),
       lambda g: [S(g.x(2, 4, domain="distinct"), k=2, dim=1),
                  S(g.x(3, 2, domain="distinct"), k=3, dim=0, keepdim=True)],
       dtypes=SORTABLE, vmap=NO_RULE),
    op("searchsorted", lambda M, s, v, **k: M.searchsorted(s, v, **k),
       lambda g: [S(np.sort(g.x(5)), g.x(2, 3)),
                  S(np.sort(g.x(2, 4), -1), g.x(2, 3), right=True)],
       dtypes=NUMBERS, grad=False, vmap=False),
    op("histc", lambda M, x, **k: M.histc(x, **k),
       lambda g: [S(g.x(3, 4), bins=4, min=-2, max=2), S(g.x(6), bins=3)],
       grad=False, vmap=False),
    op("bincount", lambda M, i, *w, **k: M.bincount(i, *w, **k),
       lambda g: [S(g.i(4, 6)), S(g.i(3, 5), g.x(5), minlength=5)],
       grad=False, vmap=False, compiled=False),
    op("unique", lambda M, x: M.unique(x, return_inverse=True, return_counts=True),
       lambda g: [S(np.round(g.x(7))), S(np.round(g.x(2, 3)))],
       dtypes=FLOAT_INTS, grad=False, vmap=False, compiled=False),

    # -- linear algebra -------------------------------------------------------------------
    op("matmul", lambda M, a, b: a @ b,
       lambda g: [S(g.x(2, 3), g.x(3, 2)), S(g.x(2, 1, 2, 3), g.x(2, 3, 2)),
                  S(g.x(3), g.x(3, 2)), S(g.x(2, 3), g.x(3)), S(g.x(2, 0), g.x(0, 3))]),
    op("linear", lambda M, x, w, *b: M.nn.functional.linear(x, w, *b),
       lambda g: [S(g.x(2, 3), g.x(4, 3), g.x(4)), S(g.x(2, 2, 3), g.x(2, 3))], numba=True),
    op("einsum", lambda M, *xs, eq: M.einsum(eq, *xs),
       lambda g: [S(g.x(2, 3), g.x(3, 2), eq="ij,jk->ik"), S(g.x(2, 3, 2), eq="bij->bj"),
                  S(g.x(3), g.x(3), eq="i,i->"), S(g.x(2, 3), eq="ij->ji")]),
    op("tril", lambda M, x, **k: x.tril(**k),
       lambda g: [S(g.x(3, 3)), S(g.x(2, 3, 4), diagonal=-1)], dtypes=NUMBERS),
    op("triu", lambda M, x, **k: x.triu(**k),
       lambda g: [S(g.x(3, 3)), S(g.x(2, 3, 4), diagonal=1)], dtypes=NUMBERS),
    op("diag", lambda M, x, **k: M.diag(x, **k),
       lambda g: [S(g.x(3)), S(g.x(3, 4), diagonal=1), S(g.x(2), diagonal=-1)],
       dtypes=NUMBERS, vmap=False),
    op("diagonal", lambda M, x, **k: M.diagonal(x, **k),
       lambda g: [S(g.x(3, 4), offset=1), S(g.x(2, 3, 3), offset=0, dim1=-2, dim2=-1)],
       dtypes=NUMBERS),
    op("diagonal_scatter", lambda M, x, **k: M.diag_embed(x, **k),
       lambda g: [S(g.x(3)), S(g.x(2, 2), offset=1)], dtypes=NUMBERS),
    op("inv", lambda M, a: M.linalg.inv(a),
       lambda g: [S(_wc(g, 3, 3)), S(_wc(g, 2, 2, 2))], vmap=False),
    op("lu_info", lambda M, a: M.linalg.inv_ex(a).info,
       lambda g: [S(_wc(g, 3, 3)), S(_singular(g))], grad=False, vmap=False),
    op("solve", lambda M, a, b, **k: M.linalg.solve(a, b, **k),
       lambda g: [S(_wc(g, 3, 3), g.x(3, 2)), S(_wc(g, 2, 2, 2), g.x(2)),
                  S(_wc(g, 3, 3), g.x(2, 3), left=False)], vmap=False),
    op("det", lambda M, a: M.linalg.det(a),
       lambda g: [S(_wc(g, 3, 3)), S(g.x(2, 2, 2)), S(g.x(3, 2) @ g.x(2, 3))], vmap=False),
    op("cofactor", lambda M, a, w: vjp(M, M.linalg.det, a, w),
       lambda g: [S(_wc(g, 3, 3), g.x()), S(g.x(2, 2, 2), g.x(2))], vmap=False),
    op("slogdet", lambda M, a: tuple(M.linalg.slogdet(a)),
       lambda g: [S(_wc(g, 3, 3)), S(g.x(2, 2, 2))], vmap=False),
    op("pinv", lambda M, a, **k: M.linalg.pinv(a, **k),
       lambda g: [S(g.x(3, 2)), S(g.x(2, 2, 3))], vmap=False),
    op("cholesky", lambda M, x, **k: M.linalg.cholesky(x @ x.mT + eye(M, x), **k),
       lambda g: [S(g.x(3, 3)), S(g.x(2, 2, 2), upper=True)], vmap=False),
    op("cholesky_info", lambda M, a: M.linalg.cholesky_ex(a).info,
       lambda g: [S(_not_pd(g))], grad=False, vmap=False),
    op("solve_triangular", lambda M, a, b, **k: M.linalg.solve_triangular(a, b, **k),
       lambda g: [S(_wc(g, 3, 3), g.x(3, 2), upper=True),
                  S(_wc(g, 2, 2, 2), g.x(2, 3, 2), upper=False, left=False),
                  S(_wc(g, 3, 3), g.x(3, 1), upper=False, unitriangular=True)], vmap=False),
    op("qr", lambda M, a, **k: tuple(M.linalg.qr(a, **k)),
       lambda g: [S(g.x(3, 2)), S(g.x(2, 2, 2))], vmap=False, xfail=SPLIT_BACKWARD),
    op("svd", _svd, lambda g: [S(g.x(3, 2)), S(g.x(2, 2, 3))], vmap=False,
       xfail=SPLIT_BACKWARD),
    op("svdvals", lambda M, a: M.linalg.svdvals(a),
       lambda g: [S(g.x(3, 2)), S(g.x(2, 2, 3))], vmap=False),
    op("eigh", _eigh, lambda g: [S(g.x(3, 3)), S(g.x(2, 2, 2), UPLO="U")], vmap=False,
       xfail=SPLIT_BACKWARD),
    op("eigvalsh", lambda M, x, **k: M.linalg.eigvalsh(x + x.mT, **k),
       lambda g: [S(g.x(3, 3)), S(g.x(2, 2, 2), UPLO="U")], vmap=False),

    # -- losses, padding, windows, recurrences ----------------------------------------------
    op("nll_loss", lambda M, x, t, *w, **k: M.nn.functional.nll_loss(x, t, *w, **k),
       lambda g: [S(g.x(3, 4), g.i(4, 3)), S(g.x(3, 4), g.i(4, 3), reduction="sum"),
                  S(g.x(3, 4), np.array([0, 1, 3]), ignore_index=1),
                  S(g.x(4, 3), np.array([0, 1, 2, 1]), g.f(3, domain="positive"),
                    ignore_index=1, nograd=(2,)),
                  S(g.x(2, 3, 2), g.i(3, 2, 2), reduction="none")], numba=True),
    op("nll_loss_grad",
       lambda M, x, t, w, **k: vjp(M, lambda y: M.nn.functional.nll_loss(y, t, **k), x, w),
       lambda g: [S(g.x(3, 4), g.i(4, 3), g.x()),
                  S(g.x(3, 4), np.array([0, 1, 2]), g.x(), reduction="sum", ignore_index=1)]),
    op("one_hot", lambda M, i, **k: M.nn.functional.one_hot(i, **k),
       lambda g: [S(g.i(4, 2, 3), num_classes=4), S(g.i(3, 5))], grad=False, vmap=False),
    op("pad", lambda M, x, *, pad, **k: M.nn.functional.pad(x, pad, **k),
       lambda g: [S(g.x(2, 3), pad=(1, 2), value=0.5), S(g.x(1, 2, 4), pad=(2, 1),
                                                          mode="reflect"),
                  S(g.x(1, 2, 3), pad=(1, 1), mode="replicate"),
                  S(g.x(1, 1, 3, 3), pad=(1, 0, 1, 1), mode="circular"),
                  S(g.x(2, 3), pad=(1, -1))]),
    op("pad_adjoint", lambda M, x, w, *, pad, **k:
       vjp(M, lambda y: M.nn.functional.pad(y, pad, **k), x, w),
       lambda g: [S(g.x(1, 2, 4), g.x(1, 2, 7), pad=(2, 1), mode="reflect"),
                  S(g.x(2, 3), g.x(2, 3), pad=(1, -1))]),
    op("im2col", lambda M, x, **k: M.nn.functional.unfold(x, **k),
       lambda g: [S(g.x(1, 2, 3, 3), kernel_size=2),
                  S(g.x(2, 1, 4, 4), kernel_size=2, stride=2, padding=1),
                  S(g.x(1, 1, 4, 4), kernel_size=2, dilation=2)]),
    op("col2im", lambda M, c, **k: M.nn.functional.fold(c, **k),
       lambda g: [S(g.x(1, 8, 4), output_size=(3, 3), kernel_size=2),
                  S(g.x(2, 4, 4), output_size=(4, 4), kernel_size=2, stride=2)]),
    op("rnn_scan", _rnn, _rnn_samples, vmap=False, atol=1e-5, xfail=SPLIT_BACKWARD),

    # -- factories ----------------------------------------------------------------------
    op("full", lambda M, *, dtype, **k: M.full(**k, dtype=_dtype(M, dtype)),
       lambda g: [S(size=(2, 3), fill_value=1.5, dtype="float32"),
                  S(size=(3,), fill_value=2, dtype="int64")], grad=False, vmap=False),
    op("arange", lambda M, *, args: M.arange(*args),
       lambda g: [S(args=(5,)), S(args=(1, 2, 0.25)), S(args=(4, 0, -1))],
       grad=False, vmap=False),
    op("linspace", lambda M, **k: M.linspace(**k),
       lambda g: [S(start=0.0, end=1.0, steps=5), S(start=-1, end=2, steps=4)],
       grad=False, vmap=False),
    op("eye", lambda M, **k: M.eye(**k), lambda g: [S(n=3), S(n=2, m=3)],
       grad=False, vmap=False),
    op("tri_indices", lambda M, *, which, args: getattr(M, which)(*args),
       lambda g: [S(which="tril_indices", args=(3, 3)),
                  S(which="triu_indices", args=(3, 4, 1))], grad=False, vmap=False),
    op("combination_indices", lambda M, x, **k: M.combinations(x, **k),
       lambda g: [S(g.x(4)), S(g.x(3), r=2, with_replacement=True)], vmap=False),
    op("rand", lambda M, *, shape: M.rand(*shape), lambda g: [S(shape=(2, 3))],
       grad=False, vmap=False, random=True),
    op("randn", lambda M, *, shape: M.randn(*shape), lambda g: [S(shape=(2, 3))],
       grad=False, vmap=False, random=True),
    op("randint", lambda M, **k: M.randint(**k), lambda g: [S(low=1, high=5, size=(2, 3))],
       grad=False, vmap=False, random=True),
    op("randperm", lambda M, *, n: M.randperm(n), lambda g: [S(n=5)],
       grad=False, vmap=False, random=True),
    op("bernoulli", lambda M, x, *, p: x.bernoulli(p), lambda g: [S(g.x(2, 3), p=0.3)],
       grad=False, vmap=False, random=True),
    op("bernoulli_tensor", lambda M, p: M.bernoulli(p),
       lambda g: [S(g.x(2, 3, domain="positive") / 3)], grad=False, vmap=False, random=True),
    op("multinomial", lambda M, p, **k: M.multinomial(p, **k),
       lambda g: [S(g.x(2, 4, domain="positive"), num_samples=2),
                  S(g.x(3, domain="positive"), num_samples=5, replacement=True)],
       grad=False, vmap=False, random=True),
    op("normal", lambda M, m, s: M.normal(m, s),
       lambda g: [S(g.x(2, 3), g.x(2, 3, domain="positive"))],
       grad=False, vmap=False, random=True),
]
