"""The CUDA implementations of the ops, registered in ``eager.dispatch.IMPLS["cuda"]``.

Elementwise ops need no code here: any op with a scalar expression runs as a kernel
made by the compiler's code generator for a one-op group (the op's ``scalar`` in the
grid-stride template of :mod:`runtime.cuda.templates`), cached per pattern.  Python
scalar arguments are kernel arguments (weak scalars, promoted like literals), so a new
learning rate does not compile a new kernel.  Reductions use the block-reduction
template; matmul and linear the tiled GEMM; shape ops are strided views; softmax and
log-softmax are compositions of these; random ops draw from the counter-based
generator.  An op with no entry raises ``NotImplementedError`` naming op and device.
"""

from __future__ import annotations

import math

import numpy as np

from runtime import device as _device
from runtime.cuda import kernels as K
from runtime.cuda import templates
from runtime.cuda.array import CudaArray

from .. import dtypes as _dt
from ..dispatch import IMPLS, _CopyInto
from ..ops import OPS, scalarexpr
from ..ops import elementwise as E
from ..ops import factory as Fa
from ..ops import index as I
from ..ops import linalg as L
from ..ops import loss as Lo
from ..ops import reduce as R
from ..ops import shape as S
from ..ops.index import BasicIndex
from ..random import CUDA_GENERATOR as GENERATOR

DEV = _device.get("cuda")
TABLE: dict = {}
IMPLS["cuda"] = TABLE

_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)
_BOOL = np.dtype(np.bool_)


# -- elementwise: one-op kernels from the op's scalar expression -------------------------

class _Val:
    """A kernel operand seen by the scalar-expression driver (id, shape, dtype, weak)."""

    __slots__ = ("dtype", "id", "shape", "weak")

    def __init__(self, id, shape, dtype, weak=False):
        self.id, self.shape, self.dtype, self.weak = id, tuple(shape), np.dtype(dtype), weak

    @property
    def ndim(self) -> int:
        return len(self.shape)


class _Node:
    __slots__ = ("inputs", "op", "out", "params")

    def __init__(self, op, inputs, params, out):
        self.op, self.inputs, self.params, self.out = op, inputs, params, out


_KERNELS: dict = {}


def _scalar_dtype(x) -> np.dtype:
    return _BOOL if isinstance(x, bool) else (_I64 if isinstance(x, int) else _F64)


def broadcast_shape(shapes) -> tuple:
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


def run_elementwise(op, args, params, out=None):
    """Run elementwise ``op`` on CUDA arrays and Python scalars; ``out`` (optional) is a
    view to write into (an in-place write), else a fresh contiguous array is returned."""
    literal = op is E.Pow   # x ** 2 is a square, as NumPy: exponents stay literals
    inputs, operands = [], []
    for a in args:
        if isinstance(a, CudaArray):
            inputs.append(_Val(len(operands), a.shape, a.dtype))
            operands.append(a)
        elif literal or isinstance(a, bool) or a is None:
            inputs.append(a)
        else:
            inputs.append(_Val(len(operands), (), _scalar_dtype(a), weak=True))
            operands.append(a)
    shape = out.shape if out is not None else \
        broadcast_shape([a.shape for a in operands if isinstance(a, CudaArray)])
    out_dtype = np.dtype(op.out_dtype(*inputs, **params) if out is None else out.dtype)
    key = (op, repr(sorted(params.items())), tuple(
        ("lit", repr(v)) if not isinstance(v, _Val) else (v.dtype.char, v.weak) for v in inputs),
        out_dtype.char)
    core = _CORES.get(key)
    if core is None:
        node = _Node(op, inputs, params, _Val(-1, shape, out_dtype))
        names = {v.id: f"a{v.id}" for v in inputs if isinstance(v, _Val)}
        try:
            core = scalarexpr.emit(node, names, "t0", DEV.math)
        except scalarexpr.Unsupported:
            dts = [str(v.dtype) for v in inputs if isinstance(v, _Val)]
            raise NotImplementedError(f"Could not run '{op.name}' with arguments from the "
                                      f"'cuda' device for dtypes {dts} and params "
                                      f"{params}") from None
        core = _CORES[key] = (tuple(core), f"{op.name}: " + ", ".join(
            f"a{v.id}: {v.dtype}" for v in inputs if isinstance(v, _Val)))
    lines, doc = core
    return run_core(lines, ["t0"], operands, [out_dtype], shape, doc,
                    outs=None if out is None else [out])[0]


