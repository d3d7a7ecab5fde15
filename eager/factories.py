"""Tensor factories: ``tensor``, ``from_numpy``, ``zeros``, ``ones``, ``full``, ``empty``,
``arange``, ``linspace``, ``eye``, ``rand``, ``randn``, ``randint``, ``randperm`` and the
``*_like`` forms.  Random factories draw from ``generator=`` (an :class:`eager.Generator`;
None: the default generator, seeded by :func:`eager.manual_seed`).

Python floats become float32, ints int64, bools bool; a NumPy array keeps its dtype.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from ._state import STATE
from .construct import _finish, as_tensor, from_numpy, tensor  # noqa: F401 (public here)
from .devices import factory_params
from .dispatch import dispatch
from .fn.args import norm_shape
from .ops import factory as _f
from .random import check as _check_generator
from .tensor import Tensor


def _float_dtype(dtype) -> np.dtype:
    return _dt.DEFAULT_FLOAT.np if dtype is None else _dt.to_numpy(dtype)


def _plain(*values) -> tuple:
    """``values`` with the dynamic Python numbers of a traced call (a ``SymInt`` or
    ``SymFloat`` of ``compile``) specialized: a factory's shape and dtype depend on
    them, so the trace is guarded on their values (another value traces again)."""
    tracer = STATE.tracer
    if tracer is not None and tracer.has_syms:
        return tracer.plain_data(values)
    return values


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` with every element equal to ``fill_value``.

    Args:
        size (int or sequence of ints): the shape.
        fill_value (number or bool): the value of every element.
        dtype (eager.dtype, optional): the dtype; when omitted it is taken from
            ``fill_value`` (bool, int64 for an int, the default float dtype for a float).
            Default: ``None``
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd
            (floating dtypes only). Default: ``False``

    Example::

        >>> eager.full((2, 3), 1.5)
        tensor([[1.5000, 1.5000, 1.5000],
                [1.5000, 1.5000, 1.5000]])
        >>> eager.full((2,), 7)
        tensor([7, 7])
    """
    on = factory_params(device)
    fill_value, = _plain(fill_value)
    shape = norm_shape((size,) if isinstance(size, int) else tuple(size), "full")
    if dtype is None:
        dtype = _dt.result_type(fill_value)
    t = dispatch(_f.Full, shape=shape, value=fill_value, dtype=_dt.to_numpy(dtype), **on)
    return _finish(t, requires_grad)


