"""Scalar-core emitters: one IR elementwise node -> Numba source for one element.

A fused kernel's body is its *scalar core*: the group's nodes in order, each turned into
one line of Python that Numba compiles (``t3 = t1 * np.float32(0.5)``).  This module knows,
per elementwise op, how eager computes that op on NumPy arrays — type promotion
(:func:`eager.dispatch.promote`), weak Python scalars (NEP 50: a Python scalar takes the
array's dtype), integer inputs of float-only ops computed in float32 — and writes source
that computes the same thing on scalars of the same dtypes:

* every literal is written typed (``np.float32(0.5)``) so float32 code stays float32;
* every value has exactly its IR dtype (a cast is written where Numba's own scalar typing
  would differ, e.g. int8 + int8 is int64 in Numba);
* NaN semantics follow NumPy (``maximum``/``minimum`` propagate NaN, ``sign(nan)`` is nan);
* transcendental functions come from :mod:`runtime.mathlib` (vectorizable, <= 2 ulp from
  NumPy): exp, expm1, log, log1p, tanh, sigmoid, sin, cos.

:func:`supports` says whether a node can be fused (it has an emitter for these dtypes and
parameters); :func:`emit` returns the node's source lines.  Ops this module does not know,
float16 and other exotic dtypes are never fused (they run through NumPy).
"""

from __future__ import annotations

import math

import numpy as np

from eager import dtypes as _dt
from eager.ops import elementwise as E
from eager.ops import shape as S

from ..ir import Value

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)

#: dtypes a fused kernel computes in (float16 has no Numba arithmetic; no complex)
DTYPES = frozenset(np.dtype(t) for t in (np.bool_, np.uint8, np.int8, np.int16, np.int32,
                                         np.int64, np.float32, np.float64))

_NP_NAME = {np.dtype(t): f"np.{np.dtype(t).name}" for t in
            (np.uint8, np.int8, np.int16, np.int32, np.int64, np.float32, np.float64)}


class Arg:
    """An argument of a node inside the core: a variable (``name``) of ``dtype`` and rank
    ``ndim`` (the rank matters for promotion: 0-d tensors are weaker), or a literal."""

    __slots__ = ("dtype", "name", "ndim", "value")

    def __init__(self, name=None, dtype=None, ndim=0, value=None):
        self.name = name
        self.dtype = dtype
        self.ndim = ndim
        self.value = value

    @property
    def is_lit(self) -> bool:
        return self.name is None

    def fake(self):
        """What eager's promotion sees: an array of this dtype and rank, or the scalar."""
        if self.is_lit:
            return self.value
        return np.empty((1,) * self.ndim, self.dtype)


# -- literals and casts ------------------------------------------------------------------

def literal(x, dtype: np.dtype) -> str:
    """Source for the Python scalar ``x`` converted to ``dtype`` as NumPy does (NEP 50)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return "True" if bool(x) else "False"
    if dtype.kind == "f":
        v = float(x)
        if math.isnan(v):
            text = "np.nan"
        elif math.isinf(v):
            text = "np.inf" if v > 0 else "-np.inf"
        else:
            text = repr(v)
        return text if dtype == F64 else f"{_NP_NAME[dtype]}({text})"
    v = int(x)
    # an out-of-range weak int raises in NumPy, so eager never traced one: keep it exact
    return str(v) if dtype == I64 and v >= 0 else f"{_NP_NAME[dtype]}({v})"


def cast(expr: str, src: np.dtype, dst: np.dtype) -> str:
    """Source converting the scalar ``expr`` of dtype ``src`` to ``dst`` (as ``astype``)."""
    if src == dst:
        return expr
    if dst == BOOL:
        return f"({expr} != 0)"
    if dst.kind in "iu" and src.kind == "f" and dst != I64:
        # float -> narrow int: through int64, then wrap (what NumPy's C cast does on x86)
        return f"{_NP_NAME[dst]}(np.int64({expr}))"
    return f"{_NP_NAME[dst]}({expr})"


def arg_as(a: Arg, dtype: np.dtype) -> str:
    """The argument as a scalar of ``dtype`` (literals typed, variables cast)."""
    if a.is_lit:
        return literal(a.value, dtype)
    return cast(a.name, a.dtype, dtype)


def truth(a: Arg) -> str:
    if a.is_lit:
        return "True" if bool(a.value) else "False"
    return a.name if a.dtype == BOOL else f"({a.name} != 0)"


def promoted(args) -> np.dtype:
    """eager's promotion of the arguments (``eager.dtypes.result_type``)."""
    return np.dtype(_dt.result_type(*[a.fake() for a in args]))


