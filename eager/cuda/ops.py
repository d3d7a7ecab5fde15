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

import collections
import math

import numpy as np

from runtime import device as _device
from runtime.cuda import kernels as K
from runtime.cuda import templates
from runtime.cuda.array import CudaArray, storage_dtype

from .. import dtypes as _dt
from ..dispatch import (
    _HALF_NATIVE,
    _NO_HALF,
    _SAME_DTYPE,
    _SCALAR_OPMATH,
    IMPLS,
    _CopyInto,
    _half_forward,
    _round_scalar,
    promote,
)
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
    """``dst[...] = src`` (broadcast, cast as ``astype``): in-place writes (float16/bfloat16
    through the conversion kernels, then a copy of the bits)."""
    if dst.dtype.char in _HALF:
        if isinstance(src, CudaArray):
            src = src if src.dtype == dst.dtype else _cast(src, dst.dtype)
        else:
            src = CudaArray.from_host(np.asarray(src, dst.dtype))
        run_elementwise(S.Expand, [_bits(src)], {"shape": dst.shape}, out=_bits(dst))
        return
    if isinstance(src, CudaArray) and src.dtype.char in _HALF:
        src = _cast(src, _F32)
    if isinstance(src, CudaArray):
        run_elementwise(E.Cast, [src], {"dtype": dst.dtype}, out=dst)
    else:
        run_elementwise(S.Expand, [CudaArray.from_host(np.asarray(src, dst.dtype))],
                        {"shape": dst.shape}, out=dst)


TABLE[_CopyInto] = copy_into


def contiguous(a: CudaArray) -> CudaArray:
    return a if a.is_contiguous else clone(a)


def clone(a: CudaArray) -> CudaArray:
    """A contiguous copy (of the bits, for float16/bfloat16)."""
    if a.dtype.char in _HALF:
        return _as_half(clone(_bits(a)), a.dtype)
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


def _basic_scatter(g, shape, key):
    out = _full(shape, 0, g.dtype)
    copy_into(out.basic_index(key), g)
    return out


