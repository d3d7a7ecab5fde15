"""What each CPython 3.11 instruction does to provenance: one handler per opcode name
(:mod:`.bytecode_312` adds and changes those of 3.12 and 3.13).

A handler runs before its instruction executes, with the observer, the frame's state and
the instruction.  It updates the frame's provenance stack the way the instruction updates
the value stack, asks the observer for guards on the state it reads, and records writes.
Where the result depends on what happens during the instruction (a jump taken or not, a
Python-level ``__getattr__`` or ``__eq__`` that ran, a call's return value), it leaves a
``finish`` for the frame's next event.  An instruction without a handler makes the
observer give up (the function then runs eagerly): unknown is never guessed.
"""

from __future__ import annotations

import types

import numpy as np

from eager._state import STATE
from eager.tensor import Tensor

from . import callables as C
from . import effects as E
from . import peek
from .base import Unsure, trusted_file, where
from .guards import Missing, is_immutable_value
from .params import bind_params
from .prov import DET, FRESH, NULL, OLD, UNKNOWN, Prov, persistent
from .sources import Arg, Attr, Cell, Fixed, Global, Item
from .symbolic import is_sym, specialize

HANDLERS: dict = {}

_MODULE_INTERNALS = {"_parameters", "_buffers", "_modules", "_forward_hooks",
                     "_forward_pre_hooks", "_non_persistent_buffers_set", "__dict__"}


def _op(*names):
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn
    return deco


def _unsure(msg):
    return Unsure(msg)


def _tos(frame, k=0):
    """The real value ``k`` places below the top of ``frame``'s stack."""
    s = peek.stack(frame)
    return s[-1 - k]


# -- no effect on the stack ----------------------------------------------------------

@_op("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS",
     "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "PRECALL")
def _nothing(obs, st, frame, ins):
    if ins.opname == "PRECALL":
        # PRECALL turns [NULL, bound method] into [function, self]: same provenance
        argc = ins.arg
        below = st.stack[-argc - 2]
        if below is NULL:
            st.finish = _Precall(argc)


class _Precall:
    def __init__(self, argc):
        self.argc = argc

    def __call__(self, st, off):
        argc = self.argc
        real = peek.stack(st.frame)
        if not peek.is_null(real[-argc - 2]):
            bm = st.stack[-argc - 1]
            st.stack[-argc - 2] = Prov(bm.det, False)
            st.stack[-argc - 1] = Prov(bm.det, None)


@_op("KW_NAMES")
def _kw_names(obs, st, frame, ins):
    st.kwnames = frame.f_code.co_consts[ins.arg]


# -- stack shuffles ---------------------------------------------------------------------

@_op("POP_TOP")
def _pop_top(obs, st, frame, ins):
    st.stack.pop()


@_op("PUSH_NULL")
def _push_null(obs, st, frame, ins):
    st.stack.append(NULL)


@_op("COPY")
def _copy(obs, st, frame, ins):
    st.stack.append(st.stack[-ins.arg])


@_op("SWAP")
def _swap(obs, st, frame, ins):
    s = st.stack
    s[-1], s[-ins.arg] = s[-ins.arg], s[-1]


@_op("LOAD_CONST", "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS")
def _load_const(obs, st, frame, ins):
    st.stack.append(FRESH)


# -- local variables -------------------------------------------------------------------

@_op("LOAD_FAST")
def _load_fast(obs, st, frame, ins):
    st.stack.append(st.locals.get(ins.argval, DET))


@_op("STORE_FAST")
def _store_fast(obs, st, frame, ins):
    st.locals[ins.argval] = st.stack.pop()


@_op("DELETE_FAST")
def _delete_fast(obs, st, frame, ins):
    st.locals.pop(ins.argval, None)


def _is_cellvar(st, name) -> bool:
    return name in st.code.co_cellvars


def _cell_object(st, name):
    code = st.code
    i = code.co_freevars.index(name)
    func = st.func
    if func is None or func.__closure__ is None:
        raise _unsure(f"cannot find the closure cell of {name}")
    return func.__closure__[i]


@_op("LOAD_CLOSURE")
def _load_closure(obs, st, frame, ins):
    name = ins.argval
    st.stack.append(FRESH if _is_cellvar(st, name) or st.fresh_func else OLD)


@_op("LOAD_DEREF", "LOAD_CLASSDEREF")
def _load_deref(obs, st, frame, ins):
    name = ins.argval
    if _is_cellvar(st, name) or st.fresh_func:
        st.stack.append(st.cells.get(name, DET))
        return
    cell = _cell_object(st, name)
    key = (id(cell), "cell")
    if key in obs.written:
        st.stack.append(obs.written[key])
        return
    try:
        value = cell.cell_contents
    except ValueError:
        st.stack.append(DET)  # raises NameError
        return
    src = Cell(cell, name)
    obs.keep.append(cell)
    obs.guard_read(src, value, False, frame)
    st.stack.append(persistent(src))


@_op("STORE_DEREF")
def _store_deref(obs, st, frame, ins):
    name = ins.argval
    prov = st.stack.pop()
    if _is_cellvar(st, name) or st.fresh_func:
        st.cells[name] = prov
        return
    cell = _cell_object(st, name)
    E.record(obs, E.SetCell(cell, name), prov, _tos(frame), frame)
    obs.wrote(cell, "cell", prov)


@_op("DELETE_DEREF")
def _delete_deref(obs, st, frame, ins):
    if not (_is_cellvar(st, ins.argval) or st.fresh_func):
        raise _unsure(f"deletes the closure variable {ins.argval}")


# -- globals -----------------------------------------------------------------------------

def _global_value(frame, name):
    g = frame.f_globals
    if name in g:
        return g[name], False
    b = frame.f_builtins
    if name in b:
        return b[name], True
    return _MISSING, True


_MISSING = object()


@_op("LOAD_GLOBAL", "LOAD_NAME")
def _load_global(obs, st, frame, ins):
    name = ins.argval
    if ins.opname == "LOAD_GLOBAL" and ins.arg & 1:
        st.stack.append(NULL)
    if ins.opname == "LOAD_NAME" and name in frame.f_locals:
        st.stack.append(DET)
        return
    g = frame.f_globals
    key = (id(g), name)
    if key in obs.written:
        st.stack.append(obs.written[key])
        return
    value, builtin = _global_value(frame, name)
    if value is _MISSING:
        st.stack.append(DET)  # raises NameError
        return
    src = Global(g, name, frame.f_builtins if builtin or name not in g else None)
    obs.keep.append(g)
    if _trusted_frame(frame):  # eager's module-level names: constants
        st.stack.append(OLD)
        return
    if not isinstance(value, types.ModuleType) and not (builtin and name not in g):
        obs.guard_read(src, value, False, frame)  # (built-ins are taken as constants)
    st.stack.append(persistent(src))


@_op("STORE_GLOBAL", "STORE_NAME")
def _store_global(obs, st, frame, ins):
    prov = st.stack.pop()
    if ins.opname == "STORE_NAME" and frame.f_locals is not frame.f_globals:
        return  # a class body being built during the call
    g = frame.f_globals
    E.record(obs, E.SetItem(g, ins.argval, label=f"global {ins.argval}"), prov, _tos(frame),
             frame)
    obs.wrote(g, ins.argval, prov)


@_op("DELETE_GLOBAL", "DELETE_NAME")
def _delete_global(obs, st, frame, ins):
    raise _unsure(f"deletes the global {ins.argval}")


# -- attributes ------------------------------------------------------------------------

def _attr_kind(obj, name):
    """How ``obj.name`` resolves: "instance" / "class" (plain values), "method" (a
    function on the type), "cdesc" (a C-level descriptor), "python" (Python code runs:
    a property, ``__getattr__``, a Python ``__getattribute__``), or "missing"."""
    t = type(obj)
    ga = t.__getattribute__
    if ga is not object.__getattribute__ and ga is not type.__getattribute__ and \
            not isinstance(ga, types.WrapperDescriptorType):
        return "python", None
    for klass in t.__mro__:
        d = klass.__dict__
        if name in d:
            attr = d[name]
            at = type(attr)
            if at in _C_METHODS:
                return "cmethod", attr
            if at in (types.FunctionType, staticmethod, classmethod):
                inst = getattr(obj, "__dict__", None)
                if isinstance(inst, dict) and name in inst:
                    return "instance", inst[name]
                return ("method" if at is types.FunctionType else "cdesc"), attr
            if hasattr(at, "__set__") or hasattr(at, "__delete__"):  # data descriptor
                return ("python" if _python_descriptor(attr) else "cdesc"), attr
            inst = getattr(obj, "__dict__", None) if not isinstance(obj, type) else None
            if isinstance(inst, dict) and name in inst:
                return "instance", inst[name]
            if hasattr(at, "__get__"):
                return ("python" if _python_descriptor(attr) else "cdesc"), attr
            return "class", attr
    if isinstance(obj, type):
        for klass in obj.__mro__:
            if name in klass.__dict__:
                a = klass.__dict__[name]
                if _python_descriptor(a):
                    return "python", a
                if type(a) is not types.FunctionType and hasattr(type(a), "__get__"):
                    # a staticmethod gives its function, a classmethod a new bound method
                    # on each read: not the dict's entry
                    return "cdesc", a
                return "class", a
    inst = getattr(obj, "__dict__", None)
    if isinstance(inst, dict) and name in inst:
        return "instance", inst[name]
    if any("__getattr__" in k.__dict__ for k in t.__mro__):
        return "python", None
    if name in ("__dict__", "__class__"):
        return "cdesc", None
    return "missing", None


_C_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType,
              types.ClassMethodDescriptorType, types.BuiltinMethodType)