def _float(dt: np.dtype) -> np.dtype:
    return dt if dt.kind == "f" else F32


def _max_nan(a: str, b: str) -> str:
    """NumPy's maximum: ``a`` if ``a > b`` or ``a`` is nan, else ``b``: nan wins, and on a
    tie (``-0.0`` against ``0.0``) the second operand is the result, as in NumPy."""
    return f"({a} if ({a} > {b} or {a} != {a}) else {b})"


def _min_nan(a: str, b: str) -> str:
    """NumPy's minimum: ``a`` if ``a < b`` or ``a`` is nan, else ``b`` (ties: ``b``)."""
    return f"({a} if ({a} < {b} or {a} != {a}) else {b})"


# -- the emitters ------------------------------------------------------------------------
# Each takes (ctx, args, params, out_dtype) and returns (expression, dtype of expression)
# or a list of (target, expression) lines ending with the result.  ctx.tmp() gives names
# for helper temporaries.

_EMIT = {}


def _reg(*ops):
    def deco(fn):
        for op in ops:
            _EMIT[op] = fn
        return fn
    return deco


class Unsupported(Exception):
    pass


def _need(cond):
    if not cond:
        raise Unsupported


def _binary_promoted(args):
    rt = promoted(args)
    return rt, arg_as(args[0], rt), arg_as(args[1], rt)


@_reg(E.Add)
def _add(ctx, args, p, out):
    rt, a, b = _binary_promoted(args)
    return (f"{a} | {b}" if rt == BOOL else f"{a} + {b}"), rt


@_reg(E.Sub)
def _sub(ctx, args, p, out):
    rt, a, b = _binary_promoted(args)
    _need(rt != BOOL)
    return f"{a} - {b}", rt


@_reg(E.Mul)
def _mul(ctx, args, p, out):
    rt, a, b = _binary_promoted(args)
    return (f"{a} & {b}" if rt == BOOL else f"{a} * {b}"), rt


@_reg(E.Div)
def _div(ctx, args, p, out):
    rt = _float(promoted(args))   # true division: integer operands divide in float32
    return f"{arg_as(args[0], rt)} / {arg_as(args[1], rt)}", rt


@_reg(E.FloorDivide)
def _floordiv(ctx, args, p, out):
    rt, a, b = _binary_promoted(args)
    _need(rt != BOOL)
    return f"{a} // {b}", rt


@_reg(E.Remainder)
def _remainder(ctx, args, p, out):
    rt, a, b = _binary_promoted(args)
    _need(rt != BOOL)
    return f"{a} % {b}", rt


@_reg(E.Pow)
def _pow(ctx, args, p, out):
    rt = promoted(args)
    _need(rt != BOOL)
    base, ex = args
    a = arg_as(base, rt)
    if ex.is_lit and not isinstance(ex.value, bool):
        e = ex.value
        if e == 2:                       # NumPy: square
            return f"{a} * {a}", rt
        if e in (3, 4) and (rt.kind == "f" or float(e).is_integer()):
            return " * ".join([a] * int(e)), rt
        if e == 1:
            return a, rt
        if rt.kind == "f":
            if e == 0:
                return literal(1, rt), rt
            if e == 0.5:                 # NumPy: sqrt
                return f"np.sqrt({a})", rt
            if e == -1:                  # NumPy: reciprocal
                return f"{literal(1, rt)} / {a}", rt
            return f"{a} ** {literal(e, rt)}", rt
        _need(isinstance(e, int) and e >= 0)   # integer ** negative raises in eager
        return f"{a} ** {e}", I64 if rt != I64 else rt
    _need(rt.kind == "f")                # integer tensor exponents may be negative
    return f"{a} ** {arg_as(ex, rt)}", rt


