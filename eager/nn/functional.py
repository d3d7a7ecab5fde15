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
from .fn.extras import *  # noqa: E402, F403 (embedding_bag, grid_sample, the margin losses)
from .fn.extras import __all__ as _extras_all  # noqa: E402

__all__ += _extras_all


def _reshape(x, shape):
    return dispatch(_shp.Reshape, x, shape=tuple(shape))


# -- linear layers ----------------------------------------------------------------------

def linear(input, weight, bias=None):
    """Applies an affine map to the last dimension: ``input @ weight.T + bias``.

    Args:
        input (Tensor): the input, ``(*, in_features)``.
        weight (Tensor): the weight, ``(out_features, in_features)``.
        bias (Tensor, optional): the bias, ``(out_features,)``. Default: ``None``

    Shape:
        - Input: ``(*, in_features)``, any number of leading dimensions.
        - Weight: ``(out_features, in_features)``; bias ``(out_features,)``.
        - Output: ``(*, out_features)``.

    Example::

        >>> w = eager.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
        >>> F.linear(eager.ones(2, 3), w, eager.tensor([0.0, 1.0]))
        tensor([[0.0000, 2.5000],
                [0.0000, 2.5000]])
        >>> F.linear(eager.randn(4, 3), eager.randn(5, 3)).shape
        eager.Size([4, 5])
    """
    return _la.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """Applies a bilinear map to two inputs.

    ``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    Args:
        input1 (Tensor): the first input, ``(*, in1_features)``.
        input2 (Tensor): the second input, ``(*, in2_features)``, with the same leading
            dimensions as ``input1``.
        weight (Tensor): the weight, ``(out_features, in1_features, in2_features)``.
        bias (Tensor, optional): the bias, ``(out_features,)``. Default: ``None``

    Shape:
        - Input1: ``(*, in1_features)``; Input2: ``(*, in2_features)``.
        - Output: ``(*, out_features)``.

    Example::

        >>> F.bilinear(eager.ones(2, 3), eager.ones(2, 4), eager.ones(5, 3, 4)).shape
        eager.Size([2, 5])
        >>> F.bilinear(eager.ones(1, 2), eager.ones(1, 2), eager.ones(1, 2, 2), eager.tensor([0.5]))
        tensor([[4.5000]])
    """
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
    """Applies the rectified linear unit ``max(0, x)`` elementwise.

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.relu(eager.tensor([-2.0, -0.5, 0.0, 1.0, 3.0]))
        tensor([0., 0., 0., 1., 3.])
    """
    return input.relu_() if inplace else _ew.relu(input)


def relu_(input):
    """In-place :func:`relu`: replaces the negative elements of ``input`` with 0.

    Args:
        input (Tensor): the tensor to modify.

    Example::

        >>> x = eager.tensor([-1.0, 2.0])
        >>> F.relu_(x)
        tensor([0., 2.])
        >>> x
        tensor([0., 2.])
    """
    return input.relu_()


def gelu(input, approximate: str = "none"):
    """Applies the Gaussian error linear unit (GELU) elementwise.

    The result is ``x * Phi(x)``, ``Phi`` being the standard normal CDF.

    Args:
        input (Tensor): the input, of any shape.
        approximate (str, optional): ``"none"`` for the exact form (with ``erf``) or
            ``"tanh"`` for the tanh approximation. Default: ``"none"``

    Example::

        >>> F.gelu(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.1587,  0.0000,  0.8413])
        >>> F.gelu(eager.tensor([-1.0, 0.0, 1.0]), approximate="tanh")
        tensor([-0.1588,  0.0000,  0.8412])
    """
    return _ew.gelu(input, approximate=approximate)


def silu(input, inplace: bool = False):
    """Applies the sigmoid linear unit (swish) ``x * sigmoid(x)`` elementwise.

    Args:
        input (Tensor): the input, of any shape.
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.silu(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.2689,  0.0000,  0.7311])
    """
    out = _ew.silu(input)
    if inplace:
        from ..methods import inplace as _inplace
        return _inplace(input, out, "silu_")
    return out