def _python_descriptor(attr) -> bool:
    if isinstance(attr, property):
        return True
    get = getattr(type(attr), "__get__", None)
    return isinstance(get, types.FunctionType)


def _module_attr(obs, module, name):
    """``module.name`` for an nn.Module (its dicts first, as Module.__getattr__ does)."""
    d = module.__dict__
    for store in ("_parameters", "_buffers", "_modules"):
        s = d.get(store)
        if s is not None and name in s:
            return True, s[name]
    return False, None


def load_attr(obs, st, frame, base: Prov, obj, name: str) -> Prov:
    """The provenance of ``obj.name``, guarding the read; may leave a finish for reads
    that run Python code."""
    if not base.det:
        return UNKNOWN
    if isinstance(obj, Tensor):
        return DET  # tensor metadata and methods: the trace sees tensors itself
    key = (id(obj), name)
    if key in obs.written:
        return obs.written[key]
    if base.fresh:  # (an instance dict, an array's view, belong to their object)
        return FRESH if name == "__dict__" or isinstance(obj, np.ndarray) else DET
    if obs.is_module(obj):
        found, value = _module_attr(obs, obj, name)
        if found or name in obj.__dict__:
            value = value if found else obj.__dict__[name]
            src = Attr(obs.source_of(base, obj), name)
            obs.guard_read(src, value, True, frame)
            if name in _MODULE_INTERNALS:
                obs.owned.add(id(value))
            return persistent(src)
        if _attr_kind(obj, name) == ("python", None) and \
                type(obj).__getattr__ is obs.module_cls.__getattr__:
            # not a parameter, buffer, submodule or attribute: Module.__getattr__ raises
            # (``hasattr(self, "ema")`` before a buffer is registered lazily)
            obs.guard(Missing(Attr(obs.source_of(base, obj), name), True, where(frame)))
            return DET
    if isinstance(obj, types.ModuleType):
        value = obj.__dict__.get(name, _MISSING)
        if value is _MISSING:
            return DET
        src = Attr(obs.source_of(base, obj), name)
        if not isinstance(value, types.ModuleType) and not _is_trusted_module(obj):
            obs.guard_read(src, value, False, frame)
        return persistent(src)
    if type(obj) is super:
        method = _super_method(obj, name)
        if method is not None:  # super().forward(x): the next class's function
            klass, func = method
            obs.keep.append(klass)
            obs.guard_read(Attr(Fixed(klass), name), func, False, frame)
            return Prov(True, True)
    kind, attr = _attr_kind(obj, name)
    src = Attr(obs.source_of(base, obj), name)
    covered = obs.covered(obj)
    if kind in ("instance", "class"):
        value = attr
        if name == "__dict__" and obs.is_module(obj):
            obs.owned.add(id(value))
        obs.guard_read(src, value, covered, frame)
        return persistent(src)
    if kind == "cdesc":
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001 - the instruction will raise it
            return DET
        if name == "__dict__":
            if obs.is_module(obj):
                obs.owned.add(id(value))
            return persistent(src)  # the instance dict is tied to the object
        if not is_immutable_value(value) and getattr(obj, name, None) is not value:
            return DET  # a new object on each read: nothing stable to guard
        obs.guard_read(src, value, covered, frame)
        return persistent(src)
    if kind == "cmethod":
        return FRESH  # a method of a built-in type: cannot be replaced
    if kind == "method":
        cls_src = Attr(Fixed(type(obj)), name)
        obs.keep.append(type(obj))
        obs.guard_read(cls_src, attr, False, frame)
        return Prov(True, True)
    if kind == "missing":
        obs.guard(Missing(src, covered, where(frame)))
        return DET
    st.finish = _TakeChild(DET)
    st.hints.append((obj, base))
    return DET


