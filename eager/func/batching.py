"""vmap's batched storage and the batching rules: one rule per op, in one table.

Inside ``vmap`` a batched tensor is an ordinary :class:`~eager.Tensor` whose storage
(``_data``) is a :class:`Batched`: the *physical* storage ``value`` holding every sample,
with the batch dimension at 0, and the vmap ``level`` it belongs to.  A ``Batched``
reports the *logical* (per-sample) ``shape``, ``ndim`` and ``dtype``, so the user's
function and the public op functions see per-sample shapes, exactly as in PyTorch.

An op whose arguments include batched storage reaches :func:`apply` from
:func:`eager.dispatch.dispatch` (through ``dispatch.STORAGE_RULES``, the hook that
storage types other than NumPy arrays use).  :func:`apply` unwraps the arguments of the
innermost level, looks up the op's rule in :data:`RULES` and runs the rule on the
physical values; the rule runs ordinary ops (through :func:`run`) on the physical
values once for the whole batch, never a loop over samples.  A physical value may itself
be batched storage of an outer vmap level (nested vmap), and :func:`run` sends it back
here, so rules compose.  Autograd stays at the logical level: ``dispatch`` records grad
nodes on the logical tensors and their backward formulas dispatch logical ops again,
which reach these rules too, so ``vmap(grad(f))`` gives per-sample gradients.

Adding an op is one line in :data:`RULES` (most reuse a generic rule: ``_elementwise``,
``_dims`` for a canonical ``dim`` tuple, ``_dim`` for an int ``dim``...).  An op without
a rule raises ``RuntimeError("vmap: no batching rule for the op '<name>' ...")``; there
is no per-sample fallback.
"""

from __future__ import annotations

import numpy as np

from runtime import device as runtime_device

from .. import dtypes as _dt
from ..autograd.engine import register_final_grad
from ..dispatch import (
    _HALF_NATIVE,
    _half_forward,
    copy_into,
    dispatch,
    promote,
    register_storage_rule,
)
from ..ops.base import OPS, Op
from ..ops.index import adv_shape, check_bounds, value_shape
from ..ops.loss import _targets

_ndarray = np.ndarray

#: the levels of the vmaps running now, outermost first (levels grow: an inner vmap's
#: level is higher than every active one)
ACTIVE: list = []


class Batched:
    """A batched tensor's storage: ``value`` (physical, batch dimension first) at ``level``."""

    __slots__ = ("value", "level")

    def __init__(self, value, level: int):
        self.value = value
        self.level = level

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape[1:])

    @property
    def ndim(self) -> int:
        return self.value.ndim - 1

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def size(self) -> int:
        n = 1
        for s in self.value.shape[1:]:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.value.dtype.itemsize

    @property
    def batch_size(self) -> int:
        return self.value.shape[0]

    @property
    def flags(self):
        return self.value.flags

    def reshape(self, shape, copy=None):
        """Reshape without running an op (``can_view``'s probe): the batch size prefixes
        ``shape``."""
        v = self.value
        return Batched(v.reshape((v.shape[0],) + tuple(shape), copy=copy), self.level)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow or to read its values (item(), numpy(), print, bool()...) inside "
            "vmap. We don't support that: the function is run once for the whole batch.")

    def __repr__(self) -> str:
        return f"<Batched level={self.level} physical shape={tuple(self.value.shape)}>"


# -- running ops on physical storage --------------------------------------------------------

def run(op, *args, **params):
    """Run ``op`` on physical storage (NumPy arrays, Python scalars, or batched storage of
    an outer level, which goes through :func:`apply` again)."""
    if type(op) is str:
        op = OPS[op]
    half = False
    for a in args:
        if type(a) is Batched:
            return apply(op, args, params)
        if type(a) is _ndarray and a.dtype.char in _dt.HALF_CHARS:
            half = True
    if half and op.name not in _HALF_NATIVE and not op.view:
        # float16/bfloat16: computed in float32 and rounded once, as dispatch does
        return _half_forward(op, args, list(args), params)
    if op.promotes:
        args = promote(list(args))
    out = op.forward(*args, **params)
    return out if type(out) is _ndarray else np.asarray(out)