TABLE.update({
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
    if kind == "prod":   # float64 / int64 (wrapping, as NumPy's int64 product)
        acc = _ACC[src.kind][0]
        x = "np.float64({x})" if src.kind == "f" else "np.int64({x})"
        one = "1.0" if src.kind == "f" else "1"
        return acc, one, "{acc} * " + x, scalarexpr.cast("({acc})", np.dtype(acc), out)
    if kind in ("any", "all"):   # 0/1 in int64 (NaN counts as true, as NumPy)
        if kind == "any":
            combine = "({acc} if {x} == 0 else np.int64(1))"
        else:
            combine = "(np.int64(0) if {x} == 0 else {acc})"
        final = "({acc} != 0)" if out.kind == "b" else "np.uint8({acc})"
        return "int64", "np.int64(0)" if kind == "any" else "np.int64(1)", combine, final
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


# -- scans, products, logical reductions, norms -----------------------------------------------

def _reduce_kind(kind):
    def impl(a, dim, keepdim=False, dtype=None):
        if kind == "prod":
            out = R._int_acc(a, dtype)
            out = a.dtype if out is None else np.dtype(out)
        else:   # any / all: bool, or uint8 for uint8 input (as the CPU forward)
            out = np.dtype(np.uint8) if a.dtype == np.uint8 else _BOOL
        return reduce(kind, a, dim, keepdim, out)
    impl.__name__ = f"{kind}_cuda"
    return impl


def _count_nonzero(a, dim):
    nz = run_elementwise(E.Ne, [a, 0], {})
    if not dim:
        return run_elementwise(E.Cast, [nz], {"dtype": _I64})
    return reduce("sum", nz, dim, False, _I64)


def _norm(a, p, dim, keepdim=False):
    x = run_elementwise(E.Abs, [a], {})
    if p in (math.inf, -math.inf) and not all(a.shape[d] for d in dim):
        # NumPy's error for an empty max/min, as the CPU forward raises it
        return CudaArray.from_host(R.Norm.forward(np.empty(a.shape, a.dtype), p, dim, keepdim))
    if p == 2.0:
        out = run_elementwise(E.Sqrt, [reduce("sum", run_elementwise(E.Mul, [x, x], {}), dim,
                                              keepdim, x.dtype)], {})
    elif p == 1.0:
        out = reduce("sum", x, dim, keepdim, x.dtype)
    elif p in (math.inf, -math.inf):
        out = reduce("amax" if p > 0 else "amin", x, dim, keepdim, x.dtype)
    elif p == 0.0:
        out = reduce("sum", run_elementwise(E.Ne, [x, 0], {}), dim, keepdim, x.dtype)
    else:
        s = reduce("sum", run_elementwise(E.Pow, [x, float(p)], {}), dim, keepdim, x.dtype)
        out = run_elementwise(E.Pow, [s, 1.0 / p], {})
    return out if out.dtype == a.dtype else run_elementwise(E.Cast, [out], {"dtype": a.dtype})


def _scan(kind, a, dim, out_dtype, reverse=False):
    """``kind`` ("sum", "prod", "lse") scanned along ``dim``: the input moved so that
    ``dim`` is last and cast to ``out_dtype`` (one contiguous copy), scanned in place one
    row per thread, moved back (contiguous, as the CPU's result)."""
    out_dtype = np.dtype(out_dtype)
    if a.ndim == 0:
        return run_elementwise(E.Cast, [a], {"dtype": out_dtype})
    perm = [d for d in range(a.ndim) if d != dim] + [dim]
    moved = a.transpose(perm)
    y = CudaArray.empty(moved.shape, out_dtype)
    run_elementwise(E.Cast, [moved], {"dtype": out_dtype}, out=y)
    m = a.shape[dim]
    rows = y.size // m if m else 0
    if rows:
        key = ("scan", kind, out_dtype.char)
        mod = _KERNELS.get(key)
        if mod is None:
            mod = _KERNELS[key] = DEV.load(K.scan_source(kind, out_dtype.name))
        blocks, threads = DEV.grid(rows)
        DEV.launch(mod, "kernel", blocks, threads, [y.base, rows, m, bool(reverse)])
    back = [0] * a.ndim
    for i, d in enumerate(perm):
        back[d] = i
    return contiguous(y.transpose(back))


def _cumsum(a, dim, reverse=False, dtype=None):
    out = R._int_acc(a, dtype)
    return _scan("sum", a, dim, a.dtype if out is None else out, reverse)


def _cumprod(a, dim, dtype=None):
    out = R._int_acc(a, dtype)
    return _scan("prod", a, dim, a.dtype if out is None else out)


def _logcumsumexp(a, dim):
    if a.dtype.kind != "f":   # the CPU forward's error (NumPy has no integer logaddexp)
        return CudaArray.from_host(OPS["logcumsumexp"].forward(np.zeros(a.shape, a.dtype), dim))
    return _scan("lse", a, dim, a.dtype)


TABLE.update({
    R.Prod: _reduce_kind("prod"),
    R.Any: _reduce_kind("any"),
    R.All: _reduce_kind("all"),
    R.CountNonzero: _count_nonzero,
    R.Norm: _norm,
    R.Cumsum: _cumsum,
    OPS["cumprod"]: _cumprod,
    OPS["logcumsumexp"]: _logcumsumexp,
})


# -- flip, roll, repeat, triangles, diagonals: views and copies ---------------------------------

def _flipped(a, dims):
    """A view of ``a`` reversed along ``dims`` (negative strides)."""
    off, st = a.offset, list(a.estrides)
    for d in dims:
        if a.shape[d] > 1:
            off += (a.shape[d] - 1) * st[d]
            st[d] = -st[d]
    return a._view(a.shape, tuple(st), off)


def _roll(a, shifts, dims):
    if dims is None:
        flat = contiguous(a).reshape((a.size,))
        return _roll(flat, shifts[:1], (0,)).reshape(a.shape)
    out = a
    for shift, d in zip(shifts, dims):
        n = out.shape[d]
        res = CudaArray.empty(out.shape, out.dtype)
        k = shift % n if n else 0
        full = [(0, s, 1) for s in out.shape]

        def part(lo, hi):
            key = list(full)
            key[d] = (lo, hi, 1)
            return tuple(key)
        if res.size:
            if k:
                copy_into(res.basic_index(part(0, k)), out.basic_index(part(n - k, n)))
            copy_into(res.basic_index(part(k, n)), out.basic_index(part(0, n - k)))
        out = res
    return out if out is not a else clone(a)


def _repeat(a, repeats):
    reps = tuple(int(r) for r in repeats)
    if len(reps) < a.ndim:   # the CPU forward's (NumPy's) behaviour: leading ones pad reps
        reps = (1,) * (a.ndim - len(reps)) + reps
    shape = (1,) * (len(reps) - a.ndim) + a.shape
    out = CudaArray.empty(tuple(r * s for r, s in zip(reps, shape)), a.dtype)
    if out.size:
        split, src = [], []
        for r, s in zip(reps, shape):
            split += [r, s]
        src = a.reshape(shape) if a.is_contiguous else _reshape(a, shape)
        src = src.unsqueeze(tuple(range(0, 2 * len(reps), 2))).broadcast_to(tuple(split))
        copy_into(out.reshape(tuple(split)), src)
    return out


def _triangle(lower):
    def impl(a, diagonal=0):
        if a.ndim < 2:   # the CPU forward's error
            return CudaArray.from_host(OPS["tril" if lower else "triu"].forward(
                np.zeros(a.shape, a.dtype), diagonal))
        r, c = a.shape[-2:]
        rows = CudaArray.from_host(np.arange(r, dtype=np.int64).reshape(r, 1))
        cols = CudaArray.from_host(np.arange(c, dtype=np.int64).reshape(1, c))
        off = run_elementwise(E.Sub, [cols, rows], {})
        keep = run_elementwise(E.Le if lower else E.Ge, [off, int(diagonal)], {})
        zero = False if a.dtype.kind == "b" else 0
        out = CudaArray.empty(a.shape, a.dtype)
        run_elementwise(E.Where, [keep, a, zero], {}, out=out)
        return out
    impl.__name__ = "tril_cuda" if lower else "triu_cuda"
    return impl


def _diagonal(a, offset, dim1, dim2):
    """The diagonal as a strided view, in a new last dimension (as ``diagonal_view``)."""
    n1, n2 = a.shape[dim1], a.shape[dim2]
    r0, c0 = max(-offset, 0), max(offset, 0)
    n = max(min(n1 - r0, n2 - c0), 0)
    off = a.offset + (min(r0, n1) * a.estrides[dim1] + min(c0, n2) * a.estrides[dim2]
                      if n else 0)
    rest = [i for i in range(a.ndim) if i not in (dim1, dim2)]
    return a._view(tuple(a.shape[i] for i in rest) + (n,),
                   tuple(a.estrides[i] for i in rest) + (a.estrides[dim1] + a.estrides[dim2],),
                   off)


def _diagonal_scatter(g, shape, offset, dim1, dim2):
    out = _full(shape, 0, g.dtype)
    view = _diagonal(out, offset, dim1, dim2)
    if view.size:
        copy_into(view, g)
    return out


def _diag(a, diagonal=0, shape=None):
    if a.ndim == 2:
        return clone(_diagonal(a, diagonal, 0, 1))
    if a.ndim != 1:   # the CPU forward's error
        return CudaArray.from_host(OPS["diag"].forward(np.zeros(a.shape, a.dtype), diagonal))
    if shape is None:
        n = a.shape[0] + abs(diagonal)
        shape = (n, n)
    out = _full(shape, 0, a.dtype)
    view = _diagonal(out, diagonal, 0, 1)
    if view.size:
        copy_into(view.basic_index(((0, a.shape[0], 1),)), a)
    return out


TABLE.update({
    S.Flip: lambda a, dims: clone(_flipped(a, dims)),
    S.Roll: _roll,
    S.Repeat: _repeat,
    L.Tril: _triangle(True),
    L.Triu: _triangle(False),
    L.Diag: _diag,
    OPS["diagonal"]: _diagonal,
    OPS["diagonal_scatter"]: _diagonal_scatter,
})


# -- advanced indexing: gather and scatter kernels -----------------------------------------------

def _index_module():
    mod = _KERNELS.get("index")
    if mod is None:
        mod = _KERNELS["index"] = DEV.load(K.INDEX_SOURCE)
    return mod


def _check_adv_bounds(idx, dims, shape):
    """PyTorch's IndexError for an index outside ``[-size, size)`` (I.check_bounds), from
    the extremes of each index array (two reductions read back: a synchronizing check)."""
    if idx.size == 0:
        return
    rest = tuple(range(1, idx.ndim))
    lo = reduce("amin", idx, rest, False, idx.dtype).to_host()
    hi = reduce("amax", idx, rest, False, idx.dtype).to_host()
    I.check_bounds(lo.reshape(-1, 1), dims, shape)
    I.check_bounds(hi.reshape(-1, 1), dims, shape)


def _adv_layout(shape, estrides, idx, dims):
    """(region shape, strides into the indexed array, strides into the index's batch) per
    region dimension, NumPy's rule: adjacent indexed dims are replaced in place by the
    index's batch dims, otherwise the batch dims go first."""
    batch = idx.shape[1:]
    ib = idx.estrides[1:]
    if dims[-1] - dims[0] == len(dims) - 1:
        order = [("a", d) for d in range(dims[0])] + [("b", j) for j in range(len(batch))] + \
            [("a", d) for d in range(dims[-1] + 1, len(shape))]
    else:
        order = [("b", j) for j in range(len(batch))] + \
            [("a", d) for d in range(len(shape)) if d not in dims]
    rshape = tuple(shape[d] if t == "a" else batch[d] for t, d in order)
    sa = tuple(estrides[d] if t == "a" else 0 for t, d in order)
    si = tuple(0 if t == "a" else ib[d] for t, d in order)
    return rshape, sa, si


def _pad1(*tuples):
    return tuple(t if t else (1,) if i == 0 else (0,) for i, t in enumerate(tuples))


def _device_index(idx):
    return idx if isinstance(idx, CudaArray) else CudaArray.from_host(np.asarray(idx))


def _index(a, idx, dims):
    idx = _device_index(idx)
    _check_adv_bounds(idx, dims, a.shape)
    rshape, sa, si = _adv_layout(a.shape, a.estrides, idx, dims)
    out = CudaArray.empty(rshape, a.dtype)
    n = out.size
    if n:
        src, dst = (_bits(a), _bits(out)) if a.dtype.char in _HALF else (a, out)
        shp, sa, si = _pad1(rshape, sa, si)
        blocks, threads = DEV.grid(n)
        DEV.launch(_index_module(), "index", blocks, threads,
                   [src.base, src.offset, idx.base, idx.offset, idx.estrides[0], dst.base,
                    shp, sa, si, tuple(a.shape[d] for d in dims),
                    tuple(a.estrides[d] for d in dims), n])
    return out


_ATOMIC = frozenset("fdil" + np.dtype(np.int64).char + np.dtype(np.uint64).char + "IL")


def _put(y, idx, dims, v, add):
    """Write (``add``: add atomically) ``v`` (broadcast to the region) at the positions of
    the view ``y`` that ``idx`` addresses along ``dims``; bounds checked first."""
    idx = _device_index(idx)
    _check_adv_bounds(idx, dims, y.shape)
    rshape, sy, si = _adv_layout(y.shape, y.estrides, idx, dims)
    n = int(np.prod(rshape)) if rshape else 1
    if not n:
        return
    if add and y.dtype.char not in _ATOMIC:   # bool / narrow ints: accumulate in int64
        wide = CudaArray.empty(y.shape, _I64)
        run_elementwise(E.Cast, [y], {"dtype": _I64}, out=wide)
        _put(wide, idx, dims, v, add)
        copy_into(y, wide)
        return
    if not isinstance(v, CudaArray):
        v = CudaArray.from_host(np.asarray(v, y.dtype))
    elif v.dtype != y.dtype:
        v = _cast(v, y.dtype)
    v = v.broadcast_to(rshape)
    if y.dtype.char in _HALF:
        y, v = _bits(y), _bits(v)
    shp, sy, si = _pad1(rshape, sy, si)
    sv = v.estrides or (0,)
    blocks, threads = DEV.grid(n)
    DEV.launch(_index_module(), "put", blocks, threads,
               [y.base, y.offset, idx.base, idx.offset, idx.estrides[0], v.base, v.offset, sv,
                shp, sy, si, tuple(y.shape[d] for d in dims),
                tuple(y.estrides[d] for d in dims), n, bool(add)])


def _index_put_add(g, idx, shape, dims):
    out = _full(shape, 0, g.dtype)
    _put(out, idx, dims, g, True)
    return out


def _set_item(x, value, idx, key, dims, out=None):
    """``x`` with ``x[key][idx at dims] = value``; ``out``: write into that array instead
    of a copy of ``x`` (the in-place ``__setitem__``)."""
    out = clone(x) if out is None else out
    view = out.basic_index(key)
    if isinstance(value, np.ndarray):
        value = CudaArray.from_host(value)
    value_shape = getattr(value, "shape", ())
    if idx is None:
        I.value_shape(value_shape, view.shape, False)   # PyTorch's error
        if isinstance(value, CudaArray) and len(value.shape) > len(view.shape):
            value = value.reshape(value.shape[len(value.shape) - len(view.shape):])
        copy_into(view, value)
        return out
    idx = _device_index(idx)
    _check_adv_bounds(idx, dims, view.shape)
    tshape = I.adv_shape(view.shape, idx.shape[1:], dims)
    if isinstance(value, CudaArray):
        vs = I.value_shape(value_shape, tshape, True)
        value = value.reshape(vs) if vs != value.shape else value
    if not view.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    _put(view, idx, dims, value, False)
    return out


def _along(index, dim):
    return index.unsqueeze((0,)), (dim,)


def _index_add(a, index, source, dim, alpha=1):
    n = a.shape[dim]
    if index.size and (index.min() < 0 or index.max() >= n):
        raise IndexError("index out of range in self")
    out = clone(a)
    src = source if alpha == 1 else run_elementwise(E.Mul, [source, alpha], {})
    idx, dims = _along(index, dim)
    _put(out, idx, dims, src, True)
    return out


def _index_copy(a, index, source, dim):
    n = a.shape[dim]
    if index.size:
        lo, hi = index.min(), index.max()
        if lo < 0 or hi >= n:
            bad = int(lo) if lo < 0 else int(hi)
            raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} "
                             f"with size {n}")
    out = clone(a)
    idx, dims = _along(index, dim)
    _put(out, idx, dims, source, False)
    return out


