"""Random functions of tensors with PyTorch's names, signatures and errors: ``bernoulli``,
``multinomial``, ``normal``, and the in-place samplers bound as Tensor methods
(``normal_``, ``uniform_``, ``bernoulli_``, ``random_``, ``exponential_``: ``FILLS`` maps
each to a function returning the samples, which :mod:`eager.methods` writes in place).

Each draws through a random op (``random = True``) with the generator as an op parameter
(``generator=None``: the default generator), so a compiled trace redraws from the same
generator object on every replay.  The factories (``rand``, ``randn``, ``randint``,
``randperm``) are in :mod:`eager.factories`; the generators in :mod:`eager.random`.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dispatch import dispatch
from ..dtypes import is_float as _isf
from ..dtypes import scalar_name
from ..ops import elementwise as _ew
from ..ops import factory as _f
from ..random import check as _check_generator
from ..tensor import Tensor
from .args import norm_shape
from .elementwise import cast
from .shape import expand

__all__ = ["bernoulli", "multinomial", "normal"]


def _need_float(input: Tensor, kernel: str) -> None:
    if not _isf(input._data.dtype):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_name(input._data.dtype)}'")


def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (elementwise; or ``p`` for every element), else 0, in
    ``input``'s dtype.  Not differentiable."""
    _check_generator(generator, "bernoulli")
    if p is None:
        _need_float(input, "bernoulli_tensor_cpu_p_")
        return dispatch(_f.BernoulliTensor, input, generator=generator)
    if isinstance(p, Tensor):
        return bernoulli(_expand_as(p, input), generator=generator)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return dispatch(_f.Bernoulli, shape=tuple(input._data.shape), p=float(p),
                    dtype=input._data.dtype, generator=generator, **_f.device_params(input))


def _expand_as(p: Tensor, like: Tensor) -> Tensor:
    return cast(expand(p, tuple(like.shape)), like.dtype)


def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None):
    """``num_samples`` category indices per row of ``input`` (1-D or 2-D, nonnegative
    weights, need not sum to 1), drawn with or without replacement; int64."""
    _check_generator(generator, "multinomial")
    d = input._data
    if d.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not _isf(d.dtype):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_name(d.dtype)}")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > d.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    return dispatch(_f.Multinomial, input, num_samples=num_samples,
                    replacement=bool(replacement), generator=generator)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False):
    """Samples of N(mean, std²): ``normal(Tensor mean, Tensor std)`` (broadcast),
    ``normal(Tensor, float)``, ``normal(float, Tensor)`` or ``normal(float, float, size)``.
    Not differentiable in ``mean`` or ``std`` (PyTorch's gradients there are zero)."""
    _check_generator(generator, "normal")
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got "
                            "(float, float), but expected (float mean, float std, tuple of "
                            "ints size, *, torch.Generator generator)")
        _check_std(std, "normal")
        z = dispatch(_f.Randn, shape=norm_shape(tuple(size), "normal"),
                     dtype=_dt.DEFAULT_FLOAT.np if dtype is None else _dt.to_numpy(dtype),
                     generator=generator)
        out = dispatch(_ew.Add, dispatch(_ew.Mul, z, float(std)), float(mean))
        return out.requires_grad_(True) if requires_grad else out
    if not isinstance(std, Tensor):
        _check_std(std, "normal")
    for t in (mean, std):
        if isinstance(t, Tensor):
            _need_float(t, "normal_kernel_cpu")
    return dispatch(_f.Normal, _detached(mean), _detached(std), generator=generator)


def _detached(x):
    return x.detach() if isinstance(x, Tensor) else float(x)


def _check_std(std, who: str) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"{who} expects std >= 0.0, but found std {std:g}")


# -- in-place samplers: x.normal_() fills x with what these return -------------------------

def _normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    """``x.normal_(mean, std)``: fill with samples of N(mean, std²)."""
    _check_generator(generator, "normal_")
    _need_float(self, "normal_kernel_cpu")
    _check_std(std, "normal")
    z = dispatch(_f.Randn, shape=tuple(self._data.shape), dtype=self._data.dtype,
                 generator=generator, **_f.device_params(self))
    return dispatch(_ew.Add, dispatch(_ew.Mul, z, float(std)), float(mean))


def _uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None, **kw):
    """``x.uniform_(from, to)``: fill with samples of U[from, to)."""
    from_ = _from_kw(kw, from_, "uniform_")
    _check_generator(generator, "uniform_")
    _need_float(self, "uniform_kernel_cpu")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    u = dispatch(_f.Rand, shape=tuple(self._data.shape), dtype=self._data.dtype,
                 generator=generator, **_f.device_params(self))
    return dispatch(_ew.Add, dispatch(_ew.Mul, u, float(to - from_)), float(from_))


def _bernoulli_(self, p=0.5, *, generator=None):
    """``x.bernoulli_(p)``: fill with 1 with probability ``p`` (a float, or a tensor
    broadcast to x), else 0."""
    _check_generator(generator, "bernoulli_")
    if isinstance(p, Tensor):
        return dispatch(_f.BernoulliTensor, _expand_as(p, self).detach(), generator=generator)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return dispatch(_f.Bernoulli, shape=tuple(self._data.shape), p=float(p),
                    dtype=self._data.dtype, generator=generator, **_f.device_params(self))


def _random_(self, from_: int = 0, to: int | None = None, *, generator=None, **kw):
    """``x.random_(from, to)``: fill with integers uniform in ``[from, to)``;
    ``random_(to)`` is ``[0, to)``; no bound: ``[0, 2**mantissa]`` for floating dtypes, the
    dtype's nonnegative range for integers."""
    from_ = _from_kw(kw, from_, "random_")
    _check_generator(generator, "random_")
    d = self._data.dtype
    if to is None and from_ != 0:    # random_(to)
        from_, to = 0, from_
    if to is None:
        if _isf(d):
            to = 2 ** (_dt.finfo(d).nmant + 1) + 1
        elif d.kind == "b":
            to = 2
        else:
            to = int(np.iinfo(d).max) + 1
    if int(to) <= int(from_):
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={from_} >= to={to}")
    return dispatch(_f.Randint, low=int(from_), high=int(to), shape=tuple(self._data.shape),
                    dtype=d, generator=generator, **_f.device_params(self))


def _exponential_(self, lambd: float = 1.0, *, generator=None):
    """``x.exponential_(lambd)``: fill with samples of Exp(lambd)."""
    _check_generator(generator, "exponential_")
    _need_float(self, "exponential_cpu")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    u = dispatch(_f.Rand, shape=tuple(self._data.shape), dtype=np.dtype(np.float64),
                 generator=generator, **_f.device_params(self))
    return dispatch(_ew.Mul, dispatch(_ew.Log1p, dispatch(_ew.Neg, u)), -1.0 / lambd)


def _from_kw(kw: dict, default, who: str):
    """``from`` is a Python keyword: ``x.uniform_(**{"from": 1})`` or ``from_=1``."""
    value = kw.pop("from", default)
    if kw:
        raise TypeError(f"{who}() got an unexpected keyword argument {next(iter(kw))!r}")
    return value


METHODS = ["bernoulli", "multinomial"]
INPLACE: dict = {}
# x.<name>(...) writes FILLS[name](x, ...) into x (eager.methods binds them)
FILLS = {"normal_": _normal_, "uniform_": _uniform_, "bernoulli_": _bernoulli_,
         "random_": _random_, "exponential_": _exponential_}