def apply(op, args, params):
    """Run ``op`` on arguments of which some are :class:`Batched`: the innermost level's
    rule on its physical values; the result is batched storage of that level."""
    level = max(a.level for a in args if type(a) is Batched)
    rule = RULES.get(op.name)
    if rule is None:
        raise RuntimeError(
            f"vmap: no batching rule for the op '{op.name}', so it is not supported inside "
            "vmap (there is no per-sample fallback); add a rule to RULES in "
            "eager/func/batching.py")
    if getattr(op, "promotes", False):
        args = _promote_logical(args)
    vals = []
    bat = []
    size = None
    for a in args:
        if type(a) is Batched and a.level == level:
            vals.append(a.value)
            bat.append(True)
            size = a.value.shape[0]
        else:
            vals.append(a)
            bat.append(False)
    out = rule(op, vals, bat, size, dict(params))
    return Batched(out, level)


def _promote_logical(args):
    """PyTorch's promotion on the per-sample (logical) tensors: a batched 0-d tensor is
    still a 0-d tensor, although its physical value has one dimension."""
    tensors = [a for a in args if isinstance(a, (Batched, _ndarray))]
    if all(a.dtype == tensors[0].dtype for a in tensors) and not any(
            a is not None and not isinstance(a, (Batched, _ndarray)) for a in args):
        return args
    rt = _dt.result_type(*args)
    out = []
    for a in args:
        if isinstance(a, (Batched, _ndarray)) and a.dtype != rt:
            a = run("cast", a, dtype=rt)
        out.append(a)
    return out


# -- helpers on physical values -------------------------------------------------------------

def _ndim(a) -> int:
    return a.ndim if hasattr(a, "ndim") else 0


def _logical_ndim(a, b: bool) -> int:
    return a.ndim - 1 if b else _ndim(a)


def _pad(a, r: int):
    """A batched physical value ``(B, *s)`` with ones inserted after the batch dimension
    to a logical rank of ``r`` (so it broadcasts against unbatched operands)."""
    k = r - (a.ndim - 1)
    if k <= 0:
        return a
    return run("reshape", a, shape=(a.shape[0],) + (1,) * k + tuple(a.shape[1:]))


def _expand_batch(a, size: int):
    """An unbatched value made batched: expanded to ``(size, *shape)``."""
    shape = tuple(a.shape)
    return run("expand", run("reshape", a, shape=(1,) + shape), shape=(size,) + shape)


def _shift(dims):
    return tuple(d + 1 for d in dims)


# -- rules: rule(op, vals, bat, size, params) -> physical result, batch dimension first -----

def _elementwise(op, vals, bat, size, params):
    r = max((_logical_ndim(v, b) for v, b in zip(vals, bat) if hasattr(v, "ndim")), default=0)
    vals = [_pad(v, r) if b else v for v, b in zip(vals, bat)]
    return run(op, *vals, **params)


def _unary(op, vals, bat, size, params):
    """Ops acting on each sample alike whatever its shape (clone, contiguous)."""
    return run(op, *vals, **params)


def _dims(op, vals, bat, size, params):
    """One tensor argument, ``dim`` a canonical tuple (reductions)."""
    params["dim"] = _shift(params["dim"])
    return run(op, vals[0], **params)


def _dim(op, vals, bat, size, params):
    """One tensor argument, ``dim`` one non-negative int (softmax, cumsum...).  A per-sample
    0-d tensor (``dim`` 0, as the op takes it outside vmap) runs as one of shape ``(1,)``,
    which the op treats alike."""
    a = vals[0]
    params["dim"] = params["dim"] + 1
    if a.ndim == 1:
        out = run(op, run("reshape", a, shape=(size, 1)), **params)
        return run("reshape", out, shape=(size,))
    return run(op, a, **params)


def _dims_param(name):
    def rule(op, vals, bat, size, params):
        params[name] = _shift(params[name])
        return run(op, vals[0], **params)
    return rule


def _shape_param(op, vals, bat, size, params):
    """reshape/view: the batch size prefixes the target shape."""
    return run("reshape" if op.name == "view" else op, vals[0],
               shape=(vals[0].shape[0],) + tuple(params["shape"]))


def _permute(op, vals, bat, size, params):
    return run(op, vals[0], dims=(0,) + _shift(params["dims"]))


