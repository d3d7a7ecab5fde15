"""Indexing functions with PyTorch's semantics: ``Tensor.__getitem__``/``__setitem__``,
``gather``, ``scatter``/``scatter_add``, ``index_select``, ``masked_fill``,
``take_along_dim``, ``take``, ``nonzero``/``argwhere``, ``masked_select``.

Indexing follows PyTorch (not NumPy) where they differ: ints, slices, ``None`` and
``...`` are applied first, as one view (``basic_index``); index tensors/lists and bool
masks are then applied to the remaining dimensions of that view (``index``, a copy), so
an int never counts as an advanced index.  Negative slice steps are an error.  A
non-tuple list is read as a tuple when it holds slices, ``None``, ``...``, sequences or
tensors (PyTorch's and NumPy's old rule), else as an index tensor.
"""

from __future__ import annotations

import numpy as np

from .._state import STATE
from ..construct import tensor
from ..devices import to_device
from ..dispatch import STORAGE_RULES, dispatch, implementation
from ..dtypes import is_float as _isf
from ..inplace import inplace
from ..ops import index as _ix
from ..tensor import Tensor, _wrap_dim
from .shape import cat, expand, permute, reshape, unbind, unsqueeze

__all__ = [
    "argwhere",
    "gather",
    "index_select",
    "masked_fill",
    "masked_select",
    "nonzero",
    "scatter",
    "scatter_add",
    "take",
    "take_along_dim",
]

_I64 = np.dtype(np.int64)
_I32 = np.dtype(np.int32)


def _bcast_error(a: tuple, b: tuple) -> RuntimeError:
    """PyTorch's message for shapes ``a`` and ``b`` that do not broadcast."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    d = max(i for i in range(n) if pa[i] != pb[i] and 1 not in (pa[i], pb[i]))
    return RuntimeError(f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                        f"({pb[d]}) at non-singleton dimension {d}")


def _tensor(data, like: Tensor, dtype=None):
    """``data`` (a list, an array, a value) as a tensor on ``like``'s device (an index or
    a value of ``like[...]``, as PyTorch puts them, whatever the default device)."""
    return tensor(data, dtype=dtype, device=like.device)


# -- parsing an index key -----------------------------------------------------------------

class _Bool:
    """A Python bool (or 0-d bool tensor) in a key: a new dimension of size 1 (True) or 0."""
    __slots__ = ("value",)

    def __init__(self, value: bool):
        self.value = value


def _seq_as_tuple(key) -> bool:
    if isinstance(key, tuple):
        return True
    if not isinstance(key, list) or len(key) >= 32:
        return False
    for e in key:
        if e is None or e is Ellipsis or isinstance(e, (Tensor, list, tuple, np.ndarray, slice)):
            return True
    return False


def _entry(e, x: Tensor):
    """One key entry of ``x[key]`` as None, Ellipsis, slice, int, _Bool or an index Tensor
    on ``x``'s device (a CPU index tensor of a device tensor is copied there, as
    PyTorch's)."""
    if e is None or e is Ellipsis or type(e) is slice:
        return e
    if isinstance(e, (bool, np.bool_)):
        return _Bool(bool(e))
    if isinstance(e, (int, np.integer)):
        return int(e)
    if isinstance(e, Tensor):
        if e._data.ndim == 0:
            kind = e._data.dtype.kind
            if kind == "b":
                return _Bool(bool(e))
            if kind in "iu":
                return int(e)  # PyTorch selects with a 0-d integer tensor (a view)
        if e.device.type == "cpu" and x.device.type != "cpu":
            return to_device(e, x.device.type)
        return e
    if isinstance(e, range):  # PyTorch takes a range as the list of its integers
        e = np.arange(e.start, e.stop, e.step, dtype=np.int64)
    if isinstance(e, (list, tuple, np.ndarray)):
        t = _tensor(e, x)
        if t._data.size == 0 and _isf(t._data.dtype):
            t = _tensor(e, x, dtype=_I64)
        return _entry(t, x)
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(e).__name__})")


def _is_mask(t: Tensor) -> bool:
    dt = t._data.dtype
    return dt.kind == "b" or dt == np.uint8


