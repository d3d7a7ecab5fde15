"""Instructions that CPython 3.12 and 3.13 added or changed, for the observer.

:mod:`.bytecode` holds a handler per 3.11 instruction; importing this module registers the
instructions of the running interpreter that 3.11 did not have, and replaces the handlers
whose stack shape changed.  Each handler does what 3.11's equivalent did (most call it), so
the guards and effects a trace records are the same on every version.  What changed:

* 3.12: ``LOAD_ATTR`` loads methods too (the low bit of its argument), ``super()``
  attribute loads are one instruction (``LOAD_SUPER_ATTR``), comprehensions run inline
  (``LOAD_FAST_AND_CLEAR``), ``PRECALL`` is gone, slices have their own instructions, a
  few unary operations became "intrinsic" calls, and ``SEND``/``FOR_ITER`` leave their
  clean-up to ``END_SEND``/``END_FOR``.
* 3.13: a call's stack is ``[callable, self or NULL, args...]`` (NULL above the callable,
  not below), keyword names are on the stack (``CALL_KW``), values are made bools by
  ``TO_BOOL`` before a jump, functions get their defaults from ``SET_FUNCTION_ATTRIBUTE``,
  and pairs of local loads and stores are fused into one instruction.
"""

from __future__ import annotations

import sys

from . import bytecode as B
from . import peek
from .base import Unsure
from .prov import DET, FRESH, NULL, Prov

V = sys.version_info[:2]
#: 3.13 puts NULL above the callable: [callable, self or NULL, args...]
NULL_ABOVE = V >= (3, 13)
_op = B._op


# -- local variables ---------------------------------------------------------------------

def _load_local(st, name):
    if name in st.code.co_cellvars or name in st.code.co_freevars:
        # 3.13 loads a cell itself (to build a closure) with LOAD_FAST, as LOAD_CLOSURE did
        return FRESH if B._is_cellvar(st, name) or st.fresh_func else B.OLD
    return st.locals.get(name, DET)


@_op("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR")
def _load_fast(obs, st, frame, ins):
    st.stack.append(_load_local(st, ins.argval))


@_op("LOAD_FAST_LOAD_FAST")
def _load_fast_load_fast(obs, st, frame, ins):
    a, b = ins.argval
    st.stack.append(_load_local(st, a))
    st.stack.append(_load_local(st, b))


@_op("STORE_FAST_LOAD_FAST")
def _store_fast_load_fast(obs, st, frame, ins):
    a, b = ins.argval
    st.locals[a] = st.stack.pop()
    st.stack.append(_load_local(st, b))


@_op("STORE_FAST_STORE_FAST")
def _store_fast_store_fast(obs, st, frame, ins):
    a, b = ins.argval
    st.locals[a] = st.stack.pop()
    st.locals[b] = st.stack.pop()


@_op("LOAD_LOCALS", "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_FROM_DICT_OR_DEREF")
def _class_body_names(obs, st, frame, ins):
    raise Unsure("defines a class inside the compiled function")


# -- globals and attributes ----------------------------------------------------------------

@_op("LOAD_GLOBAL")
def _load_global(obs, st, frame, ins):
    if ins.arg & 1 and NULL_ABOVE:
        B._load_global(obs, st, frame, _Without(ins))
        st.stack.append(NULL)
        return
    B._load_global(obs, st, frame, ins)


class _Without:
    """An instruction seen without its NULL-pushing bit (3.13 pushes NULL after)."""

    __slots__ = ("opname", "argval", "arg")

    def __init__(self, ins):
        self.opname, self.argval, self.arg = ins.opname, ins.argval, ins.arg & ~1


@_op("LOAD_ATTR")
def _load_attr(obs, st, frame, ins):
    if ins.arg & 1:
        B._load_method(obs, st, frame, ins)
        if NULL_ABOVE:
            st.finish = _MethodFinish313(st.finish)
        return
    B._load_attr(obs, st, frame, ins)


class _MethodFinish313:
    """3.13's method load pushed [function, self] or [attribute, NULL]."""

    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, st, off):
        fin = self.inner  # 3.11's finish: what was loaded, and from where
        if peek.is_null(peek.stack(st.frame)[-1]):
            attr = st.child if fin.inner is not None and st.child is not None else fin.prov
            st.stack[-2], st.stack[-1] = attr, NULL
        else:
            st.stack[-2], st.stack[-1] = Prov(fin.prov.det, True), fin.base


@_op("LOAD_SUPER_ATTR")
def _load_super_attr(obs, st, frame, ins):
    # [super, class, self] -> the attribute of super(class, self), as 3.11's call of
    # super() followed by LOAD_ATTR / LOAD_METHOD on its result
    provs = st.stack[-3:]
    del st.stack[-3:]
    sup, cls, self_ = peek.stack(frame)[-3:]
    if sup is not super:
        raise Unsure("calls a function named super that is not the built-in")
    for p in provs:
        if not p.det:
            raise Unsure("calls super() with an argument whose origin the compiler lost "
                         "track of")
    obj = super(cls, self_)
    prov = B.load_attr(obs, st, frame, DET, obj, ins.argval)
    if ins.arg & 1:
        inner = B._MethodFinish(provs[2], prov, st.finish)
        st.finish = _MethodFinish313(inner) if NULL_ABOVE else inner
        st.stack.append(NULL)
    st.stack.append(prov)


# -- items -------------------------------------------------------------------------------