def sigmoid(input):
    """Applies the logistic sigmoid ``1 / (1 + exp(-x))`` elementwise.

    Args:
        input (Tensor): the input, of any shape.

    Example::

        >>> F.sigmoid(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([0.2689, 0.5000, 0.7311])
    """
    return _ew.sigmoid(input)


def tanh(input):
    """Applies the hyperbolic tangent elementwise.

    Args:
        input (Tensor): the input, of any shape.

    Example::

        >>> F.tanh(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.7616,  0.0000,  0.7616])
    """
    return _ew.tanh(input)


def softplus(input, beta=1.0, threshold=20.0):
    """Applies ``log(1 + exp(beta * x)) / beta`` elementwise, a smooth approximation of ReLU.

    Where ``beta * x > threshold`` the result is ``x`` itself (the two agree there to
    within float precision, and this avoids overflow).

    Args:
        input (Tensor): the input, of any shape.
        beta (float, optional): the sharpness; larger is closer to ReLU. Default: ``1.0``
        threshold (float, optional): above this value of ``beta * x`` the function is linear.
            Default: ``20.0``

    Example::

        >>> F.softplus(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([0.3133, 0.6931, 1.3133])
        >>> F.softplus(eager.tensor([-1.0, 0.0, 30.0]), beta=2.0)
        tensor([ 0.0635,  0.3466, 30.0000])
    """
    return _ew.softplus(input, beta=beta, threshold=threshold)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """Applies leaky ReLU elementwise: ``x`` where ``x > 0``, else ``negative_slope * x``.

    In place, the value is computed from a clone of ``input`` when it is part of a graph, so
    backward still works.

    Args:
        input (Tensor): the input, of any shape.
        negative_slope (float, optional): the slope for negative inputs. Default: ``0.01``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.leaky_relu(eager.tensor([-2.0, 0.0, 3.0]), 0.1)
        tensor([-0.2000,  0.0000,  3.0000])
    """
    return _apply_inplace(
        input, lambda x: _ew.where(_ew.gt(x, 0), x, _ew.mul(x, negative_slope)), inplace,
        "leaky_relu_")


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """Applies the exponential linear unit (ELU) elementwise.

    The result is ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        input (Tensor): the input, of any shape.
        alpha (float, optional): the value the negative side saturates to, negated.
            Default: ``1.0``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> F.elu(eager.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.6321,  0.0000,  1.0000])
    """
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
    """Applies softmax along ``dim``: ``exp(x_i) / sum_j exp(x_j)``.

    Each slice along ``dim`` of the result is non-negative and sums to 1.

    Args:
        input (Tensor): the input.
        dim (int, optional): the dimension to normalize over.  Omitting it is deprecated: a
            warning is issued and dimension 0 is used for 0-, 1- and 3-D input, else 1 (as
            PyTorch). Default: ``None``
        _stacklevel (int, optional): unused, kept for PyTorch's signature. Default: ``3``
        dtype (eager.dtype, optional): cast ``input`` to this dtype first (e.g. to compute an
            integer tensor's softmax in float64). Default: ``None``

    Example::

        >>> F.softmax(eager.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]), dim=1)
        tensor([[0.0900, 0.2447, 0.6652],
                [0.3333, 0.3333, 0.3333]])
        >>> F.softmax(eager.tensor([1, 2]), dim=0, dtype=eager.float64)
        tensor([0.2689, 0.7311], dtype=eager.float64)
    """
    if dim is None:
        dim = _softmax_dim(input.ndim)
    if dtype is not None:
        input = _ew.cast(input, dtype)
    return _red.softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """Applies ``log(softmax(x))`` along ``dim``, computed stably in one step.

    Args:
        input (Tensor): the input.
        dim (int, optional): the dimension to normalize over; omitting it is deprecated and
            picks one with a warning, as in :func:`softmax`. Default: ``None``
        _stacklevel (int, optional): unused, kept for PyTorch's signature. Default: ``3``
        dtype (eager.dtype, optional): cast ``input`` to this dtype first. Default: ``None``

    Example::

        >>> F.log_softmax(eager.tensor([[1.0, 2.0, 3.0]]), dim=1)
        tensor([[-2.4076, -1.4076, -0.4076]])
    """
    if dim is None:
        dim = _softmax_dim(input.ndim)
    if dtype is not None:
        input = _ew.cast(input, dtype)
    return _red.log_softmax(input, dim)


