"""Provenance of a called frame's parameters, bound from the call's arguments as Python
binds them (positional, keyword, ``*args``, ``**kwargs``): the observer uses it when a
watched frame starts, and the call rules of :mod:`compiler.pystate.bytecode` when a
generator is made (its frame starts later, wherever it is iterated)."""

from __future__ import annotations

from .prov import DET, FRESH, UNKNOWN

CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08


def param_names(code) -> list:
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & CO_VARARGS) + bool(code.co_flags & CO_VARKEYWORDS)
    return list(code.co_varnames[:n])


def star_params(code) -> list:
    n = code.co_argcount + code.co_kwonlyargcount
    out = []
    if code.co_flags & CO_VARARGS:
        out.append(code.co_varnames[n])
        n += 1
    if code.co_flags & CO_VARKEYWORDS:
        out.append(code.co_varnames[n])
    return out


def bind_params(code, call, func) -> dict:
    """Provenance of a (generator) function's parameters from a call of it."""
    provs = bind(code, param_names(code), call, func)
    for n in star_params(code):
        if provs.get(n, DET).det:
            provs[n] = FRESH
    return provs


def varargs_provs(code, call, func) -> list:
    """The provenances of the positional arguments a call put into ``*args``."""
    if func is None or call.callee is not func:
        return []
    pos = call.arg_provs[:len(call.arg_provs) - len(call.kwnames)]
    return list(pos[code.co_argcount:])


def bind(code, params, call, func) -> dict:
    """Provenance of a called frame's parameters, from the call's arguments."""
    provs = {n: DET for n in params}
    if call.new_object and params and code.co_name == "__init__":
        provs[params[0]] = FRESH  # __init__ (or __new__'s result) of an object being made
    if func is None or call.callee is not func:
        return provs
    npos = code.co_argcount
    nkw = len(call.kwnames)
    pos = call.arg_provs[:len(call.arg_provs) - nkw]
    kws = call.arg_provs[len(pos):]
    for name, p in zip(params[:npos], pos):
        provs[name] = p
    if len(pos) > npos and code.co_flags & CO_VARARGS:
        provs[params[npos + code.co_kwonlyargcount]] = \
            FRESH if all(p.det for p in pos[npos:]) else UNKNOWN
    for name, p in zip(call.kwnames, kws):
        if name in provs and name in params[:npos + code.co_kwonlyargcount]:
            provs[name] = p
    return provs