def _expand(op, vals, bat, size, params):
    shape = tuple(params["shape"])
    a = _pad(vals[0], len(shape))
    return run(op, a, shape=(size,) + shape)


def _sum_to(op, vals, bat, size, params):
    a = vals[0]
    shape = tuple(params["shape"])
    extra = a.ndim - 1 - len(shape)
    if extra > 0:
        a = run("sum", a, dim=tuple(range(1, extra + 1)), keepdim=False, dtype=None)
    return run(op, a, shape=(size,) + shape)


def _basic_index(op, vals, bat, size, params):
    return run(op, vals[0], key=((None, None, None),) + tuple(params["key"]))


def _basic_scatter(op, vals, bat, size, params):
    return run(op, vals[0], shape=(size,) + tuple(params["shape"]),
               key=((None, None, None),) + tuple(params["key"]))


def _diagonal(op, vals, bat, size, params):
    """diagonal and its adjoint diagonal_scatter (whose ``shape`` gets the batch size)."""
    params["dim1"] += 1
    params["dim2"] += 1
    if "shape" in params:
        params["shape"] = (size,) + tuple(params["shape"])
    return run(op, vals[0], **params)


def _last_dims(op, vals, bat, size, params):
    """Ops on the last dimensions (tril/triu, batched matrix ops): the batch dimension is
    one more leading dimension."""
    return run(op, *vals, **params)


def _concat(op, vals, bat, size, params):
    vals = [v if b else _expand_batch(v, size) for v, b in zip(vals, bat)]
    params["dim"] += 1
    return run(op, *vals, **params)


def _matmul(op, vals, bat, size, params):
    a, b = vals
    ba, bb = bat
    na, nb = _logical_ndim(a, ba), _logical_ndim(b, bb)
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if na == 1:   # (k) -> (1, k)
        a = _unsqueeze(a, ba, -2)
    if nb == 1:   # (k) -> (k, 1)
        b = _unsqueeze(b, bb, -1)
    r = max(max(na, 2), max(nb, 2))
    if ba:
        a = _pad(a, r)
    if bb:
        b = _pad(b, r)
    out = run("matmul", a, b)
    drop = ()
    if na == 1:
        drop += (out.ndim - 2,)
    if nb == 1:
        drop += (out.ndim - 1,)
    if drop:
        out = run("squeeze", out, dims=tuple(sorted(drop)))
    return out


def _unsqueeze(a, batched, where):
    shape = tuple(a.shape)
    pos = len(shape) + 1 + where
    return run("reshape", a, shape=shape[:pos] + (1,) + shape[pos:])


def _linear(op, vals, bat, size, params):
    x, w, bias = (list(vals) + [None])[:3]
    bx, bw, bb = (list(bat) + [False])[:3]
    if not bw and not bb:
        return run(op, x, w, bias)        # x (B, ..., in): one more leading dimension
    # per-sample weights: x @ w^T (+ bias) through the matmul and add rules
    wt = run("permute", w, dims=(0, 2, 1)) if bw else run("permute", w, dims=(1, 0))
    out = _matmul(OPS["matmul"], [x, wt], [bx, bw], size, {})
    if bias is not None:
        out = _elementwise(OPS["add"], [out, bias], [True, bb], size, {})
    return out


def _einsum(op, vals, bat, size, params):
    lhs, rhs = params["equation"].split("->")
    labels = lhs.split(",")
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                if c not in params["equation"])
    labels = [(free + lab) if b else lab for lab, b in zip(labels, bat)]
    vals = [v for v in vals if v is not None]
    eq = ",".join(labels[:len(vals)]) + "->" + free + rhs
    return run(op, *vals, equation=eq)


def _gather_like(op, vals, bat, size, params):
    """gather/scatter/scatter_add: every tensor argument batched, ``dim`` shifted."""
    vals = [v if b or not hasattr(v, "ndim") else _expand_batch(v, size)
            for v, b in zip(vals, bat)]
    params["dim"] += 1
    return run(op, *vals, **params)


def _masked_fill(op, vals, bat, size, params):
    a, mask, value = vals
    if not bat[2]:
        return _elementwise(op, vals, bat, size, params)
    out = _elementwise(OPS["where"], [mask, value, a], [bat[1], True, bat[0]], size, {})
    return run("cast", out, dtype=a.dtype)