def _super_method(sup, name):
    """(class, function) that ``sup.name`` binds: the first class after ``__thisclass__``
    in the MRO of the object's type whose dict has a plain function ``name``; else None."""
    obj, start = sup.__self__, sup.__thisclass__
    mro = (obj if isinstance(obj, type) else type(obj)).__mro__
    if start not in mro:
        return None
    for klass in mro[mro.index(start) + 1:]:
        if name in klass.__dict__:
            attr = klass.__dict__[name]
            return (klass, attr) if type(attr) is types.FunctionType else None
    return None


def _is_trusted_module(mod) -> bool:
    name = getattr(mod, "__name__", "")
    root = name.split(".", 1)[0]
    return root in ("eager", "compiler", "runtime", "numpy", "math", "builtins", "operator",
                    "functools", "itertools", "collections", "typing", "numba", "os", "sys")


class _TakeChild:
    """Finish: the instruction's result is what a Python frame it ran returned."""

    __slots__ = ("fallback", "n")

    def __init__(self, fallback, n=1):
        self.fallback, self.n = fallback, n

    def __call__(self, st, off):
        if st.child is not None:
            st.stack[-1] = st.child


@_op("LOAD_ATTR")
def _load_attr(obs, st, frame, ins):
    base = st.stack.pop()
    obj = _tos(frame)
    st.stack.append(load_attr(obs, st, frame, base, obj, ins.argval))


@_op("LOAD_METHOD")
def _load_method(obs, st, frame, ins):
    base = st.stack.pop()
    obj = _tos(frame)
    name = ins.argval
    prov = load_attr(obs, st, frame, base, obj, name)
    st.finish = _MethodFinish(base, prov, st.finish)
    st.stack.append(NULL)
    st.stack.append(prov)


class _MethodFinish:
    """LOAD_METHOD pushed [function, self] or [NULL, attribute]: see which."""

    __slots__ = ("base", "prov", "inner")

    def __init__(self, base, prov, inner):
        self.base, self.prov, self.inner = base, prov, inner

    def __call__(self, st, off):
        real = peek.stack(st.frame)
        if peek.is_null(real[-2]):
            st.stack[-2], st.stack[-1] = NULL, self.prov
            if self.inner is not None and st.child is not None:
                st.stack[-1] = st.child
        else:
            st.stack[-2], st.stack[-1] = Prov(self.prov.det, True), self.base


@_op("STORE_ATTR")
def _store_attr(obs, st, frame, ins):
    target = st.stack.pop()
    value = st.stack.pop()
    real = peek.stack(frame)
    obj, val = real[-1], real[-2]
    _write(obs, frame, target, obj, ins.argval, value, val, attr=True)


@_op("DELETE_ATTR")
def _delete_attr(obs, st, frame, ins):
    target = st.stack.pop()
    if not target.fresh:
        raise _unsure(f"deletes the attribute {ins.argval} of an object made before the call")


def _write(obs, frame, target: Prov, obj, key, value: Prov, val, attr: bool):
    if not target.det:
        raise _unsure("writes into an object whose origin the compiler lost track of")
    if target.fresh:
        obs.wrote(obj, key, value)
        return
    if isinstance(obj, Tensor):
        if attr and key == "data" and isinstance(val, Tensor) and val._data is obj._data:
            return  # p.data += x: the in-place op on the alias was traced; this sets p's
            #         storage to the storage it already has
        if attr and key not in ("grad",):
            raise _unsure(f"sets the attribute {key} of a tensor")
        return  # t[i] = v and .grad are tensor writes the trace records itself
    if not attr:
        obs.before_change(obj)
    eff = E.SetAttr(obj, key) if attr else E.SetItem(obj, key)
    E.record(obs, eff, value, val, frame, target)
    obs.wrote(obj, key, value)


# -- items -------------------------------------------------------------------------------

@_op("BINARY_SUBSCR")
def _binary_subscr(obs, st, frame, ins):
    key_p = st.stack.pop()
    cont_p = st.stack.pop()
    real = peek.stack(frame)
    cont, key = real[-2], real[-1]
    st.stack.append(_load_item(obs, st, frame, cont_p, cont, key_p, key))


