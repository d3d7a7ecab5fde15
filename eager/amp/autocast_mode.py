"""``eager.autocast``: automatic mixed precision, PyTorch's CPU op lists.

While autocast is on, :data:`eager._state.STATE.autocast` holds a :class:`_Policy`, and
dispatch calls it once per op, before anything else (``args = policy(op, args)``): the one
cast point for single ops.  Public functions that PyTorch lists but that are composites here
(the losses, ``cdist``, convolutions, ...) call :func:`cast_inputs` with their name first.
The policy looks the op up in :data:`POLICY` (or the function in :data:`FUNCTIONS`):

* ``LOWER`` (matmul, linear, two-operand einsum, convolutions, attention): floating tensor
  arguments other than float64 are cast to the autocast dtype (as PyTorch, float64 is not
  "eligible" and stays).
* ``FP32`` (prod, linear algebra factorizations and solves, the losses, ``cdist``,
  ``trace``, 3-d pooling, reflection and replication padding): floating arguments other
  than float64 are cast to float32.
* ``PROMOTE`` (cat, stack, index_copy): floating arguments are cast to the widest one.

Only tensors on autocast's device type are cast.  Ops not in the tables run in whatever
dtypes they receive (on the CPU PyTorch computes softmax, log_softmax, layer_norm, sums and
elementwise ops in their input dtype under autocast, and so does this engine).  Casts are
ordinary ``cast`` ops, so gradients flow back through them in the arguments' own dtypes,
and a compiler trace records them (the autocast state is part of a compiled function's
guard key).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from runtime import device as runtime_device

from .. import dtypes as _dt
from .._state import STATE
from ..dispatch import dispatch, unwrap_storage
from ..ops.elementwise import Cast
from ..tensor import Tensor

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"

#: op name -> policy, following PyTorch's "CPU Ops that can autocast to bfloat16/float16"
#: and "CPU Ops that can autocast to float32" lists, for the ops this engine has (PyTorch's
#: mm/bmm/matmul/addmm are all ``matmul`` here; ``dot`` and ``mv``, not listed by PyTorch,
#: dispatch that op with autocast suspended).  Each entry is checked against PyTorch by
#: tests/eager/test_amp.py.
POLICY: dict[str, str] = {
    # lower precision
    "matmul": LOWER, "linear": LOWER, "einsum": LOWER, "rnn_scan": LOWER,
    # float32
    "prod": FP32, "cholesky": FP32, "cholesky_info": FP32, "inv": FP32, "lu_info": FP32,
    "qr": FP32, "svd": FP32, "svdvals": FP32, "solve": FP32, "eigh": FP32, "eigvalsh": FP32,
    "nll_loss": FP32,
    # promote to the widest floating type
    "cat": PROMOTE, "stack": PROMOTE, "index_copy": PROMOTE,
}

#: composite public functions (no single op) with a policy, applied by :func:`cast_inputs`
FUNCTIONS: dict[str, str] = {
    "conv1d": LOWER, "conv2d": LOWER, "conv3d": LOWER, "conv_transpose1d": LOWER,
    "conv_transpose2d": LOWER, "conv_transpose3d": LOWER,
    "scaled_dot_product_attention": LOWER, "vecdot": LOWER,
    "mse_loss": FP32, "l1_loss": FP32, "smooth_l1_loss": FP32, "huber_loss": FP32,
    "binary_cross_entropy": FP32, "binary_cross_entropy_with_logits": FP32,
    "kl_div": FP32, "cross_entropy": FP32,
    "cdist": FP32, "trace": FP32, "pinverse": FP32, "lstsq": FP32, "matrix_rank": FP32,
    "avg_pool3d": FP32, "max_pool3d": FP32, "adaptive_avg_pool3d": FP32,
    "adaptive_max_pool3d": FP32,
    "reflection_pad": FP32, "replication_pad": FP32,
    "index_copy": PROMOTE,
}

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_ndarray = np.ndarray


def _storage(d):
    """The array under vmap's batching wrappers (``d`` itself when it is not batched)."""
    return d if type(d) is _ndarray else unwrap_storage(d)
_SUPPORTED = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}
_DEFAULT = {"cpu": _dt.bfloat16, "cuda": _dt.float16}


def _cast(t: Tensor, np_dtype) -> Tensor:
    return dispatch(Cast, t, dtype=np_dtype)