def _along_dim(op, vals, bat, size, params):
    """pick_along_dim/place_along_dim (``max(dim)``'s values and their gradient)."""
    vals = [v if b or not hasattr(v, "ndim") else _expand_batch(v, size)
            for v, b in zip(vals, bat)]
    params["dim"] += 1
    if "shape" in params:
        params["shape"] = (size,) + tuple(params["shape"])
    return run(op, *vals, **params)


def _adjacent(dims) -> bool:
    return list(dims) == list(range(dims[0], dims[0] + len(dims)))


def _sample_index(idx, size):
    """Batched packed index ``(B, k, *S)`` as ``(k + 1, B, *S)``: the sample number first."""
    idx = run("permute", idx, dims=(1, 0) + tuple(range(2, idx.ndim)))
    shape = (1,) + tuple(idx.shape[1:])
    ar = np.broadcast_to(np.arange(size, dtype=idx.dtype).reshape(
        (1, size) + (1,) * (len(shape) - 2)), shape)
    return run("cat", ar, idx, dim=0)


def _index_layout(n, dims, s):
    """The permutations of the general advanced-indexing rule for a per-sample tensor of
    rank ``n`` indexed at ``dims`` by index arrays of rank ``s``: ``into`` moves the indexed
    dimensions to the front, after the batch dimension (physical ``(B, *I, *rest)``); the
    indexed result is then ``(B, *S, *rest)`` and ``out`` takes it to the per-sample
    result's layout (NumPy's and PyTorch's rule: the index dimensions replace adjacent
    indexed dimensions in place, else they come first)."""
    order = tuple(dims) + tuple(d for d in range(n) if d not in dims)
    into = (0,) + _shift(order)
    d0 = dims[0] if _adjacent(dims) else 0
    r = n - len(dims)
    out = ((0,) + tuple(s + 1 + i for i in range(d0)) + tuple(range(1, s + 1))
           + tuple(s + 1 + i for i in range(d0, r)))
    return into, out


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _permute_if(a, perm):
    return a if perm == tuple(range(len(perm))) else run("permute", a, dims=perm)


def _sample_idx(idx, bi, size, dims, shape):
    """The packed index ``(k + 1, B, *S)`` with the sample number first, for a batched or
    unbatched packed index; its bounds checked first against the per-sample ``shape``
    (PyTorch's message: the sample number is no indexed dimension)."""
    if type(idx) is _ndarray:   # (nested vmap: the op checks, counting the sample number)
        check_bounds(np.moveaxis(idx, 0, 1) if bi else idx, dims, shape)
    return _sample_index(idx if bi else _expand_batch(idx, size), size)


def _index(op, vals, bat, size, params):
    """Advanced indexing ``a[..., idx at dims]`` (packed index ``(k, *S)``) and its
    adjoint ``index_put_add``.  An unbatched index at adjacent dimensions indexes the
    batched value at the shifted dimensions; otherwise (a batched index, or dimensions
    apart) the indexed dimensions move to the front and each sample's number joins the
    index (:func:`_index_layout`)."""
    a, idx = vals[0], vals[1]
    bi = bat[1]
    dims = tuple(params["dims"])
    shape = params.get("shape")
    if not bat[0]:
        a = _expand_batch(a, size)
    if not bi and _adjacent(dims):
        params["dims"] = _shift(dims)
        if shape is not None:
            params["shape"] = (size,) + tuple(shape)
        return run(op, a, idx, **params)
    s = idx.ndim - (2 if bi else 1)
    n = len(shape) if shape is not None else a.ndim - 1
    into, out = _index_layout(n, dims, s)
    sidx = _sample_idx(idx, bi, size, dims, tuple(shape) if shape is not None
                       else tuple(a.shape[1:]))
    front = tuple(range(len(dims) + 1))
    if shape is None:     # index: a (B, *shape) -> (B, *result)
        return _permute_if(run(op, run("permute", a, dims=into), sidx, dims=front), out)
    # index_put_add: a is the gradient, (B, *result)
    g = _permute_if(a, _inverse(out))
    pshape = tuple((size,) + tuple(shape))
    placed = run(op, g, sidx, shape=tuple(pshape[p] for p in into), dims=front)
    return run("permute", placed, dims=_inverse(into))