def _slice(s: slice, n: int) -> tuple:
    step = 1 if s.step is None else int(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start, stop, step = slice(s.start, s.stop, step).indices(n)
    count = len(range(start, stop, step))
    if count <= 1:
        step = 1
    return (start, start + (count - 1) * step + 1 if count else start, step)


def _parse(x: Tensor, key):
    """Split ``key`` into a canonical basic key (see :mod:`eager.ops.index`) and the
    advanced entries ``[(dim of the basic result, Tensor or bool, kind)]``."""
    if not _seq_as_tuple(key):
        key = (key,)
    entries = [_entry(e, x) for e in key]
    shape = x._data.shape
    nd = len(shape)
    consumed = 0
    ellipses = 0
    for e in entries:
        if e is Ellipsis:
            ellipses += 1
        elif e is None or type(e) is _Bool:
            pass
        elif type(e) is Tensor and _is_mask(e):
            consumed += e._data.ndim
        else:
            consumed += 1
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    bkey = []
    adv = []
    i = o = pos = 0  # input dim, output dim, PyTorch's dim count for messages
    for e in entries:
        if e is Ellipsis:
            for _ in range(nd - consumed):
                bkey.append((0, shape[i], 1))
                i += 1
                o += 1
            pos += nd - consumed
        elif e is None:
            bkey.append(None)
            o += 1
            pos += 1
        elif type(e) is _Bool:
            bkey.append(None)
            adv.append((o, e.value, "bool"))
            o += 1
            pos += 1
        elif type(e) is int:
            n = shape[i]
            if not -n <= e < n:
                raise IndexError(f"index {e} is out of bounds for dimension {pos} with size {n}")
            bkey.append(e + n if e < 0 else e)
            i += 1
            pos += 1
        elif type(e) is slice:
            bkey.append(_slice(e, shape[i]))
            i += 1
            o += 1
            pos += 1
        else:
            if _is_mask(e):
                m = e._data.ndim
                kind = "mask"
            elif e._data.dtype in (_I64, _I32):
                m = 1
                kind = "int"
            else:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            for _ in range(m):
                bkey.append((0, shape[i], 1))
                i += 1
            adv.append((o, e, kind))
            o += m
            pos += m
    while i < nd:
        bkey.append((0, shape[i], 1))
        i += 1
    return tuple(bkey), adv


def _basic_shape(shape: tuple, bkey: tuple) -> tuple:
    out = []
    i = 0
    for e in bkey:
        if e is None:
            out.append(1)
            continue
        if type(e) is tuple:
            out.append(len(range(*e)))
        i += 1
    return tuple(out)


def _is_identity(shape: tuple, bkey: tuple) -> bool:
    return len(bkey) == len(shape) and all(
        type(e) is tuple and e[0] == 0 and e[1] == n and e[2] == 1 for e, n in zip(bkey, shape))


def _pack(adv: list, yshape: tuple, x: Tensor):
    """The advanced entries of ``x[key]`` as one ``(k, *B)`` index tensor (on ``x``'s
    device) and its ``dims``."""
    comps = []
    for o, e, kind in adv:
        if kind == "bool":
            t = _tensor([0] if e else [], x, dtype=_I64)
            comps.append(([o], unsqueeze(t, 0)))
        elif kind == "mask":
            m = e._data.ndim
            for j in range(m):
                if e._data.shape[j] != yshape[o + j]:
                    raise IndexError(f"The shape of the mask {list(e._data.shape)} at index {j} "
                                     f"does not match the shape of the indexed tensor "
                                     f"{list(yshape)} at index {o + j}")
            nz = dispatch(_ix.Nonzero, e)
            comps.append((list(range(o, o + m)), permute(nz, (1, 0))))
        else:
            comps.append(([o], unsqueeze(e, 0)))
    if len(comps) == 1:
        dims, idx = comps[0]
        return idx, tuple(dims)
    batches = [tuple(c._data.shape[1:]) for _, c in comps]
    try:
        bshape = np.broadcast_shapes(*batches)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         f"shapes {', '.join(str(list(b)) for b in batches)}") from None
    dims = []
    parts = []
    for ds, c in comps:
        dims += ds
        k = c._data.shape[0]
        parts.append(c if tuple(c._data.shape[1:]) == bshape else expand(c, (k,) + bshape))
    return cat(parts, 0), tuple(dims)


# -- __getitem__ / __setitem__ ------------------------------------------------------------

