"""Channel-wise dropout (``dropout1d``/``dropout2d``/``dropout3d``), ``alpha_dropout`` and
``feature_alpha_dropout``, and ``pixel_shuffle``/``pixel_unshuffle``, with PyTorch's
signatures.  Masks come from the ``bernoulli`` factory op (as ``F.dropout``), so a
compiled function redraws them on every call."""

from __future__ import annotations

import warnings

from ...dispatch import dispatch
from ...fn import elementwise as _ew
from ...inplace import inplace as _inplace
from ...ops import factory as _fac
from .activation import apply_inplace

__all__ = ["alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d",
           "feature_alpha_dropout", "pixel_shuffle", "pixel_unshuffle"]


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape, p, dtype, like=None):
    """The keep-mask, drawn on ``like``'s device."""
    return dispatch(_fac.Bernoulli, shape=tuple(shape), p=1.0 - p, dtype=dtype,
                    **_fac.device_params(like))


def _feature_dropout(input, p, training, inplace, name: str, unsqueezed: bool = False):
    """ATen's ``feature_dropout``: one draw per ``(dim 0, dim 1)`` entry, broadcast over the
    other dimensions.  ``unsqueezed``: the input is taken as one sample (PyTorch unsqueezes
    it first), so the draws are per dim-0 entry."""
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return apply_inplace(input, lambda x: _ew.mul(x, 0.0), inplace, name + "_")
    nd = input.ndim
    if nd + unsqueezed < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    lead = 1 if unsqueezed else 2
    mshape = tuple(input.shape[:lead]) + (1,) * (nd - lead)

    def f(x):
        mask = _keep_mask(mshape, p, x._data.dtype, x)
        return _ew.mul(x, _ew.mul(mask, 1.0 / (1.0 - p)))
    return apply_inplace(input, f, inplace, name + "_")


