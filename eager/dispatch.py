"""The one dispatch point every op goes through.

``dispatch(op, *args, **params)`` promotes dtypes, runs the op's implementation for the
arguments' device (its forward on the CPU, see :func:`implementation`; mixing devices is
PyTorch's error) on the arguments' storage, wraps the result in a Tensor, records a grad
node when grad mode is on and an argument requires grad, and, while a compiler tracer is
active, tells the tracer so that it appends an IR node.  Nothing else creates op results.
"""

from __future__ import annotations

import importlib

import numpy as np

from runtime import device as runtime_device

from . import dtypes as _dt
from ._state import STATE
from .autograd.node import Node
from .ops.base import OPS
from .tensor import Tensor

_ndarray = np.ndarray
_make = Tensor._make


def dispatch(op, *args, **params):
    """Runs one op (a class from :mod:`eager.ops`) on tensors and returns the result tensor.

    This is the internal entry point every eager operation goes through; it is reachable
    as ``F.dispatch`` only because :mod:`eager.nn.functional` imports it (PyTorch has no
    such function).  It applies autocast, promotes the arguments' dtypes when the op
    asks for it, runs the op's forward for the arguments' device, records a grad node
    when grad mode is on and some argument requires grad (and the result is floating
    point), and reports the call to an active compiler tracer.

    Args:
        op (type): the op class, e.g. ``eager.ops.elementwise.Mul``.
        *args (Tensor or number): the op's positional inputs, in the order its
            ``forward`` takes them.
        **params: the op's keyword parameters (shapes, dims, dtypes, ...), handed to its
            ``forward`` and saved on the grad node for its backward.

    Example::

        >>> from eager.ops import elementwise
        >>> a = eager.tensor([1., 2.], requires_grad=True)
        >>> F.dispatch(elementwise.Mul, a, eager.tensor([3., 4.]))
        tensor([3., 8.], grad_fn=<MulBackward0>)
        >>> F.dispatch(elementwise.Add, eager.tensor([1, 2]), 2.5)
        tensor([3.5000, 4.5000])
    """
    autocast = STATE.autocast
    if autocast is not None:  # the one autocast cast point (eager.amp.autocast_mode)
        args = autocast(op, args)
    tracer = STATE.tracer
    if tracer is not None and tracer.has_syms:  # dynamic scalars: compute on their values
        traced_args = args
        args, params = tracer.unwrap(args, params)
    else:
        traced_args = args
    arrays = []
    rg = False
    on_device = False
    half = False
    aux = None
    for a in args:
        if isinstance(a, Tensor):
            d = a._data
            arrays.append(d)
            if type(d) is not _ndarray:
                on_device = True
            elif d.dtype.char in _HALF_CHARS:
                half = True
            if a.requires_grad:
                rg = True
        else:
            arrays.append(a)
    if on_device or op.any_device or (not args and params.get("device", "cpu") != "cpu"):
        out = _run_on_device(op, args, arrays, params)
    elif half and op.name not in _HALF_NATIVE and not op.view:
        out = _half_forward(op, args, arrays, params)
    else:
        if op.promotes:
            arrays = promote(arrays)
        try:
            if rg and op.forward_aux is not None and STATE.grad_enabled:
                out, aux = op.forward_aux(*arrays, **params)
            else:
                out = op.forward(*arrays, **params)
        except Exception as exc:
            raise _explain(op, args, exc) from exc
        if type(out) is not _ndarray:
            out = np.asarray(out)
    t = _make(out)
    if op.view:
        base = args[0]
        t._version = base._version
        t._base = base if base._base is None else base._base
    if rg and STATE.grad_enabled and op.differentiable and (out.dtype.kind == "f"
                                                             or out.dtype == _BF16):
        t.requires_grad = True
        # (a traced dynamic number is saved as itself: a traced backward uses it as such)
        t.grad_fn = node = Node(op, traced_args, params, t)
        node.aux = aux
        if half:
            node.half = True
    if tracer is not None:
        tracer.record(op, traced_args, params, t)
    return t


# -- float16 and bfloat16 ----------------------------------------------------------------

_HALF_CHARS = _dt.HALF_CHARS
_F32 = np.dtype(np.float32)
_BF16 = _dt.BF16_NP
#: ops that run on half storage as it is (conversions and copies that NumPy does exactly)
_HALF_NATIVE = frozenset({"cast", "view_dtype", "to_device", "clone", "contiguous"})
#: ops whose tensor arguments must share one dtype (their forward checks it first)
_SAME_DTYPE = frozenset({"matmul", "linear", "einsum"})
#: op name -> public name, for the linear algebra ops PyTorch's CPU kernels reject in
#: float16/bfloat16 (autocast casts the float32-listed ones before they get here)
_NO_HALF = {"inv": "linalg.inv", "lu_info": "linalg.lu_factor", "solve": "linalg.solve",
            "det": "linalg.det", "slogdet": "linalg.slogdet", "pinv": "linalg.pinv",
            "cholesky_info": "linalg.cholesky", "cholesky": "linalg.cholesky",
            "solve_triangular": "linalg.solve_triangular", "qr": "linalg.qr",
            "svd": "linalg.svd", "svdvals": "linalg.svd", "eigh": "linalg.eigh",
            "eigvalsh": "linalg.eigh", "cofactor": "linalg.det"}


