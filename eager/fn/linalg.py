"""Linear-algebra functions with PyTorch's names and signatures: ``matmul`` (and the ``@``
operator), ``mm``, ``bmm``, ``dot``, ``mv``, ``outer``/``ger``, ``einsum``, ``tril``,
``triu``, ``diag`` and ``linear`` (``torch.nn.functional.linear``: one op, one grad node).

``mm``/``bmm``/``dot``/``mv`` check PyTorch's stricter shape rules, then run the one
``matmul`` op.  None of them promotes dtypes (as PyTorch).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..amp.autocast_mode import cast_inputs as _autocast
from ..amp.autocast_mode import dispatch_plain
from ..construct import tensor
from ..dispatch import dispatch
from ..ops import linalg as _la
from ..ops import reduce as _red
from ..ops import shape as _shp
from ..ops.elementwise import Add, Mul, Sub
from ..tensor import Tensor, _wrap_dim

__all__ = [
    "bmm",
    "cross",
    "diag",
    "diag_embed",
    "diagonal",
    "dot",
    "einsum",
    "ger",
    "matmul",
    "mm",
    "mv",
    "outer",
    "trace",
    "tril",
    "triu",
    "vdot",
]


def _need_tensor(fn: str, x, name: str, pos: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def matmul(input, other):
    """Matrix product with PyTorch's rules: 1-D x 1-D is a dot product, a 1-D first
    (second) argument is a row (column) vector that is removed from the result, N-D
    arguments are batches of matrices whose batch dimensions broadcast."""
    _need_tensor("matmul", input, "input", 1)
    _need_tensor("matmul", other, "other", 2)
    return dispatch(_la.Matmul, input, other)


def mm(input, mat2):
    _need_tensor("mm", input, "input", 1)
    _need_tensor("mm", mat2, "mat2", 2)
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input._data.shape[1] != mat2._data.shape[0]:
        raise _la.matmul_shape_error("mm", input._data.shape, mat2._data.shape)
    return dispatch(_la.Matmul, input, mat2)


def bmm(input, mat2):
    _need_tensor("bmm", input, "input", 1)
    _need_tensor("bmm", mat2, "mat2", 2)
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    sa, sb = input._data.shape, mat2._data.shape
    if sa[0] != sb[0] or sa[2] != sb[1]:
        raise RuntimeError(f"bmm: shapes {sa} and {sb} cannot be multiplied (Expected size for "
                           f"first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] "
                           f"but got: [{sb[0]}, {sb[1]}].)")
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected scalar type {_la.scalar_name(input._data.dtype)} but "
                           f"found {_la.scalar_name(mat2._data.dtype)}")
    return dispatch(_la.Matmul, input, mat2)


def dot(input, tensor):
    _need_tensor("dot", input, "input", 1)
    _need_tensor("dot", tensor, "tensor", 2)
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    if input._data.dtype != tensor._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_la.scalar_name(input._data.dtype)} and "
                           f"{_la.scalar_name(tensor._data.dtype)}")
    if input._data.shape != tensor._data.shape:
        raise _la.matmul_shape_error("dot", input._data.shape, tensor._data.shape)
    return _no_autocast(_la.Matmul, input, tensor)  # PyTorch does not autocast dot


vdot = dot  # real tensors only: no conjugation


def mv(input, vec):
    _need_tensor("mv", input, "input", 1)
    _need_tensor("mv", vec, "vec", 2)
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input._data.shape[1] != vec._data.shape[0]:
        raise _la.matmul_shape_error("mv", input._data.shape, vec._data.shape)
    return _no_autocast(_la.Matmul, input, vec)  # PyTorch does not autocast mv


def _no_autocast(op, *args):
    return dispatch_plain(op, *args)


def outer(input, vec2):
    """Outer product of two 1-D tensors (dtypes promote, as PyTorch)."""
    for name, x in (("self", input), ("vec2", vec2)):
        _need_tensor("outer", x, "input" if name == "self" else name, 1 if name == "self" else 2)
        if x.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {x.ndim}-D")
    col = dispatch(_shp.Reshape, input, shape=(input._data.shape[0], 1))
    return dispatch(Mul, col, vec2)


ger = outer


def tril(input, diagonal: int = 0):
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return dispatch(_la.Tril, input, diagonal=int(diagonal))


def triu(input, diagonal: int = 0):
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return dispatch(_la.Triu, input, diagonal=int(diagonal))


def diag(input, diagonal: int = 0):
    """1-D input: a square matrix with it on diagonal ``diagonal``; 2-D: that diagonal."""
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return dispatch(_la.Diag, input, diagonal=int(diagonal), shape=None)


def linear(input, weight, bias=None):
    """``torch.nn.functional.linear``: ``input @ weight.T + bias`` as one op."""
    _need_tensor("linear", input, "input", 1)
    _need_tensor("linear", weight, "weight", 2)
    if bias is not None:
        _need_tensor("linear", bias, "bias", 3)
    if weight.ndim == 1:  # as PyTorch: a vector weight contracts the last dimension
        out = matmul(input, weight)
        return out if bias is None else dispatch(Add, out, bias)
    return dispatch(_la.Linear, input, weight, bias)



# -- diagonals, trace, cross product -------------------------------------------------------

def _diag_dims(ndim: int, dim1: int, dim2: int) -> tuple:
    d1, d2 = _wrap_dim(dim1, ndim, "diagonal"), _wrap_dim(dim2, ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """Diagonal ``offset`` (above the main one when positive) of the matrices spanned by
    ``dim1`` and ``dim2``, as a new last dimension: a view of ``input``."""
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    return dispatch(_la.Diagonal, input, offset=int(offset), dim1=d1, dim2=d2)


def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """Matrices (in ``dim1``/``dim2`` of the result) with ``input``'s last dimension on
    their diagonal ``offset``, zeros elsewhere."""
    nd = input.ndim + 1
    d1, d2 = _diag_dims(nd, dim1, dim2)
    n = input._data.shape[-1] + abs(int(offset)) if input.ndim else 1 + abs(int(offset))
    rest = iter(input._data.shape[:-1])
    shape = tuple(n if i in (d1, d2) else next(rest) for i in range(nd))
    x = input if input.ndim else dispatch(_shp.Reshape, input, shape=(1,))
    return dispatch(_la.DiagonalScatter, x, shape=shape, offset=int(offset), dim1=d1, dim2=d2)


def trace(input):
    """Sum of the main diagonal of a matrix (integer inputs sum to int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    (input,) = _autocast("trace", input)
    d = dispatch(_la.Diagonal, input, offset=0, dim1=0, dim2=1)
    return dispatch(_red.Sum, d, dim=(0,), keepdim=False, dtype=None)


def _cross(input, other, dim: int, shown):
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected scalar type {_la.scalar_name(input._data.dtype)} but "
                           f"found {_la.scalar_name(other._data.dtype)}")
    nd = max(input.ndim, other.ndim)
    d = _wrap_dim(dim, nd, "linalg.cross")
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    if sa[d] != 3 or sb[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {shown} must have length 3. Got "
                           f"{sa[d]} and {sb[d]}")
    a = input if input.ndim == nd else dispatch(_shp.Reshape, input, shape=sa)
    b = other if other.ndim == nd else dispatch(_shp.Reshape, other, shape=sb)
    # (a_y b_z - a_z b_y, a_z b_x - a_x b_z, a_x b_y - a_y b_x) with two rolls of each
    a1, a2 = (dispatch(_shp.Roll, a, shifts=(s,), dims=(d,)) for s in (2, 1))
    b1, b2 = (dispatch(_shp.Roll, b, shifts=(s,), dims=(d,)) for s in (2, 1))
    return dispatch(Sub, dispatch(Mul, a1, b2), dispatch(Mul, a2, b1))