def _deprecated_ndim(input, nsp: int, name: str) -> None:
    """PyTorch's warning for a dropout2d/dropout3d input of another number of dimensions
    (it then drops out along dims 0 and 1 of what it got)."""
    nd = input.ndim
    if nd not in (nsp + 1, nsp + 2):
        warnings.warn(f"{name}: Received a {nd}-D input to {name}, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior "
                      f"and silence this warning, please use dropout instead. Note that {name} "
                      f"exists to provide channel-wise dropout on inputs with {nsp} spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{nsp + 1}D or {nsp + 2}D inputs).", stacklevel=3)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Channel-wise dropout over ``(N, C, L)`` input: zeroes whole channels at random.

    Each channel of each sample is zeroed with probability ``p`` (one draw per
    ``(sample, channel)`` from the default generator) and the kept ones are scaled by
    ``1 / (1 - p)``.  With ``training=False`` or ``p=0``, ``input`` itself is returned.

    Args:
        input (Tensor): the input, ``(N, C, L)`` or unbatched ``(C, L)``.
        p (float, optional): the probability of zeroing a channel, in ``[0, 1]`` (else
            ``ValueError``). Default: ``0.5``
        training (bool, optional): apply dropout; ``False`` returns ``input``. Default: ``True``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Shape:
        - Input: ``(N, C, L)`` or unbatched ``(C, L)``.
        - Output: the shape of the input.

    Example::

        >>> y = F.dropout1d(eager.ones(2, 3, 4), 0.5)
        >>> y.shape
        eager.Size([2, 3, 4])
        >>> bool((y.amax(-1) == y.amin(-1)).all())  # each channel all 0 or all 2
        True
    """
    _check_p(p)
    nd = input.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs "
                           "with 1 spatial dimension, a channel dimension, and an optional batch "
                           "dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, "dropout1d", unsqueezed=nd == 2)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Channel-wise dropout over ``(N, C, H, W)`` input: zeroes whole channels at random.

    Each channel of each sample is zeroed with probability ``p`` (one draw per
    ``(sample, channel)`` from the default generator) and the kept ones are scaled by
    ``1 / (1 - p)``.  With ``training=False`` or ``p=0``, ``input`` itself is returned.

    A 3-D input is taken as ``(N, C, L)`` (1-D channel-wise dropout) with a
    warning, as PyTorch currently does; use :func:`dropout1d` for that.  Another number of
    dimensions is deprecated, as in PyTorch: a warning, then one draw per entry of the first
    two dimensions (fewer than 2 dimensions raise ``RuntimeError``).

    Args:
        input (Tensor): the input, ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        p (float, optional): the probability of zeroing a channel, in ``[0, 1]`` (else
            ``ValueError``). Default: ``0.5``
        training (bool, optional): apply dropout; ``False`` returns ``input``. Default: ``True``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Shape:
        - Input: ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        - Output: the shape of the input.

    Example::

        >>> y = F.dropout2d(eager.ones(2, 3, 4, 4), 0.5)
        >>> y.shape
        eager.Size([2, 3, 4, 4])
        >>> sorted(set(y.flatten().tolist()))
        [0.0, 2.0]
    """
    _check_p(p)
    _deprecated_ndim(input, 2, "dropout2d")
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will "
                      "change in a future release to interpret the input as one without a "
                      "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    return _feature_dropout(input, p, training, inplace, "dropout2d")


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Channel-wise dropout over ``(N, C, D, H, W)`` input: zeroes whole channels at random.

    Each channel of each sample is zeroed with probability ``p`` (one draw per
    ``(sample, channel)`` from the default generator) and the kept ones are scaled by
    ``1 / (1 - p)``.  With ``training=False`` or ``p=0``, ``input`` itself is returned.

    Another number of dimensions than 4 or 5 is deprecated, as in PyTorch: a warning, then
    the input is taken as one unbatched sample (one draw per entry of its first dimension).

    Args:
        input (Tensor): the input, ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)``.
        p (float, optional): the probability of zeroing a channel, in ``[0, 1]`` (else
            ``ValueError``). Default: ``0.5``
        training (bool, optional): apply dropout; ``False`` returns ``input``. Default: ``True``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Shape:
        - Input: ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)``.
        - Output: the shape of the input.

    Example::

        >>> F.dropout3d(eager.ones(1, 4, 2, 2, 2), 0.5).shape
        eager.Size([1, 4, 2, 2, 2])
    """
    _check_p(p)
    _deprecated_ndim(input, 3, "dropout3d")
    return _feature_dropout(input, p, training, inplace, "dropout3d", unsqueezed=input.ndim != 5)


_ALPHA = 1.7580993408473766  # -selu's negative saturation value, scale * alpha


def _alpha(input, p, training, inplace, mshape, name):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return apply_inplace(input, lambda x: _ew.mul(x, 0.0), inplace, name)
    a = 1.0 / ((1.0 - p) * (1.0 + p * _ALPHA ** 2)) ** 0.5
    b = a * _ALPHA * p  # output = a * (x * keep + (-alpha') * (1 - keep)) + b'

    def f(x):
        keep = _keep_mask(mshape(x), p, x._data.dtype, x)
        # PyTorch: (x * keep + (1 - keep) * (-alpha')) * a + alpha' * a * p
        dropped = _ew.mul(_ew.sub(keep, 1.0), _ALPHA)  # -alpha' where dropped, 0 where kept
        return _ew.add(_ew.mul(_ew.add(_ew.mul(x, keep), dropped), a), b)
    return apply_inplace(input, f, inplace, name)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for self-normalizing (SELU) networks: keeps the input's mean and variance.

    Dropped elements are set to SELU's negative saturation value and the result is then scaled
    and shifted so that, for zero-mean unit-variance input, the mean and variance are kept.
    Note that ``training`` defaults to ``False`` here, as in PyTorch's functional form: without
    ``training=True`` the input is returned unchanged.

    Args:
        input (Tensor): the input, of any shape.
        p (float, optional): the probability of dropping an element, in ``[0, 1]`` (else
            ``ValueError``). Default: ``0.5``
        training (bool, optional): apply dropout. Default: ``False``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> x = eager.ones(4)
        >>> F.alpha_dropout(x, 0.5) is x
        True
        >>> F.alpha_dropout(eager.randn(3, 5), 0.2, training=True).shape
        eager.Size([3, 5])
    """
    return _alpha(input, p, training, inplace, lambda x: tuple(x.shape), "alpha_dropout_")


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False,
                          inplace: bool = False):
    """Alpha dropout of whole channels (dimension 1), for SELU networks.

    Dropped channels are set to SELU's negative saturation value and the result is then scaled
    and shifted so that, for zero-mean unit-variance input, the mean and variance are kept.
    Note that ``training`` defaults to ``False`` here, as in PyTorch's functional form: without
    ``training=True`` the input is returned unchanged.

    Args:
        input (Tensor): the input, ``(N, C, *)``.
        p (float, optional): the probability of dropping a channel, in ``[0, 1]`` (else
            ``ValueError``). Default: ``0.5``
        training (bool, optional): apply dropout. Default: ``False``
        inplace (bool, optional): write the result into ``input`` and return it.
            Default: ``False``

    Example::

        >>> y = F.feature_alpha_dropout(eager.ones(2, 3, 4), 0.5, training=True)
        >>> bool((y.amax(-1) == y.amin(-1)).all())  # one value per channel
        True
    """
    return _alpha(input, p, training, inplace,
                  lambda x: tuple(x.shape[:2]) + (1,) * (x.ndim - 2), "feature_alpha_dropout_")