#: ops whose PyTorch CPU kernel takes a scalar operand at float32 precision, unrounded
_SCALAR_OPMATH = frozenset({"mul", "div"})


def _round_scalar(a, half):
    if type(a) is float:
        return float(np.float32(a).astype(half))
    if type(a) is _ndarray and a.ndim == 0 and a.dtype.char not in _HALF_CHARS and \
            a.dtype.kind == "f":
        return a.astype(_F32).astype(half)
    return a


def _half_forward(op, args, arrays, params):
    """Run ``op`` on float16/bfloat16 arguments as PyTorch's CPU kernels do: compute in
    float32 (NumPy has no bfloat16 loop for many ufuncs, and float16 matmuls and sums would
    accumulate in float16) and round the float32 result to the promoted half dtype."""
    public = _NO_HALF.get(op.name)
    if public is not None:
        half = next(a.dtype for a in arrays if type(a) is _ndarray and a.dtype.char in _HALF_CHARS)
        raise RuntimeError(f"{public}: Low precision dtypes not supported. Got "
                           f"{_dt.scalar_name(half)}")
    if op.name in _SAME_DTYPE and len({a.dtype for a in arrays if type(a) is _ndarray
                                       and _dt.is_float(a.dtype)}) > 1:
        # a half with another floating dtype where PyTorch wants one dtype: the op's own
        # check on the arrays as they are raises its error (before any computing)
        try:
            op.forward(*arrays, **params)
        except RuntimeError as exc:
            raise _explain(op, args, exc) from exc
    target = _dt.result_type(*[a for a in arrays if type(a) is _ndarray])
    if target.char in _HALF_CHARS and op.name not in _SCALAR_OPMATH:
        # PyTorch casts a Python number or a 0-d tensor of a lower category to the half
        # result type before the kernel sees it (so x == 1.1 compares with bfloat16(1.1))
        arrays = [_round_scalar(a, target) for a in arrays]
    up = _dt.upcast_half(arrays)
    if op.promotes:
        up = promote(up)
    try:
        out = op.forward(*up, **params)
    except Exception as exc:
        raise _explain(op, args, exc) from exc
    if type(out) is not _ndarray:
        out = np.asarray(out)
    if out.dtype == _F32 and target.char in _HALF_CHARS and params.get("dtype") is None:
        with np.errstate(over="ignore"):  # out of range: inf, as PyTorch (no warning)
            out = out.astype(target)
    return out


# -- devices other than the CPU ----------------------------------------------------------

#: device type -> {op class: implementation(*storages, **params) -> storage}; each device's
#: table is filled by its module ``eager.<type>.ops`` (eager/cuda/ops.py), imported when the
#: device is first used
IMPLS: dict = {}


def implementation(op, device_type: str):
    """The function running ``op`` on a device: the forward itself on the CPU."""
    if device_type == "cpu":
        return op.forward
    table = IMPLS.get(device_type)
    if table is None:
        runtime_device.get(device_type)   # PyTorch's error for a name that is no device
        importlib.import_module(f"eager.{device_type}.ops")
        table = IMPLS[device_type]
    fn = table.get(op)
    if fn is None:
        raise NotImplementedError(f"Could not run '{op.name}' with arguments from the "
                                  f"'{device_type}' device: {op.name} has no {device_type} "
                                  f"kernel yet")
    return fn


def same_device(args):
    """The device of the tensor arguments; PyTorch's error when they differ (a 0-d CPU
    tensor is a scalar for any device, as in PyTorch: it is copied over)."""
    found = None
    for a in args:
        if isinstance(a, Tensor):
            dev = a.device
            if dev.type == "cpu" and a._data.ndim == 0:
                continue
            if found is None:
                found = dev
            elif dev != found:
                first, second = (found, dev) if found.type != "cpu" else (dev, found)
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {_name(first)} and {_name(second)}!")
    return found


def _name(dev) -> str:
    return "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"


#: storage type -> ``run(op, storages, params)``: storage that is no device's but runs ops
#: through rules of its own (vmap's batched storage, :mod:`eager.func.batching`); such a
#: storage wraps another in ``.value``
STORAGE_RULES: dict = {}


def register_storage_rule(storage_type: type, rule) -> None:
    """Run every op whose arguments include storage of ``storage_type`` through
    ``rule(op, storages, params)``: the hook a wrapping storage (vmap's batched arrays)
    registers itself with, so dispatch never imports it."""
    STORAGE_RULES[storage_type] = rule


def unwrap_storage(d):
    """The array under wrapping storages (``d`` itself when it is not wrapped)."""
    while type(d) in STORAGE_RULES:
        d = d.value
    return d