class _Policy:
    """The callable dispatch runs while autocast is on (see the module docstring)."""

    __slots__ = ("device_type", "dtype", "low", "key", "_cpu")

    def __init__(self, device_type: str, dtype):
        self.device_type = device_type
        self.dtype = dtype
        self.low = dtype.np
        self.key = (device_type, dtype.name)  # part of a compiled function's guard key
        self._cpu = device_type == "cpu"

    def __call__(self, op, args):
        kind = POLICY.get(op.name)
        if kind is None or (kind is LOWER and op.name == "einsum" and
                            (len(args) < 2 or args[1] is None)):
            return args  # one-operand einsum (a trace, a transpose) is no contraction
        return self.apply(kind, args)

    def _eligible(self, a) -> bool:
        """A floating tensor other than float64 on autocast's device (PyTorch's rule); a
        vmap-batched tensor is on the device of the storage it wraps."""
        if not isinstance(a, Tensor):
            return False
        d = _storage(a._data)
        return (type(d) is _ndarray) is self._cpu and d.dtype != _F64 and _dt.is_float(d.dtype)

    def apply(self, kind: str, args):
        if kind is LOWER or kind is FP32:
            to = self.low if kind is LOWER else _F32
            return tuple(_cast(a, to) if self._eligible(a) and a._data.dtype != to else a
                         for a in args)
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
    its arguments (a tuple back, as many as given); the arguments unchanged when autocast is
    off or ``name`` has none."""
    policy = STATE.autocast
    if policy is None or name not in FUNCTIONS:
        return args
    return policy.apply(FUNCTIONS[name], args)


def dispatch_plain(op, *args, **params):
    """``dispatch`` with autocast suspended: for public functions that share an op with a
    listed one but that PyTorch does not autocast (``dot`` and ``mv`` are ``matmul``)."""
    policy = STATE.autocast
    if policy is None:
        return dispatch(op, *args, **params)
    STATE.autocast = None
    try:
        return dispatch(op, *args, **params)
    finally:
        STATE.autocast = policy


class suspended:
    """Context manager: autocast off inside (the body of a float32-listed composite, whose
    PyTorch kernel is one op that autocast does not look into)."""

    __slots__ = ("_prev",)

    def __enter__(self):
        self._prev = STATE.autocast
        STATE.autocast = None
        return self

    def __exit__(self, *exc):
        STATE.autocast = self._prev
        return False


class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context
    manager (and decorator) under which the ops of :data:`POLICY` run in ``dtype``
    (``eager.bfloat16`` by default on the CPU, ``eager.float16`` on CUDA) or float32.

        with eager.autocast(device_type="cpu", dtype=eager.bfloat16):
            y = model(x)          # matmuls and linears in bfloat16
        loss = loss_fn(y.float(), target)

    ``enabled=False`` turns autocast off inside an enclosing autocast region.  As PyTorch,
    a dtype other than bfloat16/float16 (or ``"cuda"`` without CUDA) warns and disables
    autocast.  ``cache_enabled`` is accepted for PyTorch compatibility (casts are not
    cached).  The op lists are PyTorch's CPU lists, also used for CUDA tensors.
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        device_type = device_type.partition(":")[0]
        if device_type not in _SUPPORTED:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = _DEFAULT[device_type] if dtype is None else dtype
        if not isinstance(self.fast_dtype, _dt.DType):
            self.fast_dtype = _dt.from_numpy(_dt.to_numpy(self.fast_dtype))
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        self._prev = []
        if self._enabled and device_type == "cuda":
            if not runtime_device.available("cuda"):
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=2)
                self._enabled = False
        if self._enabled and self.fast_dtype not in _SUPPORTED[device_type]:
            names = ", ".join(repr(d) for d in _SUPPORTED[device_type])
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not "
                          f"supported. Disabling autocast.\n{device_type.upper()} Autocast "
                          f"only supports dtypes of {names} currently.", stacklevel=2)
            self._enabled = False

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
    """``is_autocast_enabled("cpu")`` (PyTorch's older spelling, deprecated there too)."""
    warnings.warn("torch.is_autocast_cpu_enabled() is deprecated. Please use "
                  "torch.is_autocast_enabled('cpu') instead.", DeprecationWarning, stacklevel=2)
    return is_autocast_enabled("cpu")


def get_autocast_dtype(device_type: str = "cpu"):
    """The dtype autocast casts to on ``device_type`` (its default when autocast is off)."""
    policy = STATE.autocast
    if policy is not None and policy.device_type == device_type:
        return policy.dtype
    return _DEFAULT[device_type]


def autocast_key():
    """The autocast state as a hashable value, (device type, dtype name), or None when off:
    a compiled function's guard (a trace recorded with autocast off holds float32 matmuls
    and must not replay under autocast, or the reverse)."""
    policy = STATE.autocast
    return None if policy is None else policy.key