def _load_item(obs, st, frame, cont_p, cont, key_p, key) -> Prov:
    if isinstance(cont, Tensor):
        obs.consume(key_p, key, "content", frame)
        return FRESH
    if not cont_p.det or not key_p.det:
        return UNKNOWN
    t = type(cont)
    if t in (list, tuple, dict, str, range) or (issubclass(t, dict) and
                                                  t.__getitem__ is dict.__getitem__):
        if cont_p.fresh or id(cont) in obs.mutated:
            written = obs.written.get((id(cont), _hashable(key)))
            if written is not None:
                return written
            obs.entry_read(cont_p, cont, frame)  # an item it held at entry, maybe
            return DET
        if isinstance(key, slice):
            obs.consume(cont_p, cont, "content", frame)
            return FRESH
        try:
            value = cont[key]
        except Exception:  # noqa: BLE001 - the instruction raises it
            obs.consume(cont_p, cont, "content", frame)
            return DET
        src = Item(obs.source_of(cont_p, cont), key)
        if not _in_key(src):
            obs.guard_read(src, value, obs.covered(cont), frame)
        return persistent(src)
    if isinstance(getattr(t, "__getitem__", None), types.FunctionType) or \
            isinstance(getattr(t, "__class_getitem__", None), types.MethodType):
        obs.consume(key_p, key, "use", frame)
        st.finish = _TakeChild(DET)
        st.hints.append((cont, cont_p))
        return DET
    obs.consume(cont_p, cont, "content", frame)
    obs.consume(key_p, key, "content", frame)
    if isinstance(cont, np.ndarray) and cont_p.fresh:
        return FRESH  # an element or view of an array made during the call
    return DET


def _in_key(src) -> bool:
    """Items of list / tuple / dict arguments are part of the call's key already."""
    while isinstance(src, Item):
        src = src.base
    return isinstance(src, Arg)


def _hashable(k):
    try:
        hash(k)
        return k
    except TypeError:
        return id(k)


@_op("STORE_SUBSCR")
def _store_subscr(obs, st, frame, ins):
    key_p = st.stack.pop()
    cont_p = st.stack.pop()
    val_p = st.stack.pop()
    real = peek.stack(frame)
    store_item(obs, frame, val_p, real[-3], cont_p, real[-2], key_p, real[-1])


def store_item(obs, frame, val_p, val, cont_p, cont, key_p, key) -> None:
    """``cont[key] = val``: a tensor write, a recorded effect, or a reason to give up."""
    if isinstance(cont, Tensor):
        obs.consume(key_p, key, "content", frame)
        return
    if not key_p.det:
        raise _unsure("writes an item under a key whose origin the compiler lost track of")
    if type(cont) not in (list, dict) and not cont_p.fresh:
        setitem = getattr(type(cont), "__setitem__", None)
        if isinstance(setitem, types.FunctionType) and \
                not trusted_file(setitem.__code__.co_filename):
            return  # Python-level __setitem__ of the user's: its frame is watched
        if not isinstance(cont, dict):
            raise _unsure(f"writes an item of a {type(cont).__name__} made before the call")
        # (a dict subclass of eager's, such as a module's parameter/buffer dict: its
        # __setitem__ is not watched, so the write is recorded here)
    _write(obs, frame, cont_p, cont, _hashable(key), val_p, val, attr=False)


@_op("DELETE_SUBSCR")
def _delete_subscr(obs, st, frame, ins):
    st.stack.pop()
    cont_p = st.stack.pop()
    if not cont_p.fresh:
        raise _unsure("deletes an item of a container made before the call")


# -- operators ---------------------------------------------------------------------------

_CONTAINER_TYPES = (list, tuple, dict, set, frozenset)


def _operands(obs, st, frame, n, how, sym_ok=False):
    provs = st.stack[-n:]
    del st.stack[-n:]
    real = peek.stack(frame)[-n:]
    for p, v in zip(provs, real):
        obs.consume(p, v, how, frame, sym_ok)
    return provs, real


@_op("BINARY_OP")
def _binary_op(obs, st, frame, ins):
    provs, real = _operands(obs, st, frame, 2, "content",
                            _sym_arithmetic(peek.stack(frame)[-2:]))
    inplace = "=" in ins.argrepr and ins.argrepr not in ("==", "!=", "<=", ">=")
    a_p, a = provs[0], real[0]
    if inplace and isinstance(a, (list, dict, set, bytearray)):
        if not a_p.fresh:
            raise _unsure(f"changes a {type(a).__name__} made before the call with "
                          f"{ins.argrepr}")
        # (list/dict/set/bytearray += |= ... return the container itself: still the one
        # made during the call, its contents as determined as what went in)
        st.stack.append(a_p if a_p.det and provs[1].det else UNKNOWN)
    else:
        st.stack.append(_result(provs, real))
    st.finish = _sym_checked(real)
    st.hints.extend(zip(real, provs))


def _sym_checked(operands):
    """The finish of an operator: its result, and if a dynamic number went in but a plain
    one came out, the dynamic numbers specialized (``0.9 ** n`` with ``n`` a dynamic
    int: ``float.__pow__`` takes the int subclass's value without asking it, so the
    result would silently be this call's)."""
    if any(is_sym(v) for v in operands):
        return _SymResult(operands)
    return _TakeChild(DET)


class _SymResult:
    __slots__ = ("operands", "compared")

    def __init__(self, operands):
        self.operands = operands
        self.compared = None

    def __call__(self, st, off):
        if st.child is not None:
            st.stack[-1] = st.child
        res = peek.stack(st.frame)[-1]
        tracer = STATE.tracer
        if self.compared is not None and tracer is not None and \
                tracer.compared == self.compared + 1 and type(res) is bool:
            return  # the comparison was the dynamic number's: its outcome is guarded
        if not is_sym(res) and not isinstance(res, Tensor):
            for v in self.operands:
                specialize(v)


def _sym_arithmetic(operands) -> bool:
    """Operators between numbers, dynamic numbers and tensors keep a dynamic number an
    input (its dunder methods and the tensor ops record it)."""
    return all(isinstance(v, (int, float, Tensor)) for v in operands)