def _size_kw(args: tuple, size, name: str) -> tuple:
    """The shape from ``*size`` or the ``size=`` keyword (PyTorch accepts both)."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,) if isinstance(size, int) else tuple(size)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False, memory_format=None) -> Tensor:
    """A tensor filled with 0, of shape ``size``.

    Args:
        *size (ints or a sequence): the shape (``size=`` as a keyword also works).
        dtype (eager.dtype, optional): default: the default float dtype (float32).
        device, layout, pin_memory, memory_format: accepted as PyTorch's.
        requires_grad (bool): default: ``False``.

    Example::

        >>> eager.zeros(2, 3)
        tensor([[0., 0., 0.],
                [0., 0., 0.]])
    """
    size = _size_kw(args, size, "zeros")
    on = factory_params(device)
    t = dispatch(_f.Full, shape=norm_shape(size, "zeros"), value=0, dtype=_float_dtype(dtype),
                 **on)
    return _finish(t, requires_grad)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False, memory_format=None) -> Tensor:
    """A tensor filled with 1, of shape ``size``.

    Args:
        *size (ints or a sequence of ints): the shape, as separate ints or one sequence
            (``size=`` as a keyword also works).
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (the default float
            dtype, float32)
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd.
            Default: ``False``
        layout, pin_memory, memory_format: accepted for PyTorch compatibility and ignored
            (the result is always a dense, contiguous, unpinned tensor).

    Example::

        >>> eager.ones(2, 3)
        tensor([[1., 1., 1.],
                [1., 1., 1.]])
        >>> eager.ones((2,), dtype=eager.int64)
        tensor([1, 1])
    """
    size = _size_kw(args, size, "ones")
    on = factory_params(device)
    t = dispatch(_f.Full, shape=norm_shape(size, "ones"), value=1, dtype=_float_dtype(dtype),
                 **on)
    return _finish(t, requires_grad)


def empty(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False, memory_format=None) -> Tensor:
    """A tensor of shape ``size`` whose values should not be relied on.

    PyTorch leaves the memory uninitialized; here it is filled with zeros, but code
    should write every element before reading it.

    Args:
        *size (ints or a sequence of ints): the shape, as separate ints or one sequence
            (``size=`` as a keyword also works).
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (the default float
            dtype, float32)
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd.
            Default: ``False``
        layout, pin_memory, memory_format: accepted for PyTorch compatibility and ignored.

    Example::

        >>> eager.empty(2, 3).shape
        eager.Size([2, 3])
        >>> eager.empty((4,), dtype=eager.int64).dtype
        eager.int64
    """
    size = _size_kw(args, size, "empty")
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 1-D tensor of the values from ``start`` up to ``end`` (excluded) by ``step``.

    That is ``start, start + step, ...``.  With one number, ``arange(n)`` counts
    ``0 .. n-1``.

    Args:
        start (number): the first value (or, when ``end`` is omitted, the end, counting
            from 0).
        end (number, optional): the bound, excluded. Default: ``None``
        step (number, optional): the spacing between values; may be negative, not zero.
            Default: ``1``
        dtype (eager.dtype, optional): the dtype; when omitted, int64 if all of
            ``start``, ``end`` and ``step`` are ints, else the default float dtype.
            Default: ``None``
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd
            (floating dtypes only). Default: ``False``

    Example::

        >>> eager.arange(5)
        tensor([0, 1, 2, 3, 4])
        >>> eager.arange(1, 4)
        tensor([1, 2, 3])
        >>> eager.arange(0, 1, 0.25)
        tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    on = factory_params(device)
    start, end, step = _plain(start, end, step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        dtype = _dt.result_type(start, end, step)
    t = dispatch(_f.Arange, start=start, end=end, step=step, dtype=_dt.to_numpy(dtype), **on)
    return _finish(t, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 1-D tensor of ``steps`` evenly spaced values from ``start`` to ``end`` included.

    Args:
        start (number): the first value.
        end (number): the last value.
        steps (int): how many values (``1`` gives just ``start``).
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (the default float
            dtype, float32, even for int ``start`` and ``end``)
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd.
            Default: ``False``

    Example::

        >>> eager.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
        >>> eager.linspace(-1, 1, steps=3)
        tensor([-1.,  0.,  1.])
    """
    on = factory_params(device)
    t = dispatch(_f.Linspace, start=start, end=end, steps=int(steps),
                 dtype=_float_dtype(dtype), **on)
    return _finish(t, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 2-D tensor with ones on the main diagonal and zeros elsewhere.

    Args:
        n (int): the number of rows.
        m (int, optional): the number of columns. Default: ``None`` (``n``, a square
            identity matrix)
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (the default float
            dtype, float32)
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd.
            Default: ``False``

    Example::

        >>> eager.eye(3)
        tensor([[1., 0., 0.],
                [0., 1., 0.],
                [0., 0., 1.]])
        >>> eager.eye(2, 3)
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    on = factory_params(device)
    t = dispatch(_f.Eye, n=int(n), m=int(n if m is None else m), dtype=_float_dtype(dtype), **on)
    return _finish(t, requires_grad)


def _random_float_dtype(dtype, kernel: str) -> np.dtype:
    """The dtype of ``rand``/``randn`` (default float); PyTorch's ``NotImplementedError``
    (naming its kernel) for an integer or bool dtype."""
    npd = _float_dtype(dtype)
    if npd.kind in "biu":
        name = _UNSIGNED.get(npd.name) or _dt.scalar_name(npd)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')
    return npd


_UNSIGNED = {"uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


def rand(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False,
         layout=None, pin_memory=False) -> Tensor:
    """A tensor of samples drawn uniformly from ``[0, 1)``.

    Args:
        *size (ints or a sequence of ints): the shape, as separate ints or one sequence
            (``size=`` as a keyword also works).
        generator (eager.Generator, optional): the generator to draw from. Default:
            ``None`` (the default generator, seeded by :func:`eager.manual_seed`)
        dtype (eager.dtype, optional): the dtype, a floating one (an integer or bool dtype
            raises ``NotImplementedError``, as in PyTorch). Default: ``None`` (the default
            float dtype, float32)
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd.
            Default: ``False``
        layout, pin_memory: accepted for PyTorch compatibility and ignored.

    Example::

        >>> x = eager.rand(2, 3)
        >>> x.shape
        eager.Size([2, 3])
        >>> bool(((x >= 0) & (x < 1)).all())
        True
        >>> g = eager.Generator().manual_seed(1)
        >>> eager.rand(2, generator=g)
        tensor([0.5118, 0.9505])
    """
    size = _size_kw(args, size, "rand")
    npd = _random_float_dtype(dtype, "check_uniform_bounds")
    on = factory_params(device)
    g = _check_generator(generator, "rand")
    t = dispatch(_f.Rand, shape=norm_shape(size, "rand"), dtype=npd, generator=g, **on)
    return _finish(t, requires_grad)


def randn(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False,
          layout=None, pin_memory=False) -> Tensor:
    """A tensor of samples from the standard normal distribution ``N(0, 1)``.

    Args:
        *size (ints or a sequence): the shape (``size=`` as a keyword also works).
        generator (eager.Generator, optional): the random-number generator to draw from.
        dtype (eager.dtype, optional): a floating dtype (an integer or bool one raises
            ``NotImplementedError``, as in PyTorch); default: the default float dtype
            (float32).
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool): default: ``False``.
        layout, pin_memory: accepted for PyTorch compatibility and ignored.

    Example::

        >>> eager.randn(2, 3).shape
        eager.Size([2, 3])
    """
    size = _size_kw(args, size, "randn")
    npd = _random_float_dtype(dtype, "normal_kernel_cpu")
    on = factory_params(device)
    g = _check_generator(generator, "randn")
    t = dispatch(_f.Randn, shape=norm_shape(size, "randn"), dtype=npd, generator=g, **on)
    return _finish(t, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    """A tensor of integers drawn uniformly from ``[low, high)``.

    Called as ``randint(high, size)`` or ``randint(low, high, size)``, as in PyTorch.

    Args:
        low (int, optional): the lowest value that can be drawn. Default: ``0``
        high (int): one above the highest value that can be drawn; must exceed ``low``.
        size (tuple of ints): the shape.
        generator (eager.Generator, optional): the generator to draw from. Default:
            ``None`` (the default generator)
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (int64)
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd
            (floating dtypes only: an integer dtype raises ``RuntimeError``, as in
            PyTorch). Default: ``False``

    Example::

        >>> x = eager.randint(3, 10, (2, 4))
        >>> x.shape, x.dtype
        (eager.Size([2, 4]), eager.int64)
        >>> bool(((x >= 3) & (x < 10)).all())
        True
        >>> eager.randint(1, (3,))
        tensor([0, 0, 0])
    """
    on = factory_params(device)
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    g = _check_generator(generator, "randint")
    t = dispatch(_f.Randint, low=int(low), high=int(high), shape=norm_shape(tuple(size)),
                 dtype=_dt.DEFAULT_INT.np if dtype is None else _dt.to_numpy(dtype),
                 generator=g, **on)
    return _finish(t, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of the integers ``0 .. n-1``.

    Args:
        n (int): the number of values (not negative).
        generator (eager.Generator, optional): the generator to draw from. Default:
            ``None`` (the default generator)
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (int64)
        device (str or eager.device, optional): the device. Default: ``None`` (CPU)
        requires_grad (bool, optional): record operations on the result for autograd
            (floating dtypes only). Default: ``False``

    Example::

        >>> p = eager.randperm(5)
        >>> p.shape, p.dtype
        (eager.Size([5]), eager.int64)
        >>> sorted(p.tolist())
        [0, 1, 2, 3, 4]
    """
    on = factory_params(device)
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    g = _check_generator(generator, "randperm")
    t = dispatch(_f.Randperm, n=n, dtype=_dt.DEFAULT_INT.np if dtype is None
                 else _dt.to_numpy(dtype), generator=g, **on)
    return _finish(t, requires_grad)


def _like(fn):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None, **kw):
        dt = input.dtype if dtype is None else dtype
        dev = input.device if device is None else device
        return fn(tuple(input.shape), dtype=dt, device=dev, requires_grad=requires_grad, **kw)
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)

_LIKE_ARGS = """
    Args:
        input (Tensor): the tensor whose shape (and, by default, dtype and device) the
            result takes.
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (``input.dtype``)
        device (str or eager.device, optional): the device. Default: ``None``
            (``input.device``)
        requires_grad (bool, optional): record operations on the result for autograd.
            Default: ``False``"""

zeros_like.__doc__ = """A tensor of zeros with the shape of ``input``.

    It is ``zeros(input.shape)`` with ``input``'s dtype and device unless given.
""" + _LIKE_ARGS + """
        memory_format (eager.memory_format, optional): accepted for PyTorch compatibility
            and ignored. Default: ``None``
        **kwargs: handed on to :func:`zeros` (``layout``, ``pin_memory``: ignored).

    Example::

        >>> eager.zeros_like(eager.tensor([[1, 2], [3, 4]]))
        tensor([[0, 0],
                [0, 0]])
    """
ones_like.__doc__ = """A tensor of ones with the shape of ``input``.

    It is ``ones(input.shape)`` with ``input``'s dtype and device unless given.
""" + _LIKE_ARGS + """
        memory_format (eager.memory_format, optional): accepted for PyTorch compatibility
            and ignored. Default: ``None``
        **kwargs: handed on to :func:`ones` (``layout``, ``pin_memory``: ignored).

    Example::

        >>> eager.ones_like(eager.tensor([1.5, 2.5]))
        tensor([1., 1.])
        >>> eager.ones_like(eager.tensor([1, 2]), dtype=eager.float32)
        tensor([1., 1.])
    """
empty_like.__doc__ = """An uninitialized tensor with the shape of ``input``.

    It is ``empty(input.shape)`` with ``input``'s dtype and device unless given (here
    filled with zeros, as :func:`empty` is).
""" + _LIKE_ARGS + """
        memory_format (eager.memory_format, optional): accepted for PyTorch compatibility
            and ignored. Default: ``None``
        **kwargs: handed on to :func:`empty` (``layout``, ``pin_memory``: ignored).

    Example::

        >>> eager.empty_like(eager.zeros(2, 3)).shape
        eager.Size([2, 3])
    """
rand_like.__doc__ = """Uniform samples from ``[0, 1)`` with the shape of ``input``.

    It is ``rand(input.shape)`` with ``input``'s dtype and device unless given.  The dtype
    must be a floating one: an integer or bool ``input`` (without a floating ``dtype``)
    raises ``NotImplementedError``, as in PyTorch.
""" + _LIKE_ARGS + """
        memory_format (eager.memory_format, optional): accepted for PyTorch compatibility
            and ignored (the result is contiguous). Default: ``None``
        **kwargs: handed on to :func:`rand` (e.g. ``generator``).

    Example::

        >>> x = eager.rand_like(eager.zeros(2, 3, dtype=eager.float64))
        >>> x.shape, x.dtype
        (eager.Size([2, 3]), eager.float64)
    """
randn_like.__doc__ = """Standard normal samples with the shape of ``input``.

    It is ``randn(input.shape)`` with ``input``'s dtype and device unless given (a
    floating dtype: an integer or bool one raises ``NotImplementedError``, as in PyTorch).
""" + _LIKE_ARGS + """
        memory_format (eager.memory_format, optional): accepted for PyTorch compatibility
            and ignored (the result is contiguous). Default: ``None``
        **kwargs: handed on to :func:`randn` (e.g. ``generator``).

    Example::

        >>> x = eager.randn_like(eager.zeros(4, 2))
        >>> x.shape, x.dtype
        (eager.Size([4, 2]), eager.float32)
    """


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor with the shape of ``input``, every element equal to ``fill_value``.

    The dtype is ``input``'s unless given, so a float ``fill_value`` is truncated into an
    integer ``input``'s dtype.

    Args:
        input (Tensor): the tensor whose shape (and, by default, dtype and device) the
            result takes.
        fill_value (number or bool): the value of every element.
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (``input.dtype``)
        device (str or eager.device, optional): the device. Default: ``None``
            (``input.device``)
        requires_grad (bool, optional): record operations on the result for autograd.
            Default: ``False``

    Example::

        >>> eager.full_like(eager.zeros(2, 2), 5)
        tensor([[5., 5.],
                [5., 5.]])
        >>> eager.full_like(eager.tensor([1, 2]), 2.7)
        tensor([2, 2])
    """
    dt = input.dtype if dtype is None else dtype
    dev = input.device if device is None else device
    return full(tuple(input.shape), fill_value, dtype=dt, device=dev,
                requires_grad=requires_grad)


def randint_like(input, low, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False) -> Tensor:
    """Integers drawn uniformly from ``[low, high)``, with the shape of ``input``.

    Called as ``randint_like(input, high)`` or ``randint_like(input, low, high)``.  The
    result has ``input``'s dtype unless given, so a float ``input`` gives whole-number
    floats.

    Args:
        input (Tensor): the tensor whose shape (and, by default, dtype and device) the
            result takes.
        low (int): the lowest value that can be drawn (the ``high`` bound, from 0, when
            ``high`` is omitted).
        high (int, optional): one above the highest value that can be drawn. Default:
            ``None``
        generator (eager.Generator, optional): the generator to draw from. Default:
            ``None`` (the default generator)
        dtype (eager.dtype, optional): the dtype. Default: ``None`` (``input.dtype``)
        device (str or eager.device, optional): the device. Default: ``None``
            (``input.device``)
        requires_grad (bool, optional): record operations on the result for autograd
            (floating dtypes only, as :func:`randint`). Default: ``False``

    Example::

        >>> x = eager.randint_like(eager.zeros(2, 3, dtype=eager.int64), 5, 8)
        >>> x.shape, x.dtype
        (eager.Size([2, 3]), eager.int64)
        >>> bool(((x >= 5) & (x < 8)).all())
        True
    """
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), generator=generator,
                   dtype=dtype or input.dtype,
                   device=input.device if device is None else device,
                   requires_grad=requires_grad)