def _run_on_device(op, args, arrays, params):
    if op.any_device:   # to(device): its forward takes storage of any device
        return op.forward(*arrays, **params)
    if STORAGE_RULES:
        for a in arrays:
            rule = STORAGE_RULES.get(type(a))
            if rule is not None:
                return rule(op, arrays, params)
    devtype = same_device(args).type if args else str(params["device"]).partition(":")[0]
    device = runtime_device.get(devtype)
    arrays = [device.from_host(a) if type(a) is _ndarray else a for a in arrays]
    fn = implementation(op, devtype)
    try:
        return fn(*arrays, **params)
    except Exception as exc:
        raise _explain(op, args, exc) from exc


def runner(op, device_type: str):
    """``fn(*storages, **params)`` running ``op`` on ``device_type`` as dispatch would,
    for compiled programs (CPU storage arguments, e.g. constants, are copied over)."""
    if op.any_device:
        return op.forward
    if device_type == "cpu":
        if not op.promotes:
            return op.forward
        forward = op.forward
        return lambda *arrays, **params: forward(*promote(list(arrays)), **params)
    fn = implementation(op, device_type)
    device = runtime_device.get(device_type)

    def run(*arrays, **params):
        return fn(*[device.from_host(a) if type(a) is _ndarray else a for a in arrays],
                  **params)
    run.__name__ = f"{op.name}_{device_type}"
    return run


def copy_into(dst, src) -> None:
    """Write ``src`` (storage or a scalar, broadcast and cast as ``astype``) into the storage
    ``dst`` in place, on any device."""
    if type(dst) is _ndarray:
        np.copyto(dst, src, casting="unsafe")
        return
    rule = STORAGE_RULES.get(type(dst))
    if rule is not None:
        rule(_CopyInto, (dst, src), {})
        return
    dev = runtime_device.of(dst).type
    implementation(_CopyInto, dev)(dst, src)


class _CopyInto:
    """The key of a device's in-place copy in :data:`IMPLS` (not an op: no IR node)."""
    name = "copy_"


# -- promotion ---------------------------------------------------------------------------

def promote(arrays: list) -> list:
    """Cast array arguments to PyTorch's result dtype; Python scalars stay weak."""
    if len(arrays) == 2:  # fast path: the common binary cases need no cast
        a, b = arrays
        if type(a) is _ndarray:
            tb = type(b)
            if tb is _ndarray:
                if a.dtype is b.dtype:
                    return arrays
            elif tb is float:
                if a.dtype.kind == "f":
                    return arrays
            elif tb is int and a.dtype.kind in "fiu":
                return arrays
        elif type(b) is _ndarray and b.dtype.kind == "f" and type(a) in (float, int):
            return arrays
    first = None
    mixed = False
    for a in arrays:
        if type(a) is _ndarray:
            if first is None:
                first = a.dtype
            elif a.dtype != first:
                mixed = True
        elif a is not None:
            if first is None or _dt.scalar_category(a) > _cat(first):
                mixed = True
    if not mixed:
        return arrays
    rt = _dt.result_type(*arrays)
    out = []
    for a in arrays:
        if _dt.cast_needed(a, rt):
            a = a.astype(rt) if type(a) is _ndarray else np.asarray(a, dtype=rt)
        out.append(a)
    return out


_cat = _dt._category


def _explain(op, args, exc: Exception) -> Exception:
    """Turn a NumPy error into one that names the op and the shapes involved."""
    if isinstance(exc, (RuntimeError, IndexError, TypeError)) and not isinstance(exc, _NumpyErrors):
        return exc
    shapes = [tuple(a.shape) if isinstance(a, Tensor) else type(a).__name__ for a in args]
    msg = str(exc)
    if op.elementwise and "broadcast" in msg:
        tshapes = [s for s in shapes if isinstance(s, tuple)]
        detail = _broadcast_detail(tshapes)
        return RuntimeError(f"{op.name}: {detail}")
    cls = RuntimeError if isinstance(exc, ValueError) else type(exc)
    try:
        return cls(f"{op.name}: {msg} (argument shapes {shapes})")
    except Exception:
        return RuntimeError(f"{op.name}: {msg} (argument shapes {shapes})")


_NumpyErrors = (np.exceptions.AxisError,)


def _broadcast_detail(shapes: list) -> str:
    a = shapes[0] if shapes else ()
    for b in shapes[1:]:
        n = max(len(a), len(b))
        pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
        for d in range(n - 1, -1, -1):
            if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
                return (f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                        f"({pb[d]}) at non-singleton dimension {d} (shapes {a} and {b})")
        a = tuple(max(x, y) for x, y in zip(pa, pb))
    return f"shapes {shapes} cannot be broadcast together"


class _Tensors:
    """``T``: attribute access to every registered op, dispatched on tensors
    (``T.mul(a, b)`` is ``dispatch(Mul, a, b)``); the twin of :data:`eager.ops.base.A`,
    which runs forwards on arrays.  A backward written against ``F`` runs on either."""

    def __getattr__(self, name: str):
        op = OPS.get(name)
        if op is None:
            raise AttributeError(f"no op named {name!r}")

        def call(*args, **params):
            return dispatch(op, *args, **params)

        call.__name__ = call.__qualname__ = name
        setattr(self, name, call)
        return call

    def __repr__(self):
        return "<op namespace tensors>"


T = _Tensors()
