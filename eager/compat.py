"""Names PyTorch programs use in their boilerplate, with what they mean here:

* ``__version__`` (the ``dyngraph`` package's version, from its metadata);
* ``finfo``/``iinfo`` (NumPy's numbers for our dtypes, with PyTorch's attribute names);
* memory formats ``contiguous_format``, ``channels_last``, ``channels_last_3d``,
  ``preserve_format``: accepted wherever PyTorch takes ``memory_format=`` (``.to``,
  ``.contiguous``, ``clone``, ``*_like``); tensors are always row-major (C order) here, so
  ``channels_last`` changes no values and no layout;
* ``set_float32_matmul_precision``/``get_float32_matmul_precision`` (recorded; float32
  matmuls are always computed in float32 on the CPU), ``use_deterministic_algorithms``
  (everything here is deterministic);
* the legacy tensor types ``FloatTensor``, ``DoubleTensor``, ``HalfTensor``,
  ``BFloat16Tensor``, ``LongTensor``, ``IntTensor``, ``ShortTensor``, ``CharTensor``,
  ``ByteTensor``, ``BoolTensor`` (constructors from sizes or data, and ``isinstance``
  checks by dtype), ``autograd.Variable`` (returns the tensor, as PyTorch >= 0.4);
* ``Tensor.new_zeros``/``new_ones``/``new_full``/``new_empty``/``new_tensor`` and the
  device predicates ``is_xpu``, ``is_mps``, ``is_meta``, ``is_quantized``, ``is_mkldnn``,
  ``is_nested``, ``is_sparse`` ... (False: tensors live on the CPU or CUDA here);
* sparse COO basics as GCNs use them (``sparse_coo_tensor``, ``Tensor.to_sparse``,
  ``to_dense``, ``indices``/``values``, ``sparse.mm``, ``spmm``): **dense-backed** -- a
  "sparse" tensor here is an ordinary dense tensor holding the same values, so products
  cost a dense matmul and ``is_sparse`` is False;
* ``Tensor.lu``/``lu_unpack``/``linalg.lu_factor``/``linalg.lu`` (SciPy's LU with partial
  pivoting, forward only: no gradient).
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from . import factories as _fac
from .fn.index import nonzero
from .tensor import Tensor

__all__ = ["BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
           "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor",
           "are_deterministic_algorithms_enabled", "channels_last", "channels_last_3d",
           "contiguous_format", "finfo", "get_float32_matmul_precision", "iinfo",
           "lu_unpack", "memory_format", "preserve_format", "set_float32_matmul_precision",
           "sparse_coo_tensor", "spmm", "use_deterministic_algorithms"]


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("dyngraph")
    except Exception:  # not installed (a source checkout on sys.path)
        return "0.1.0"


__version__ = _version()


# -- memory formats ------------------------------------------------------------------

class memory_format:
    """A memory format name (``eager.channels_last``...); see the module docstring."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"eager.{self.name}"

    def __reduce__(self):
        return self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


# -- finfo / iinfo ---------------------------------------------------------------------

class finfo:
    """Machine limits of a floating dtype: ``bits``, ``eps``, ``max``, ``min``, ``tiny``
    (= ``smallest_normal``), ``resolution``, ``dtype``.  ``finfo()`` is the default dtype's."""

    def __init__(self, type=None):
        d = _dt.DEFAULT_FLOAT if type is None else _dt.from_numpy(np.dtype(_dt.to_numpy(type)))
        if not _dt.is_float(d.np):
            raise TypeError(f"finfo: {d} is not a floating point dtype")
        if d.np == _dt.BF16_NP:
            import ml_dtypes
            fi = ml_dtypes.finfo(ml_dtypes.bfloat16)
        else:
            fi = np.finfo(d.np)
        self.bits = int(fi.bits)
        self.eps = float(fi.eps)
        self.max = float(fi.max)
        self.min = float(fi.min)
        self.tiny = self.smallest_normal = float(fi.tiny if hasattr(fi, "tiny")
                                                 else fi.smallest_normal)
        self.resolution = 10.0 ** -int(fi.precision)
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer (or bool) dtype: ``bits``, ``max``, ``min``, ``dtype``."""

    def __init__(self, type):
        d = _dt.from_numpy(np.dtype(_dt.to_numpy(type)))
        if d.np.kind == "b":
            self.bits, self.min, self.max = 8, 0, 1
        elif d.np.kind in "iu":
            ii = np.iinfo(d.np)
            self.bits, self.min, self.max = int(ii.bits), int(ii.min), int(ii.max)
        else:
            raise TypeError(f"iinfo: {d} is not an integer dtype (use finfo)")
        self.dtype = d.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


# -- precision / determinism flags -------------------------------------------------------

_MATMUL_PRECISION = ["highest"]
_DETERMINISTIC = [False, False]


def set_float32_matmul_precision(precision: str) -> None:
    """Record ``"highest"``, ``"high"`` or ``"medium"``; float32 matmuls here always run in
    float32 (NumPy's BLAS), so results do not change."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision!r}; expected 'highest', 'high' or "
                           "'medium'")
    _MATMUL_PRECISION[0] = precision