_CORES: dict = {}


def run_core(core, out_vars, operands, out_dtypes, shape, doc="", outs=None) -> list:
    """Evaluate a scalar core (lines reading ``a0, a1, ..``) at every element of ``shape``
    on the GPU: ``operands`` are CUDA arrays (broadcast to ``shape``) or Python scalars
    (weak scalar arguments); returns one new contiguous array per ``out_vars`` entry (or
    writes into ``outs``).  One kernel per (core, operand layout), cached."""
    shape = tuple(shape)
    flat_in, scalars, kargs = [], [], []
    for a in operands:
        if isinstance(a, CudaArray):
            flat = a.shape == shape and a.is_contiguous
            kargs += [a.base, a.offset] + ([] if flat else [a.broadcast_to(shape).estrides])
            flat_in.append(flat)
            scalars.append(False)
        else:
            kargs.append(a)
            flat_in.append(True)
            scalars.append(True)
    if outs is None:
        outs = [CudaArray.empty(shape, dt) for dt in out_dtypes]
    flat_out = [o.is_contiguous for o in outs]
    for o, flat in zip(outs, flat_out):
        kargs += [o.base, o.offset] + ([] if flat else [o.estrides])
    key = (core, tuple(out_vars), tuple(flat_in), tuple(scalars), tuple(flat_out), len(shape))
    mod = _KERNELS.get(key)
    if mod is None:
        source = templates.elementwise_source(list(core), list(out_vars), flat_in, flat_out,
                                              len(shape), doc, scalars=scalars)
        mod = _KERNELS[key] = DEV.load(source)
    n = int(np.prod(shape)) if shape else 1
    if n:
        blocks, threads = DEV.grid(n)
        DEV.launch(mod, "kernel", blocks, threads, kargs + [shape, n])
    return outs


def _elementwise_impl(op):
    def impl(*args, **params):
        return run_elementwise(op, args, params)
    impl.__name__ = f"{op.name}_cuda"
    return impl


for _op in OPS.values():
    if _op.elementwise and _op.scalar is not None:
        TABLE[_op] = _elementwise_impl(_op)


def copy_into(dst: CudaArray, src) -> None:
    """``dst[...] = src`` (broadcast, cast as ``astype``): in-place writes."""
    if isinstance(src, CudaArray):
        run_elementwise(E.Cast, [src], {"dtype": dst.dtype}, out=dst)
    else:
        run_elementwise(S.Expand, [CudaArray.from_host(np.asarray(src, dst.dtype))],
                        {"shape": dst.shape}, out=dst)


TABLE[_CopyInto] = copy_into


def contiguous(a: CudaArray) -> CudaArray:
    if a.is_contiguous:
        return a
    out = CudaArray.empty(a.shape, a.dtype)
    run_elementwise(S.Expand, [a], {"shape": a.shape}, out=out)
    return out


def clone(a: CudaArray) -> CudaArray:
    out = CudaArray.empty(a.shape, a.dtype)
    run_elementwise(S.Expand, [a], {"shape": a.shape}, out=out)
    return out


# -- shape ops: strided views ----------------------------------------------------------

def _reshape(a, shape):
    try:
        return a.reshape(shape)
    except ValueError:
        return contiguous(a).reshape(shape)


def _view(a, shape):
    try:
        return a.reshape(shape)
    except ValueError:
        raise RuntimeError(f"{S._VIEW_ERROR} (shape {list(a.shape)} -> {list(shape)})") from None