def _set_item(op, vals, bat, size, params):
    """``x[key][idx at dims] = value`` per sample (the functional ``set_item``): the key
    gets the batch dimension's full slice; an unbatched index at adjacent dimensions writes
    at the shifted dimensions, otherwise the indexed region is written as
    :func:`_index` reads it (indexed dimensions first, the sample number in the index) and
    the region goes back in place.  ``value`` is given the per-sample region's shape
    first (PyTorch's broadcasting and errors, on the per-sample shapes)."""
    x, value, idx = vals
    bx, bv, bi = bat
    key, dims = tuple(params["key"]), tuple(params["dims"])
    if not bx:
        x = _expand_batch(x, size)
    full = ((None, None, None),) + key
    region = tuple(run("basic_index", x, key=full).shape[1:])
    if idx is None:
        tshape = region
    else:
        tshape = adv_shape(region, tuple(idx.shape[2:] if bi else idx.shape[1:]), dims)
    if hasattr(value, "ndim"):   # a Python scalar broadcasts as it is
        vs = value_shape(tuple(value.shape[1:] if bv else value.shape), tshape,
                         idx is not None)
        value = run("reshape", value, shape=(size if bv else 1,)
                    + (1,) * (len(tshape) - len(vs)) + vs)
    if idx is None or (not bi and _adjacent(dims)):
        return run(op, x, value, idx, key=full, dims=_shift(dims))
    s = idx.ndim - (2 if bi else 1)
    into, out = _index_layout(len(region), dims, s)
    if hasattr(value, "ndim"):
        value = _permute_if(value, _inverse(out))
    view = run("permute", run("basic_index", x, key=full), dims=into)
    written = run(op, view, value, _sample_idx(idx, bi, size, dims, region), key=(),
                  dims=tuple(range(len(dims) + 1)))
    return run(op, x, run("permute", written, dims=_inverse(into)), None, key=full, dims=())


def _nll_rows(logp, target, size, bat):
    if any(type(v) is Batched for v in (logp, target)):
        raise RuntimeError("vmap: nll_loss inside nested vmap is not supported")
    tshape = tuple(target.shape[1:]) if bat[1] else tuple(target.shape)
    target = np.broadcast_to(target, (size,) + tshape)
    return target.reshape(-1), target.shape[1] if target.ndim > 1 else 1


def _nll_loss(op, vals, bat, size, params):
    """Per-sample ``nll_loss`` (mean or sum over each sample's rows) in one pass."""
    logp, target = vals
    if not bat[0]:
        logp = np.broadcast_to(logp, (size,) + tuple(logp.shape))
    flat_t, n = _nll_rows(logp, target, size, bat)
    c = logp.shape[-1]
    rows, idx, valid = _targets(logp.reshape(size * n, c), flat_t,
                                params.get("ignore_index", -100))
    valid = np.ones(idx.shape, bool) if valid is None else valid
    picked = np.where(valid, logp.reshape(size * n, c)[rows, idx], 0).reshape(size, n)
    total = -picked.sum(axis=1, dtype=logp.dtype)
    if params.get("reduction", "mean") == "sum":
        return total
    count = valid.reshape(size, n).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total / count).astype(logp.dtype)


def _nll_loss_grad(op, vals, bat, size, params):
    g, target = vals
    shape = tuple(params["shape"])
    flat_t, n = _nll_rows(g, target, size, bat)
    out = np.zeros((size * n,) + shape[1:], dtype=g.dtype)
    rows, idx, valid = _targets(out, flat_t, params.get("ignore_index", -100))
    valid = np.ones(idx.shape, bool) if valid is None else valid
    scale = np.ones(size, dtype=g.dtype)
    if params.get("reduction", "mean") != "sum":
        count = valid.reshape(size, n).sum(axis=1)
        scale = np.where(count > 0, 1.0 / np.maximum(count, 1), 0.0).astype(g.dtype)
    gb = np.broadcast_to(np.asarray(g, dtype=g.dtype).reshape(-1), (size,)) * scale
    out[rows, idx] = -np.repeat(gb, n) * valid
    return out.reshape((size,) + shape)