TABLE.update({
    I.Index: _index,
    I.IndexPutAdd: _index_put_add,
    I.SetItem: _set_item,
    I.IndexAdd: _index_add,
    I.IndexCopy: _index_copy,
})


# -- float16 and bfloat16 -----------------------------------------------------------------------

_HALF = _dt.HALF_CHARS
_F32 = np.dtype(np.float32)
_U16 = np.dtype(np.uint16)
_I16 = np.dtype(np.int16)


def _bits(a: CudaArray) -> CudaArray:
    """The same view of a float16/bfloat16 array as int16: its bits, for copies (and
    gathers, scatters) that move elements without reading them as numbers."""
    return CudaArray(a.base.view(_I16), a.block, a.shape, a.estrides, a.offset, _I16)


def _u16(base):
    """A half array's device base as uint16: the bits the conversion kernels read."""
    return base if base.dtype == _U16 else base.view(_U16)


def _as_half(bits: CudaArray, dtype) -> CudaArray:
    dtype = np.dtype(dtype)
    base = bits.base.view(storage_dtype(dtype))
    return CudaArray(base, bits.block, bits.shape, bits.estrides, bits.offset, dtype)


def _half_kernel(key, source):
    mod = _KERNELS.get(key)
    if mod is None:
        mod = _KERNELS[key] = DEV.load(source)
    return mod