def getitem(self: Tensor, key):
    """``self[key]``: a view for ints/slices/None/Ellipsis, a copy with index tensors."""
    bkey, adv = _parse(self, key)
    shape = self._data.shape
    if not adv:
        return dispatch(_ix.BasicIndex, self, key=bkey)
    y = self if _is_identity(shape, bkey) else dispatch(_ix.BasicIndex, self, key=bkey)
    idx, dims = _pack(adv, _basic_shape(shape, bkey), self)
    return dispatch(_ix.Index, y, idx, dims=dims)


def setitem(self: Tensor, key, value) -> None:
    """``self[key] = value`` in place (bumps the version counter).  With autograd, the
    functional ``set_item`` op's result replaces ``self`` (gradients flow to the old
    ``self`` outside the written region and to ``value``)."""
    bkey, adv = _parse(self, key)
    if adv:
        idx, dims = _pack(adv, _basic_shape(self._data.shape, bkey), self)
    else:
        idx, dims = None, ()
    if isinstance(value, (Tensor, bool, int, float)):
        v = value
    elif isinstance(value, (np.integer, np.floating, np.bool_)):
        v = value.item()
    else:
        v = _tensor(value, self, dtype=self._data.dtype)
    v_rg = isinstance(v, Tensor) and v.requires_grad
    grad = STATE.grad_enabled and (self.requires_grad or v_rg)
    # a direct write unless recorded, differentiated, or on storage running ops through
    # rules of its own (vmap's batched tensors: the functional op through dispatch,
    # written back as any in-place op is)
    direct = STATE.tracer is None and not grad and not (
        STORAGE_RULES and _wrapped(self, v, idx))
    if direct and type(self._data) is not np.ndarray:
        implementation(_ix.SetItem, self.device.type)(self._data, v._data if isinstance(
            v, Tensor) else v, None if idx is None else idx._data, key=bkey, dims=dims,
            out=self._data)
        self._version[0] += 1
        return
    if direct:
        _ix.assign(self._data, bkey, None if idx is None else idx._data, dims,
                   v._data if isinstance(v, Tensor) else v)
        ver = self._version
        ver[0] += 1
        ver[1] = "setitem"
        return
    if STATE.grad_enabled and self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    result = dispatch(_ix.SetItem, self, v, idx, key=bkey, dims=dims)
    inplace(self, result, "setitem")


def _wrapped(*ts) -> bool:
    """Whether a tensor among ``ts`` (None and Python scalars are skipped) has wrapping
    storage (:data:`eager.dispatch.STORAGE_RULES`)."""
    return any(type(t._data) in STORAGE_RULES for t in ts if isinstance(t, Tensor))


__getitem__ = getitem
__setitem__ = setitem


# -- gather / scatter ---------------------------------------------------------------------

def _index_arg(index, op: str) -> Tensor:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    return index


def gather(input, dim: int, index, *, sparse_grad: bool = False):
    index = _index_arg(index, "gather")
    if (input.ndim == 0 or index.ndim == 0) and input.ndim <= 1 and index.ndim <= 1:
        out = gather(reshape(input, -1), 0, reshape(index, -1))
        return reshape(out, tuple(index.shape))
    d = _wrap_dim(dim, input.ndim, "gather")
    return dispatch(_ix.Gather, input, index, dim=d)


def _scatter_args(index, src, op):
    index = _index_arg(index, op)
    if isinstance(src, (np.integer, np.floating, np.bool_)):
        src = src.item()
    elif not isinstance(src, (Tensor, bool, int, float)):
        src = float(src)
    return index, src


def scatter(input, dim: int, index, src=None, value=None, *, reduce=None):
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    index, src = _scatter_args(index, src, "scatter")
    if reduce is not None:
        if reduce == "add":
            if not isinstance(src, Tensor):
                src = expand(_tensor(src, input, dtype=input._data.dtype), tuple(index.shape))
            return scatter_add(input, dim, index, src)
        raise RuntimeError(f"scatter(): reduce={reduce!r} is not supported (only 'add')")
    if input.ndim == 0:
        out = scatter(reshape(input, -1), 0, reshape(index, -1),
                      reshape(src, -1) if isinstance(src, Tensor) else src)
        return reshape(out, ())
    d = _wrap_dim(dim, input.ndim, "scatter")
    return dispatch(_ix.Scatter, input, index, src, dim=d)