@_op("BINARY_SLICE")
def _binary_slice(obs, st, frame, ins):
    cont_p, start_p, stop_p = st.stack[-3:]
    del st.stack[-3:]
    cont, start, stop = peek.stack(frame)[-3:]
    key_p = Prov(start_p.det and stop_p.det, True)
    st.stack.append(B._load_item(obs, st, frame, cont_p, cont, key_p, slice(start, stop)))


@_op("STORE_SLICE")
def _store_slice(obs, st, frame, ins):
    val_p, cont_p, start_p, stop_p = st.stack[-4:]
    del st.stack[-4:]
    val, cont, start, stop = peek.stack(frame)[-4:]
    B.store_item(obs, frame, val_p, val, cont_p, cont, Prov(start_p.det and stop_p.det, True),
                 slice(start, stop))


# -- operators ---------------------------------------------------------------------------

@_op("TO_BOOL")
def _to_bool(obs, st, frame, ins):
    provs, real = B._operands(obs, st, frame, 1, "truth")
    st.stack.append(Prov(provs[0].det, True))
    st.hints.append((real[0], provs[0]))


@_op("FORMAT_SIMPLE", "CONVERT_VALUE")
def _format_simple(obs, st, frame, ins):
    # a dynamic number's __format__/str()/repr() guards its text (symbolic._as_text)
    provs, _ = B._operands(obs, st, frame, 1, "content", sym_ok=True)
    st.stack.append(Prov(B._result(provs).det, True))


@_op("FORMAT_WITH_SPEC")
def _format_with_spec(obs, st, frame, ins):
    provs, _ = B._operands(obs, st, frame, 2, "content", sym_ok=True)
    st.stack.append(Prov(B._result(provs).det, True))


@_op("CALL_INTRINSIC_1")
def _call_intrinsic_1(obs, st, frame, ins):
    what = ins.argrepr
    if what == "INTRINSIC_UNARY_POSITIVE":
        B._unary(obs, st, frame, ins)
    elif what == "INTRINSIC_LIST_TO_TUPLE":
        B._list_to_tuple(obs, st, frame, ins)
    elif what == "INTRINSIC_STOPITERATION_ERROR":
        st.stack[-1] = DET
    else:
        raise Unsure(f"runs {what}")


@_op("CALL_INTRINSIC_2")
def _call_intrinsic_2(obs, st, frame, ins):
    if ins.argrepr != "INTRINSIC_PREP_RERAISE_STAR":
        raise Unsure(f"runs {ins.argrepr}")
    st.stack.pop()
    st.stack[-1] = DET


@_op("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE")
def _pop_jump_if(obs, st, frame, ins):
    B._pop_jump_if(obs, st, frame, ins)


@_op("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
def _pop_jump_if_none(obs, st, frame, ins):
    B._pop_jump_if_none(obs, st, frame, ins)


# -- calls and functions ------------------------------------------------------------------

if NULL_ABOVE:
    @_op("CALL", "CALL_KW")
    def _call(obs, st, frame, ins):
        argc = ins.arg
        real = peek.stack(frame)
        kwnames = ()
        if ins.opname == "CALL_KW":  # the keyword names are a tuple on top of the stack
            kwnames = real.pop()
            st.stack.pop()
        provs = st.stack[-argc - 2:]
        vals = real[-argc - 2:]
        fn_p, fn = provs[0], vals[0]
        if peek.is_null(vals[1]):
            arg_provs, args = list(provs[2:]), list(vals[2:])
        else:
            arg_provs, args = list(provs[1:]), list(vals[1:])
        st.finish = B._call_finish(obs, st, frame, fn_p, fn, arg_provs, args, kwnames,
                                   argc + 2)

    @_op("CALL_FUNCTION_EX")
    def _call_function_ex(obs, st, frame, ins):
        # [function, NULL, args, kwargs?] (3.11: [NULL, function, ...])
        B._call_function_ex(obs, st, frame, ins, callee_at=0)

    @_op("MAKE_FUNCTION")
    def _make_function(obs, st, frame, ins):
        provs, _ = B._operands(obs, st, frame, 1, "use")
        st.stack.append(Prov(provs[0].det, True))
        st.finish = B._MadeObject(obs)

    @_op("SET_FUNCTION_ATTRIBUTE")
    def _set_function_attribute(obs, st, frame, ins):
        provs, _ = B._operands(obs, st, frame, 2, "use")
        st.stack.append(Prov(all(p.det for p in provs), True))


@_op("RETURN_CONST")
def _return_const(obs, st, frame, ins):
    st.ret = FRESH


@_op("EXIT_INIT_CHECK")
def _exit_init_check(obs, st, frame, ins):
    st.stack.pop()


# -- loops, generators, exceptions ---------------------------------------------------------

@_op("END_FOR")
def _end_for(obs, st, frame, ins):
    del st.stack[-(1 if V >= (3, 13) else 2):]


@_op("SEND")
def _send(obs, st, frame, ins):
    # [receiver, value] -> [receiver, result]; when the receiver is done, END_SEND pops it
    st.finish = _SendResult()


class _SendResult:
    __slots__ = ()

    def __call__(self, st, off):
        st.stack[-1] = DET


@_op("END_SEND")
def _end_send(obs, st, frame, ins):
    v = st.stack.pop()
    st.stack[-1] = v


@_op("CLEANUP_THROW")
def _cleanup_throw(obs, st, frame, ins):
    del st.stack[-3:]
    st.stack.extend([DET, DET])