def _cast(a: CudaArray, dtype) -> CudaArray:
    """``a.astype(dtype)`` on the device (a contiguous result), through the half
    conversion kernels (integer arithmetic on the bits: round to nearest even, as NumPy
    and ml_dtypes) when either side is float16/bfloat16."""
    dtype = np.dtype(dtype)
    src_half, dst_half = a.dtype.char in _HALF, dtype.char in _HALF
    if not (src_half or dst_half):
        return run_elementwise(E.Cast, [a], {"dtype": dtype})
    if a.dtype == dtype:
        return clone(a)
    if src_half:
        x = contiguous(a)
        y = CudaArray.empty(a.shape, _F32)
        n = a.size
        if n:
            mod = _half_kernel(("half-decode", a.dtype.char),
                               K.half_decode_source("bfloat16" if a.dtype.char == "E"
                                                    else "float16"))
            blocks, threads = DEV.grid(n)
            DEV.launch(mod, "kernel", blocks, threads,
                       [_u16(x.base)[x.offset:x.offset + n], y.base.view(np.uint32)[:n], n])
        return y if dtype == _F32 else _cast(y, dtype)
    src = a if a.dtype.kind == "f" and a.dtype.itemsize in (4, 8) else \
        run_elementwise(E.Cast, [a], {"dtype": _F64})
    src = contiguous(src)
    out = CudaArray.empty(a.shape, dtype)
    n = a.size
    if n:
        name = "bfloat16" if dtype.char == "E" else "float16"
        mod = _half_kernel(("half-encode", src.dtype.char, dtype.char),
                           K.half_encode_source(src.dtype.name, name))
        ubits = np.uint32 if src.dtype.itemsize == 4 else np.uint64
        blocks, threads = DEV.grid(n)
        DEV.launch(mod, "kernel", blocks, threads,
                   [src.base.view(ubits)[src.offset:src.offset + n], _u16(out.base)[:n], n])
    return out