def linalg_cross(input, other, *, dim: int = -1):
    """``torch.linalg.cross``: cross product of 3-vectors along ``dim`` (batch dims
    broadcast)."""
    return _cross(input, other, dim, dim)


def cross(input, other, dim=None):
    """``torch.cross``; without ``dim`` (deprecated, with PyTorch's warning) the first
    dimension of size 3."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use "
                      "torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning,
                      stacklevel=2)
        sizes = list(input.shape)
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return _cross(input, other, dim, dim)


# -- einsum -----------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def einsum(equation: str, *operands):
    """``einsum(equation, *operands)`` (or ``einsum(equation, [operands])``) with PyTorch's
    semantics: implicit output (labels seen once, sorted), ``...`` broadcasting, size-1
    broadcasting, repeated labels (diagonals).  Differentiable in every operand."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not "
                        f"{type(equation).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for i, o in enumerate(operands):
        if not isinstance(o, Tensor):
            raise TypeError(f"einsum(): operand {i} must be a Tensor, not {type(o).__name__}")
    ins, out = _parse_einsum(equation, [o._data.shape for o in operands])
    if len(operands) == 1:
        return dispatch(_la.Einsum, operands[0], None, equation=f"{ins[0]}->{out}")
    if len(operands) == 2:
        return dispatch(_la.Einsum, operands[0], operands[1],
                        equation=f"{ins[0]},{ins[1]}->{out}")
    return _einsum_chain(ins, out, list(operands))


