"""The primitives eager's CUDA op table is built from: one-op elementwise kernels, copies,
fills and float16/bfloat16 casts.

Any op with a scalar expression runs as a kernel made from it for a one-op group (the
op's ``scalar`` in the grid-stride template, launched by :func:`runtime.cuda.launch.run_core`,
the launcher the compiler's fused kernels use too), cached per pattern.  Python scalar
arguments are kernel arguments (weak scalars, promoted like literals), so a new learning
rate does not compile a new kernel.
"""

from __future__ import annotations

import numpy as np

from runtime import device as _device
from runtime.cuda import launch
from runtime.cuda.array import CudaArray, storage_dtype
from runtime.cuda.launch import bits  # (re-exported: eager.cuda's kernels use it)

from .. import dtypes as _dt
from ..ops import elementwise as E
from ..ops import scalarexpr
from ..ops import shape as S

DEV = _device.get("cuda")

_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)
_BOOL = np.dtype(np.bool_)
_HALF = _dt.HALF_CHARS
_F32 = np.dtype(np.float32)
_U16 = np.dtype(np.uint16)


# -- elementwise: one-op kernels from the op's scalar expression -------------------------

class _Val:
    """A kernel operand seen by the scalar-expression driver (id, shape, dtype, weak;
    ``nonzero``: checked to hold no zero)."""

    __slots__ = ("dtype", "id", "nonzero", "shape", "weak")

    def __init__(self, id, shape, dtype, weak=False, nonzero=False):
        self.id, self.shape, self.dtype, self.weak = id, tuple(shape), np.dtype(dtype), weak
        self.nonzero = nonzero

    @property
    def ndim(self) -> int:
        return len(self.shape)


class _Node:
    """The one node of a one-op group, as :func:`scalarexpr.emit` reads it."""

    __slots__ = ("inputs", "op", "out", "params")

    def __init__(self, op, inputs, params, out):
        self.op, self.inputs, self.params, self.out = op, inputs, params, out


def _scalar_dtype(x) -> np.dtype:
    return _BOOL if isinstance(x, bool) else (_I64 if isinstance(x, int) else _F64)


def broadcast_shape(shapes) -> tuple:
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


_CORES: dict = {}