def _half_wrap(op, fn):
    """``fn`` with float16/bfloat16 arguments run as the CPU's ``_half_forward`` does:
    half arguments converted to float32 on the device, the op run, a float32 result
    rounded to the half result dtype; PyTorch's errors for the linear algebra ops that
    refuse half."""
    def impl(*args, **params):
        halves = [a for a in args if isinstance(a, CudaArray) and a.dtype.char in _HALF]
        if not halves:
            want = params.get("dtype")
            if want is not None and np.dtype(want).char in _HALF and \
                    isinstance(op, type) and issubclass(op, Fa.Factory):
                return _cast(fn(*args, **{**params, "dtype": _F32}), want)
            return fn(*args, **params)
        public = _NO_HALF.get(op.name)
        if public is not None:
            raise RuntimeError(f"{public}: Low precision dtypes not supported. Got "
                               f"{_dt.scalar_name(halves[0].dtype)}")
        arrays = [a for a in args if isinstance(a, CudaArray)]
        if op.name in _SAME_DTYPE and len({a.dtype for a in arrays
                                           if _dt.is_float(a.dtype)}) > 1:
            return fn(*args, **params)   # the op's own dtype check raises PyTorch's error
        target = np.dtype(_dt.result_type(*arrays))
        if target.char in _HALF and op.name not in _SCALAR_OPMATH:
            args = [_round_scalar(a, target) if type(a) is float else a for a in args]
        up = [_cast(a, _F32) if isinstance(a, CudaArray) and a.dtype.char in _HALF else a
              for a in args]
        out = fn(*up, **params)
        if isinstance(out, CudaArray) and out.dtype == _F32 and target.char in _HALF and \
                params.get("dtype") is None:
            out = _cast(out, target)
        return out
    impl.__name__ = getattr(fn, "__name__", op.name)
    return impl


