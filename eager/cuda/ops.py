"""The CUDA op table: what each op does on CUDA, registered in ``eager.dispatch.IMPLS["cuda"]``
(:func:`eager.dispatch.implementation` imports ``eager.<device type>.ops`` on the device's
first use: the naming convention docs/ARCHITECTURE-devices.md describes).

Elementwise ops need no entry of their own: any op with a scalar expression runs as a
one-op kernel made from it (:mod:`.elementwise`).  The rest are composed, per family, in
``kernels_reduce`` (block reductions, softmax, scans), ``kernels_linalg`` (the tiled GEMM,
NLL), ``kernels_shape`` (strided views, view(dtype), and the copies through them),
``kernels_index`` (gathers and scatters), ``kernels_select`` (nonzero, hence boolean
indexing and masked_select, masked_scatter and its adjoint masked_gather: a device prefix
count of the mask, the count read back; searchsorted: a binary search per value;
bincount and histc: atomic histograms), ``kernels_unique`` (unique with ``dim=None``:
the stable rank sort, flags where a sorted element differs from its predecessor, the
same prefix count), ``kernels_sort`` (sort, argsort, topk, kthvalue,
median: a stable rank kernel; rows longer than ``kernels_sort.MAX_ROW`` are sorted on the
host), ``kernels_window`` (im2col/col2im, pad and its adjoint, one_hot: gathers by cached
index maps and their deterministic adjoint sums) and ``kernels_random`` (factories, the
counter-based generator: rand, randn, bernoulli, randint, randperm, multinomial, normal),
on the launchers of :mod:`runtime.cuda.launch`.  float16/bfloat16 arguments run as the CPU
runs them (``_half_wrap``); the ops listed in ``HOST_FALLBACK`` (the dense
factorizations) run on the host, and so does unique with an integer ``dim`` (distinct
slices; counted in ``FALLBACK_CALLS["unique"]``); factories whose values are computed on
the host (arange, eye, tril_indices, combinations) are uploaded once.  An op with no entry
raises ``NotImplementedError`` naming op and device.

``einsum`` (``kernels_einsum``) is planned on the host and runs as strided views,
reductions and one batched GEMM per pairwise contraction; the recurrent scan of
nn.RNN/GRU/LSTM (``kernels_rnn``) keeps its time loop on the host, each step one GEMM and
one fused gate kernel.
"""

from __future__ import annotations

import collections

import numpy as np

from runtime.cuda.array import CudaArray

from .. import dtypes as _dt
from ..dispatch import (
    _HALF_NATIVE,
    _NO_HALF,
    _SAME_DTYPE,
    _SCALAR_OPMATH,
    IMPLS,
    _CopyInto,
    _half_forward,
    _round_scalar,
    promote,
)
from ..ops import OPS
from ..ops import elementwise as E
from ..ops import factory as Fa
from ..ops import index as I
from ..ops import linalg as L
from ..ops import loss as Lo
from ..ops import pad as Pd
from ..ops import recurrent as Rc
from ..ops import reduce as R
from ..ops import shape as S
from ..ops import sort as So
from ..ops import window as Wi
from ..ops.index import BasicIndex
from . import kernels_einsum as KE
from . import kernels_index as KI
from . import kernels_linalg as KL
from . import kernels_random as RND
from . import kernels_reduce as KR
from . import kernels_rnn as KRN
from . import kernels_select as KSe
from . import kernels_shape as KS
from . import kernels_sort as KSo
from . import kernels_unique as KU
from . import kernels_window as KW
from .elementwise import (
    _F32,
    _HALF,
    cast,
    clone,
    copy_into,
    elementwise_impl,
    full,
    reshape,
    run_elementwise,
)

TABLE: dict = {}
IMPLS["cuda"] = TABLE

for _op in OPS.values():
    if _op.elementwise and _op.scalar is not None:
        TABLE[_op] = elementwise_impl(_op)

