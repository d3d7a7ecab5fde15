"""What a row of the op table is (``OpInfo``), its sample inputs (``Sample``, drawn by a
``Gen``) and how a row is called.  The rows themselves: elementwise ops in
``tests/optable.py``, every other op in ``tests/optable_ops.py``; ``tests.optable.ROWS`` is
the one table of both."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import eager as E

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
I32, I64 = np.dtype(np.int32), np.dtype(np.int64)
BOOL, U8, I8 = np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8)
FLOATS = (F32, F64)
NUMBERS = (I32, I64, F32, F64)
ALL = (BOOL, U8, I8) + NUMBERS

#: the checks a row's ``xfail`` may name (each with the bug it hits)
CHECKS = ("reaches", "grad", "compiled", "numba", "vmap", "parity", "parity_grad")


@dataclass(frozen=True)
class Sample:
    """One call of a row: ``arrays`` become the tensor arguments (in order), ``kwargs``
    are passed as they are; float arrays are differentiated except those at ``nograd``."""
    arrays: tuple
    kwargs: dict = field(default_factory=dict)
    nograd: tuple = ()


def S(*arrays, nograd=(), **kwargs) -> Sample:
    return Sample(tuple(arrays), kwargs, tuple(nograd))


@dataclass(frozen=True)
class OpInfo:
    """A row of the op table.

    ``name``: the op's registry name.  ``fn``: the public call reaching the op.  An
    elementwise row (``lib=False``) takes tensors (and the row's ``scalar`` when not None,
    as its last argument), its inputs drawn from ``shapes`` (broadcasting ones) and
    ``domain``.  Other rows (``lib=True``) take the library namespace first (``eager``, or
    ``torch`` for the reference), then the sample's tensors and keyword arguments; their
    inputs come from ``samples(gen)`` (a few calls: broadcasting, keepdim, negative dims
    where they apply; shapes and keywords never depend on the seed, so samples of several
    seeds stack into a vmap batch).

    ``dtypes``: dtypes of the drawn inputs (index arrays are always int64); ``grad``:
    the call is differentiable (float64 gradcheck); ``rtol``: float32 tolerance of fused
    kernels against NumPy (elementwise rows); ``atol``: the gradcheck's absolute tolerance;
    ``ref``: the PyTorch reference (None: none; True: ``fn`` itself on ``torch``; a
    string: the name of a torch function taking the row's positional arguments; a
    callable: ``ref(torch, *tensors, **kwargs)``), compared with ``ref_rtol``;
    ``devices``: where the op has an implementation; ``vmap``: ``vmap`` over a leading
    batch dimension applies (the op has a batching rule and values do not decide shapes);
    ``numba``: also compiled with the default (numba) backend; ``compiled``: a compiled
    call is served by compiled code (False: it runs eagerly by design, e.g. a
    data-dependent shape); ``random``: draws random numbers (seeded checks; the reference
    is compared on shapes and dtypes only); ``xfail``: check name (see ``CHECKS``) -> the
    bug that check hits."""
    name: str
    fn: object
    shapes: tuple = ((2, 3),)
    domain: str = "real"
    dtypes: tuple = FLOATS
    grad: bool = True
    rtol: float = 0.0
    scalar: object = None
    extra: dict = field(default_factory=dict)
    samples: object = None
    lib: bool = False
    atol: float = 1e-6
    ref: object = None
    ref_rtol: float = 1e-7
    devices: tuple = ("cpu", "cuda")
    vmap: bool = True
    numba: bool = False
    compiled: bool = True
    random: bool = False
    xfail: dict = field(default_factory=dict)


def draw(rng, shape, domain: str, dtype):
    """A NumPy array of ``shape`` in ``dtype`` from ``domain``: "real" (uniform in
    [-2, 2]), "positive", "nonzero"/"unit" (away from 0, integers and halves), "sparse"
    (about half exact zeros), "distinct" (no two elements within 0.05: argmax, sort and
    friends have one answer and finite differences do not cross a tie)."""
    dtype = np.dtype(dtype)
    if domain == "distinct":
        n = int(np.prod(shape))
        x = (rng.permutation(n) - n / 2) * 0.3 + rng.uniform(0.0, 0.1, n)
        x = x.reshape(shape)
    else:
        x = rng.uniform(-2.0, 2.0, shape)
    if domain == "positive":
        x = np.abs(x) + 0.25
    elif domain in ("nonzero", "unit"):
        x = np.where(np.abs(x) < 0.2, 0.3, x) + 0.05  # off integers/halves for rounding
    elif domain == "sparse":
        x = np.where(np.abs(x) < 1.0, 0.0, x)
    if dtype.kind == "b":
        x = x > 0
    elif dtype.kind in "iu":
        x = np.round(x * 3)
        if domain in ("nonzero", "positive"):
            x = np.where(x == 0, 1, x)
        if dtype.kind == "u":
            x = np.abs(x)
    return np.asarray(x).astype(dtype)


class Gen:
    """Draws a row's sample inputs: ``x`` in the row's dtype, ``f`` in float64 whatever
    the dtype (weights, probabilities), ``i`` int64 indices, ``mask`` booleans."""

    def __init__(self, dtype, seed: int = 0):
        self.dtype = np.dtype(dtype)
        self.rng = np.random.default_rng(seed)

    def x(self, *shape, domain: str = "real"):
        return draw(self.rng, shape, domain, self.dtype)

    def f(self, *shape, domain: str = "real"):
        return draw(self.rng, shape, domain, F64).astype(
            self.dtype if self.dtype.kind == "f" else F64)

    def i(self, high: int, *shape):
        return self.rng.integers(0, high, shape).astype(I64)

    def perm(self, n: int, k: int | None = None):
        """``k`` distinct int64 indices in ``[0, n)``."""
        return self.rng.permutation(n)[:n if k is None else k].astype(I64)

    def mask(self, *shape):
        return self.rng.uniform(size=shape) < 0.5


def inputs(row: OpInfo, dtype, seed: int = 0) -> list:
    """NumPy inputs for an elementwise ``row`` in ``dtype`` (values away from kinks and
    poles)."""
    rng = np.random.default_rng(seed)
    return [draw(rng, shape, row.domain, dtype) for shape in row.shapes]


def samples(row: OpInfo, dtype, seed: int = 0) -> list:
    """The row's samples in ``dtype``; an elementwise row has one (its ``shapes``)."""
    if row.samples is None:
        return [Sample(tuple(inputs(row, dtype, seed)))]
    return list(row.samples(Gen(dtype, seed)))