def run_elementwise(op, args, params, out=None, nonzero=()):
    """Run elementwise ``op`` on CUDA arrays and Python scalars; ``out`` (optional) is a
    view to write into (an in-place write), else a fresh contiguous array is returned;
    ``nonzero``: positions of arguments the caller checked hold no zero."""
    literal = op is E.Pow   # x ** 2 is a square, as NumPy: exponents stay literals
    inputs, operands = [], []
    for i, a in enumerate(args):
        if isinstance(a, CudaArray):
            inputs.append(_Val(len(operands), a.shape, a.dtype, nonzero=i in nonzero))
            operands.append(a)
        elif literal or isinstance(a, bool) or a is None:
            inputs.append(a)
        else:
            inputs.append(_Val(len(operands), (), _scalar_dtype(a), weak=True,
                               nonzero=i in nonzero))
            operands.append(a)
    shape = out.shape if out is not None else \
        broadcast_shape([a.shape for a in operands if isinstance(a, CudaArray)])
    out_dtype = np.dtype(op.out_dtype(*inputs, **params) if out is None else out.dtype)
    key = (op, repr(sorted(params.items())), tuple(
        ("lit", repr(v)) if not isinstance(v, _Val) else (v.dtype.char, v.weak, v.nonzero)
        for v in inputs),
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
    return launch.run_core(lines, ["t0"], operands, [out_dtype], shape, doc,
                           outs=None if out is None else [out])[0]


def elementwise_impl(op):
    """The CUDA implementation of an elementwise op: its one-op kernel."""
    def impl(*args, **params):
        return run_elementwise(op, args, params)
    impl.__name__ = f"{op.name}_cuda"
    return impl


# -- copies and fills ------------------------------------------------------------------------

def copy_into(dst: CudaArray, src) -> None:
    """``dst[...] = src`` (broadcast, cast as ``astype``): in-place writes (float16/bfloat16
    through the conversion kernels, then a copy of the bits)."""
    if isinstance(src, CudaArray) and src.host is not None:
        src = src.host                    # a 0-d value still on the host: a fill
    if not isinstance(src, CudaArray):
        if np.ndim(src) == 0:
            launch.fill(dst, src)         # the value is a kernel argument: no copy
            return
        src = CudaArray.from_host(np.asarray(src, dst.dtype))
    if dst.dtype.char in _HALF:
        src = src if src.dtype == dst.dtype else cast(src, dst.dtype)
        run_elementwise(S.Expand, [bits(src)], {"shape": dst.shape}, out=bits(dst))
        return
    if src.dtype.char in _HALF:
        src = cast(src, _F32)
    run_elementwise(E.Cast, [src], {"dtype": dst.dtype}, out=dst)


def on_device(value, dtype) -> CudaArray:
    """``value`` as a CUDA array of ``dtype`` in device memory: a 0-d value (a Python or
    NumPy scalar, or a 0-d CUDA array still on the host) is written by a fill kernel that
    takes it as an argument (no host-to-device copy); a host array is copied over; a CUDA
    array is cast when its dtype differs."""
    if isinstance(value, CudaArray):
        if value.host is None:
            return value if value.dtype == dtype else cast(value, dtype)
        value = value.host
    if np.ndim(value) == 0:
        return full((), value, dtype)
    return CudaArray.from_host(np.asarray(value, dtype))


def contiguous(a: CudaArray) -> CudaArray:
    return a if a.is_contiguous else clone(a)


def clone(a: CudaArray) -> CudaArray:
    """A contiguous copy (of the bits, for float16/bfloat16)."""
    if a.dtype.char in _HALF:
        return as_half(clone(bits(a)), a.dtype)
    out = CudaArray.empty(a.shape, a.dtype)
    run_elementwise(S.Expand, [a], {"shape": a.shape}, out=out)
    return out


def reshape(a, shape):
    """``a`` reshaped: a view when its strides allow, else of a contiguous copy."""
    try:
        return a.reshape(shape)
    except ValueError:
        return contiguous(a).reshape(shape)


def full(shape, value, dtype, device=None):
    """A new array of ``value``: one fill kernel taking the value as an argument (no host
    array copied over)."""
    out = CudaArray.empty(shape, dtype)
    if out.size:
        copy_into(out, value)
    return out


# -- float16 and bfloat16 -----------------------------------------------------------------------

def _u16(base):
    """A half array's device base as uint16: the bits the conversion kernels read."""
    return base if base.dtype == _U16 else base.view(_U16)


def as_half(bits: CudaArray, dtype) -> CudaArray:
    dtype = np.dtype(dtype)
    base = bits.base.view(storage_dtype(dtype))
    return CudaArray(base, bits.block, bits.shape, bits.estrides, bits.offset, dtype)


def cast(a: CudaArray, dtype) -> CudaArray:
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
            launch.half_decode(_u16(x.base)[x.offset:x.offset + n], y.base.view(np.uint32)[:n],
                               n, "bfloat16" if a.dtype.char == "E" else "float16")
        return y if dtype == _F32 else cast(y, dtype)
    src = a if a.dtype.kind == "f" and a.dtype.itemsize in (4, 8) else \
        run_elementwise(E.Cast, [a], {"dtype": _F64})
    src = contiguous(src)
    out = CudaArray.empty(a.shape, dtype)
    n = a.size
    if n:
        ubits = np.uint32 if src.dtype.itemsize == 4 else np.uint64
        launch.half_encode(src.base.view(ubits)[src.offset:src.offset + n], _u16(out.base)[:n],
                           n, src.dtype.name, "bfloat16" if dtype.char == "E" else "float16")
    return out