def _result(provs, values=()) -> Prov:
    if not all(p.det for p in provs):
        return UNKNOWN
    if any(isinstance(v, np.ndarray) for v in values) and all(
            p.fresh or not isinstance(v, np.ndarray) for p, v in zip(provs, values)):
        return FRESH  # NumPy arithmetic on arrays made during the call
    return DET


@_op("COMPARE_OP", "CONTAINS_OP")
def _compare(obs, st, frame, ins):
    provs, real = _operands(obs, st, frame, 2, "content",
                            _sym_arithmetic(peek.stack(frame)[-2:]))
    st.stack.append(Prov(_result(provs).det, True))
    fin = st.finish = _sym_checked(real)
    if type(fin) is _SymResult and STATE.tracer is not None:
        # a dynamic number's own comparison guards its outcome (not one Python made)
        fin.compared = STATE.tracer.compared
    st.hints.extend(zip(real, provs))


@_op("IS_OP")
def _is_op(obs, st, frame, ins):
    provs, _ = _operands(obs, st, frame, 2, "use", True)
    st.stack.append(Prov(_result(provs).det, True))


@_op("UNARY_POSITIVE", "UNARY_NEGATIVE", "UNARY_INVERT")
def _unary(obs, st, frame, ins):
    provs, real = _operands(obs, st, frame, 1, "content", True)
    st.stack.append(_result(provs, real))
    st.finish = _TakeChild(DET)


@_op("UNARY_NOT")
def _unary_not(obs, st, frame, ins):
    provs, _ = _operands(obs, st, frame, 1, "truth")
    st.stack.append(Prov(provs[0].det, True))


@_op("FORMAT_VALUE")
def _format_value(obs, st, frame, ins):
    n = 2 if (ins.arg & 0x04) else 1
    # a dynamic number's __format__ guards its text (symbolic._as_text: a text guard)
    provs, _ = _operands(obs, st, frame, n, "content", sym_ok=True)
    st.stack.append(Prov(_result(provs).det, True))


@_op("BUILD_STRING")
def _build_string(obs, st, frame, ins):
    provs, _ = _operands(obs, st, frame, ins.arg, "use")
    st.stack.append(Prov(_result(provs).det, True))


@_op("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET")
def _build(obs, st, frame, ins):
    n = ins.arg
    how = "content" if ins.opname == "BUILD_SET" else "use"
    provs, _ = _operands(obs, st, frame, n, how, how == "use") if n else ([], [])
    st.stack.append(Prov(all(p.det for p in provs), True))
    if how == "use" and any(p.source is not None for p in provs):
        st.finish = _ItemsOf(obs, provs)


class _ItemsOf:
    """Finish: the tuple or list just built holds values of these provenances (an item
    read back, ``t[1]``, is still the argument it was, not a constant of the trace)."""

    __slots__ = ("obs", "provs")

    def __init__(self, obs, provs):
        self.obs, self.provs = obs, provs

    def __call__(self, st, off):
        self.obs.items_are(peek.stack(st.frame)[-1], self.provs)


def item_provs(obs, seq, n: int) -> list:
    """The provenance of each of the first ``n`` items of ``seq`` (a container made
    during the call: what it was built from, where known)."""
    written = obs.written
    key = id(seq)
    return [written.get((key, i), DET) for i in range(n)]


@_op("BUILD_MAP")
def _build_map(obs, st, frame, ins):
    n = 2 * ins.arg
    provs, _ = _operands(obs, st, frame, n, "use", True) if n else ([], [])
    st.stack.append(Prov(all(p.det for p in provs), True))


@_op("BUILD_CONST_KEY_MAP")
def _build_const_key_map(obs, st, frame, ins):
    provs, _ = _operands(obs, st, frame, ins.arg + 1, "use", True)
    st.stack.append(Prov(all(p.det for p in provs), True))


@_op("BUILD_SLICE")
def _build_slice(obs, st, frame, ins):
    provs, _ = _operands(obs, st, frame, ins.arg, "use")
    st.stack.append(Prov(all(p.det for p in provs), True))


@_op("LIST_APPEND", "SET_ADD")
def _list_append(obs, st, frame, ins):
    how = "content" if ins.opname == "SET_ADD" else "use"
    provs, _ = _operands(obs, st, frame, 1, how, how == "use")
    _into(st, ins.arg, provs)


@_op("MAP_ADD")
def _map_add(obs, st, frame, ins):
    provs, _ = _operands(obs, st, frame, 2, "use", True)
    _into(st, ins.arg, provs)


@_op("LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE")
def _extend(obs, st, frame, ins):
    provs, _ = _operands(obs, st, frame, 1, "content")
    _into(st, ins.arg, provs)


def _into(st, i, provs):
    """Items added to the container ``i`` places down (one being built: fresh)."""
    target = st.stack[-i]
    if not all(p.det for p in provs):
        st.stack[-i] = Prov(False, target.fresh)


@_op("LIST_TO_TUPLE")
def _list_to_tuple(obs, st, frame, ins):
    p = st.stack.pop()
    st.stack.append(Prov(p.det, True))


@_op("UNPACK_SEQUENCE")
def _unpack_sequence(obs, st, frame, ins):
    provs, real = _operands(obs, st, frame, 1, "content")
    if provs[0].fresh and isinstance(real[0], (tuple, list)):
        st.stack.extend(reversed(item_provs(obs, real[0], ins.arg)))
        return
    item = DET if provs[0].det else UNKNOWN
    st.stack.extend([item] * ins.arg)


@_op("UNPACK_EX")
def _unpack_ex(obs, st, frame, ins):
    provs, _ = _operands(obs, st, frame, 1, "content")
    item = DET if provs[0].det else UNKNOWN
    n = (ins.arg & 0xFF) + 1 + (ins.arg >> 8)
    st.stack.extend([item] * n)


# -- iteration ---------------------------------------------------------------------------