def call(row: OpInfo, *tensors, lib=E, **kwargs):
    """The row's public call on ``tensors`` (``lib``: the namespace, eager or torch)."""
    if row.lib:
        return row.fn(lib, *tensors, **kwargs)
    return row.fn(*tensors, row.scalar) if row.scalar is not None else row.fn(*tensors)


def call_ref(row: OpInfo, torch, *tensors, **kwargs):
    """The row's PyTorch reference on torch tensors."""
    if row.ref is True:
        return call(row, *tensors, lib=torch, **kwargs)
    extra = (row.scalar,) if row.scalar is not None else ()
    if isinstance(row.ref, str):
        fn = torch
        for part in row.ref.split("."):
            fn = getattr(fn, part)
        return fn(*tensors, *extra, **kwargs)
    return row.ref(torch, *tensors, *extra, **kwargs)


def outputs(out) -> list:
    """A call's result as a list of tensors (tuples and named tuples flattened)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in outputs(o)]
    return [out]


def library_ops() -> dict:
    """The ops eager registers (name -> class): what the table must cover.  Tests define
    ops of their own (a custom Function, an effect probe), registered in the same place
    and left there: those are not the library's and have no row."""
    from eager.ops.base import OPS
    return {n: op for n, op in OPS.items() if op.__module__.startswith("eager.")}
