"""The op table: one row per registered op (OpInfo-style), driving the tests of every
device.  Elementwise rows are here (``tests/ops/test_optable.py``: eager gradients against
finite differences, the op's fused kernel against ``run_graph``, compiled against eager,
and the op's dtype rule against what its forward returns); every other op's row is in
``tests/optable_ops.py``; ``ROWS`` is the one table of both, driving
``tests/ops/test_optable_all.py`` (every op has a row, gradcheck, compiled against eager,
vmap) and ``tests/ops/test_optable_parity.py`` (against PyTorch).  What a row holds:
``tests/opinfo.py``.  A new elementwise op is one class and one row here; an op in the
registry without a row fails ``test_every_elementwise_op_has_a_row`` or
``test_every_op_has_a_row``.
"""

from __future__ import annotations

import numpy as np

import eager as E
from tests.opinfo import (  # noqa: F401 - re-exported: the table's vocabulary
    ALL,
    F32,
    F64,
    FLOATS,
    I8,
    NUMBERS,
    U8,
    OpInfo,
    Sample,
    call,
    inputs,
)
from tests.optable_ops import OP_ROWS, UNTABLED  # noqa: F401 - UNTABLED re-exported

U = 3e-7   # float32 rounding, a little more than an ulp
ELEMENTWISE = [
    OpInfo("add", lambda x, y: x + y, ((2, 3), (3,)), dtypes=ALL, ref="add"),
    OpInfo("sub", lambda x, y: x - y, ((2, 3), (2, 1)), dtypes=NUMBERS, ref="sub"),
    OpInfo("mul", lambda x, y: x * y, ((2, 3), (2, 3)), dtypes=ALL, ref="mul"),
    OpInfo("div", lambda x, y: x / y, ((2, 3), (3,)), "nonzero", NUMBERS, ref="div"),
    OpInfo("floor_divide", lambda x, y: x // y, ((2, 3), (3,)), "nonzero", NUMBERS,
           grad=False, ref="floor_divide"),
    OpInfo("remainder", lambda x, y: x % y, ((2, 3), (3,)), "nonzero", NUMBERS, ref="remainder"),
    OpInfo("pow", lambda x, s: x ** s, ((2, 3),), "positive", FLOATS, rtol=4 * U,
           scalar=2.5, ref="pow"),
    OpInfo("neg", lambda x: -x, dtypes=NUMBERS, ref="neg"),
    # bool refused as PyTorch refuses it (tests/eager/test_regressions.py)
    OpInfo("abs", lambda x: E.abs(x), domain="nonzero", dtypes=(U8, I8) + NUMBERS, ref="abs"),
    OpInfo("reciprocal", lambda x: E.reciprocal(x), domain="nonzero", ref="reciprocal"),
    OpInfo("exp", lambda x: E.exp(x), rtol=U, ref="exp"),
    OpInfo("expm1", lambda x: E.expm1(x), rtol=U, ref="expm1"),
    OpInfo("log", lambda x: E.log(x), domain="positive", rtol=U, ref="log"),
    OpInfo("log1p", lambda x: E.log1p(x), domain="positive", rtol=U, ref="log1p"),
    OpInfo("sqrt", lambda x: E.sqrt(x), domain="positive", ref="sqrt"),
    OpInfo("rsqrt", lambda x: E.rsqrt(x), domain="positive", rtol=U, ref="rsqrt"),
    OpInfo("sin", lambda x: E.sin(x), rtol=2 * U, ref="sin"),
    OpInfo("cos", lambda x: E.cos(x), rtol=2 * U, ref="cos"),
    OpInfo("tanh", lambda x: E.tanh(x), rtol=2 * U, ref="tanh"),
    OpInfo("sigmoid", lambda x: E.sigmoid(x), rtol=2 * U, ref="sigmoid"),
    OpInfo("erf", lambda x: E.erf(x), rtol=U, ref="erf"),
    OpInfo("relu", lambda x: E.relu(x), domain="nonzero", dtypes=NUMBERS, ref="relu"),
    OpInfo("gelu", lambda x: E.nn.functional.gelu(x, approximate="tanh"), rtol=4 * U,
           ref=lambda T, x: T.nn.functional.gelu(x, approximate="tanh")),
    OpInfo("silu", lambda x: E.nn.functional.silu(x), rtol=4 * U, ref="nn.functional.silu"),
    OpInfo("softplus", lambda x: E.nn.functional.softplus(x), rtol=4 * U,
           ref="nn.functional.softplus"),
    OpInfo("clamp", lambda x: E.clamp(x, -0.5, 0.5), domain="nonzero", dtypes=NUMBERS,
           ref=lambda T, x: T.clamp(x, -0.5, 0.5)),
    OpInfo("maximum", lambda x, y: E.maximum(x, y), ((2, 3), (3,)), dtypes=NUMBERS, ref="maximum"),
    OpInfo("minimum", lambda x, y: E.minimum(x, y), ((2, 3), (3,)), dtypes=NUMBERS, ref="minimum"),
    OpInfo("where", lambda x, y: E.where(x > y, x, y), ((2, 3), (3,)),
           ref=lambda T, x, y: T.where(x > y, x, y)),
    OpInfo("sign", lambda x: E.sign(x), domain="nonzero", dtypes=NUMBERS, ref="sign"),
    OpInfo("floor", lambda x: E.floor(x), domain="nonzero", dtypes=NUMBERS, ref="floor"),
    OpInfo("ceil", lambda x: E.ceil(x), domain="nonzero", dtypes=NUMBERS, ref="ceil"),
    OpInfo("round", lambda x: E.round(x), domain="nonzero", dtypes=NUMBERS, ref="round"),
    OpInfo("trunc", lambda x: E.trunc(x), domain="nonzero", dtypes=NUMBERS, ref="trunc"),
    OpInfo("eq", lambda x, y: x == y, ((2, 3), (3,)), dtypes=ALL, grad=False, ref="eq"),
    OpInfo("ne", lambda x, y: x != y, ((2, 3), (3,)), dtypes=ALL, grad=False, ref="ne"),
    OpInfo("lt", lambda x, y: x < y, ((2, 3), (3,)), dtypes=NUMBERS, grad=False, ref="lt"),
    OpInfo("le", lambda x, y: x <= y, ((2, 3), (3,)), dtypes=NUMBERS, grad=False, ref="le"),
    OpInfo("gt", lambda x, y: x > y, ((2, 3), (3,)), dtypes=NUMBERS, grad=False, ref="gt"),
    OpInfo("ge", lambda x, y: x >= y, ((2, 3), (3,)), dtypes=NUMBERS, grad=False, ref="ge"),
    OpInfo("logical_and", lambda x, y: E.logical_and(x, y), ((2, 3), (3,)), dtypes=ALL,
           grad=False, ref="logical_and"),
    OpInfo("logical_or", lambda x, y: E.logical_or(x, y), ((2, 3), (3,)), dtypes=ALL,
           grad=False, ref="logical_or"),
    OpInfo("logical_xor", lambda x, y: E.logical_xor(x, y), ((2, 3), (3,)), dtypes=ALL,
           grad=False, ref="logical_xor"),
    OpInfo("logical_not", lambda x: E.logical_not(x), dtypes=ALL, grad=False, ref="logical_not"),
    OpInfo("bitwise_not", lambda x: E.bitwise_not(x),
           dtypes=(np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64)), grad=False,
           ref="bitwise_not"),
    OpInfo("isnan", lambda x: E.isnan(x), dtypes=NUMBERS, grad=False, ref="isnan"),
    OpInfo("isinf", lambda x: E.isinf(x), dtypes=NUMBERS, grad=False, ref="isinf"),
    OpInfo("isfinite", lambda x: E.isfinite(x), dtypes=NUMBERS, grad=False, ref="isfinite"),
    # float64 -> float32 rounding defeats finite differences: no gradient check here
    OpInfo("cast", lambda x: x.to(E.float64) if x.dtype == E.float32 else x.to(E.float32),
           dtypes=ALL, grad=False,
           ref=lambda T, x: x.to(T.float64) if x.dtype == T.float32 else x.to(T.float32)),
]


#: the one table: every registered op but those in UNTABLED (with the reason each)
ROWS = ELEMENTWISE + OP_ROWS
BY_NAME = {r.name: r for r in ROWS}