TABLE.update({
    _CopyInto: copy_into,
    # shape ops: strided views, and copies through them
    I.BasicScatter: KS.basic_scatter,
    S.Reshape: lambda a, shape: reshape(a, shape),
    S.ReshapeCopy: lambda a, shape: clone(a).reshape(shape),
    S.View: KS.view,
    S.ViewDtype: KS.view_dtype,
    S.Expand: lambda a, shape: a.broadcast_to(shape),
    S.Permute: lambda a, dims: a.transpose(dims),
    S.Squeeze: lambda a, dims: a.squeeze(dims),
    S.Unsqueeze: lambda a, dims: a.unsqueeze(dims),
    S.Contiguous: lambda a: clone(a) if not a.is_contiguous else clone(a),
    S.Clone: clone,
    BasicIndex: lambda a, key: a.basic_index(key),
    S.Cat: KS.cat,
    S.Stack: KS.stack,
    S.Flip: lambda a, dims: clone(KS.flipped(a, dims)),
    S.Roll: KS.roll,
    S.Repeat: KS.repeat,
    L.Tril: KS.triangle(True),
    L.Triu: KS.triangle(False),
    L.Diag: KS.diag,
    OPS["diagonal"]: KS.diagonal_view,
    OPS["diagonal_scatter"]: KS.diagonal_scatter,
    # reductions: one block per output element; compositions of them; scans
    R.Sum: KR.sum_,
    R.Mean: KR.mean,
    R.Amax: lambda a, dim, keepdim=False: KR.reduce("amax", a, dim, keepdim, a.dtype),
    R.Amin: lambda a, dim, keepdim=False: KR.reduce("amin", a, dim, keepdim, a.dtype),
    S.SumTo: KR.sum_to,
    R.Softmax: KR.softmax,
    R.LogSoftmax: KR.log_softmax,
    R.Var: KR.var,
    R.Std: KR.std,
    R.Logsumexp: KR.logsumexp,
    R.Argmax: KR.argreduce(True),
    R.Argmin: KR.argreduce(False),
    R.Prod: KR.reduce_kind("prod"),
    R.Any: KR.reduce_kind("any"),
    R.All: KR.reduce_kind("all"),
    R.CountNonzero: KR.count_nonzero,
    R.Norm: KR.norm,
    R.Cumsum: KR.cumsum,
    OPS["cumprod"]: KR.cumprod,
    OPS["logcumsumexp"]: KR.logcumsumexp,
    # matmul and linear: the tiled GEMM; the NLL loss
    L.Matmul: KL.matmul,
    L.Linear: KL.linear,
    L.Einsum: KE.einsum,
    Rc.RnnScan: KRN.rnn_scan,
    Lo.NllLoss: KL.nll_loss,
    Lo.NllLossGrad: KL.nll_loss_grad,
    # factories and random numbers
    Fa.BernoulliTensor: RND.bernoulli_tensor,
    Fa.Randperm: RND.randperm,
    Fa.Full: full,
    Fa.Arange: RND.on_host(Fa.Arange),
    Fa.Linspace: RND.on_host(Fa.Linspace),
    Fa.Eye: RND.on_host(Fa.Eye),
    Fa.TriIndices: RND.on_host(Fa.TriIndices),                 # (tril/triu_indices)
    Fa.CombinationIndices: RND.on_host(Fa.CombinationIndices),  # (combinations)
    Fa.Rand: RND.random("rand"),
    Fa.Randn: RND.random("randn"),
    Fa.Bernoulli: RND.random("bernoulli", "p"),
    Fa.Randint: RND.randint,
    Fa.Multinomial: RND.multinomial,
    Fa.Normal: RND.normal,
    # sorting and selection: the stable rank kernel (sort, argsort, msort, topk, kthvalue,
    # median; rows longer than KSo.MAX_ROW on the host)
    OPS["argsort"]: KSo.argsort,
    OPS["topk_indices"]: KSo.topk_indices,
    OPS["kthvalue_index"]: KSo.kthvalue_index,
    # gathers, scatters, masks and advanced indexing
    I.ScatterAdd: KI.scatter(True),
    I.Scatter: KI.scatter(False),
    R.PlaceAlongDim: KI.place_along_dim,
    I.MaskedFill: KI.masked_fill,
    I.Gather: KI.gather,
    R.PickAlongDim: KI.pick_along_dim,
    I.Index: KI.index,
    I.IndexPutAdd: KI.index_put_add,
    I.SetItem: KI.set_item,
    I.IndexAdd: KI.index_add,
    I.IndexCopy: KI.index_copy,
    # sliding windows, padding, one_hot: gathers by a cached index map, and their adjoints
    Wi.Im2col: KW.im2col,
    Wi.Col2im: KW.col2im,
    Pd.Pad: KW.pad,
    Pd.PadAdjoint: KW.pad_adjoint,
    Lo.OneHot: KW.one_hot,
    # selection by masks (a prefix count of the mask, the count read back), searching and
    # counting
    I.Nonzero: KSe.nonzero,
    I.MaskedScatter: KSe.masked_scatter,
    I.MaskedGather: KSe.masked_gather,
    So.Searchsorted: KSe.searchsorted,
    So.Bincount: KSe.bincount,
    So.Histc: KSe.histc,
})


# -- integer division -----------------------------------------------------------------------

def _integer_division(op):
    """floor_divide and remainder: for integers, the CPU's error for a zero divisor, checked
    before the kernel runs (a Python divisor here, a tensor's by one reduction read back),
    then the op's kernel, told the divisor holds no zero."""
    def impl(a, b):
        if np.dtype(_dt.result_type(a, b)).kind in "iu":
            if isinstance(b, CudaArray):
                _check_nonzero(b)
            elif not b:
                raise E.IntegerDivisionByZero("ZeroDivisionError")
            return run_elementwise(op, [a, b], {}, nonzero=(1,))
        return run_elementwise(op, [a, b], {})
    impl.__name__ = f"{op.name}_cuda"
    return impl


def _check_nonzero(b) -> None:
    if b.size and not KR.reduce_kind("all")(b, tuple(range(b.ndim))).to_host().item():
        raise E.IntegerDivisionByZero("ZeroDivisionError")


