"""Fused BLAS-style functions with PyTorch's names, signatures and checks: ``addmm``,
``addmv``, ``baddbmm``, ``addbmm`` (``beta * input + alpha * product``) and ``tensordot``.

They are compositions of ``mm``/``bmm``/``mv`` (the one ``matmul`` op), ``expand``,
``mul`` and ``add``, so gradients and compiled replay come from those ops.  Like
PyTorch: the operands must share one dtype, ``input`` is expanded (not broadcast) to the
product's shape, ``beta=0`` ignores ``input`` (NaN in it is not propagated) and for
integer tensors ``alpha``/``beta`` are truncated to integers.  The rounding is that of
``alpha * (A @ B) + beta * C`` computed in that order, not one fused BLAS call.
"""

from __future__ import annotations

import numpy as np

from ..dispatch import dispatch
from ..dtypes import cpp_name, is_float, scalar_name
from ..ops import factory as _f
from ..tensor import Tensor, _wrap_dim
from .args import is_int
from .elementwise import add, mul, where
from .linalg import _need_tensor, bmm, mm, mv
from .reduce import sum as _sum
from .shape import expand, permute, reshape

__all__ = ["addbmm", "addmm", "addmv", "baddbmm", "tensordot"]


def _scale(x: Tensor, s):
    if not is_float(x._data.dtype) and x._data.dtype.kind != "b":
        s = int(s)
    return x if s == 1 else mul(x, s)


def _combine(input: Tensor, prod: Tensor, beta, alpha) -> Tensor:
    """``beta * input + alpha * prod`` with ``input`` expanded to ``prod``'s shape."""
    inp = expand(input, tuple(prod.shape))
    prod = _scale(prod, alpha)
    if beta == 0:   # input ignored (NaN not propagated), its gradient zeros as PyTorch's
        keep = dispatch(_f.Full, shape=(), value=True, dtype=np.dtype(np.bool_))
        return where(keep if prod.device.type == "cpu" else keep.to(prod.device), prod, inp)
    return add(_scale(inp, beta), prod)


def _same(a: Tensor, b: Tensor, first: str, second: str) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{first} and {second} must have the same dtype, but got "
                           f"{scalar_name(a._data.dtype)} and {scalar_name(b._data.dtype)}")


def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``.

    Args:
        input (Tensor): added to the product; expandable to ``(n, p)``.
        mat1 (Tensor): an ``(n, m)`` matrix.
        mat2 (Tensor): an ``(m, p)`` matrix.
        beta (Number, optional): multiplier of ``input``. Default: 1.
        alpha (Number, optional): multiplier of ``mat1 @ mat2``. Default: 1.

    Example::

        >>> M = eager.zeros(2, 3)
        >>> eager.addmm(M, eager.ones(2, 4), eager.ones(4, 3), alpha=0.5)
        tensor([[2., 2., 2.],
                [2., 2., 2.]])
    """
    for x, name, pos in ((input, "input", 1), (mat1, "mat1", 2), (mat2, "mat2", 3)):
        _need_tensor("addmm", x, name, pos)
    if mat1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    s1, s2 = tuple(mat1.shape), tuple(mat2.shape)
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and "
                           f"{s2[0]}x{s2[1]})")
    _same(input, mat2, "self", "mat2")
    _same(mat1, mat2, "mat1", "mat2")
    return _combine(input, mm(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``.

    Args:
        input (Tensor): added to the product; expandable to ``(n,)``.
        mat (Tensor): an ``(n, m)`` matrix.
        vec (Tensor): a vector of size ``m``.
        beta (Number, optional): multiplier of ``input``. Default: 1.
        alpha (Number, optional): multiplier of ``mat @ vec``. Default: 1.

    Example::

        >>> eager.addmv(eager.ones(2), eager.ones(2, 3), eager.ones(3), beta=2)
        tensor([5., 5.])
    """
    for x, name, pos in ((input, "input", 1), (mat, "mat", 2), (vec, "vec", 3)):
        _need_tensor("addmv", x, name, pos)
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    sm, sv = tuple(mat.shape), tuple(vec.shape)
    if sm[1] != sv[0] or (input.numel() != sm[0] and input.numel() != 1):
        raise RuntimeError(f"size mismatch, got input ({input.numel()}), mat ({sm[0]}x{sm[1]}),"
                           f" vec ({sv[0]})")
    dts = [x._data.dtype for x in (input, mat, vec)]
    if len(set(dts)) > 1:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{scalar_name(dts[0])}, {scalar_name(dts[1])}, and "
                           f"{scalar_name(dts[2])}")
    return _combine(input, mv(mat, vec), beta, alpha)