def get_float32_matmul_precision() -> str:
    return _MATMUL_PRECISION[0]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded; every op here is deterministic already."""
    _DETERMINISTIC[0] = bool(mode)
    _DETERMINISTIC[1] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _DETERMINISTIC[0]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _DETERMINISTIC[1]


# -- legacy tensor types -----------------------------------------------------------------

class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype and obj.device.type == "cpu"

    def __call__(cls, *args, device=None):
        if len(args) == 1 and not isinstance(args[0], int) and not (
                isinstance(args[0], tuple) and all(isinstance(a, int) for a in args[0])
                and type(args[0]).__name__ == "Size"):
            data = args[0]
            if isinstance(data, Tensor):
                return data.to(cls._dtype)
            return _fac.tensor(data, dtype=cls._dtype, device=device)
        shape = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
        return _fac.zeros(*shape, dtype=cls._dtype, device=device)

    def __repr__(cls):
        return f"<class 'eager.{cls.__name__}'>"


def _legacy(name: str, dtype):
    return _LegacyMeta(name, (), {"_dtype": dtype, "__doc__":
                                  f"Legacy constructor: ``{name}(*sizes)`` (zeros) or "
                                  f"``{name}(data)``, dtype {dtype.name}; "
                                  f"``isinstance(t, {name})`` checks the dtype."})


FloatTensor = _legacy("FloatTensor", _dt.float32)
DoubleTensor = _legacy("DoubleTensor", _dt.float64)
HalfTensor = _legacy("HalfTensor", _dt.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", _dt.bfloat16)
LongTensor = _legacy("LongTensor", _dt.int64)
IntTensor = _legacy("IntTensor", _dt.int32)
ShortTensor = _legacy("ShortTensor", _dt.int16)
CharTensor = _legacy("CharTensor", _dt.int8)
ByteTensor = _legacy("ByteTensor", _dt.uint8)
BoolTensor = _legacy("BoolTensor", _dt.bool_)


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: the tensor itself (PyTorch merged Variable
    into Tensor in 0.4); ``isinstance(t, Variable)`` is ``isinstance(t, Tensor)``."""

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        t = data if isinstance(data, Tensor) else _fac.tensor(data)
        if requires_grad and not t.requires_grad:
            t = t.detach().requires_grad_(True)  # a leaf sharing the data, as PyTorch
        return t


# -- Tensor.new_* and device predicates ---------------------------------------------------

def _shape_args(size):
    if len(size) == 1 and not isinstance(size[0], int):
        return tuple(size[0])
    return tuple(size)