def _cast_op(a, dtype):
    return _cast(a, dtype)


# -- the explicit host fallbacks -----------------------------------------------------------------

#: op name -> why it runs on the host for now.  Each of these copies its CUDA arguments to
#: the host, runs the CPU forward (float16/bfloat16 as the CPU runs them) and copies the
#: result back: correct, synchronizing and slow, and counted (``FALLBACK_CALLS``) so that
#: the gap is measured until each gets a kernel.
HOST_FALLBACK = {
    "einsum": "contraction planning (NumPy's einsum); next: permute/reshape onto the GEMM",
    "nonzero": "output shape depends on the values (boolean indexing, masked_select)",
    "masked_scatter": "data-dependent positions (a prefix count over the mask)",
    "masked_gather": "data-dependent positions (its adjoint)",
    "argsort": "needs a device sort (sort, argsort, msort)",
    "topk_indices": "needs a device sort/selection (topk)",
    "kthvalue_index": "needs a device selection (kthvalue, median)",
    "searchsorted": "binary search kernel not written yet",
    "histc": "histogram kernel (atomics) not written yet",
    "bincount": "output length depends on the values",
    "unique": "output shape depends on the values",
    "pad": "constant/reflect/replicate/circular index maps not written yet",
    "pad_adjoint": "pad's adjoint",
    "im2col": "window gather kernel not written yet (convolutions, pooling, unfold)",
    "col2im": "window scatter-add kernel not written yet (their gradients, fold)",
    "one_hot": "one scatter kernel away; host for now",
    "tri_indices": "a factory of index pairs (tril_indices/triu_indices)",
    "combination_indices": "a factory of index tuples (combinations)",
    "cholesky": "dense factorizations run on the host (no cuSOLVER binding)",
    "cholesky_info": "as cholesky",
    "solve_triangular": "as cholesky",
    "qr": "as cholesky",
    "svd": "as cholesky",
    "svdvals": "as cholesky",
    "eigh": "as cholesky",
    "eigvalsh": "as cholesky",
    "inv": "as cholesky",
    "lu_info": "as cholesky",
    "solve": "as cholesky",
    "det": "as cholesky",
    "cofactor": "as cholesky",
    "slogdet": "as cholesky",
    "pinv": "as cholesky",
    "rnn_scan": "the fused RNN recurrence; composed per step on the host for now",
}