def _set_item(x, value, idx, key, dims, out=None):
    """``x`` with ``x[key] = value`` (basic keys); ``out``: write into that array instead
    of a copy of ``x`` (the in-place ``__setitem__``)."""
    if idx is not None:
        raise NotImplementedError("Could not run 'set_item' with arguments from the 'cuda' "
                                  "device: advanced (tensor) indices have no cuda kernel yet")
    out = clone(x) if out is None else out
    view = out.basic_index(key)
    value_shape = getattr(value, "shape", ())
    I.value_shape(value_shape, view.shape, False)   # PyTorch's error when it cannot broadcast
    if isinstance(value, CudaArray) and len(value.shape) > len(view.shape):
        value = value.reshape(value.shape[len(value.shape) - len(view.shape):])
    copy_into(view, value)
    return out


def _basic_scatter(g, shape, key):
    out = _full(shape, 0, g.dtype)
    copy_into(out.basic_index(key), g)
    return out


TABLE.update({
    I.SetItem: _set_item,
    I.BasicScatter: _basic_scatter,
    S.Reshape: lambda a, shape: _reshape(a, shape),
    S.ReshapeCopy: lambda a, shape: clone(a).reshape(shape),
    S.View: _view,
    S.Expand: lambda a, shape: a.broadcast_to(shape),
    S.Permute: lambda a, dims: a.transpose(dims),
    S.Squeeze: lambda a, dims: a.squeeze(dims),
    S.Unsqueeze: lambda a, dims: a.unsqueeze(dims),
    S.Contiguous: lambda a: clone(a) if not a.is_contiguous else clone(a),
    S.Clone: clone,
    BasicIndex: lambda a, key: a.basic_index(key),
})


# -- reductions: one block per output element --------------------------------------------

_ACC = {"f": ("float64", "0.0"), "i": ("int64", "0"), "u": ("int64", "0"), "b": ("int64", "0")}


def _reduction_spec(kind: str, src: np.dtype, out: np.dtype):
    """(accumulator type, init, combine, final) as :func:`runtime.cuda.templates.reduce_source`
    takes them: sums in float64/int64, max/min NaN-propagating like NumPy."""
    if kind in ("sum", "mean"):
        acc, init = _ACC[src.kind]
        x = "np.float64({x})" if src.kind == "f" else "np.int64({x})"
        final = "{acc} / {count}" if kind == "mean" else "{acc}"
        final = scalarexpr.cast(f"({final})", np.dtype(acc), out)
        return acc, init, "{acc} + " + x, final
    big = kind == "amax"
    if src.kind == "f":
        init = scalarexpr.literal(-math.inf if big else math.inf, src)
        cmp = ">" if big else "<"
        return src.name, init, f"({{acc}} if ({{acc}} {cmp} {{x}} or {{acc}} != {{acc}}) " \
                               f"else {{x}})", "{acc}"
    info = np.iinfo(src) if src.kind != "b" else None
    init = scalarexpr.literal((info.min if big else info.max) if info else (not big), src)
    cmp = ">" if big else "<"
    return ("int64" if src.kind != "b" else "bool_"), init, \
        f"({{x}} if {{x}} {cmp} {{acc}} else {{acc}})", scalarexpr.cast("{acc}", _I64, out) \
        if src.kind != "b" else "{acc}"


def reduce(kind: str, a: CudaArray, dims: tuple, keepdim: bool, out_dtype) -> CudaArray:
    """``kind`` (sum, mean, amax, amin) of ``a`` over ``dims``."""
    kept = [d for d in range(a.ndim) if d not in dims]
    view = a.transpose(kept + list(dims))
    out_shape = tuple(1 if d in dims else a.shape[d] for d in range(a.ndim)) if keepdim \
        else tuple(a.shape[d] for d in kept)
    if kind in ("amax", "amin") and not all(a.shape[d] for d in dims):
        raise RuntimeError(f"{kind}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return run_reduce_core((), "a0", [view], view.shape, len(dims), kind, a.dtype, out_dtype,
                           out_shape, f"{kind} of {a.dtype}")


