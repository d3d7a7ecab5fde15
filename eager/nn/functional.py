"""``eager.nn.functional``: the functional forms of layers, activations and losses,
with PyTorch's names and signatures.

Everything is composed of ops that go through the dispatch point (a compiler tracer
records each one); random draws (dropout) come from the ``bernoulli`` factory op so a
compiled function redraws on every call.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._state import STATE
from ..amp.autocast_mode import cast_inputs as _autocast
from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..fn import elementwise as _ew
from ..fn import linalg as _la
from ..fn import reduce as _red
from ..fn.index import gather as _gather
from ..fn.index import index_select as _index_select
from ..fn.reduce import sum as _sum
from ..ops import factory as _fac
from ..ops import loss as _loss
from ..ops import shape as _shp
from .fn import activation as _act_fns
from .fn import conv as _conv_fns
from .fn import distance as _distance_fns
from .fn import dropout as _drop_fns
from .fn import loss as _loss_fns
from .fn import normalization as _norm_fns
from .fn import pooling as _pool_fns
from .fn import vision as _vision_fns
from .fn.activation import *  # noqa: F403 (hardtanh, relu6, selu, ...)
from .fn.activation import apply_inplace as _apply_inplace
from .fn.conv import *  # noqa: F403 (convolution, unfold/fold)
from .fn.distance import *  # noqa: F403 (normalize, cosine_similarity, pairwise_distance)
from .fn.dropout import *  # noqa: F403 (dropout2d, alpha_dropout, pixel_shuffle, ...)
from .fn.loss import *  # noqa: F403 (kl_div)
from .fn.normalization import *  # noqa: F403 (batch_norm, group_norm, instance_norm)
from .fn.pooling import *  # noqa: F403 (max/avg/adaptive pooling)
from .fn.vision import *  # noqa: F403 (pad, interpolate, upsample)

__all__ = ["bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "cross_entropy", "dropout", "elu", "embedding", "gelu", "huber_loss", "l1_loss",
           "layer_norm", "leaky_relu", "linear", "log_softmax", "mse_loss", "nll_loss", "one_hot",
           "relu", "relu_", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus",
           "tanh"]
__all__ += (_act_fns.__all__ + _conv_fns.__all__ + _drop_fns.__all__ + _distance_fns.__all__
            + _loss_fns.__all__ + _norm_fns.__all__ + _pool_fns.__all__ + _vision_fns.__all__)


def _reshape(x, shape):
    return dispatch(_shp.Reshape, x, shape=tuple(shape))


# -- linear layers ----------------------------------------------------------------------

def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (one op)."""
    return _la.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]``."""
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    B = int(np.prod(lead, dtype=np.int64))
    x1 = _reshape(input1, (B, in1))
    x2 = _reshape(input2, (B, in2))
    w = _reshape(dispatch(_shp.Permute, weight, dims=(1, 0, 2)), (in1, out_f * in2))
    t = _reshape(_la.matmul(x1, w), (B, out_f, in2))
    y = _sum(_ew.mul(t, _reshape(x2, (B, 1, in2))), -1)
    if bias is not None:
        y = _ew.add(y, bias)
    return _reshape(y, lead + (out_f,))


# -- activations ------------------------------------------------------------------------

def relu(input, inplace: bool = False):
    return input.relu_() if inplace else _ew.relu(input)


def relu_(input):
    return input.relu_()


def gelu(input, approximate: str = "none"):
    return _ew.gelu(input, approximate=approximate)


def silu(input, inplace: bool = False):
    out = _ew.silu(input)
    if inplace:
        from ..methods import inplace as _inplace
        return _inplace(input, out, "silu_")
    return out


def sigmoid(input):
    return _ew.sigmoid(input)


def tanh(input):
    return _ew.tanh(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _ew.softplus(input, beta=beta, threshold=threshold)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``x`` where ``x > 0``, else ``negative_slope * x``.  In place, the composite reads a
    clone of ``input`` when it is in a graph, so backward still works
    (see ``eager.nn.fn.activation``)."""
    return _apply_inplace(
        input, lambda x: _ew.where(_ew.gt(x, 0), x, _ew.mul(x, negative_slope)), inplace,
        "leaky_relu_")