TABLE[E.FloorDivide] = _integer_division(E.FloorDivide)
TABLE[E.Remainder] = _integer_division(E.Remainder)


# -- float16 and bfloat16 -----------------------------------------------------------------------

def _half_wrap(op, fn):
    """``fn`` with float16/bfloat16 arguments run as the CPU's ``_half_forward`` does:
    half arguments converted to float32 on the device, the op run, a float32 result
    rounded to the half result dtype; PyTorch's errors for the linear algebra ops that
    refuse half."""
    def impl(*args, **params):
        halves = [a for a in args if isinstance(a, CudaArray) and a.dtype.char in _HALF]
        if not halves:
            want = params.get("dtype")
            if want is not None and np.dtype(want).char in _HALF and \
                    isinstance(op, type) and issubclass(op, Fa.Factory):
                return cast(fn(*args, **{**params, "dtype": _F32}), want)
            return fn(*args, **params)
        public = _NO_HALF.get(op.name)
        if public is not None:
            raise RuntimeError(f"{public}: Low precision dtypes not supported. Got "
                               f"{_dt.scalar_name(halves[0].dtype)}")
        arrays = [a for a in args if isinstance(a, CudaArray)]
        if op.name in _SAME_DTYPE and len({a.dtype for a in arrays
                                           if _dt.is_float(a.dtype)}) > 1:
            return fn(*args, **params)   # the op's own dtype check raises PyTorch's error
        target = np.dtype(_dt.result_type(*arrays))
        if target.char in _HALF and op.name not in _SCALAR_OPMATH:
            args = [_round_scalar(a, target) if type(a) is float else a for a in args]
        up = [cast(a, _F32) if isinstance(a, CudaArray) and a.dtype.char in _HALF else a
              for a in args]
        out = fn(*up, **params)
        if isinstance(out, CudaArray) and out.dtype == _F32 and target.char in _HALF and \
                params.get("dtype") is None:
            out = cast(out, target)
        return out
    impl.__name__ = getattr(fn, "__name__", op.name)
    return impl


# -- the explicit host fallbacks -----------------------------------------------------------------

#: op name -> why it runs on the host for now.  Each of these copies its CUDA arguments to
#: the host, runs the CPU forward (float16/bfloat16 as the CPU runs them) and copies the
#: result back: correct, synchronizing and slow, and counted (``FALLBACK_CALLS``) so that
#: the gap is measured until each gets a kernel.
HOST_FALLBACK = {
    "cholesky": "dense factorizations run on the host (no cuSOLVER binding)",
    "cholesky_info": "as cholesky",
    "solve_triangular": "as cholesky",
    "qr": "as cholesky",
    "svd": "as cholesky",
    "svdvals": "as cholesky",
    "eigh": "as cholesky",
    "eigvalsh": "as cholesky",
    "inv": "as cholesky",
    "lu_info": "as cholesky",
    "solve": "as cholesky",
    "det": "as cholesky",
    "cofactor": "as cholesky",
    "slogdet": "as cholesky",
    "pinv": "as cholesky",
}

FALLBACK_CALLS: collections.Counter = collections.Counter()


def _host_impl(op):
    def impl(*args, **params):
        FALLBACK_CALLS[op.name] += 1
        host = [a.to_host() if isinstance(a, CudaArray) else a for a in args]
        if any(type(a) is np.ndarray and a.dtype.char in _HALF for a in host) and \
                op.name not in _HALF_NATIVE and not op.view:
            out = _half_forward(op, host, host, params)
        else:
            out = op.forward(*(promote(host) if op.promotes else host), **params)
        return CudaArray.from_host(np.asarray(out))
    impl.__name__ = f"{op.name}_host_fallback"
    return impl


def _unique(a, dim=None, part="values"):
    """unique on the device (:mod:`.kernels_unique`); with an integer ``dim`` (distinct
    slices, a lexicographic sort of rows) on the host, counted as a fallback."""
    if dim is None:
        return KU.unique(a, None, part)
    return _host_impl(So.Unique)(a, dim=dim, part=part)


TABLE[So.Unique] = _unique

#: ops that run on half storage as it is (conversions, copies and views)
_HALF_AS_IS = {E.Cast, _CopyInto, S.Reshape, S.View, S.ViewDtype, S.Expand, S.Permute, S.Squeeze,
               S.Unsqueeze, BasicIndex, OPS["diagonal"], S.Clone, S.Contiguous, S.ReshapeCopy,
               I.SetItem, I.BasicScatter, I.Index, I.IndexPutAdd, S.Cat, S.Stack, S.Flip,
               S.Roll, S.Repeat, OPS["diagonal_scatter"], Wi.Im2col, Pd.Pad, Lo.OneHot,
               I.MaskedScatter, I.MaskedGather}

TABLE[E.Cast] = cast
for _op, _fn in list(TABLE.items()):
    if _op not in _HALF_AS_IS:
        TABLE[_op] = _half_wrap(_op, _fn)
for _name in HOST_FALLBACK:
    TABLE[OPS[_name]] = _host_impl(OPS[_name])