def _merge_batch(op, vals, bat, size, params):
    """Ops whose first dimension holds independent samples (im2col, col2im: ``(N, ...)``):
    the batch is merged into it, ``(B * N, ...)``, and split off again."""
    a = vals[0]
    shape = tuple(a.shape)
    out = run(op, run("reshape", a, shape=(shape[0] * shape[1],) + shape[2:]), **params)
    oshape = tuple(out.shape)
    return run("reshape", out, shape=(shape[0], shape[1]) + oshape[1:])


def _repeat(op, vals, bat, size, params):
    reps = tuple(params["repeats"])
    return run(op, _pad(vals[0], len(reps)), repeats=(1,) + reps)


def _roll(op, vals, bat, size, params):
    a = vals[0]
    if params["dims"] is None:   # over each flattened sample
        shape = tuple(a.shape)
        numel = 1
        for s in shape[1:]:
            numel *= s
        flat = run("reshape", a, shape=(shape[0], numel))
        return run("reshape", run(op, flat, shifts=params["shifts"], dims=(1,)), shape=shape)
    return run(op, a, shifts=params["shifts"], dims=_shift(params["dims"]))


def _pad_adjoint(op, vals, bat, size, params):
    params["shape"] = (size,) + tuple(params["shape"])
    return run(op, vals[0], **params)


def _copy_into(op, vals, bat, size, params):
    """An in-place write (``dispatch.copy_into``) into batched storage."""
    dst, src = vals
    if not bat[0]:
        raise RuntimeError(
            "vmap: in-place operation on a tensor that is not batched, with a batched value: "
            "the result would need a batch dimension the tensor does not have (write into a "
            "batched tensor, or use the out-of-place op)")
    if bat[1]:
        src = _pad(src, dst.ndim - 1)
    copy_into(dst, src)
    return dst


def _arg(op, vals, bat, size, params):
    """argmax/argmin: one dimension, or every dimension (an index into each flattened
    sample)."""
    a = vals[0]
    dim = params["dim"]
    n = a.ndim - 1
    if len(dim) <= 1:
        params["dim"] = _shift(dim)
        return run(op, a, **params)
    numel = 1
    for s in a.shape[1:]:
        numel *= s
    out = run(op, run("reshape", a, shape=(size, numel)), dim=(1,), keepdim=False)
    return run("reshape", out, shape=(size,) + (1,) * n) if params["keepdim"] else out


#: op name -> batching rule ``rule(op, vals, bat, size, params)``: ``vals`` are the
#: arguments (a batched one as its physical value, batch dimension first), ``bat`` says
#: which are batched, ``size`` is the batch size; it returns the physical result
RULES: dict = {
    # shape-preserving per sample
    "clone": _unary, "contiguous": _unary,
    # reductions over a canonical ``dim`` tuple
    "sum": _dims, "mean": _dims, "prod": _dims, "amax": _dims, "amin": _dims,
    "all": _dims, "any": _dims, "logsumexp": _dims, "var": _dims, "std": _dims,
    "norm": _dims, "count_nonzero": _dims, "argmax": _arg, "argmin": _arg,
    # one int ``dim``
    "softmax": _dim, "log_softmax": _dim, "cumsum": _dim, "cumprod": _dim,
    "logcumsumexp": _dim,
    # shapes and views
    "reshape": _shape_param, "view": _shape_param, "reshape_copy": _shape_param,
    "permute": _permute, "squeeze": _dims_param("dims"), "unsqueeze": _dims_param("dims"),
    "flip": _dims_param("dims"), "expand": _expand, "sum_to": _sum_to,
    "repeat": _repeat, "roll": _roll,
    "basic_index": _basic_index, "basic_scatter": _basic_scatter,
    "diagonal": _diagonal, "diagonal_scatter": _diagonal, "tril": _last_dims, "triu": _last_dims,
    "cat": _concat, "stack": _concat,
    "gather": _gather_like, "scatter": _gather_like, "scatter_add": _gather_like,
    "masked_fill": _masked_fill,
    "pick_along_dim": _along_dim, "place_along_dim": _along_dim,
    "index": _index, "index_put_add": _index, "set_item": _set_item,
    "nll_loss": _nll_loss, "nll_loss_grad": _nll_loss_grad,
    # in-place writes into batched storage (``dispatch.copy_into``, not an op)
    "copy_": _copy_into,
    "im2col": _merge_batch, "col2im": _merge_batch, "pad": _last_dims,
    "pad_adjoint": _pad_adjoint,
    # linear algebra
    "matmul": _matmul, "linear": _linear, "einsum": _einsum,
}
# every elementwise op broadcasts with the batch dimension aligned
for _name, _op in OPS.items():
    if _op.elementwise and _name not in RULES:
        RULES[_name] = _elementwise