def elu(input, alpha: float = 1.0, inplace: bool = False):
    out = _ew.where(_ew.gt(input, 0), input, _ew.mul(_ew.expm1(input), alpha))
    if inplace:
        from ..methods import inplace as _inplace
        return _inplace(input, out, "elu_")
    return out


def _softmax_dim(ndim: int) -> int:
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.ndim)
    if dtype is not None:
        input = _ew.cast(input, dtype)
    return _red.softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.ndim)
    if dtype is not None:
        input = _ew.cast(input, dtype)
    return _red.log_softmax(input, dim)


# -- dropout ----------------------------------------------------------------------------

def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.  The
    keep-mask comes from the ``bernoulli`` random op (dispatch), so compiled code redraws."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    dt = input._data.dtype
    if p == 1.0:
        out = _ew.mul(input, 0.0)
    else:
        mask = dispatch(_fac.Bernoulli, shape=tuple(input.shape), p=1.0 - p, dtype=dt,
                        **_fac.device_params(input))
        out = _ew.mul(input, _ew.mul(mask, 1.0 / (1.0 - p)))
    if inplace:
        from ..methods import inplace as _inplace
        return _inplace(input, out, "dropout_")
    return out


# -- normalization ----------------------------------------------------------------------

def _mean(x, dims, keepdim=True):
    return _red.mean(x, dims, keepdim)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape or k > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    dims = tuple(range(input.ndim - k, input.ndim))
    xc = _ew.sub(input, _mean(input, dims))
    var = _mean(_ew.mul(xc, xc), dims)
    out = _ew.mul(xc, _ew.rsqrt(_ew.add(var, eps)))
    if weight is not None:
        out = _ew.mul(out, weight)
    if bias is not None:
        out = _ew.add(out, bias)
    return out


# -- embedding / one_hot ----------------------------------------------------------

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not "
                                  "supported")
    if input._data.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.dtype} instead "
                           "(while checking arguments for embedding)")
    num, dim = weight.shape
    flat = _reshape(input, (-1,))
    out = _reshape(_index_select(weight, 0, flat), tuple(input.shape) + (dim,))
    if padding_idx is not None and out.requires_grad:
        if padding_idx < 0:
            padding_idx += num
        # the padding row gets no gradient (as PyTorch): route it through a detached copy
        keep = _reshape(_ew.ne(input, padding_idx), tuple(input.shape) + (1,))
        out = _ew.where(keep, out, out.detach())
    return out


