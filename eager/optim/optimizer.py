"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and state dicts,
as PyTorch.

Hyper-parameters are read from ``param_groups`` at every ``step`` (a scheduler that
changes ``group["lr"]`` takes effect at once).  Steps run under ``no_grad`` and update
tensors with in-place tensor methods, so a compiler tracer records them.
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from itertools import chain

import numpy as np

from runtime import pycode

from .._state import STATE
from ..autograd.grad_mode import enable_grad, no_grad
from ..dtypes import is_float as _isf
from ..factories import from_numpy
from ..nn._util import _zero_grad_tensor
from ..tensor import Tensor

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """The base class of the optimizers: it holds the parameter groups and the
    per-parameter state, clears gradients and saves or restores its state, as PyTorch's.

    A subclass passes its hyperparameters as ``defaults`` and implements :meth:`step`,
    reading the hyperparameters from each entry of ``param_groups`` (so a change there, as
    an LR scheduler makes, takes effect at the next step) and keeping whatever it carries
    from step to step in ``state[p]``.  :meth:`state_dict` numbers the parameters in group
    order, so a saved state loads into an optimizer built the same way on other tensors.

    Args:
        params (iterable): the tensors to optimize, ``(name, tensor)`` pairs, or dicts
            defining parameter groups (each with a ``"params"`` entry and, optionally, its
            own values for some hyperparameters).
        defaults (dict): the hyperparameters' values for groups that do not set them.

    Example::

        >>> class SignSGD(optim.Optimizer):
        ...     def __init__(self, params, lr=0.01):
        ...         super().__init__(params, {"lr": lr})
        ...     @eager.no_grad()
        ...     def step(self, closure=None):
        ...         for group in self.param_groups:
        ...             for p in group["params"]:
        ...                 if p.grad is not None:
        ...                     p.add_(p.grad.sign(), alpha=-group["lr"])
        >>> w = nn.Parameter(eager.tensor([1.0, -2.0]))
        >>> opt = SignSGD([w], lr=0.5)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w.detach()
        tensor([ 0.5000, -1.5000])
        >>> opt.state_dict()
        {'state': {}, 'param_groups': [{'lr': 0.5, 'params': [0]}]}
    """

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(dict(group))

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def _hyper(self, group: dict, key: str):
        """A hyperparameter a step reads.  While a compiled step is traced, the compiler
        guards it like Python state it reads (so a value that changes every step, as an
        LR scheduler's, becomes an input of the trace instead of a constant)."""
        value = group[key]
        if STATE.tracer is not None:
            STATE.tracer.on_python_read(group, key, value)
        return value

    def _trace_signature(self) -> tuple:
        """What a compiled step depends on besides tensor values: hyperparameters (those
        read through :meth:`_hyper` are guarded there), which parameters, and which state
        tensors exist (by identity)."""
        atoms = _ATOMS
        groups = tuple((tuple([(k, v if type(v) in atoms else _frozen(v))
                               for k, v in g.items()
                               if k != "params" and k not in _READ_BY_HYPER]),
                        tuple(map(id, g["params"])))
                       for g in self.param_groups)
        state = tuple((id(p), tuple([(k, v if type(v) in atoms else
                                      id(v) if isinstance(v, Tensor) else _frozen(v))
                                     for k, v in st.items()]))
                      for p, st in self.state.items())
        return groups, state

    # -- groups -------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        param_group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(params) != len(set(map(id, params))):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error", stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(map(id, group["params"]))
        if not seen.isdisjoint(map(id, params)):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients --------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    # written without reading it first: a compiled step that starts with
                    # zero_grad() then does not depend on whether .grad was None at entry
                    # (one trace instead of one for the first call and one for the rest)
                    p.grad = None
                elif p.grad is not None:
                    _zero_grad_tensor(p)

    def step(self, closure=None):
        raise NotImplementedError

    def _closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state dicts --------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index...]}]}``;
        parameters are numbered in group order, as PyTorch."""
        mapping: dict = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                value = value._data
            if isinstance(value, np.ndarray):
                dt = param._data.dtype if key != "step" and param.is_floating_point() and \
                    _isf(value.dtype) else value.dtype
                return from_numpy(np.array(value, dtype=dt))   # a copy: no aliasing
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [
            update_group(g, ng) for g, ng in zip(groups, saved_groups)]})


_ATOMS = frozenset({int, float, bool, str, bytes, complex, type(None)})


def _frozen(v):
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _frozen(x)) for k, x in v.items())
    try:
        hash(v)
        return v
    except TypeError:
        return id(v)


_READ_BY_HYPER = ("lr",)


def _signature_test(opt, sig: tuple):
    """A generated ``holds()`` telling whether ``opt`` still has the hyperparameters and
    state that :meth:`Optimizer._trace_signature` returned as ``sig`` (the same groups'
    values, the same parameters and state tensors by identity) — a few dozen attribute
    and identity tests instead of rebuilding the signature at every compiled call."""
    groups, state = sig
    env = {"opt": opt, "_frozen": _frozen, "MISSING": _MISSING}
    body = ["gs = opt.param_groups", f"if len(gs) != {len(groups)}: return False"]

    def same(expr, value, name):  # the test that `expr` has the value the signature holds
        env[name] = value
        if type(value) in _ATOMS:
            return f"({expr} is {name} or {expr} == {name})"
        return f"_frozen({expr}) == {name}"

    for i, (items, pids) in enumerate(groups):
        g = opt.param_groups[i]
        body += [f"g = gs[{i}]", f"if len(g) != {len(g)}: return False"]
        for j, (key, value) in enumerate(items):
            env[f"K{i}_{j}"] = key
            body.append(f"v = g.get(K{i}_{j}, MISSING)")
            body.append(f"if not {same('v', value, f'V{i}_{j}')}: return False")
        params = g["params"]
        if tuple(map(id, params)) != pids:
            return lambda: False
        env[f"PS{i}"] = list(params)
        body += ["ps = g['params']", f"if len(ps) != {len(params)}: return False"]
        body += [f"if ps[{k}] is not PS{i}[{k}]: return False" for k in range(len(params))]
    body += ["st = opt.state", f"if len(st) != {len(state)}: return False"]
    keys = {id(p): p for p in opt.state}
    for i, (pid, items) in enumerate(state):
        env[f"Q{i}"] = keys.get(pid)
        body += [f"s = st.get(Q{i})", f"if s is None or len(s) != {len(items)}: return False"]
        entries = opt.state[keys[pid]] if pid in keys else {}
        for j, (key, value) in enumerate(items):
            env[f"SK{i}_{j}"] = key
            body.append(f"v = s.get(SK{i}_{j}, MISSING)")
            now = entries.get(key)
            if isinstance(now, Tensor):
                env[f"T{i}_{j}"] = now
                body.append(f"if v is not T{i}_{j}: return False")
            else:
                body.append(f"if not {same('v', value, f'W{i}_{j}')}: return False")
    src = "def holds():\n" + "".join(f"    {line}\n" for line in body) + "    return True\n"
    exec(pycode.code(src, "<dyngraph optimizer guard>"), env)
    return env["holds"]


_MISSING = object()


def _no_grad_step(step):
    """Decorator: run an optimizer's ``step`` under ``no_grad``."""
    import functools

    @functools.wraps(step)
    def wrapper(self, closure=None):
        loss = self._closure(closure)
        if STATE.tracer is not None:
            # a compiled trace bakes in hyperparameters and which state exists (e.g. a
            # momentum buffer made on the first step): guard them, and the state tensors'
            # identities, so a replay never runs against different Python state
            sig = self._trace_signature()

            def signature():
                return self._trace_signature()
            signature.holds = _signature_test(self, sig)  # the guard's cheap form
            STATE.tracer.guard_value(f"{type(self).__name__}@{id(self):x} hyperparameters "
                                     "and state", signature, sig)
        with no_grad():
            step(self)
        return loss
    return wrapper


def check_adam_hyperparameters(lr, eps, betas, weight_decay) -> None:
    """PyTorch's checks of an Adam-family optimizer's hyperparameters, in its order and
    with its messages (Adam, AdamW, Adamax, NAdam, RAdam)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