def _parse_einsum(equation: str, shapes: list) -> tuple:
    """Canonical labels: a list of per-operand label strings and the output labels, with
    ``...`` replaced by letters the equation does not use; sizes checked (size 1 broadcasts)."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(ins) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    for part in ins + ([out] if arrow else []):
        rest = part.replace("...", "", 1)
        for c in rest:
            if c not in _LETTERS:
                if c == ".":
                    raise RuntimeError("einsum(): found '.' for operand that is not part of "
                                       "any ellipsis")
                raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(c)} "
                                   "in the equation string, subscripts must be in [a-zA-Z]")
    unused = iter(c for c in _LETTERS if c not in eq)
    ell_nd = 0
    for i, (lab, shape) in enumerate(zip(ins, shapes)):
        n = len(lab.replace("...", ""))
        if "..." in lab:
            if n > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) "
                                   f"is more than the number of dimensions ({len(shape)}) for "
                                   f"operand {i}")
            ell_nd = max(ell_nd, len(shape) - n)
        elif n != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does "
                               f"not match the number of dimensions ({len(shape)}) for operand "
                               f"{i} and no ellipsis was given")
    ell = "".join(next(unused) for _ in range(ell_nd))
    canon = []
    for lab, shape in zip(ins, shapes):
        if "..." in lab:
            k = len(shape) - len(lab.replace("...", ""))
            lab = lab.replace("...", ell[ell_nd - k:] if k else "")
        canon.append(lab)
    if arrow:
        if "..." in out:
            out = out.replace("...", ell)
        seen = set()
        for c in out:
            if c in seen:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
            seen.add(c)
            if not any(c in lab for lab in canon):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
    else:
        counts: dict = {}
        for lab in canon:
            for c in lab:
                if c not in ell:
                    counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    sizes: dict = {}
    for i, (lab, shape) in enumerate(zip(canon, shapes)):
        for c in set(lab):
            dims = [shape[p] for p, x in enumerate(lab) if x == c]
            if len(set(dims)) > 1:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the "
                                   f"sizes don't match, {dims[0]} != {dims[1]}")
        for c, s in zip(lab, shape):
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = s
            elif s != 1 and s != prev:
                raise RuntimeError(f"einsum(): subscript {c} has size {s} for operand {i} which "
                                   f"does not broadcast with previously seen size {prev}")
    return canon, out


def _einsum_chain(ins: list, out: str, operands: list):
    """Three or more operands: pairwise contractions in the order NumPy's greedy path picks."""
    # (the path depends on the shapes alone: shape-only stand-ins, so that operands on
    # another device are not read)
    shapes = [np.broadcast_to(np.zeros((), np.int8), tuple(o._data.shape)) for o in operands]
    path = np.einsum_path(",".join(ins) + "->" + out, *shapes, optimize="greedy")[0][1:]
    ins = list(ins)
    for step in path:
        step = sorted(step, reverse=True)
        picked = [(ins.pop(k), operands.pop(k)) for k in step]
        picked.reverse()
        while len(picked) > 1:
            (la, a), (lb, b) = picked[0], picked[1]
            rest = [p[0] for p in picked[2:]] + ins
            last = not rest
            if last:
                res = out
            else:
                keep = set(out).union(*rest)
                res = "".join(dict.fromkeys(c for c in la + lb if c in keep))
            t = dispatch(_la.Einsum, a, b, equation=f"{la},{lb}->{res}")
            picked = [(res, t)] + picked[2:]
        lab, t = picked[0]
        ins.append(lab)
        operands.append(t)
    lab, t = ins[0], operands[0]
    if lab != out:
        t = dispatch(_la.Einsum, t, None, equation=f"{lab}->{out}")
    return t


# -- the @ operator -----------------------------------------------------------------------

def _matmul_op(self, other):
    if not isinstance(other, Tensor):
        if isinstance(other, (np.ndarray, list, tuple)):
            other = tensor(other)
        else:
            return NotImplemented
    return matmul(self, other)


def _rmatmul_op(self, other):
    if not isinstance(other, Tensor):
        if isinstance(other, (np.ndarray, list, tuple)):
            other = tensor(other)
        else:
            return NotImplemented
    return matmul(other, self)


_matmul_op.__name__ = "__matmul__"
_rmatmul_op.__name__ = "__rmatmul__"
Tensor.__matmul__ = _matmul_op
Tensor.__rmatmul__ = _rmatmul_op

METHODS = ["matmul", "mm", "bmm", "dot", "vdot", "mv", "outer", "ger", "tril", "triu", "diag",
           "diagonal", "diag_embed", "trace", "cross"]
INPLACE = {"tril": None, "triu": None}
