"""``eager.autocast``: automatic mixed precision, PyTorch's CPU op lists.

While autocast is on, :data:`eager._state.STATE.autocast` holds a :class:`_Policy`, and
dispatch calls it once per op, before anything else (``args = policy(op, args)``): the one
cast point.  The policy looks the op up in :data:`POLICY`:

* ``LOWER`` (matmul, linear, einsum; convolutions reach it through their matmul and
  :func:`cast_inputs`): float32 tensor arguments are cast to the autocast dtype (float64
  ones stay, as in PyTorch: only float32 is "eligible").
* ``FP32`` (prod, linear algebra decompositions and solves, nll_loss): float16 and
  bfloat16 arguments are cast to float32.
* ``PROMOTE`` (cat, stack, index_copy): floating arguments are cast to the widest one.

Ops not in the table run in whatever dtypes they receive.  Casts are ordinary ``cast``
ops, so gradients flow back through them in the arguments' own dtypes, and a compiler
trace records them (the autocast state is part of a compiled function's guard key).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import dtypes as _dt
from .._state import STATE
from ..tensor import Tensor

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"

#: op name -> policy, following PyTorch's "CPU Ops that can autocast to bfloat16/float16"
#: and "CPU Ops that can autocast to float32" lists, for the ops this engine has (PyTorch's
#: mm/bmm/matmul are all ``matmul`` here; conv1d/2d/3d and conv_transpose go through
#: :func:`cast_inputs`)
POLICY: dict[str, str] = {
    # lower precision
    "matmul": LOWER, "linear": LOWER, "einsum": LOWER,
    # float32
    "prod": FP32, "cholesky": FP32, "cholesky_info": FP32, "inv": FP32, "pinv": FP32,
    "qr": FP32, "svd": FP32, "svdvals": FP32, "solve": FP32, "solve_triangular": FP32,
    "eigh": FP32, "eigvalsh": FP32, "det": FP32, "slogdet": FP32, "lu_info": FP32,
    "nll_loss": FP32,
    # promote to the widest floating type
    "cat": PROMOTE, "stack": PROMOTE, "index_copy": PROMOTE,
}

#: composite functions (no single op) with a policy, applied by :func:`cast_inputs`
FUNCTIONS: dict[str, str] = {
    "conv1d": LOWER, "conv2d": LOWER, "conv3d": LOWER, "conv_transpose1d": LOWER,
    "conv_transpose2d": LOWER, "conv_transpose3d": LOWER,
}

_F32 = np.dtype(np.float32)
_SUPPORTED = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}
_DEFAULT = {"cpu": _dt.bfloat16, "cuda": _dt.float16}


def _cast(t: Tensor, np_dtype) -> Tensor:
    from ..dispatch import dispatch
    from ..ops.elementwise import Cast
    return dispatch(Cast, t, dtype=np_dtype)


class _Policy:
    """The callable dispatch runs while autocast is on (see the module docstring)."""

    __slots__ = ("device_type", "dtype", "low", "key")

    def __init__(self, device_type: str, dtype):
        self.device_type = device_type
        self.dtype = dtype
        self.low = dtype.np
        self.key = (device_type, dtype.name)  # part of a compiled function's guard key

    def __call__(self, op, args):
        kind = POLICY.get(op.name)
        return args if kind is None else self.apply(kind, args)

    def apply(self, kind: str, args):
        if kind is LOWER:
            low = self.low
            return tuple(_cast(a, low) if isinstance(a, Tensor) and a._data.dtype == _F32
                         else a for a in args)
        if kind is FP32:
            return tuple(_cast(a, _F32) if isinstance(a, Tensor) and _dt.is_half(a._data.dtype)
                         else a for a in args)
        # PROMOTE: to the widest floating dtype among the tensor arguments (lists included)
        flat = [x for a in args for x in (a if isinstance(a, (list, tuple)) else (a,))
                if isinstance(x, Tensor) and _dt.is_float(x._data.dtype)]
        if not flat:
            return args
        wide = flat[0]._data.dtype
        for x in flat[1:]:
            wide = _dt.promote_np(wide, x._data.dtype)

        def one(x):
            if isinstance(x, Tensor) and _dt.is_float(x._data.dtype) and x._data.dtype != wide:
                return _cast(x, wide)
            return x
        return tuple(type(a)(one(x) for x in a) if isinstance(a, (list, tuple)) else one(a)
                     for a in args)


def cast_inputs(name: str, *args):
    """Apply autocast's policy for the composite function ``name`` (e.g. ``"conv2d"``) to
    its arguments; the arguments unchanged when autocast is off or ``name`` has none."""
    policy = STATE.autocast
    if policy is None or name not in FUNCTIONS:
        return args
    return policy.apply(FUNCTIONS[name], args)


class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context
    manager (and decorator) under which the ops of :data:`POLICY` run in ``dtype``
    (``eager.bfloat16`` by default on the CPU, ``eager.float16`` on CUDA) or float32.

        with eager.autocast(device_type="cpu", dtype=eager.bfloat16):
            y = model(x)          # matmuls and linears in bfloat16
        loss = loss_fn(y.float(), target)

    ``enabled=False`` turns autocast off inside an enclosing autocast region.
    ``cache_enabled`` is accepted for PyTorch compatibility (casts are not cached).
    """

    def __init__(self, device_type: str = "cpu", dtype=None, enabled: bool = True,
                 cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        device_type = device_type.partition(":")[0]
        if device_type not in _SUPPORTED:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        if dtype is None:
            dtype = _DEFAULT[device_type]
        if not isinstance(dtype, _dt.DType):
            dtype = _dt.from_numpy(_dt.to_numpy(dtype))
        if dtype not in _SUPPORTED[device_type]:
            raise RuntimeError(f"In {device_type.upper()} autocast, but the target dtype is not "
                               f"supported. Supported dtypes: "
                               + ", ".join(repr(d) for d in _SUPPORTED[device_type]))
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        self._prev = []

    def __enter__(self):
        self._prev.append(STATE.autocast)
        STATE.autocast = _Policy(self.device, self.fast_dtype) if self._enabled else None
        return self

    def __exit__(self, exc_type, exc, tb):
        STATE.autocast = self._prev.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type``; as PyTorch, no argument means CUDA
    (``is_autocast_enabled("cpu")`` for the CPU)."""
    policy = STATE.autocast
    if policy is None:
        return False
    return policy.device_type == ("cuda" if device_type is None else device_type)


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")`` (PyTorch's older spelling)."""
    return is_autocast_enabled("cpu")


def get_autocast_dtype(device_type: str = "cpu"):
    """The dtype autocast casts to on ``device_type`` (its default when autocast is off)."""
    policy = STATE.autocast
    if policy is not None and policy.device_type == device_type:
        return policy.dtype
    return _DEFAULT[device_type]


def autocast_key():
    """The autocast state as a hashable value (None when off): a compiled function's guard."""
    policy = STATE.autocast
    return None if policy is None else policy.key