@_op("GET_ITER", "GET_YIELD_FROM_ITER")
def _get_iter(obs, st, frame, ins):
    p = st.stack.pop()
    v = _tos(frame)
    if hasattr(type(v), "__next__") and not p.fresh and not isinstance(v, types.GeneratorType):
        raise _unsure(f"iterates over a {type(v).__name__} iterator made before the call "
                      "(each step changes it)")
    if isinstance(v, types.GeneratorType) and not p.fresh and p.fresh is not None:
        raise _unsure("resumes a generator made before the call")
    if isinstance(v, Tensor):
        st.stack.append(FRESH)
        return
    obs.consume(p, v, "items", frame)
    st.stack.append(Prov(p.det, True))
    st.finish = _TakeChild(DET)
    st.hints.append((v, p))


@_op("FOR_ITER")
def _for_iter(obs, st, frame, ins):
    it = st.stack[-1]
    st.finish = _ForIter(st.following[ins.offset], Prov(it.det, None))


class _ForIter:
    """Pushes the next item, or pops the iterator where the loop ended (the jump lands on
    the loop's end in 3.11, past the ``END_FOR`` that 3.12 and 3.13 skip)."""

    __slots__ = ("body", "item")

    def __init__(self, body, item):
        self.body, self.item = body, item

    def __call__(self, st, off):
        if off != self.body:
            st.stack.pop()
        else:
            st.stack.append(st.child if st.child is not None else self.item)


@_op("GET_LEN")
def _get_len(obs, st, frame, ins):
    p = st.stack[-1]
    obs.consume(p, _tos(frame), "len", frame)
    st.stack.append(FRESH)


# -- jumps -------------------------------------------------------------------------------

@_op("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE",
     "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE")
def _pop_jump_if(obs, st, frame, ins):
    _operands(obs, st, frame, 1, "truth")


@_op("POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
     "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE")
def _pop_jump_if_none(obs, st, frame, ins):
    _operands(obs, st, frame, 1, "use", True)


@_op("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")
def _jump_or_pop(obs, st, frame, ins):
    p = st.stack[-1]
    obs.consume(p, _tos(frame), "truth", frame)
    st.finish = _PopUnlessAt(ins.argval)


class _PopUnlessAt:
    __slots__ = ("target",)

    def __init__(self, target):
        self.target = target

    def __call__(self, st, off):
        if off != self.target:
            st.stack.pop()


# -- calls -------------------------------------------------------------------------------

class _Call:
    """Finish of a call: pops the callable and arguments, pushes the result."""

    __slots__ = ("callee", "arg_provs", "kwnames", "npop", "fresh_callee", "new_object",
                 "result", "call", "obs")

    def __init__(self, callee, arg_provs, kwnames, npop, fresh_callee, new_object, result,
                 obs=None):
        self.callee, self.arg_provs, self.kwnames = callee, arg_provs, kwnames
        self.npop, self.fresh_callee, self.new_object = npop, fresh_callee, new_object
        self.result = result
        self.call = self
        self.obs = obs

    def __call__(self, st, off):
        del st.stack[-self.npop:]
        if self.new_object or st.child is None or self.result is FRESH:
            st.stack.append(self.result)
        else:
            st.stack.append(st.child)
        if self.new_object and self.obs is not None:  # an object of a user class
            self.obs.made_object(peek.stack(st.frame)[-1])
        callee = self.callee
        if self.obs is not None and isinstance(callee, types.FunctionType) and \
                callee.__code__.co_flags & _CO_GENERATORS:
            # a generator runs its first step later, from wherever it is iterated: bind
            # its parameters now
            gen = peek.stack(st.frame)[-1]
            frame = getattr(gen, "gi_frame", None) or getattr(gen, "cr_frame", None)
            if frame is not None:
                self.obs.gen_params[frame] = (bind_params(callee.__code__, self, callee),
                                              self.fresh_callee)
                st.stack[-1] = FRESH


class _PrintCall(_Call):
    """Finish of ``print(...)``: also ends the tracer's pass for print's reads."""

    __slots__ = ()

    def __call__(self, st, off):
        super().__call__(st, off)
        tracer = STATE.tracer
        if tracer is not None and tracer.print_reads:
            tracer.print_done()


_OURS = ("eager", "compiler", "runtime")
# eager's modules whose functions hand Python numbers straight to tensor ops (dispatch),
# so a dynamic number passed to them stays an input of the trace
_SYM_AWARE = {"eager.fn.elementwise", "eager.methods", "eager.tensor"}
_CO_GENERATORS = 0x20 | 0x80 | 0x200  # generator, coroutine, async generator


@_op("CALL")
def _call(obs, st, frame, ins):
    argc = ins.arg
    real = peek.stack(frame)
    provs = st.stack[-argc - 2:]
    vals = real[-argc - 2:]
    kwnames = st.kwnames
    st.kwnames = ()
    if peek.is_null(vals[0]):
        fn_p, fn, arg_provs, args = provs[1], vals[1], list(provs[2:]), list(vals[2:])
    else:
        fn_p, fn, arg_provs, args = provs[0], vals[0], list(provs[1:]), list(vals[1:])
    st.finish = _call_finish(obs, st, frame, fn_p, fn, arg_provs, args, kwnames, argc + 2)


@_op("CALL_FUNCTION_EX")
def _call_function_ex(obs, st, frame, ins, callee_at=1):
    n = 3 + (ins.arg & 1)
    real = peek.stack(frame)
    provs = st.stack[-n:]
    vals = real[-n:]
    fn_p, fn = provs[callee_at], vals[callee_at]
    arg_provs = [provs[2]] + ([provs[3]] if n == 4 else [])
    for p, v in zip(arg_provs, vals[2:]):
        if not p.det:
            raise _unsure("calls with arguments whose origin the compiler lost track of")
    items = list(vals[2])
    if n == 4:
        items += list(vals[3].values())
    provs_of_items = item_provs(obs, vals[2], len(vals[2])) if provs[2].fresh else \
        [Prov(True, None)] * len(vals[2])
    provs_of_items += [Prov(True, None)] * (len(items) - len(provs_of_items))
    st.finish = _call_finish(obs, st, frame, fn_p, fn, provs_of_items, items, (), n,
                             star=True)