@_reg(E.Maximum)
def _maximum(ctx, args, p, out):
    rt, a, b = _binary_promoted(args)
    if rt == BOOL:
        return f"{a} | {b}", rt
    if rt.kind == "f":
        return _max_nan(a, b), rt
    return f"({a} if {a} >= {b} else {b})", rt


@_reg(E.Minimum)
def _minimum(ctx, args, p, out):
    rt, a, b = _binary_promoted(args)
    if rt == BOOL:
        return f"{a} & {b}", rt
    if rt.kind == "f":
        return _min_nan(a, b), rt
    return f"({a} if {a} <= {b} else {b})", rt


def _compare(sym):
    def emit(ctx, args, p, out):
        _, a, b = _binary_promoted(args)
        return f"{a} {sym} {b}", BOOL
    return emit


for _op, _sym in ((E.Eq, "=="), (E.Ne, "!="), (E.Lt, "<"), (E.Le, "<="), (E.Gt, ">"),
                  (E.Ge, ">=")):
    _EMIT[_op] = _compare(_sym)


def _logical(sym):
    def emit(ctx, args, p, out):
        return f"{truth(args[0])} {sym} {truth(args[1])}", BOOL
    return emit


for _op, _sym in ((E.LogicalAnd, "&"), (E.LogicalOr, "|"), (E.LogicalXor, "^")):
    _EMIT[_op] = _logical(_sym)


@_reg(E.LogicalNot)
def _lnot(ctx, args, p, out):
    return f"not {truth(args[0])}", BOOL


@_reg(E.BitwiseNot)
def _bnot(ctx, args, p, out):
    a = args[0]
    _need(a.dtype.kind in "biu")
    if a.dtype == BOOL:
        return f"not {a.name}", BOOL
    return f"~{a.name}", I64


@_reg(E.Neg)
def _neg(ctx, args, p, out):
    a = args[0]
    _need(a.dtype != BOOL)
    return f"-{a.name}", a.dtype if a.dtype.kind == "f" else I64


@_reg(E.Abs)
def _abs(ctx, args, p, out):
    a = args[0]
    if a.dtype == BOOL:
        return a.name, BOOL
    return f"abs({a.name})", a.dtype if a.dtype.kind == "f" else I64


@_reg(E.Reciprocal)
def _reciprocal(ctx, args, p, out):
    ft = _float(args[0].dtype)
    return f"{literal(1, ft)} / {arg_as(args[0], ft)}", ft


def _mathlib(fn):
    def emit(ctx, args, p, out):
        ft = _float(args[0].dtype)
        return f"mathlib.{fn}({arg_as(args[0], ft)})", ft
    return emit


for _op, _fn in ((E.Exp, "exp"), (E.Expm1, "expm1"), (E.Log, "log"), (E.Log1p, "log1p"),
                 (E.Sin, "sin"), (E.Cos, "cos"), (E.Tanh, "tanh"), (E.Sigmoid, "sigmoid")):
    _EMIT[_op] = _mathlib(_fn)


@_reg(E.Sqrt)
def _sqrt(ctx, args, p, out):
    ft = _float(args[0].dtype)
    return f"np.sqrt({arg_as(args[0], ft)})", ft


@_reg(E.Rsqrt)
def _rsqrt(ctx, args, p, out):
    ft = _float(args[0].dtype)
    return f"{literal(1, ft)} / np.sqrt({arg_as(args[0], ft)})", ft


def _erf_expr(x: str, ft: np.dtype) -> str:
    # eager: math.erf on each value (in float64), rounded to the tensor's dtype
    return f"math.erf({x})" if ft == F64 else f"{_NP_NAME[ft]}(math.erf(np.float64({x})))"


