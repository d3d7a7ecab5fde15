"""The op table: one row per elementwise op (OpInfo-style), driving the tests of every
device (``tests/ops/test_optable.py``): eager gradients against finite differences, the
op's fused kernel against ``run_graph``, compiled against eager, and the op's dtype
rule against what its forward returns.  A new elementwise op is one class and one row
here; an op in the registry without a row fails ``test_every_elementwise_op_has_a_row``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import eager as E

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
FLOATS = (F32, F64)
NUMBERS = (np.dtype(np.int32), np.dtype(np.int64), F32, F64)
ALL = (np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8)) + NUMBERS


@dataclass(frozen=True)
class OpInfo:
    """``name``: the op's registry name; ``fn``: the public call taking tensors (and the
    row's ``scalar`` when not None, as its last argument); ``shapes``: input shapes
    (broadcasting ones); ``domain``: where inputs are drawn ("real", "positive",
    "nonzero", "unit"); ``dtypes``: input dtypes tested; ``grad``: check gradients;
    ``rtol``: float32 tolerance of kernels against NumPy (transcendentals <= 2 ulp)."""
    name: str
    fn: object
    shapes: tuple = ((2, 3),)
    domain: str = "real"
    dtypes: tuple = FLOATS
    grad: bool = True
    rtol: float = 0.0
    scalar: object = None
    extra: dict = field(default_factory=dict)


U = 3e-7   # float32 rounding, a little more than an ulp
ROWS = [
    OpInfo("add", lambda x, y: x + y, ((2, 3), (3,)), dtypes=ALL),
    OpInfo("sub", lambda x, y: x - y, ((2, 3), (2, 1)), dtypes=NUMBERS),
    OpInfo("mul", lambda x, y: x * y, ((2, 3), (2, 3)), dtypes=ALL),
    OpInfo("div", lambda x, y: x / y, ((2, 3), (3,)), "nonzero", NUMBERS),
    OpInfo("floor_divide", lambda x, y: x // y, ((2, 3), (3,)), "nonzero", NUMBERS,
           grad=False),
    OpInfo("remainder", lambda x, y: x % y, ((2, 3), (3,)), "nonzero", NUMBERS),
    OpInfo("pow", lambda x, s: x ** s, ((2, 3),), "positive", FLOATS, rtol=4 * U,
           scalar=2.5),
    OpInfo("neg", lambda x: -x, dtypes=NUMBERS),
    OpInfo("abs", lambda x: E.abs(x), domain="nonzero", dtypes=ALL),
    OpInfo("reciprocal", lambda x: E.reciprocal(x), domain="nonzero"),
    OpInfo("exp", lambda x: E.exp(x), rtol=U),
    OpInfo("expm1", lambda x: E.expm1(x), rtol=U),
    OpInfo("log", lambda x: E.log(x), domain="positive", rtol=U),
    OpInfo("log1p", lambda x: E.log1p(x), domain="positive", rtol=U),
    OpInfo("sqrt", lambda x: E.sqrt(x), domain="positive"),
    OpInfo("rsqrt", lambda x: E.rsqrt(x), domain="positive", rtol=U),
    OpInfo("sin", lambda x: E.sin(x), rtol=2 * U),
    OpInfo("cos", lambda x: E.cos(x), rtol=2 * U),
    OpInfo("tanh", lambda x: E.tanh(x), rtol=2 * U),
    OpInfo("sigmoid", lambda x: E.sigmoid(x), rtol=2 * U),
    OpInfo("erf", lambda x: E.erf(x), rtol=U),
    OpInfo("relu", lambda x: E.relu(x), domain="nonzero", dtypes=NUMBERS),
    OpInfo("gelu", lambda x: E.nn.functional.gelu(x, approximate="tanh"), rtol=4 * U),
    OpInfo("silu", lambda x: E.nn.functional.silu(x), rtol=4 * U),
    OpInfo("softplus", lambda x: E.nn.functional.softplus(x), rtol=4 * U),
    OpInfo("clamp", lambda x: E.clamp(x, -0.5, 0.5), domain="nonzero", dtypes=NUMBERS),
    OpInfo("maximum", lambda x, y: E.maximum(x, y), ((2, 3), (3,)), dtypes=NUMBERS),
    OpInfo("minimum", lambda x, y: E.minimum(x, y), ((2, 3), (3,)), dtypes=NUMBERS),
    OpInfo("where", lambda x, y: E.where(x > y, x, y), ((2, 3), (3,))),
    OpInfo("sign", lambda x: E.sign(x), domain="nonzero", dtypes=NUMBERS),
    OpInfo("floor", lambda x: E.floor(x), domain="nonzero", dtypes=NUMBERS),
    OpInfo("ceil", lambda x: E.ceil(x), domain="nonzero", dtypes=NUMBERS),
    OpInfo("round", lambda x: E.round(x), domain="nonzero", dtypes=NUMBERS),
    OpInfo("trunc", lambda x: E.trunc(x), domain="nonzero", dtypes=NUMBERS),
    OpInfo("eq", lambda x, y: x == y, ((2, 3), (3,)), dtypes=ALL, grad=False),
    OpInfo("ne", lambda x, y: x != y, ((2, 3), (3,)), dtypes=ALL, grad=False),
    OpInfo("lt", lambda x, y: x < y, ((2, 3), (3,)), dtypes=NUMBERS, grad=False),
    OpInfo("le", lambda x, y: x <= y, ((2, 3), (3,)), dtypes=NUMBERS, grad=False),
    OpInfo("gt", lambda x, y: x > y, ((2, 3), (3,)), dtypes=NUMBERS, grad=False),
    OpInfo("ge", lambda x, y: x >= y, ((2, 3), (3,)), dtypes=NUMBERS, grad=False),
    OpInfo("logical_and", lambda x, y: E.logical_and(x, y), ((2, 3), (3,)), dtypes=ALL,
           grad=False),
    OpInfo("logical_or", lambda x, y: E.logical_or(x, y), ((2, 3), (3,)), dtypes=ALL,
           grad=False),
    OpInfo("logical_xor", lambda x, y: E.logical_xor(x, y), ((2, 3), (3,)), dtypes=ALL,
           grad=False),
    OpInfo("logical_not", lambda x: E.logical_not(x), dtypes=ALL, grad=False),
    OpInfo("bitwise_not", lambda x: E.bitwise_not(x),
           dtypes=(np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64)), grad=False),
    OpInfo("isnan", lambda x: E.isnan(x), dtypes=NUMBERS, grad=False),
    OpInfo("isinf", lambda x: E.isinf(x), dtypes=NUMBERS, grad=False),
    OpInfo("isfinite", lambda x: E.isfinite(x), dtypes=NUMBERS, grad=False),
    # float64 -> float32 rounding defeats finite differences: no gradient check here
    OpInfo("cast", lambda x: x.to(E.float64) if x.dtype == E.float32 else x.to(E.float32),
           dtypes=ALL, grad=False),
]
BY_NAME = {r.name: r for r in ROWS}


def inputs(row: OpInfo, dtype, seed: int = 0) -> list:
    """NumPy inputs for ``row`` in ``dtype`` (values away from kinks and poles)."""
    rng = np.random.default_rng(seed)
    out = []
    for shape in row.shapes:
        x = rng.uniform(-2.0, 2.0, shape)
        if row.domain == "positive":
            x = np.abs(x) + 0.25
        elif row.domain in ("nonzero", "unit"):
            x = np.where(np.abs(x) < 0.2, 0.3, x) + 0.05  # off integers/halves for rounding
        if np.dtype(dtype).kind == "b":
            x = x > 0
        elif np.dtype(dtype).kind in "iu":
            x = np.round(x * 3)
            if row.domain in ("nonzero", "positive"):
                x = np.where(x == 0, 1, x)
            if np.dtype(dtype).kind == "u":
                x = np.abs(x)
        out.append(np.asarray(x).astype(dtype))
    return out


def call(row: OpInfo, *tensors):
    return row.fn(*tensors, row.scalar) if row.scalar is not None else row.fn(*tensors)