def run_reduce_core(core, value, operands, loop_shape, n_reduced, kind, src_dtype, out_dtype,
                    out_shape, doc="") -> CudaArray:
    """Reduce the core's ``value`` (of ``src_dtype``) over the last ``n_reduced``
    dimensions of ``loop_shape`` with ``kind``: one block per kept element."""
    loop_shape = tuple(loop_shape)
    out_dtype, src_dtype = np.dtype(out_dtype), np.dtype(src_dtype)
    split = len(loop_shape) - n_reduced
    rows = int(np.prod(loop_shape[:split])) if split else 1
    m = int(np.prod(loop_shape[split:])) if n_reduced else 1
    flat_in, kargs = [], []
    for x in operands:
        flat = x.shape == loop_shape and x.is_contiguous
        kargs += [x.base, x.offset] + ([] if flat else [x.broadcast_to(loop_shape).estrides])
        flat_in.append(flat)
    key = ("reduce", tuple(core), value, kind, src_dtype.char, out_dtype.char,
           len(loop_shape), tuple(flat_in))
    mod = _KERNELS.get(key)
    if mod is None:
        acc, init, combine, final = _reduction_spec(kind, src_dtype, out_dtype)
        source = templates.reduce_source(list(core), value, flat_in, len(loop_shape), init,
                                         combine, final, acc, DEV.reduce_threads, doc=doc)
        mod = _KERNELS[key] = DEV.load(source)
    out = CudaArray.empty((rows,), out_dtype)
    if rows:
        DEV.launch(mod, "kernel", min(rows, DEV.max_blocks), DEV.reduce_threads,
                   kargs + [out.base, loop_shape or (1,), rows, m])
    return out.reshape(out_shape)


def _sum(a, dim, keepdim=False, dtype=None):
    out = R._int_acc(a, dtype) if dtype is None and a.dtype.kind in "biu" else dtype
    return reduce("sum", a, dim, keepdim, a.dtype if out is None else out)


def _mean(a, dim, keepdim=False, dtype=None):
    return reduce("mean", a, dim, keepdim, a.dtype if dtype is None else dtype)


def _sum_to(a, shape):
    shape = tuple(shape)
    if a.shape == shape:
        return a
    lead = a.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and a.shape[i + lead] != 1)
    return _sum(a, dims, True).reshape(shape) if dims else a.reshape(shape)


TABLE.update({
    R.Sum: _sum,
    R.Mean: _mean,
    R.Amax: lambda a, dim, keepdim=False: reduce("amax", a, dim, keepdim, a.dtype),
    R.Amin: lambda a, dim, keepdim=False: reduce("amin", a, dim, keepdim, a.dtype),
    S.SumTo: _sum_to,
})


def _shifted(a, dim):
    """``a - max`` along ``dim`` with a -inf maximum taken as 0 (as eager's
    ``_softmax_shifted``: a row holding +inf or NaN is all NaN, as in PyTorch)."""
    m = reduce("amax", a, (dim,), True, a.dtype)
    m = run_elementwise(E.Where, [run_elementwise(E.Eq, [m, -np.inf], {}), 0.0, m], {})
    return run_elementwise(E.Sub, [a, m], {})


def _softmax(a, dim):
    if a.ndim == 0:
        return run_elementwise(E.Add, [run_elementwise(E.Mul, [a, 0], {}), 1], {})
    e = run_elementwise(E.Exp, [_shifted(a, dim)], {})
    return run_elementwise(E.Div, [e, reduce("sum", e, (dim,), True, e.dtype)], {})