def _new_kw(self, dtype, device):
    return dict(dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    """Zeros of ``size`` with this tensor's dtype and device (unless given)."""
    return _fac.zeros(*_shape_args(size), requires_grad=requires_grad,
                      **_new_kw(self, dtype, device))


def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    """Ones of ``size`` with this tensor's dtype and device (unless given)."""
    return _fac.ones(*_shape_args(size), requires_grad=requires_grad,
                     **_new_kw(self, dtype, device))


def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    """An uninitialized (here: zero) tensor of ``size`` with this tensor's dtype/device."""
    return new_zeros(self, *size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    """``fill_value`` everywhere, shape ``size``, this tensor's dtype and device."""
    return _fac.full(tuple(size) if not isinstance(size, int) else (size,), fill_value,
                     requires_grad=requires_grad, **_new_kw(self, dtype, device))


def new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    """A copy of ``data`` with this tensor's dtype and device (unless given)."""
    return _fac.tensor(data, requires_grad=requires_grad, **_new_kw(self, dtype, device))


def _false(self) -> bool:
    return False


for _name, _fn in (("new_zeros", new_zeros), ("new_ones", new_ones), ("new_empty", new_empty),
                   ("new_full", new_full), ("new_tensor", new_tensor)):
    setattr(Tensor, _name, _fn)
for _name in ("is_xpu", "is_mps", "is_meta", "is_quantized", "is_mkldnn", "is_nested",
              "is_sparse", "is_sparse_csr", "is_vulkan", "is_ipu", "is_hpu", "is_mtia",
              "is_maia", "is_xla"):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, property(_false))
if not hasattr(Tensor, "is_cpu"):
    Tensor.is_cpu = property(lambda self: self.device.type == "cpu")


# -- sparse COO, dense-backed ---------------------------------------------------------------

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A COO tensor, **dense-backed**: the dense tensor with ``values`` summed at
    ``indices`` (shape ``(ndim, nnz)``); gradients flow to ``values``."""
    idx = indices if isinstance(indices, Tensor) else _fac.tensor(indices)
    vals = values if isinstance(values, Tensor) else _fac.tensor(values)
    if dtype is not None:
        vals = vals.to(dtype)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    nd = int(idx.shape[0])
    if size is None:
        size = tuple(int(m) + 1 for m in idx.amax(1).tolist()) + tuple(vals.shape[1:])
    size = tuple(size)
    idx = idx.long()
    if idx.shape[1] and (bool((idx < 0).any()) or any(
            int(m) >= s for m, s in zip(idx.amax(1).tolist(), size[:nd]))):
        raise RuntimeError(f"sparse_coo_tensor: an index is out of bounds for size {list(size)}")
    sparse_size = size[:nd]
    lin = _fac.zeros(int(idx.shape[1]), dtype=_dt.int64)
    stride = 1
    for i in range(nd - 1, -1, -1):
        lin = lin + idx[i] * stride
        stride *= int(sparse_size[i])
    flat = _fac.zeros(stride, *size[nd:], dtype=vals.dtype, device=device)
    out = flat.index_add(0, lin, vals).reshape(size)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _to_sparse(self, *args, **kwargs):
    return self


def _to_dense(self, *args, **kwargs):
    return self


def _indices(self):
    return nonzero(self.detach()).t()


def _values(self):
    idx = _indices(self)
    return self[tuple(idx[i] for i in range(idx.shape[0]))]


def spmm(input, mat2):
    """``input @ mat2`` (sparse input is dense-backed here)."""
    return input @ mat2


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True):
    """``(P, L, U)`` from ``Tensor.lu``'s packed result (1-based pivots, as PyTorch)."""
    lu = LU_data.detach().numpy()
    piv = LU_pivots.numpy().astype(np.int64) - 1
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    U = np.triu(lu[..., :k, :])
    batch = lu.shape[:-2]
    P = np.zeros(batch + (m, m), dtype=lu.dtype)
    for b in np.ndindex(*batch):
        perm = np.arange(m)
        for i, p in enumerate(piv[b]):
            perm[[i, p]] = perm[[p, i]]
        P[b + (perm, np.arange(m))] = 1
    t = _fac.tensor
    return (t(P) if unpack_pivots else None, t(L) if unpack_data else None,
            t(U) if unpack_data else None)


def _lu_factor_np(A: np.ndarray):
    import scipy.linalg as sl
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    LU = np.empty_like(A)
    piv = np.empty(batch + (k,), dtype=np.int32)
    info = np.zeros(batch, dtype=np.int32)
    for b in np.ndindex(*batch):
        if m == n:
            lu, p = sl.lu_factor(A[b], check_finite=False)
        else:
            p_, l_, u_ = sl.lu(A[b], check_finite=False)
            lu = np.zeros((m, n), A.dtype)
            lu[:, :k] += np.tril(l_, -1)
            lu[:k, :] += np.triu(u_)
            perm = p_.T.argmax(1)  # row i of P^T A is row perm[i] of A
            cur = np.arange(m)
            p = np.empty(k, np.int64)
            pos = {r: i for i, r in enumerate(cur)}
            for i in range(k):
                j = pos[perm[i]]
                p[i] = j
                ri, rj = cur[i], cur[j]
                cur[i], cur[j] = rj, ri
                pos[rj], pos[ri] = i, j
        LU[b] = lu
        piv[b] = p[:k] + 1
        info[b] = int(np.sum(np.diag(lu)[:k] == 0) > 0)
    return LU, piv, info


def _tensor_lu(self, pivot: bool = True, get_infos: bool = False):
    """``(LU, pivots)`` (and ``infos`` with ``get_infos``): SciPy's partial-pivot LU, packed
    as PyTorch's; no gradient."""
    if not pivot:
        raise RuntimeError("lu without pivoting is not supported on the CPU")
    LU, piv, info = _lu_factor_np(self.detach().numpy())
    out = (_fac.tensor(LU), _fac.tensor(piv))
    return out + (_fac.tensor(info),) if get_infos else out


def _linalg_lu_factor(A, *, pivot: bool = True):
    return _tensor_lu(A, pivot)


def _linalg_lu(A, *, pivot: bool = True):
    LU, piv = _tensor_lu(A, pivot)
    return lu_unpack(LU, piv)


Tensor.to_sparse = _to_sparse
Tensor.to_sparse_coo = _to_sparse
Tensor.to_dense = _to_dense
Tensor.coalesce = _to_sparse
Tensor.is_coalesced = lambda self: True
Tensor.indices = _indices
Tensor._indices = _indices
Tensor.values = _values
Tensor._values = _values
Tensor.lu = _tensor_lu
del _name, _fn