def scatter_add(input, dim: int, index, src):
    index = _index_arg(index, "scatter_add")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not {type(src).__name__}")
    if input.ndim == 0:
        out = scatter_add(reshape(input, -1), 0, reshape(index, -1), reshape(src, -1))
        return reshape(out, ())
    d = _wrap_dim(dim, input.ndim, "scatter_add")
    return dispatch(_ix.ScatterAdd, input, index, src, dim=d)


def index_select(input, dim: int, index):
    index = _index_arg(index, "index_select")
    if index._data.dtype not in (_I32, _I64):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0:
        out = index_select(reshape(input, (1,)), 0, index)
        return reshape(out, ()) if index.ndim == 0 else out
    d = _wrap_dim(dim, input.ndim, "index_select")
    ix = index._data
    if ix.size and (ix.min() < 0 or ix.max() >= input._data.shape[d]):
        raise IndexError("index out of range in self")
    idx = unsqueeze(index if index.ndim == 1 else reshape(index, (1,)), 0)
    return dispatch(_ix.Index, input, idx, dims=(d,))


_TORCH_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def take_along_dim(input, indices, dim=None):
    indices = _index_arg(indices, "take_along_dim")
    if indices._data.dtype != _I64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_TORCH_TYPE.get(indices._data.dtype.name, indices._data.dtype)}")
    if dim is None:
        return gather(reshape(input, -1), 0, reshape(indices, -1))
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    d = _wrap_dim(dim, input.ndim, "take_along_dim")
    s_in, s_ix = list(input._data.shape), list(indices._data.shape)
    a, b = list(s_in), list(s_ix)
    a[d] = b[d] = 1
    try:
        bshape = list(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise _bcast_error(tuple(a), tuple(b)) from None
    want_in = bshape[:d] + [s_in[d]] + bshape[d + 1:]
    want_ix = bshape[:d] + [s_ix[d]] + bshape[d + 1:]
    x = input if want_in == s_in else expand(input, tuple(want_in))
    ix = indices if want_ix == s_ix else expand(indices, tuple(want_ix))
    return gather(x, d, ix)


def take(input, index):
    index = _index_arg(index, "take")
    flat = reshape(input, -1)
    n = flat._data.shape[0]
    ix = index._data
    if ix.size and (ix.min() < -n or ix.max() >= n):
        bad = int(ix.max()) if ix.max() >= n else int(ix.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    return getitem(flat, index)


# -- masks --------------------------------------------------------------------------------

def _mask_arg(mask, input):
    return mask if isinstance(mask, Tensor) else _tensor(mask, input)


def masked_fill(input, mask, value):
    mask = _mask_arg(mask, input)
    s_in, s_m = tuple(input._data.shape), tuple(mask._data.shape)
    if s_in != s_m:
        try:
            np.broadcast_shapes(s_m, s_in)
        except ValueError:
            raise _bcast_error(s_m, s_in) from None
    if not isinstance(value, Tensor):
        if isinstance(value, (np.integer, np.floating, np.bool_)):
            value = value.item()
        elif not isinstance(value, (bool, int, float)):
            value = _tensor(value, input)
    return dispatch(_ix.MaskedFill, input, mask, value)


def masked_select(input, mask):
    mask = _mask_arg(mask, input)
    if mask._data.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    s_in, s_m = tuple(input._data.shape), tuple(mask._data.shape)
    if s_in != s_m:
        try:
            bshape = tuple(np.broadcast_shapes(s_in, s_m))
        except ValueError:
            raise _bcast_error(s_m, s_in) from None
        if bshape != s_in:
            input = expand(input, bshape)
        if bshape != s_m:
            mask = expand(mask, bshape)
    return getitem(input, mask)


def nonzero(input, *, as_tuple: bool = False):
    if not as_tuple:
        return dispatch(_ix.Nonzero, input)
    if input.ndim == 0:
        input = reshape(input, (1,))
    return unbind(dispatch(_ix.Nonzero, input), 1)


def argwhere(input):
    return dispatch(_ix.Nonzero, input)


METHODS = [
    "__getitem__", "__setitem__", "gather", "scatter", "scatter_add", "index_select",
    "masked_fill", "take_along_dim", "take", "nonzero", "argwhere", "masked_select",
]
INPLACE = {"scatter": None, "scatter_add": None, "masked_fill": None}