def _log_softmax(a, dim):
    if a.ndim == 0:
        return run_elementwise(E.Mul, [a, 0], {})
    z = _shifted(a, dim)
    s = reduce("sum", run_elementwise(E.Exp, [z], {}), (dim,), True, a.dtype)
    return run_elementwise(E.Sub, [z, run_elementwise(E.Log, [s], {})], {})


TABLE.update({R.Softmax: _softmax, R.LogSoftmax: _log_softmax})


# -- matmul and linear: the tiled GEMM ---------------------------------------------------

def _gemm(a3, b3, bias=None):
    """``a3 @ b3`` for (B|1, M, K) and (B|1, K, N) views (+ bias over N): (B, M, N)."""
    dt = a3.dtype
    if dt.kind != "f" or b3.dtype != dt:
        raise NotImplementedError(f"Could not run 'matmul' with arguments from the 'cuda' "
                                  f"device for dtypes {a3.dtype} and {b3.dtype}")
    B = max(a3.shape[0], b3.shape[0])
    M, Kd, N = a3.shape[1], a3.shape[2], b3.shape[2]
    sa = (0 if a3.shape[0] == 1 else a3.estrides[0],) + a3.estrides[1:]
    sb = (0 if b3.shape[0] == 1 else b3.estrides[0],) + b3.estrides[1:]
    key = ("gemm", dt.char, bias is not None)
    mod = _KERNELS.get(key)
    if mod is None:
        mod = _KERNELS[key] = DEV.load(K.gemm_source(DEV.tile, dt.name, bias is not None))
    out = CudaArray.empty((B, M, N), dt)
    t = DEV.tile
    args = [a3.base, a3.offset, sa, b3.base, b3.offset, sb, out.base]
    if bias is not None:
        args += [bias.base, bias.offset, bias.estrides[0] if bias.ndim else 0]
    if B and M and N:
        DEV.launch(mod, "kernel", (-(-N // t), -(-M // t), B), (t, t), args + [M, N, Kd])
    return out


def _matmul(a, b):
    L.check_same_dtype(a, b)
    na, nb = a.ndim, b.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if a.shape[-1] != b.shape[-2 if nb >= 2 else 0]:
        raise L.matmul_shape_error("matmul", a.shape, b.shape)
    a2 = a.unsqueeze((0,)) if na == 1 else a
    b2 = b.unsqueeze((1,)) if nb == 1 else b
    batch = L._batch_shape("matmul", a2.shape, b2.shape) if max(na, nb) > 2 else ()
    bn = int(np.prod(batch)) if batch else 1

    def as3(x):
        if x.ndim == 2:
            return x.unsqueeze((0,))
        xb = x.broadcast_to(batch + x.shape[-2:]) if x.shape[:-2] != batch else x
        if xb.shape[:-2] and int(np.prod(xb.shape[:-2])) != 1 and not _batch_flat(xb):
            xb = contiguous(xb)
        return _reshape(xb, (int(np.prod(xb.shape[:-2])),) + xb.shape[-2:])

    a3, b3 = as3(a2), as3(b2)
    if a3.shape[0] == 1 and bn > 1:
        a3 = a3.broadcast_to((bn,) + a3.shape[1:])
    out = _gemm(a3, b3)
    shape = batch + out.shape[1:]
    if na == 1:
        shape = shape[:-2] + shape[-1:]
    if nb == 1:
        shape = shape[:-1]
    return out.reshape(shape)


def _batch_flat(x) -> bool:
    """Whether the batch dimensions of ``x`` merge into one stride."""
    st, sh = x.estrides[:-2], x.shape[:-2]
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(len(st) - 1))


def _linear(x, weight, bias=None):
    L.check_same_dtype(x, weight)
    if x.ndim == 0 or weight.ndim != 2 or x.shape[-1] != weight.shape[1]:
        return L.Linear.forward(np.empty(x.shape, x.dtype), np.empty(weight.shape, x.dtype))
    x2 = _reshape(x, (int(np.prod(x.shape[:-1])), x.shape[-1])) if x.ndim != 1 \
        else x.unsqueeze((0,))
    out = _gemm(x2.unsqueeze((0,)), weight.transpose((1, 0)).unsqueeze((0,)), bias)
    return out.reshape(x.shape[:-1] + weight.shape[:1])


TABLE.update({L.Matmul: _matmul, L.Linear: _linear})


# -- loss ----------------------------------------------------------------------------------

def _nll_module():
    mod = _KERNELS.get("nll")
    if mod is None:
        mod = _KERNELS["nll"] = DEV.load(K.nll_source(DEV.reduce_threads))
    return mod


def _nll_loss(logp, target, ignore_index=-100, reduction="mean"):
    out = CudaArray.empty((), logp.dtype)
    DEV.launch(_nll_module(), "loss", 1, DEV.reduce_threads,
               [logp.base, logp.offset, logp.estrides, target.base, target.offset,
                target.estrides[0], logp.shape[0], int(ignore_index), reduction == "mean",
                out.base])
    return out


def _nll_loss_grad(g, target, shape, ignore_index=-100, reduction="mean"):
    out = _full(shape, 0, g.dtype)
    DEV.launch(_nll_module(), "grad", 1, DEV.reduce_threads,
               [g.base, g.offset, target.base, target.offset, target.estrides[0], shape[0],
                shape[1], int(ignore_index), reduction == "mean", out.base])
    return out


TABLE.update({Lo.NllLoss: _nll_loss, Lo.NllLossGrad: _nll_loss_grad})


# -- factories and random numbers ------------------------------------------------------------

def _full(shape, value, dtype, device=None):
    out = CudaArray.empty(shape, dtype)
    if out.size:
        copy_into(out, value)
    return out


def _on_host(op):
    def impl(*args, device=None, **params):
        return CudaArray.from_host(op.forward(*args, **params))
    return impl


def _no_cpu_generator(generator) -> None:
    if generator is not None:
        raise RuntimeError("Expected a 'cuda' device type for generator but found 'cpu' (CUDA "
                           "random ops draw from eager.cuda's generator: eager.cuda.manual_seed)")


def _random(name, *extra):
    def impl(shape, dtype, device=None, generator=None, **params):
        _no_cpu_generator(generator)
        out = CudaArray.empty(shape, dtype)
        n = out.size
        seed, offset = GENERATOR.take(n)
        if n:
            blocks, threads = DEV.grid(n)
            DEV.launch(_random_module(), name, blocks, threads,
                       [out.base, n, seed, offset] + [params[k] if k in params else k
                                                      for k in extra])
        return out
    return impl


def _random_module():
    mod = _KERNELS.get("random")
    if mod is None:
        mod = _KERNELS["random"] = DEV.load(K.RANDOM_SOURCE)
    return mod


def _randint(low, high, shape, dtype, device=None, generator=None):
    _no_cpu_generator(generator)
    out = CudaArray.empty(shape, dtype)
    n = out.size
    seed, offset = GENERATOR.take(n)
    if n:
        blocks, threads = DEV.grid(n)
        DEV.launch(_random_module(), "randint", blocks, threads,
                   [out.base, n, seed, offset, int(low), float(high - low)])
    return out


def _bernoulli_tensor(probs, generator=None):
    """1 where a uniform draw falls below ``probs`` (PyTorch's error for p outside [0, 1],
    read back from a device flag)."""
    _no_cpu_generator(generator)
    p = contiguous(probs)
    out = CudaArray.empty(p.shape, p.dtype)
    n = out.size
    if not n:
        return out
    seed, offset = GENERATOR.take(n)
    bad = CudaArray.from_host(np.zeros(1, np.int32))
    blocks, threads = DEV.grid(n)
    DEV.launch(_random_module(), "bernoulli_tensor", blocks, threads,
               [out.base[out.offset:out.offset + n], p.base[p.offset:p.offset + n], n, seed,
                offset, bad.base])
    if bad.to_host()[0]:
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return out


def _randperm(n, dtype, device=None, generator=None):
    """A random permutation: each index ranked by a 64-bit random key (ties by index)."""
    _no_cpu_generator(generator)
    out = CudaArray.empty((n,), dtype)
    if not n:
        return out
    seed, offset = GENERATOR.take(n)
    keys = CudaArray.empty((n,), np.uint64)
    blocks, threads = DEV.grid(n)
    mod = _random_module()
    DEV.launch(mod, "random_keys", blocks, threads, [keys.base, n, seed, offset])
    DEV.launch(mod, "rank_by_keys", blocks, threads, [out.base, keys.base, n])
    return out


TABLE.update({
    Fa.BernoulliTensor: _bernoulli_tensor,
    Fa.Randperm: _randperm,
    Fa.Full: _full,
    Fa.Arange: _on_host(Fa.Arange),
    Fa.Linspace: _on_host(Fa.Linspace),
    Fa.Eye: _on_host(Fa.Eye),
    Fa.Rand: _random("rand"),
    Fa.Randn: _random("randn"),
    Fa.Bernoulli: _random("bernoulli", "p"),
    Fa.Randint: _randint,
})


# -- joins, masks, variance, log-sum-exp, gathers and arg-reductions -------------------------

def _cat(*arrays, dim):
    dt = np.dtype(_dt.result_type(*arrays))
    shape = list(arrays[0].shape)
    shape[dim] = sum(a.shape[dim] for a in arrays)
    out = CudaArray.empty(tuple(shape), dt)
    off = 0
    for a in arrays:
        n = a.shape[dim]
        key = tuple((off, off + n, 1) if d == dim else (0, s, 1) for d, s in enumerate(shape))
        if a.size:
            copy_into(out.basic_index(key), a)
        off += n
    return out


def _stack(*arrays, dim):
    return _cat(*[a.unsqueeze((dim,)) for a in arrays], dim=dim)


def _masked_fill(a, mask, value):
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype}")
    out = CudaArray.empty(broadcast_shape([a.shape, mask.shape]), a.dtype)
    run_elementwise(E.Where, [mask, value, a], {}, out=out)
    return out


def _var(a, dim, correction=1, keepdim=False):
    n = int(np.prod([a.shape[d] for d in dim])) if dim else 1
    mean = reduce("mean", a, dim, True, a.dtype)
    dev = run_elementwise(E.Sub, [a, mean], {})
    s = reduce("sum", run_elementwise(E.Mul, [dev, dev], {}), dim, keepdim, a.dtype)
    return run_elementwise(E.Div, [s, float(max(n - correction, 0))], {})


def _logsumexp(a, dim, keepdim=False):
    a = a if a.dtype.kind == "f" else run_elementwise(E.Cast, [a], {"dtype": np.float32})
    m = reduce("amax", a, dim, True, a.dtype)
    m = run_elementwise(E.Where, [run_elementwise(E.Isfinite, [m], {}), m, 0.0], {})
    e = run_elementwise(E.Exp, [run_elementwise(E.Sub, [a, m], {})], {})
    out = run_elementwise(E.Add, [run_elementwise(E.Log, [reduce("sum", e, dim, True,
                                                                  a.dtype)], {}), m], {})
    return out if keepdim else out.squeeze(dim)


def _gather(a, index, dim):
    if index.ndim != a.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    out = CudaArray.empty(index.shape, a.dtype)
    n = out.size
    if n:
        mod = _KERNELS.get("gather")
        if mod is None:
            mod = _KERNELS["gather"] = DEV.load(K.GATHER_SOURCE)
        blocks, threads = DEV.grid(n)
        DEV.launch(mod, "gather", blocks, threads,
                   [a.base, a.offset, a.estrides or (0,), a.shape[dim] if a.ndim else 1,
                    index.base, index.offset, index.estrides or (0,), out.base,
                    index.shape or (1,), n, dim])
    return out


def _pick_along_dim(a, idx, dim, keepdim=True):
    if a.ndim == 0:
        return clone(a)
    out = _gather(a, idx, dim)
    return out if keepdim else out.squeeze((dim,))


def _argreduce(largest):
    def impl(a, dim, keepdim=False):
        if len(dim) == 1 and a.ndim >= 1:
            d = dim[0]
            kept = [k for k in range(a.ndim) if k != d]
            rows_shape = tuple(a.shape[k] for k in kept)
            x = contiguous(a.transpose(kept + [d]))
            m = a.shape[d]
            out_shape = tuple(1 if k == d else a.shape[k] for k in range(a.ndim)) if keepdim \
                else rows_shape
        else:   # every dimension: an index into the flattened input
            x = contiguous(a)
            m = a.size
            out_shape = (1,) * a.ndim if keepdim else ()
        if m == 0:
            raise RuntimeError(f"{'argmax' if largest else 'argmin'}(): Expected reduction "
                               "dim to be specified for input.numel() == 0.")
        rows = x.size // m
        key = ("arg", largest, a.dtype.char)
        mod = _KERNELS.get(key)
        if mod is None:
            dtype = "float64" if a.dtype.kind == "f" else "int64"
            mod = _KERNELS[key] = DEV.load(K.argreduce_source(DEV.reduce_threads, dtype,
                                                              largest))
        out = CudaArray.empty((rows,), _I64)
        # compared in float64 / int64: one kernel per direction and kind
        src = run_elementwise(E.Cast, [x], {"dtype": _F64 if a.dtype.kind == "f" else _I64})
        DEV.launch(mod, "kernel", min(rows, DEV.max_blocks), DEV.reduce_threads,
                   [src.base, out.base, rows, m])
        return out.reshape(out_shape)
    return impl


def _scatter_into(out, index, src, dim, add):
    """Write (or add) ``src`` at ``index`` along ``dim`` into the contiguous ``out``."""
    n = index.size
    if not n:
        return out
    if not isinstance(src, CudaArray):
        src = CudaArray.from_host(np.asarray(src, out.dtype)).broadcast_to(index.shape)
    elif src.dtype != out.dtype:
        src = run_elementwise(E.Cast, [src], {"dtype": out.dtype})
    mod = _KERNELS.get("scatter")
    if mod is None:
        mod = _KERNELS["scatter"] = DEV.load(K.SCATTER_SOURCE)
    blocks, threads = DEV.grid(n)
    DEV.launch(mod, "scatter", blocks, threads,
               [out.base, out.estrides or (0,), out.shape[dim] if out.ndim else 1,
                index.base, index.offset, index.estrides or (0,), src.base, src.offset,
                src.estrides or (0,), index.shape or (1,), n, dim, add])
    return out


def _scatter(add):
    def impl(a, index, src, dim):
        if index.ndim != a.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as "
                               "self tensor")
        return _scatter_into(clone(a), index, src, dim, add)
    return impl


def _place_along_dim(g, idx, dim, shape):
    out = _full(shape, 0, g.dtype)
    if out.ndim == 0:
        copy_into(out, g)
        return out
    if g.ndim != idx.ndim:
        g = g.unsqueeze((dim,))
    return _scatter_into(out, idx, g, dim, False)


TABLE.update({
    I.ScatterAdd: _scatter(True),
    I.Scatter: _scatter(False),
    R.PlaceAlongDim: _place_along_dim,
    S.Cat: _cat,
    S.Stack: _stack,
    I.MaskedFill: _masked_fill,
    I.Gather: _gather,
    R.PickAlongDim: _pick_along_dim,
    R.Var: _var,
    R.Std: lambda a, dim, correction=1, keepdim=False: run_elementwise(
        E.Sqrt, [_var(a, dim, correction, keepdim)], {}),
    R.Logsumexp: _logsumexp,
    R.Argmax: _argreduce(True),
    R.Argmin: _argreduce(False),
})