def _call_finish(obs, st, frame, fn_p, fn, arg_provs, args, kwnames, npop, star=False):
    if not fn_p.det:
        raise _unsure("calls a function whose origin the compiler lost track of")
    for p in arg_provs:
        if not p.det:
            raise _unsure("calls a function with an argument whose origin the compiler "
                          "lost track of")
    fresh_callee = bool(fn_p.fresh)
    if isinstance(fn, type):
        return _call_class(obs, frame, fn, arg_provs, args, kwnames, npop)
    func = getattr(fn, "__func__", fn) if isinstance(fn, types.MethodType) else fn
    # the callee's parameters: a bound method's self first (arg_provs stay aligned with args)
    param_provs = [Prov(True, None)] + list(arg_provs) if isinstance(fn, types.MethodType) \
        else arg_provs
    if isinstance(func, types.FunctionType) or _is_python_callable(fn):
        result = DET
        if isinstance(func, types.FunctionType) and _trusted_function(obs, func):
            sym_ok = func.__module__ in _SYM_AWARE
            for p, v in zip(arg_provs, args):
                obs.consume(p, v, "content", frame, sym_ok)
            if _numpy_callable(func):
                _numpy_writes(func, args, arg_provs, kwnames, frame)
            if _numpy_callable(func) and all(p.fresh or _no_state(v)
                                             for p, v in zip(arg_provs, args)):
                result = FRESH  # a NumPy result over new arrays only
        return _Call(func, param_provs, tuple(kwnames), npop, fresh_callee, False, result,
                     obs)
    if (getattr(fn, "__module__", None) or "").split(".", 1)[0] in _OURS:
        # eager's own callables wrapped in C (functools.lru_cache...): trusted like its code
        for p, v in zip(arg_provs, args):
            obs.consume(p, v, "content", frame)
        return _Call(None, arg_provs, tuple(kwnames), npop, False, False, DET)
    if fn is next and args:
        if not arg_provs[0].fresh:
            raise _unsure("advances an iterator made before the call (next)")
        return _Call(None, arg_provs, tuple(kwnames), npop, False, False, DET)
    kind = C.classify(fn)
    if _numpy_callable(fn):
        _numpy_writes(fn, args, arg_provs, kwnames, frame)
    if kind == C.PURE:
        return _call_pure(obs, frame, fn, arg_provs, args, kwnames, npop)
    if kind == C.MUTATES_SELF:
        owner = getattr(fn, "__self__", None)
        owner_p = fn_p if owner is not None else arg_provs[0]
        if owner is None:
            owner = args[0]
        for p, v in zip(arg_provs, args):
            obs.consume(p, v, "use", frame, sym_ok=True)  # stored: replayed as a graph value
        if owner_p.fresh or id(owner) in obs.mutated and owner_p.fresh is not False and \
                owner_p.fresh:
            return _Call(None, arg_provs, tuple(kwnames), npop, False, True, DET)
        E.record_method(obs, owner, owner_p, fn.__name__, args if getattr(fn, "__self__",
                                                                         None) is not None
                        else args[1:], arg_provs, frame)
        return _Call(None, arg_provs, tuple(kwnames), npop, False, True, DET)
    if kind == C.PRINT:
        E.record_print(obs, args, kwnames, frame)
        return _PrintCall(None, arg_provs, tuple(kwnames), npop, False, True, FRESH)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or \
        type(fn).__name__
    mod = getattr(fn, "__module__", None)
    raise _unsure(f"calls {mod + '.' if mod and mod != 'builtins' else ''}{name}, which the "
                  "compiler cannot see into (its result or effect may change between calls)")


def _trusted_frame(frame) -> bool:
    return trusted_file(frame.f_code.co_filename)


def _is_python_callable(fn) -> bool:
    return isinstance(type(fn).__call__, types.FunctionType)


def _trusted_function(obs, func) -> bool:
    return trusted_file(func.__code__.co_filename)


def _call_class(obs, frame, cls, arg_provs, args, kwnames, npop):
    if cls.__module__ == "builtins" or cls.__module__.startswith(("numpy", "collections")):
        how = "items" if cls in _HANDS_OUT_ITEMS else "content"
        for p, v in zip(arg_provs, args):
            obs.consume(p, v, how, frame)
    if cls is super:
        return _Call(None, arg_provs, tuple(kwnames), npop, False, True, DET)
    return _Call(None, arg_provs, tuple(kwnames), npop, False, True, FRESH,
                 obs if _user_class(cls) else None)


def _user_class(cls) -> bool:
    """A class whose objects a replay could not remake (so a call must not return one it
    made): not a built-in, NumPy's or eager's own."""
    mod = cls.__module__ or ""
    return mod.split(".", 1)[0] not in ("builtins", "numpy", "collections", *_OURS)


#: built-ins that give a container's items to Python without reading them
_HANDS_OUT_ITEMS = (zip, enumerate, iter, reversed, list, tuple)


def _call_pure(obs, frame, fn, arg_provs, args, kwnames, npop):
    if fn is getattr and len(args) >= 2 and type(args[1]) is str:
        prov = load_attr(obs, obs.states[frame], frame, arg_provs[0], args[0], args[1])
        if len(args) == 3 and prov.det and not hasattr(args[0], args[1]):
            prov = DET
        return _Call(None, arg_provs, tuple(kwnames), npop, False, True, prov)
    if fn is hasattr and len(args) == 2 and type(args[1]) is str:
        load_attr(obs, obs.states[frame], frame, arg_provs[0], args[0], args[1])
        return _Call(None, arg_provs, tuple(kwnames), npop, False, True, FRESH)
    owner = getattr(fn, "__self__", None)
    how = "content"
    if fn in (isinstance, issubclass, id, type, callable, repr, hash):
        how = "use"
    elif fn is len:
        how = "len"
    elif fn in _HANDS_OUT_ITEMS:
        how = "items"
    for p, v in zip(arg_provs, args):
        # (a dynamic number given to isinstance, type, id... is not read: repr and hash
        # read it through its own methods, which specialize it)
        obs.consume(p, v, how, frame, sym_ok=how == "use")
    if owner is not None and not isinstance(owner, types.ModuleType):
        st = obs.states[frame]
        # the bound method's object: its items are read
        owner_p = _owner_prov(st, len(args))
        obs.consume(owner_p, owner, "content", frame)
    result = FRESH if C.returns_new(fn) or (fn is iter and args and not hasattr(
        type(args[0]), "__next__")) else DET
    if result is DET and _numpy_callable(fn) and all(
            p.fresh or _no_state(v) for p, v in zip(arg_provs, args)):
        owner = getattr(fn, "__self__", None)
        if not isinstance(owner, np.ndarray) or \
                _owner_prov(obs.states[frame], len(args)).fresh:
            result = FRESH  # a NumPy result over new arrays only: nothing made before
    return _Call(None, arg_provs, tuple(kwnames), npop, False, True, result)