# -- dropout ----------------------------------------------------------------------------

def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Randomly zeroes elements of ``input`` with probability ``p`` (dropout).

    The kept elements are scaled by ``1 / (1 - p)``, so the expected value is unchanged.

    The mask is drawn from the default generator (:func:`eager.manual_seed`); a compiled
    function draws a new mask on every call.  With ``training=False`` or ``p=0``, ``input``
    itself is returned.

    Args:
        input (Tensor): the input, of any shape.
        p (float, optional): the probability of zeroing an element, in ``[0, 1]`` (else
            ``ValueError``). Default: ``0.5``
        training (bool, optional): apply dropout; ``False`` returns ``input``. Default: ``True``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> x = eager.ones(2, 4)
        >>> y = F.dropout(x, p=0.5)
        >>> sorted(set(y.flatten().tolist()))
        [0.0, 2.0]
        >>> F.dropout(x, p=0.5, training=False) is x
        True
    """
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
    """Layer normalization over the last ``len(normalized_shape)`` dimensions.

    Each slice is normalized to zero mean and unit variance, then an optional elementwise
    affine map is applied.

    Each slice is ``(x - mean) / sqrt(var + eps)`` with the biased variance over those
    dimensions; ``weight`` and ``bias`` (if given) are multiplied and added elementwise.

    Args:
        input (Tensor): the input, ``(*, *normalized_shape)``.
        normalized_shape (int or sequence of ints): the trailing shape to normalize over; it
            must match the end of ``input.shape`` (else ``RuntimeError``).
        weight (Tensor, optional): the scale, of shape ``normalized_shape``. Default: ``None``
        bias (Tensor, optional): the shift, of shape ``normalized_shape``. Default: ``None``
        eps (float, optional): added to the variance for stability. Default: ``1e-5``

    Shape:
        - Input: ``(*, *normalized_shape)``.
        - Output: the shape of the input.

    Example::

        >>> F.layer_norm(eager.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]]), (3,))
        tensor([[-1.2247,  0.0000,  1.2247],
                [ 0.0000,  0.0000,  0.0000]])
        >>> F.layer_norm(eager.randn(2, 3, 4), [3, 4], weight=eager.ones(3, 4)).shape
        eager.Size([2, 3, 4])
    """
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
    """Looks up rows of ``weight`` by index: ``out[...] = weight[input[...]]``.

    Args:
        input (Tensor): integer indices into the rows of ``weight``; other dtypes raise
            ``RuntimeError``.
        weight (Tensor): the table, ``(num_embeddings, embedding_dim)``.
        padding_idx (int, optional): a row (negative counts from the end) that gets no
            gradient; its value is looked up as it is (not zeroed here). Default: ``None``
        max_norm (float, optional): not supported here (anything but ``None`` raises
            ``NotImplementedError``). Default: ``None``
        norm_type (float, optional): the norm of ``max_norm``; unused here. Default: ``2.0``
        scale_grad_by_freq (bool, optional): not supported here (``True`` raises
            ``NotImplementedError``). Default: ``False``
        sparse (bool, optional): not supported here (``True`` raises ``NotImplementedError``).
            Default: ``False``

    Shape:
        - Input: ``(*)``, any shape of integer indices.
        - Weight: ``(num_embeddings, embedding_dim)``.
        - Output: ``(*, embedding_dim)``.

    Example::

        >>> table = eager.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 3.0]])
        >>> F.embedding(eager.tensor([[0, 2], [1, 0]]), table)
        tensor([[[0., 0.],
                 [2., 3.]],
        <BLANKLINE>
                [[1., 1.],
                 [0., 0.]]])
    """
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
    """Encodes integer class indices as one-hot vectors: a 1 at each index, 0 elsewhere.

    Args:
        tensor (Tensor): integer class indices (other dtypes raise ``RuntimeError``); all
            must lie in ``[0, num_classes)``.
        num_classes (int, optional): the length of each vector; ``-1`` takes the largest
            index plus one (an empty ``tensor`` then raises ``RuntimeError``). Default: ``-1``

    Shape:
        - Input: ``(*)``.
        - Output: ``(*, num_classes)``, int64.

    Example::

        >>> F.one_hot(eager.tensor([0, 2, 1]))
        tensor([[1, 0, 0],
                [0, 0, 1],
                [0, 1, 0]])
        >>> F.one_hot(eager.tensor([0, 2]), num_classes=4)
        tensor([[1, 0, 0, 0],
                [0, 0, 1, 0]])
    """
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
    """Mean squared error: the elementwise ``(input - target) ** 2``, reduced.

    A ``target`` whose shape differs from ``input``'s is broadcast, with a warning (as
    PyTorch).

    Args:
        input (Tensor): the predictions, of any shape.
        target (Tensor): the targets, normally of the input's shape.
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        weight (Tensor, optional): multiplies the elementwise loss (broadcast) before the
            reduction; ``"mean"`` still divides by the number of elements. Default: ``None``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> x, y = eager.tensor([1.0, 2.0, 3.0]), eager.tensor([1.0, 0.0, 0.0])
        >>> F.mse_loss(x, y)
        tensor(4.3333)
        >>> F.mse_loss(x, y, reduction="none")
        tensor([0., 4., 9.])
    """
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
    """Mean absolute error: the elementwise ``|input - target|``, reduced.

    A ``target`` whose shape differs from ``input``'s is broadcast, with a warning.

    Args:
        input (Tensor): the predictions, of any shape.
        target (Tensor): the targets, normally of the input's shape.
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        weight (Tensor, optional): multiplies the elementwise loss (broadcast) before the
            reduction. Default: ``None``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> x, y = eager.tensor([1.0, 2.0, 3.0]), eager.tensor([1.0, 0.0, 0.0])
        >>> F.l1_loss(x, y)
        tensor(1.6667)
        >>> F.l1_loss(x, y, reduction="sum")
        tensor(5.)
    """
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
    """Smooth L1 loss: quadratic below ``beta``, linear above.

    With ``d = |input - target|``, the elementwise loss is ``0.5 * d ** 2 / beta`` where
    ``d < beta``, else ``d - 0.5 * beta``; then reduced.

    Quadratic near zero and linear further out, so less sensitive to outliers than
    :func:`mse_loss`.  ``beta=0`` gives :func:`l1_loss`.  It equals ``huber_loss / beta``
    with ``delta=beta``.

    Args:
        input (Tensor): the predictions, of any shape.
        target (Tensor): the targets, normally of the input's shape.
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        beta (float, optional): where the loss turns from quadratic to linear.
            Default: ``1.0``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> F.smooth_l1_loss(eager.tensor([0.0, 0.5, 3.0]), eager.zeros(3), reduction="none")
        tensor([0.0000, 0.1250, 2.5000])
    """
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
    """Huber loss: quadratic for small errors, linear for large ones.

    With ``d = |input - target|``, the elementwise loss is ``0.5 * d ** 2`` where
    ``d < delta``, else ``delta * (d - 0.5 * delta)``; then reduced.

    Args:
        input (Tensor): the predictions, of any shape.
        target (Tensor): the targets, normally of the input's shape (else broadcast, with a
            warning).
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        delta (float, optional): where the loss turns from quadratic to linear.
            Default: ``1.0``
        weight (Tensor, optional): multiplies the elementwise loss (broadcast) before the
            reduction. Default: ``None``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> x = eager.tensor([0.0, 0.5, 3.0])
        >>> F.huber_loss(x, eager.zeros(3), reduction="none", delta=2.0)
        tensor([0.0000, 0.1250, 4.0000])
    """
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
    """Binary cross entropy between probabilities ``input`` and targets ``target``.

    The elementwise loss is ``-(t * log(x) + (1 - t) * log(1 - x))``, then reduced.

    Each log is clamped below at ``-100`` (as PyTorch), so a probability of exactly 0 or 1
    gives a finite loss of at most 100.  For logits, use
    :func:`binary_cross_entropy_with_logits` instead: it is numerically safer.

    Args:
        input (Tensor): probabilities in ``[0, 1]``, of any shape.
        target (Tensor): targets in ``[0, 1]``, of the same shape (else ``ValueError``).
        weight (Tensor, optional): multiplies the elementwise loss (broadcast).
            Default: ``None``
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> p, t = eager.tensor([0.9, 0.2]), eager.tensor([1.0, 0.0])
        >>> F.binary_cross_entropy(p, t, reduction="none")
        tensor([0.1054, 0.2231])
        >>> F.binary_cross_entropy(p, t)
        tensor(0.1643)
    """
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
    """Binary cross entropy on logits, computed stably for any logit.

    It equals :func:`binary_cross_entropy` of ``sigmoid(input)``.

    The elementwise loss is ``(1 - t) * x + w * softplus(-x)`` with
    ``w = 1 + (pos_weight - 1) * t`` (``w = 1`` without ``pos_weight``).

    Args:
        input (Tensor): logits, of any shape.
        target (Tensor): targets in ``[0, 1]``, of the same shape (else ``ValueError``).
        weight (Tensor, optional): multiplies the elementwise loss (broadcast).
            Default: ``None``
        size_average (bool, optional): deprecated (use ``reduction``); as PyTorch's.
            Default: ``None``
        reduce (bool, optional): deprecated (use ``reduction``); as PyTorch's. Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``
        pos_weight (Tensor, optional): a weight on the positive term, broadcast against the
            input (typically one per class, along the last dimension). Default: ``None``

    Shape:
        - Input: ``(*)``; Target: ``(*)``, the same shape.
        - Output: a scalar, or the input's shape with ``reduction="none"``.

    Example::

        >>> x, t = eager.tensor([2.0, -1.0]), eager.tensor([1.0, 0.0])
        >>> F.binary_cross_entropy_with_logits(x, t)
        tensor(0.2201)
        >>> F.binary_cross_entropy_with_logits(x, t, pos_weight=eager.tensor([3.0]),
        ...                                    reduction="none")
        tensor([0.3808, 0.3133])
    """
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
    """Negative log-likelihood loss for log-probabilities and class-index targets.

    The elementwise loss is ``-input[n, target[n]]``, then reduced.

    Combined with :func:`log_softmax` it gives :func:`cross_entropy`.  With ``weight``, each
    element is scaled by ``weight[target[n]]`` and ``"mean"`` divides by the sum of those
    weights.  Targets equal to ``ignore_index`` contribute nothing (and do not count in the
    mean); other out-of-range targets raise ``IndexError``.

    Args:
        input (Tensor): log-probabilities, ``(C)``, ``(N, C)`` or ``(N, C, d_1, ..., d_K)``.
        target (Tensor): int64 class indices in ``[0, C)``, ``()``, ``(N)`` or
            ``(N, d_1, ..., d_K)``.
        weight (Tensor, optional): a rescaling weight per class, ``(C,)``. Default: ``None``
        size_average (bool, optional): deprecated (use ``reduction``). Default: ``None``
        ignore_index (int, optional): a target value that is ignored. Default: ``-100``
        reduce (bool, optional): deprecated (use ``reduction``). Default: ``None``
        reduction (str, optional): ``"none"`` (the elementwise loss), ``"mean"`` or ``"sum"``
            of it; anything else raises ``ValueError``. Default: ``"mean"``

    Shape:
        - Input: ``(C)``, ``(N, C)`` or ``(N, C, d_1, ..., d_K)``.
        - Target: ``()``, ``(N)`` or ``(N, d_1, ..., d_K)``.
        - Output: a scalar, or the target's shape with ``reduction="none"``.

    Example::

        >>> logp = eager.tensor([[-0.5, -1.0, -2.0], [-1.5, -0.2, -3.0]])
        >>> F.nll_loss(logp, eager.tensor([0, 1]))
        tensor(0.3500)
        >>> F.nll_loss(logp, eager.tensor([0, -100]))
        tensor(0.5000)
    """
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