def pixel_shuffle(input, upscale_factor: int):
    """Rearranges ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``.

    Channel blocks move into spatial ``r x r`` blocks (sub-pixel upsampling).

    Args:
        input (Tensor): the input, at least 3-D, its channel dimension (``-3``) divisible by
            ``upscale_factor ** 2``.
        upscale_factor (int): the factor ``r`` to enlarge each spatial dimension by.

    Shape:
        - Input: ``(*, C * r**2, H, W)``.
        - Output: ``(*, C, H * r, W * r)``.

    Example::

        >>> F.pixel_shuffle(eager.arange(8.).reshape(1, 4, 1, 2), 2)
        tensor([[[[0., 2., 1., 3.],
                  [4., 6., 5., 7.]]]])
        >>> F.pixel_shuffle(eager.randn(1, 8, 3, 3), 2).shape
        eager.Size([1, 2, 6, 6])
    """
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    lead = tuple(lead)
    k = len(lead)
    oc = c // (r * r)
    x = input.reshape(lead + (oc, r, r, h, w))
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(lead + (oc, h * r, w * r))


def pixel_unshuffle(input, downscale_factor: int):
    """Rearranges ``(*, C, H * r, W * r)`` into ``(*, C * r**2, H, W)``.

    This is the inverse of :func:`pixel_shuffle`.

    Args:
        input (Tensor): the input, at least 3-D, its height and width divisible by
            ``downscale_factor``.
        downscale_factor (int): the factor ``r`` to shrink each spatial dimension by.

    Shape:
        - Input: ``(*, C, H * r, W * r)``.
        - Output: ``(*, C * r**2, H, W)``.

    Example::

        >>> F.pixel_unshuffle(eager.randn(1, 2, 6, 6), 3).shape
        eager.Size([1, 18, 2, 2])
        >>> x = eager.arange(8.).reshape(1, 4, 1, 2)
        >>> bool((F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2) == x).all())
        True
    """
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError("pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got height={h}, width={w}, "
                           f"downscale_factor={r}")
    lead = tuple(lead)
    k = len(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(lead + (c * r * r, h // r, w // r))


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
        return _inplace(input, out, "dropout_")
    return out
