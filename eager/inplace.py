"""Writing into a tensor in place: :func:`inplace` makes a tensor hold an op's result
(its storage written, its version bumped, its grad_fn taken over, PyTorch's errors for
leaves and views), :func:`fast_inplace` applies a NumPy ufunc directly when nothing needs
recording, and :func:`check_overlap` refuses inputs lying partly over the written memory.
Every in-place method (``add_``, ``x[i] = v``, ``copy_``, optimizers' updates) ends here.
"""

from __future__ import annotations

import numpy as np

from ._state import STATE
from .dispatch import copy_into, dispatch, same_device
from .dtypes import is_float as _isf
from .ops.elementwise import Cast
from .tensor import Tensor


def inplace(self: Tensor, result: Tensor, opname: str) -> Tensor:
    """Make ``self`` hold ``result``: write its data into self's storage, bump the version,
    and take over its grad_fn.  Raises PyTorch's errors for leaves that require grad."""
    if STATE.grad_enabled and self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if self._base is not None and (result.requires_grad or self._base.requires_grad) \
            and STATE.grad_enabled:
        raise RuntimeError(f"{opname}: in-place modification of a view of a tensor that is part "
                           "of an autograd graph is not supported; use an out-of-place op")
    src = result._data
    dst = self._data
    on_cpu = type(dst) is np.ndarray
    if type(src) is not type(dst):
        same_device((self, result))
    if src.shape != dst.shape:
        try:
            if np.broadcast_shapes(src.shape, dst.shape) != dst.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"{opname}: output with shape {list(dst.shape)} doesn't match the "
                               f"broadcast shape {list(src.shape)}") from None
        if on_cpu:
            src = np.broadcast_to(src, dst.shape)
    if src.dtype != dst.dtype:
        if not np.can_cast(src.dtype, dst.dtype, "same_kind"):
            raise RuntimeError(f"{opname}: result type {src.dtype} can't be cast to the "
                               f"desired output type {dst.dtype}")
        result = dispatch(Cast, result, dtype=dst.dtype)  # recorded: the tracer sees the dtype
        src = result._data
        if on_cpu and src.shape != dst.shape:
            src = np.broadcast_to(src, dst.shape)
    if not dst.flags.writeable:
        raise RuntimeError(f"{opname}: unsupported operation: the tensor is read-only (more "
                           "than one element of it may refer to a single memory location, as "
                           "after expand(); clone() it first)")
    node = result.grad_fn
    if node is not None and node.saved:
        _save_old_value(node, self)
    if on_cpu:
        np.copyto(dst, src, casting="unsafe")
    else:
        copy_into(dst, src)
    v = self._version
    v[0] += 1
    v[1] = opname
    if STATE.grad_enabled:
        if result.grad_fn is not None:
            self.grad_fn = result.grad_fn
            self.requires_grad = True
        elif self.grad_fn is not None:  # the new value does not depend on the graph
            self.grad_fn = None
            self.requires_grad = False
    if STATE.tracer is not None:
        STATE.tracer.on_inplace(self, result)
    return self


def _save_old_value(node, self: Tensor) -> None:
    """The in-place op's own backward may need ``self`` as it was before the write
    (``h.mul_(w)`` needs the old ``h`` for ``w``'s gradient): point it at a clone, as
    PyTorch saves the original value, instead of the tensor about to be overwritten."""
    saved = node.saved
    snap = None
    for k, entry in enumerate(saved):
        if type(entry) is tuple and entry[0] is self:
            if snap is None:
                snap = self.clone()
            saved[k] = (snap, snap._version[0])


def fast_inplace(self: Tensor, ufunc, other) -> bool:
    """True in-place ufunc when nothing needs recording (no grad, no tracer)."""
    if STATE.tracer is not None or type(self._data) is not np.ndarray:
        return False
    if self._data.dtype.char in "eE":  # half: dispatch's float32 maths and rounding
        return False
    if isinstance(other, Tensor):
        if other.requires_grad and STATE.grad_enabled:
            return False
        o = other._data
        if o.dtype != self._data.dtype:
            return False
    elif isinstance(other, (int, float)) and not isinstance(other, bool):
        o = other
        if isinstance(other, float) and not _isf(self._data.dtype):
            return False
    else:
        return False
    if self.requires_grad and STATE.grad_enabled:
        return False
    if self._base is not None and self._base.requires_grad and STATE.grad_enabled:
        return False
    ufunc(self._data, o, out=self._data)
    v = self._version
    v[0] += 1
    v[1] = ufunc.__name__ + "_"
    return True


def _dense(a: np.ndarray) -> bool:
    """Whether ``a``'s elements fill one block of memory, in any order of dimensions
    (PyTorch's ``is_non_overlapping_and_dense``)."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expected = a.itemsize
    for stride, size in sorted((abs(st), sz) for st, sz in zip(a.strides, a.shape)
                               if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def check_overlap(self: Tensor, args) -> None:
    """PyTorch's refusal of an in-place op whose input lies partly over the memory it
    writes (``a.add_(a.t())``, ``a.mul_(a[0])``): the result would depend on the order in
    which elements are written.  As PyTorch (``get_overlap_status``): the same elements
    with the same strides are fine, and so are tensors not dense in memory (too hard to
    tell, PyTorch does not refuse them either)."""
    d = self._data
    if type(d) is not np.ndarray:
        return
    root = d if d.base is None else d.base
    for a in args:
        if not isinstance(a, Tensor):
            continue
        o = a._data
        if o is d or type(o) is not np.ndarray or (o if o.base is None else o.base) is not root \
                or not o.size or not d.size or not _dense(o) or not _dense(d):
            continue
        ob, db = o.__array_interface__["data"][0], d.__array_interface__["data"][0]
        ob, db = ob + min(0, *_offsets(o)), db + min(0, *_offsets(d))   # lowest address
        oe, de = ob + o.nbytes, db + d.nbytes
        if (ob, oe) == (db, de) and o.strides == d.strides:
            continue
        if ob < de and db < oe:
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.")


def _offsets(a: np.ndarray) -> list:
    """Byte offsets of ``a``'s last element along each negative stride (from its data
    pointer to the lowest address it reaches)."""
    return [st * (sz - 1) for st, sz in zip(a.strides, a.shape) if st < 0] or [0]
