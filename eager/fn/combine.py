"""Tensors built from several tensors or from index patterns, with PyTorch's signatures:
``meshgrid``, ``cartesian_prod``, ``combinations``, ``block_diag``, ``kron``, ``cdist``,
``tril_indices``, ``triu_indices``.

All are compositions of existing ops (expand, reshape, cat, mul, indexing, the vector
norm), so their gradients and compiled replay come from those ops.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..amp.autocast_mode import cast_inputs as _autocast
from ..devices import factory_params
from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..dtypes import scalar_name
from ..ops import factory as _f
from ..ops import index as _ix
from ..ops import reduce as _red
from ..tensor import Tensor
from .elementwise import cast, mul, sub
from .shape import _tensor_list, cat, expand, reshape, stack, unsqueeze

__all__ = ["block_diag", "cartesian_prod", "cdist", "combinations", "kron", "meshgrid",
           "tril_indices", "triu_indices"]


def _tensors(tensors: tuple, op: str) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return _tensor_list(tensors, op)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-D/1-D tensors: output ``i`` holds ``tensors[i]`` along
    dimension ``i``.  ``indexing='ij'`` (the default, without PyTorch's deprecation
    warning) or ``'xy'`` (the first two dimensions swapped, as NumPy).  The outputs are
    expanded views."""
    tensors = _tensors(tensors, "meshgrid")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {list(t.shape)}")
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    n = len(tensors)
    axis = list(range(n))
    if indexing == "xy" and n >= 2:
        axis[0], axis[1] = 1, 0
    shape = [0] * n
    for i, t in enumerate(tensors):
        shape[axis[i]] = t.numel()
    out = []
    for i, t in enumerate(tensors):
        view = [1] * n
        view[axis[i]] = t.numel()
        out.append(expand(reshape(t, tuple(view)), tuple(shape)))
    return tuple(out)


def cartesian_prod(*tensors):
    """Rows of all combinations of one element from each 1-D tensor (``itertools.product``
    order); a single tensor is returned as it is."""
    tensors = _tensors(tensors, "cartesian_prod")
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input, r: int = 2, with_replacement: bool = False):
    """Rows of the length-``r`` combinations of the elements of a 1-D tensor
    (``itertools.combinations`` order; ``with_replacement``: with repeats)."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    on = _f.device_params(input)
    if r == 0:
        return dispatch(_f.Full, shape=(0,), value=0, dtype=input._data.dtype, **on)
    idx = dispatch(_f.CombinationIndices, n=input._data.shape[0], r=int(r),
                   with_replacement=bool(with_replacement), **on)
    return dispatch(_ix.Index, input, unsqueeze(idx, 0), dims=(0,))


def block_diag(*tensors):
    """A block-diagonal matrix of the given matrices (0-D: 1x1, 1-D: one row); dtypes
    promote."""
    tensors = _tensor_list(tensors, "block_diag")
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    if not tensors:
        return dispatch(_f.Full, shape=(1, 0), value=0, dtype=_dt.DEFAULT_FLOAT.np)
    npd = _dt.result_type(*[t._data for t in tensors])
    mats = [reshape(cast(t, _dt.from_numpy(npd)), (1, -1) if t.ndim == 1 else
                    tuple(t.shape) if t.ndim == 2 else (1, 1)) for t in tensors]
    total = sum(m._data.shape[1] for m in mats)
    rows = []
    left = 0
    for m in mats:
        r, c = m._data.shape
        parts = [dispatch(_f.Full, shape=(r, left), value=0, dtype=npd), m,
                 dispatch(_f.Full, shape=(r, total - left - c), value=0, dtype=npd)]
        rows.append(cat(parts, 1))
        left += c
    return cat(rows, 0)


def kron(input, other):
    """Kronecker product: ``out[i*p + k, j*q + l] = input[i, j] * other[k, l]`` for any
    ranks (the smaller one padded with leading 1s); dtypes promote."""
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = reshape(input, tuple(x for s in sa for x in (s, 1)))
    b = reshape(other, tuple(x for s in sb for x in (1, s)))
    return reshape(mul(a, b), tuple(x * y for x, y in zip(sa, sb)))


def cdist(x1, x2, p: float = 2.0, compute_mode=None):
    """p-norm distances between the rows of ``x1`` (``(..., P, M)``) and of ``x2``
    (``(..., R, M)``): ``(..., P, R)``, batch dimensions broadcast.  ``compute_mode`` is
    accepted and ignored: distances are always computed directly (no matrix-product
    shortcut), and the gradient is 0 where a distance is 0."""
    x1, x2 = _autocast("cdist", x1, x2)
    for name, x in (("X1", x1), ("X2", x2)):
        if not _isf(x._data.dtype):
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{scalar_name(x._data.dtype)}")
        if _dt.is_half(x._data.dtype):
            raise NotImplementedError(f"\"cdist\" not implemented for "
                                      f"'{scalar_name(x._data.dtype)}'")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D")
    if x1._data.shape[-1] != x2._data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1._data.shape[-1]} X2: {x2._data.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(x1._data.dtype)} but found "
                           f"{scalar_name(x2._data.dtype)}")
    d = sub(unsqueeze(x1, -2), unsqueeze(x2, -3))
    return dispatch(_red.Norm, d, p=float(p), dim=(d.ndim - 1,), keepdim=False)


def _tri_indices(row, col, offset, upper, dtype, device):
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    npd = _dt.to_numpy(_dt.int64 if dtype is None else dtype)
    return dispatch(_f.TriIndices, row=int(row), col=int(col), offset=int(offset),
                    upper=upper, dtype=npd, **factory_params(device))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """``(2, N)`` coordinates of the lower triangle of a ``row`` x ``col`` matrix (on and
    below diagonal ``offset``), row by row."""
    return _tri_indices(row, col, offset, False, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """``(2, N)`` coordinates of the upper triangle (on and above diagonal ``offset``)."""
    return _tri_indices(row, col, offset, True, dtype, device)


METHODS = ["kron"]
INPLACE: dict = {}