def _no_state(v) -> bool:
    """Arguments a NumPy function cannot return (a view of) as they are: anything but an
    array (lists, scalars, types and dtypes are copied into new arrays)."""
    return not isinstance(v, np.ndarray)


def _numpy_writes(fn, args, arg_provs, kwnames, frame) -> None:
    """NumPy calls that write into an argument (``ufunc.at``, ``out=``) may only write into
    arrays made during the call."""
    targets = []
    if getattr(fn, "__name__", None) == "at" and isinstance(getattr(fn, "__self__", None),
                                                            np.ufunc):
        targets.append(0)
    if "out" in kwnames:
        targets.append(len(args) - len(kwnames) + list(kwnames).index("out"))
    for i in targets:
        if i < len(args) and not arg_provs[i].fresh:
            raise _unsure("writes into a NumPy array made before the call")


def _numpy_callable(fn) -> bool:
    mod = getattr(fn, "__module__", None) or ""
    return mod.startswith("numpy") or isinstance(fn, np.ufunc) or isinstance(
        getattr(fn, "__self__", None), (np.ufunc, np.ndarray)) or \
        getattr(getattr(fn, "__objclass__", None), "__module__", "").startswith("numpy")


def _owner_prov(st, argc):
    # for [NULL, method, args...] the method's object is where the method was loaded from;
    # LOAD_METHOD on a C method left [method, self]: self's provenance is below the args
    p = st.stack[-argc - 1] if len(st.stack) > argc else DET
    if p is NULL and len(st.stack) > argc + 1:
        p = st.stack[-argc - 2]  # 3.13's [bound method, NULL, args...]
    return p if p is not NULL else DET


# -- functions, returns, generators ---------------------------------------------------------

@_op("MAKE_FUNCTION")
def _make_function(obs, st, frame, ins):
    n = 1 + bin(ins.arg & 0x0F).count("1")
    provs, _ = _operands(obs, st, frame, n, "use")
    st.stack.append(Prov(all(p.det for p in provs), True))
    st.finish = _MadeObject(obs)


class _MadeObject:
    """Finish: the instruction made a new object the call must not return (a function)."""

    __slots__ = ("obs",)

    def __init__(self, obs):
        self.obs = obs

    def __call__(self, st, off):
        self.obs.made_object(peek.stack(st.frame)[-1])


@_op("RETURN_VALUE")
def _return_value(obs, st, frame, ins):
    st.ret = st.stack.pop()


@_op("YIELD_VALUE")
def _yield_value(obs, st, frame, ins):
    st.ret = st.stack.pop()
    st.yielded = True


@_op("RETURN_GENERATOR")
def _return_generator(obs, st, frame, ins):
    st.ret = FRESH
    st.yielded = True
    st.finish = None


@_op("SEND")
def _send(obs, st, frame, ins):
    st.finish = _Send(ins.argval)


class _Send:
    __slots__ = ("end",)

    def __init__(self, end):
        self.end = end

    def __call__(self, st, off):
        if off == self.end:
            st.stack.pop()
        st.stack[-1] = DET


# -- with, exceptions, imports ---------------------------------------------------------------

@_op("BEFORE_WITH")
def _before_with(obs, st, frame, ins):
    p = st.stack.pop()
    mgr = _tos(frame)
    enter = getattr(type(mgr), "__enter__", None)
    if not isinstance(enter, types.FunctionType) and not p.fresh:
        raise _unsure(f"uses a {type(mgr).__name__} made before the call as a context manager")
    st.stack.append(FRESH)   # the bound __exit__
    st.stack.append(DET)     # what __enter__ returned
    st.finish = _TakeChild(DET)
    st.hints.append((mgr, p))


@_op("WITH_EXCEPT_START")
def _with_except_start(obs, st, frame, ins):
    st.stack.append(DET)


@_op("PUSH_EXC_INFO")
def _push_exc_info(obs, st, frame, ins):
    top = st.stack.pop()
    st.stack.append(DET)
    st.stack.append(top)


@_op("POP_EXCEPT")
def _pop_except(obs, st, frame, ins):
    st.stack.pop()


@_op("CHECK_EXC_MATCH", "CHECK_EG_MATCH")
def _check_exc_match(obs, st, frame, ins):
    st.stack[-1] = FRESH
    if ins.opname == "CHECK_EG_MATCH":
        st.stack[-2] = DET


@_op("RERAISE")
def _reraise(obs, st, frame, ins):
    st.stack.pop()


@_op("RAISE_VARARGS")
def _raise(obs, st, frame, ins):
    if ins.arg:
        del st.stack[-ins.arg:]


@_op("PREP_RERAISE_STAR")
def _prep_reraise_star(obs, st, frame, ins):
    st.stack.pop()
    st.stack[-1] = DET


@_op("IMPORT_NAME")
def _import_name(obs, st, frame, ins):
    del st.stack[-2:]
    st.stack.append(OLD)


@_op("IMPORT_FROM")
def _import_from(obs, st, frame, ins):
    st.stack.append(OLD)