def _check_batches(batch1, batch2, op: str) -> None:
    for x, name, pos in ((batch1, "batch1", 2), (batch2, "batch2", 3)):
        _need_tensor(op, x, name, pos)
        if x.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``, batch by batch.

    Args:
        input (Tensor): added to the products; expandable to ``(b, n, p)``.
        batch1 (Tensor): ``(b, n, m)`` matrices.
        batch2 (Tensor): ``(b, m, p)`` matrices.
        beta (Number, optional): multiplier of ``input``. Default: 1.
        alpha (Number, optional): multiplier of the products. Default: 1.

    Example::

        >>> out = eager.baddbmm(eager.zeros(1, 3), eager.ones(2, 3, 4), eager.ones(2, 4, 3))
        >>> out.shape
        eager.Size([2, 3, 3])
    """
    _need_tensor("baddbmm", input, "input", 1)
    _check_batches(batch1, batch2, "baddbmm")
    s1, s2 = tuple(batch1.shape), tuple(batch2.shape)
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{s1[0]}, {s1[2]}] but got: [{s2[0]}, {s2[1]}].")
    d0, d1, d2 = (x._data.dtype for x in (input, batch1, batch2))
    if d0 != d1:
        raise RuntimeError(f"Input dtypes must be the same, got: input {cpp_name(d0)}, batch1: "
                           f"{cpp_name(d1)}, batch2: {cpp_name(d2)}")
    if d1 != d2:
        raise RuntimeError(f"expected scalar type {scalar_name(d1)} but found "
                           f"{scalar_name(d2)}")
    prod = bmm(batch1, batch2)
    return _combine(input, prod, beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]``: the products of the batches
    summed into one matrix (one ``(n, b*m) @ (b*m, p)`` product).

    Args:
        input (Tensor): added to the sum; expandable to ``(n, p)``.
        batch1 (Tensor): ``(b, n, m)`` matrices.
        batch2 (Tensor): ``(b, m, p)`` matrices.
        beta (Number, optional): multiplier of ``input``. Default: 1.
        alpha (Number, optional): multiplier of the sum of products. Default: 1.

    Example::

        >>> eager.addbmm(eager.zeros(2, 2), eager.ones(3, 2, 4), eager.ones(3, 4, 2))
        tensor([[12., 12.],
                [12., 12.]])
    """
    _need_tensor("addbmm", input, "input", 1)
    _check_batches(batch1, batch2, "addbmm")
    s1, s2 = tuple(batch1.shape), tuple(batch2.shape)
    if s1[0] != s2[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {s1[0]} "
                           f"and {s2[0]}")
    if s1[2] != s2[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and "
                           f"{s2[1]}x{s2[2]})")
    _same(input, batch2, "self", "mat2")
    _same(batch1, batch2, "mat1", "mat2")
    b, n, m = s1
    a = reshape(permute(batch1, 1, 0, 2), (n, b * m))
    prod = mm(a, reshape(batch2, (b * m, s2[2])))
    return _combine(input, prod, beta, alpha)


def _dims_list(d) -> list:
    if isinstance(d, Tensor):
        d = d.tolist()
    return [int(d)] if is_int(d) else [int(i) for i in d]


def tensordot(a, b, dims=2, out=None) -> Tensor:
    """Sum of products over the dimensions ``dims`` of ``a`` and ``b`` (a generalized
    matrix product).

    Args:
        a (Tensor): left tensor.
        b (Tensor): right tensor.
        dims (int or tuple of two lists or Tensor): an int ``d`` contracts the last ``d``
            dimensions of ``a`` with the first ``d`` of ``b``; a pair of lists names the
            dimensions of ``a`` and ``b`` to contract, in matching order. Default: 2.
        out: not supported (must be None).

    Example::

        >>> a = eager.arange(60.).reshape(3, 4, 5)
        >>> b = eager.arange(24.).reshape(4, 3, 2)
        >>> eager.tensordot(a, b, dims=([1, 0], [0, 1])).shape
        eager.Size([5, 2])
    """
    if out is not None:
        raise NotImplementedError("tensordot: out= is not supported")
    if not isinstance(dims, (tuple, list, Tensor, int)) or isinstance(dims, bool):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    _need_tensor("tensordot", a, "a", 1)
    _need_tensor("tensordot", b, "b", 2)
    if isinstance(dims, Tensor) and dims.numel() > 1:
        if dims.shape[0] != 2:
            raise AssertionError(f"dims tensor must have size 2 in first dimension, got "
                                 f"{dims.shape[0]}")
        da, db = _dims_list(dims[0]), _dims_list(dims[1])
    elif isinstance(dims, (tuple, list)):
        da, db = dims
        if is_int(da) or is_int(db):
            raise TypeError("tensordot(): argument 'dims_self' (position 3) must be tuple of "
                            "ints, not int")
        da, db = _dims_list(da), _dims_list(db)
    else:
        n = int(dims.item()) if isinstance(dims, Tensor) else int(dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if n > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={n}")
        da, db = list(range(-n, 0)), list(range(n))
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    da = [_wrap_dim(d, a.ndim, "tensordot") for d in da]
    db = [_wrap_dim(d, b.ndim, "tensordot") for d in db]
    sa, sb = list(a.shape), list(b.shape)
    csize = 1
    for i, j in zip(da, db):
        if sb[j] == 1 and sa[i] != 1:      # a broadcast dimension is summed right away
            a = _sum(a, i, keepdim=True)
        elif sa[i] == 1 and sb[j] != 1:
            b = _sum(b, j, keepdim=True)
        elif sa[i] != sb[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{sa[i]} in dim {i} and second has size {sb[j]} in dim {j}")
        else:
            csize *= sa[i]
    free_a = [i for i in range(a.ndim) if i not in da]
    free_b = [j for j in range(b.ndim) if j not in db]
    size_a = 1
    for i in free_a:
        size_a *= sa[i]
    size_b = 1
    for j in free_b:
        size_b *= sb[j]
    a2 = reshape(permute(a, *(free_a + da)), (size_a, csize))
    b2 = reshape(permute(b, *(db + free_b)), (csize, size_b))
    return reshape(mm(a2, b2), tuple(sa[i] for i in free_a) + tuple(sb[j] for j in free_b))


METHODS = ["addmm", "addmv", "baddbmm", "addbmm"]
INPLACE: dict = {"addmm": None, "addmv": None, "baddbmm": None, "addbmm": None}