FALLBACK_CALLS: collections.Counter = collections.Counter()


def _host_impl(op):
    def impl(*args, **params):
        FALLBACK_CALLS[op.name] += 1
        host = [a.to_host() if isinstance(a, CudaArray) else a for a in args]
        if any(type(a) is np.ndarray and a.dtype.char in _HALF for a in host) and \
                op.name not in _HALF_NATIVE and not op.view:
            out = _half_forward(op, host, host, params)
        else:
            out = op.forward(*(promote(host) if op.promotes else host), **params)
        return CudaArray.from_host(np.asarray(out))
    impl.__name__ = f"{op.name}_host_fallback"
    return impl


#: ops that run on half storage as it is (conversions, copies and views)
_HALF_AS_IS = {E.Cast, _CopyInto, S.Reshape, S.View, S.Expand, S.Permute, S.Squeeze,
               S.Unsqueeze, BasicIndex, OPS["diagonal"], S.Clone, S.Contiguous, S.ReshapeCopy,
               I.SetItem, I.BasicScatter, I.Index, I.IndexPutAdd, S.Cat, S.Stack, S.Flip,
               S.Roll, S.Repeat, OPS["diagonal_scatter"]}

TABLE[E.Cast] = _cast_op
for _op, _fn in list(TABLE.items()):
    if _op not in _HALF_AS_IS:
        TABLE[_op] = _half_wrap(_op, _fn)
for _name in HOST_FALLBACK:
    TABLE[OPS[_name]] = _host_impl(OPS[_name])