@_reg(E.Erf)
def _erf(ctx, args, p, out):
    ft = _float(args[0].dtype)
    return _erf_expr(arg_as(args[0], ft), ft), ft


@_reg(E.Relu)
def _relu(ctx, args, p, out):
    a = args[0]
    if a.dtype == BOOL:
        return a.name, BOOL
    z = literal(0, a.dtype)
    if a.dtype.kind == "f":
        return _max_nan(a.name, z), a.dtype
    return f"({a.name} if {a.name} >= {z} else {z})", a.dtype


@_reg(E.Gelu)
def _gelu(ctx, args, p, out):
    ft = _float(args[0].dtype)
    x = ctx.tmp()
    L = lambda v: literal(v, ft)
    lines = [(x, arg_as(args[0], ft))]
    approx = p.get("approximate", "none")
    if approx == "tanh":
        # eager: _SQRT_2_OVER_PI * (a + 0.044715 * a * a * a); 0.5 * a * (1.0 + tanh(inner))
        inner = ctx.tmp()
        lines.append((inner, f"{L(E._SQRT_2_OVER_PI)} * ({x} + {L(0.044715)} * {x} * {x} * {x})"))
        lines.append((None, f"{L(0.5)} * {x} * ({L(1.0)} + mathlib.tanh({inner}))"))
    else:
        _need(approx == "none")
        erf = _erf_expr(f"{x} * {L(E._INV_SQRT_2)}", ft)
        lines.append((None, f"{L(0.5)} * {x} * ({L(1.0)} + {erf})"))
    return lines, ft


@_reg(E.Silu)
def _silu(ctx, args, p, out):
    ft = _float(args[0].dtype)
    x = ctx.tmp()
    return [(x, arg_as(args[0], ft)),
            (None, f"{x} / ({literal(1.0, ft)} + mathlib.exp(-{x}))")], ft


@_reg(E.Softplus)
def _softplus(ctx, args, p, out):
    ft = _float(args[0].dtype)
    beta, threshold = p.get("beta", 1.0), p.get("threshold", 20.0)
    _need(isinstance(beta, (int, float)) and isinstance(threshold, (int, float)))
    x, z, soft = ctx.tmp(), ctx.tmp(), ctx.tmp()
    zero = literal(0, ft)
    # eager: z = a*beta; soft = (max(z, 0) + log1p(exp(-|z|))) / beta; where(z > thr, a, soft)
    return [(x, arg_as(args[0], ft)),
            (z, f"{x} * {literal(beta, ft)}"),
            (soft, (f"({_max_nan(z, zero)} + mathlib.log1p(mathlib.exp(-abs({z})))) / "
                    f"{literal(beta, ft)}")),
            (None, f"{x} if {z} > {literal(threshold, ft)} else {soft}")], ft


@_reg(E.Clamp)
def _clamp(ctx, args, p, out):
    lo, hi = p.get("min"), p.get("max")
    _need(all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
              for v in (lo, hi)) and (lo is not None or hi is not None))
    a = args[0]
    _need(a.dtype != BOOL and out != BOOL)
    e = cast(a.name, a.dtype, out)
    lines = []
    if lo is not None:
        t = ctx.tmp()
        lines.append((t, e))
        e = _max_nan(t, literal(lo, out)) if out.kind == "f" else \
            f"({t} if {t} >= {literal(lo, out)} else {literal(lo, out)})"
    if hi is not None:
        t = ctx.tmp()
        lines.append((t, e))
        e = _min_nan(t, literal(hi, out)) if out.kind == "f" else \
            f"({t} if {t} <= {literal(hi, out)} else {literal(hi, out)})"
    lines.append((None, e))
    return lines, out


@_reg(E.Where)
def _where(ctx, args, p, out):
    c, a, b = args
    _need(c.is_lit or c.dtype == BOOL)
    rt = np.dtype(_dt.result_type(a.fake(), b.fake()))
    return f"({arg_as(a, rt)} if {truth(c)} else {arg_as(b, rt)})", rt