def one_hot(tensor, num_classes: int = -1):
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each class
    index; ``num_classes=-1`` takes the largest value plus one.  Negative values, values
    ``>= num_classes`` and an empty tensor without ``num_classes`` raise PyTorch's
    RuntimeErrors."""
    if tensor._data.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if not tensor.numel():
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    return dispatch(_loss.OneHot, tensor, num_classes=int(num_classes))


# -- losses -----------------------------------------------------------------------------

def _legacy_reduction(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return _red.mean(loss)
    if reduction == "sum":
        return _sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
             weight=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight = _autocast("mse_loss", input, target, weight)
    _check_size(input, target, "mse_loss")
    d = _ew.sub(input, target)
    loss = _ew.mul(d, d)
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
            weight=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight = _autocast("l1_loss", input, target, weight)
    _check_size(input, target, "l1_loss")
    loss = _ew.abs(_ew.sub(input, target))
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target = _autocast("smooth_l1_loss", input, target)
    _check_size(input, target, "smooth_l1_loss")
    d = _ew.abs(_ew.sub(input, target))
    if beta == 0.0:
        return _reduce(d, reduction)
    loss = _ew.where(_ew.lt(d, beta), _ew.mul(_ew.mul(d, d), 0.5 / beta), _ew.sub(d, 0.5 * beta))
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    input, target, weight = _autocast("huber_loss", input, target, weight)
    _check_size(input, target, "huber_loss")
    d = _ew.abs(_ew.sub(input, target))
    loss = _ew.where(_ew.lt(d, delta), _ew.mul(_ew.mul(d, d), 0.5),
                     _ew.mul(_ew.sub(d, 0.5 * delta), delta))
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def _check_size(input, target, name):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=3)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight = _autocast("binary_cross_entropy", input, target, weight)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the "
                         "same size.")
    _check_reduction(reduction)
    # -(t*log(x) + (1-t)*log(1-x)), each log clamped at -100 (as PyTorch)
    lx = _ew.clamp(_ew.log(input), min=-100.0)
    l1x = _ew.clamp(_ew.log(_ew.sub(1.0, input)), min=-100.0)
    loss = _ew.neg(_ew.add(_ew.mul(target, _ew.sub(lx, l1x)), l1x))
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction: str = "mean", pos_weight=None):
    """``(1-t)*x + w_pos * softplus(-x)`` with ``w_pos = 1 + (pos_weight-1)*t``: stable for
    any logit (softplus never exponentiates a positive number)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight, pos_weight = _autocast("binary_cross_entropy_with_logits", input,
                                                  target, weight, pos_weight)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _check_reduction(reduction)
    sp = _ew.softplus(_ew.neg(input), threshold=50.0)   # = -log_sigmoid(x)
    if pos_weight is not None:
        sp = _ew.mul(sp, _ew.add(_ew.mul(_ew.sub(pos_weight, 1.0), target), 1.0))
    loss = _ew.add(_ew.mul(_ew.sub(1.0, target), input), sp)
    if weight is not None:
        loss = _ew.mul(loss, weight)
    return _reduce(loss, reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _class_index_loss(input, target, weight, ignore_index, reduction, 0.0)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """The cross entropy between logits ``input`` and ``target``: ``log_softmax`` over the
    class dimension (1, or 0 for unbatched input), then the negative log-likelihood of
    class-index targets (with ``ignore_index``, ``weight`` and ``label_smoothing``) or of
    class-probability targets (a floating ``target`` shaped like ``input``).

    Args:
        input (Tensor): logits, ``(C)``, ``(N, C)`` or ``(N, C, d_1, ..., d_K)``.
        target (Tensor): class indices ``()``, ``(N)`` or ``(N, d_1, ..., d_K)``, or
            probabilities of the input's shape.
        weight (Tensor, optional): a rescaling weight per class, ``(C,)``.
        ignore_index (int): a class-index target ignored. Default: -100.
        reduction (str): ``"mean"``, ``"sum"`` or ``"none"``. Default: ``"mean"``.
        label_smoothing (float): in ``[0, 1]``. Default: 0.
        size_average, reduce: deprecated, as PyTorch.

    Shape:
        - Output: a scalar, or the target's batch shape with ``reduction="none"``.

    Example::

        >>> logits = eager.randn(3, 5, requires_grad=True)
        >>> F.cross_entropy(logits, eager.tensor([1, 0, 4])).backward()
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target, weight = _autocast("cross_entropy", input, target, weight)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if input.ndim == 0:
        raise ValueError("cross_entropy: expected input with at least 1 dimension")
    cd = 0 if input.ndim == 1 else 1
    logp = _red.log_softmax(input, cd)
    if _isf(target._data.dtype):
        return _prob_target_loss(logp, target, weight, reduction, label_smoothing)
    return _class_index_loss(logp, target, weight, ignore_index, reduction, label_smoothing)


def _prob_target_loss(logp, target, weight, reduction, label_smoothing):
    if tuple(target.shape) != tuple(logp.shape):
        raise RuntimeError(f"Expected floating point target (class probabilities) to have the "
                           f"same shape as input {list(logp.shape)}, got {list(target.shape)}")
    _check_reduction(reduction)
    cd = 0 if logp.ndim == 1 else 1
    C = logp.shape[cd]
    if label_smoothing > 0.0:
        target = _ew.add(_ew.mul(target, 1.0 - label_smoothing), label_smoothing / C)
    x = _ew.mul(logp, target)
    if weight is not None:
        x = _ew.mul(x, _reshape(weight, [C if i == cd else 1 for i in range(logp.ndim)]))
    if reduction == "none":
        return _ew.neg(_sum(x, cd))
    if reduction == "sum":
        return _ew.neg(_sum(x))
    n = logp.numel() // C if C else 0
    return _ew.mul(_sum(x), -1.0 / n if n else float("nan"))


def _needs_mask(target, C: int, ignore_index: int) -> bool:
    """Whether some target equals ``ignore_index`` (masking needed).  Checks bounds as it
    goes.  While a tracer records, the answer is always yes: the masked form is right for
    any data, so the recording does not depend on this batch's targets."""
    if STATE.tracer is not None:
        return True
    t = target._data
    if t.size == 0:
        return False
    lo, hi = t.min(), t.max()
    if lo >= 0 and hi < C:
        return bool(0 <= ignore_index < C and (t == ignore_index).any())
    bad = t[(t != ignore_index) & ((t < 0) | (t >= C))]
    if bad.size:
        raise IndexError(f"Target {bad.flat[0]} is out of bounds.")
    return True


def _class_index_loss(logp, target, weight, ignore_index, reduction, label_smoothing):
    _check_reduction(reduction)
    nd = logp.ndim
    if nd == 0:
        raise ValueError("nll_loss: expected input with at least 1 dimension")
    cd = 0 if nd == 1 else 1
    C = logp.shape[cd]
    expected = () if nd == 1 else (logp.shape[0],) + tuple(logp.shape[2:])
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if tuple(target.shape) != expected:
        if nd >= 2 and target.ndim >= 1 and target.shape[0] != logp.shape[0]:
            raise ValueError(f"Expected input batch_size ({logp.shape[0]}) to match target "
                             f"batch_size ({target.shape[0]}).")
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    if weight is not None and tuple(weight.shape) != (C,):
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")

    if nd == 2 and weight is None and label_smoothing == 0.0 and reduction != "none":
        # the common classifier case: one op (and one for its gradient)
        return dispatch(_loss.NllLoss, logp, target, ignore_index=int(ignore_index),
                        reduction=reduction)
    valid = None
    idx = target
    if _needs_mask(target, C, ignore_index):
        valid = _ew.ne(target, ignore_index)
        idx = _ew.where(valid, target, 0)
    gshape = list(target.shape)
    gshape.insert(cd, 1)
    picked = _gather(logp, cd, _reshape(idx, gshape))          # log p[target]
    w = None                                                          # per-element weight
    wview = None
    if weight is not None:
        wview = _reshape(weight, [C if i == cd else 1 for i in range(nd)])
        w = _gather(dispatch(_shp.Expand, wview, shape=tuple(logp.shape)), cd,
                          _reshape(idx, gshape))
    if valid is not None:
        v = _ew.cast(_reshape(valid, gshape), logp.dtype)
        w = v if w is None else _ew.mul(w, v)
    if w is not None:
        picked = _ew.mul(picked, w)
    n = target.numel()
    loss = _finish_nll(picked, w, n, reduction, target.shape, valid is not None)
    if label_smoothing > 0.0:
        lp = logp if wview is None else _ew.mul(logp, wview)
        smooth = _sum(lp, cd, keepdim=True)
        if valid is not None:
            smooth = _ew.mul(smooth, v)
        s = _finish_nll(smooth, w, n, reduction, target.shape, valid is not None)
        loss = _ew.add(_ew.mul(loss, 1.0 - label_smoothing), _ew.mul(s, label_smoothing / C))
    return loss


def _finish_nll(picked, w, n, reduction, shape, masked):
    """Negate and reduce per-element (weighted) log-likelihoods."""
    if reduction == "none":
        return _ew.neg(_reshape(picked, tuple(shape)))
    if reduction == "sum":
        return _ew.neg(_sum(picked))
    if w is None:
        return _ew.mul(_sum(picked), -1.0 / n if n else float("nan"))
    sw = _sum(w)
    if not masked:
        return _ew.neg(_ew.div(_sum(picked), sw))
    # everything ignored: NaN loss but zero gradients, as PyTorch
    empty = _ew.eq(sw, 0)
    return _ew.where(empty, float("nan"),
                     _ew.neg(_ew.div(_sum(picked), _ew.where(empty, 1.0, sw))))


# -- attention ---------------------------------------------------------------------------

from .attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402, F401, I001