# -- hooks: dispatch sends ops on batched storage here; a batched tensor's device is the CPU

class _BatchedStorageDevice:
    """What :func:`runtime.device.of` answers for batched storage: the CPU's device type
    (``tensor.device`` is ``cpu``), with reads of the values refused (see
    :meth:`Batched.__array__`)."""

    type = "cpu"

    def to_host(self, storage):
        return np.asarray(storage)

    def from_host(self, array):
        return array


def final_grad(g, into=None):
    """A gradient leaving the autograd engine with the batch dimension of a vmap that has
    returned (a tensor used unbatched inside it, differentiated from outside): summed over
    that dimension, differentiably.  A per-sample gradient of a running vmap cannot go
    into the ``.grad`` of a tensor without that batch dimension (``backward()`` inside
    vmap): an error."""
    d = g._data
    while type(d) is Batched:
        stale = d
        while type(stale) is Batched and stale.level in ACTIVE:
            stale = stale.value
        if type(stale) is not Batched:
            break
        g = dispatch(RemoveBatchDim, g, level=stale.level, out_dim=0, size=stale.batch_size)
        g = g.sum(0)
        d = g._data
    if into is not None and type(d) is Batched and not _has_level(into._data, d.level):
        raise RuntimeError(
            "vmap: backward() inside vmap would accumulate per-sample gradients into the .grad "
            "of a tensor that is not batched; use eager.func.grad (or autograd.grad) inside "
            "vmap to get per-sample gradients")
    return g


def _has_level(storage, level) -> bool:
    while type(storage) is Batched:
        if storage.level == level:
            return True
        storage = storage.value
    return False


# -- the ops that move a dimension into and out of batched storage ------------------------

class AddBatchDim(Op):
    """A tensor's dimension ``in_dim`` made the batch dimension of vmap ``level``."""
    any_device = True   # takes and returns storage of any kind (batched storage)
    name = "add_batch_dim"

    def forward(a, in_dim, level):
        if type(a) is Batched and a.level > level:
            # batched at a newer vmap (a gradient flowing back into a returned vmap from
            # one still running): add this level under it, keeping the newest outermost
            return Batched(AddBatchDim.forward(a.value, in_dim + 1, level), a.level)
        if in_dim:
            n = a.ndim
            perm = (in_dim,) + tuple(d for d in range(n) if d != in_dim)
            a = run("permute", a, dims=perm)
        return Batched(a, level)

    def backward(F, g, saved, node):
        p = node.params
        size = node.shapes[0][p["in_dim"]]
        return (F.remove_batch_dim(g, level=p["level"], out_dim=p["in_dim"], size=size),)


class RemoveBatchDim(Op):
    """A batched tensor of vmap ``level`` as a plain one, the batch dimension at
    ``out_dim``; an unbatched tensor is expanded to ``size`` along ``out_dim``."""
    any_device = True
    name = "remove_batch_dim"

    def forward(a, level, out_dim, size):
        if type(a) is Batched and a.level > level:   # under a newer level (see AddBatchDim)
            return Batched(RemoveBatchDim.forward(a.value, level, out_dim + 1, size),
                           a.level)
        if type(a) is Batched and a.level == level:
            v = a.value
        else:
            shape = tuple(a.shape)
            v = run("expand", run("reshape", a, shape=(1,) + shape), shape=(size,) + shape)
        if out_dim:
            n = v.ndim
            rest = list(range(1, n))
            perm = tuple(rest[:out_dim]) + (0,) + tuple(rest[out_dim:])
            v = run("permute", v, dims=perm)
        return v

    def backward(F, g, saved, node):
        p = node.params
        return (F.add_batch_dim(g, in_dim=p["out_dim"], level=p["level"]),)



register_final_grad(final_grad)
register_storage_rule(Batched, apply)
runtime_device.register_storage(Batched, _BatchedStorageDevice())