@_reg(E.Sign)
def _sign(ctx, args, p, out):
    a = args[0]
    if a.dtype == BOOL:
        return a.name, BOOL
    dt = a.dtype
    one, zero = literal(1, dt), literal(0, dt)
    mone = literal(-1, dt) if dt.kind != "u" else zero
    x = a.name
    tail = f"({zero} if {x} == {zero} else {x})" if dt.kind == "f" else zero
    return f"({one} if {x} > {zero} else ({mone} if {x} < {zero} else {tail}))", dt


def _rounding(fn):
    def emit(ctx, args, p, out):
        a = args[0]
        if fn == "rint":
            _need(p.get("decimals", 0) == 0)
        if a.dtype.kind != "f":
            return a.name, a.dtype
        return f"np.{fn}({a.name})", a.dtype
    return emit


for _op, _fn in ((E.Floor, "floor"), (E.Ceil, "ceil"), (E.Trunc, "trunc"), (E.Round, "rint")):
    _EMIT[_op] = _rounding(_fn)


def _isx(fn, int_value):
    def emit(ctx, args, p, out):
        a = args[0]
        if a.dtype.kind != "f":
            return ("True" if int_value else "False"), BOOL
        return f"np.{fn}({a.name})", BOOL
    return emit


_EMIT[E.Isnan] = _isx("isnan", False)
_EMIT[E.Isinf] = _isx("isinf", False)
_EMIT[E.Isfinite] = _isx("isfinite", True)


@_reg(E.Cast)
def _cast(ctx, args, p, out):
    return arg_as(args[0], out), out


@_reg(S.Expand)
def _expand(ctx, args, p, out):
    return args[0].name, args[0].dtype   # broadcasting is the loop's business


# -- driver ------------------------------------------------------------------------------

class _Ctx:
    def __init__(self, prefix: str):
        self.prefix = prefix
        self.n = 0

    def tmp(self) -> str:
        self.n += 1
        return f"{self.prefix}_{self.n}"


def _node_args(node, names: dict) -> list:
    args = []
    for a in node.inputs:
        if type(a) is Value:
            args.append(Arg(names[a.id], a.dtype, len(a.shape)))
        elif isinstance(a, (bool, int, float)):
            args.append(Arg(value=a))
        else:
            raise Unsupported
    return args


def _dtypes_ok(node) -> bool:
    if node.out is None or node.out.dtype not in DTYPES:
        return False
    return all(a.dtype in DTYPES for a in node.inputs if type(a) is Value)


def supports(node) -> bool:
    """Whether :func:`emit` can write this node (op, dtypes and params known)."""
    if node.op not in _EMIT or not _dtypes_ok(node):
        return False
    if getattr(node.op, "random", False):
        return False
    if node.op is S.Expand:
        return True
    try:
        names = {a.id: f"a{i}" for i, a in enumerate(node.inputs) if type(a) is Value}
        emit(node, names, "t")
    except Unsupported:
        return False
    return True


def emit(node, names: dict, target: str) -> list:
    """Source lines computing ``node`` into the variable ``target``.

    ``names`` maps the Value ids of the node's inputs to variable names.  Raises
    :class:`Unsupported` for ops/dtypes/params this module cannot write.
    """
    if not _dtypes_ok(node):
        raise Unsupported
    fn = _EMIT.get(node.op)
    if fn is None:
        raise Unsupported
    ctx = _Ctx(target)
    res, dt = fn(ctx, _node_args(node, names), node.params, node.out.dtype)
    lines = res if isinstance(res, list) else [(None, res)]
    out = []
    for tgt, expr in lines[:-1]:
        out.append(f"{tgt} = {expr}")
    expr = lines[-1][1]
    want = node.out.dtype
    dt = np.dtype(dt)
    if dt.kind in "iu" and dt.itemsize < 8:
        dt = I64   # Numba computes narrow integers in int64: wrap back to the dtype
    if dt != want:
        expr = cast(f"({expr})", dt, want)
    out.append(f"{target} = {expr}")
    return out
