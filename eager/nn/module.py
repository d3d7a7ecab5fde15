"""``Module``: the base class of layers, with PyTorch's registration, traversal,
state-dict and repr behaviour.

Parameters, buffers and child modules live in the ordered dicts ``_parameters``,
``_buffers`` and ``_modules``; ``__setattr__`` routes assignments there and
``__getattr__`` finds them, exactly as in PyTorch.

Every change to a module's structure through this API (attribute assignment or deletion,
registering parameters, buffers, submodules or hooks, ``train()``/``eval()``) bumps
:data:`STRUCTURE_EPOCH`: compiled traces guard the module attributes they read, and skip
re-checking those guards while the epoch has not moved.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from .. import dtypes as _dt
from .._state import region_router
from ..autograd.grad_mode import no_grad
from ..devices import cuda_device, to_args, to_device
from ..dtypes import is_float as _isf
from ..tensor import Size, Tensor
from ..tensor import device as _device
from ._util import (
    _addindent,
    _as_array,
    _check_name,
    _copy_into,
    _IncompatibleKeys,
    _RemovableHandle,
    _remove_from,
    _typename,
    _zero_grad_tensor,
)
from .parameter import Parameter

__all__ = ["Module"]

#: bumped by every structural change of any Module (see the module docstring)
STRUCTURE_EPOCH = [0]


class _OwnedDict(OrderedDict):
    """A module's parameter / buffer / submodule / hook dict: changes bump the epoch."""

    __slots__ = ()

    def __setitem__(self, key, value):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.__setitem__(self, key, value)

    def __delitem__(self, key):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.__delitem__(self, key)

    def pop(self, *args):
        STRUCTURE_EPOCH[0] += 1
        return OrderedDict.pop(self, *args)

    def popitem(self, last=True):
        STRUCTURE_EPOCH[0] += 1
        return OrderedDict.popitem(self, last)

    def clear(self):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.clear(self)

    def setdefault(self, key, default=None):
        STRUCTURE_EPOCH[0] += 1
        return OrderedDict.setdefault(self, key, default)

    def move_to_end(self, key, last=True):
        STRUCTURE_EPOCH[0] += 1
        OrderedDict.move_to_end(self, key, last)


class Module:
    """Base class for all neural network modules; subclasses define ``forward``.

    A model is a subclass that creates its layers in ``__init__`` and says how to use
    them in ``forward``.  Assigning a ``Parameter``, a ``Module`` or (with
    ``register_buffer``) a tensor to an attribute registers it, so that ``parameters()``,
    ``named_modules()``, ``state_dict()`` / ``load_state_dict()``, ``to()`` (which changes
    the parameters in place, keeping the same ``Parameter`` objects), ``train()`` /
    ``eval()`` and ``zero_grad()`` reach it, and the repr lists the children.  Call the
    module (``m(x)``), not ``m.forward(x)``, so that forward hooks run.

    Not everything in PyTorch's ``Module`` is here: ``register_forward_hook`` and
    ``register_forward_pre_hook`` take only the hook (no ``prepend``, ``with_kwargs`` or
    ``always_call``), and there are no backward hooks, state-dict hooks,
    ``get_extra_state`` / ``set_extra_state``, ``to_empty`` or ``share_memory``.

    Args:
        (none): ``Module.__init__`` takes no arguments (any raise ``TypeError``).  A
            subclass defines its own constructor and must call ``super().__init__()``
            before it assigns parameters, buffers or submodules.

    Attributes:
        training (bool): ``True`` in training mode (the default), ``False`` after
            ``eval()``; layers such as ``Dropout`` and ``BatchNorm`` read it.

    Example::

        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc1 = nn.Linear(4, 8)
        ...         self.fc2 = nn.Linear(8, 2)
        ...     def forward(self, x):
        ...         return self.fc2(F.relu(self.fc1(x)))
        >>> net = Net()
        >>> net(eager.randn(3, 4)).shape
        eager.Size([3, 2])
        >>> [name for name, _ in net.named_parameters()]
        ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
        >>> net
        Net(
          (fc1): Linear(in_features=4, out_features=8, bias=True)
          (fc2): Linear(in_features=8, out_features=2, bias=True)
        )
        >>> net.eval().training, net.fc1.training
        (False, False)
    """

    _version = 1

    @property
    def training(self) -> bool:
        """Train/eval mode.  A compiled trace that reads it is guarded on it."""
        return self.__dict__["_training"]

    @training.setter
    def training(self, mode: bool) -> None:
        STRUCTURE_EPOCH[0] += 1
        self.__dict__["_training"] = mode

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["_training"] = True
        d["_parameters"] = _OwnedDict()
        d["_buffers"] = _OwnedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = _OwnedDict()
        d["_forward_hooks"] = _OwnedDict()
        d["_forward_pre_hooks"] = _OwnedDict()

    # -- calling ------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        regions = region_router()
        if regions is not None:  # a compiled region of its own
            return regions(self, args, kwargs)
        if self._forward_pre_hooks or self._forward_hooks:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            r = hook(self, args, out)
            if r is not None:
                out = r
        return out

    def register_forward_pre_hook(self, hook) -> _RemovableHandle:
        h = _RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        return h

    def register_forward_hook(self, hook) -> _RemovableHandle:
        h = _RemovableHandle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        return h

    # -- registration -----------------------------------------------------------------
    def register_parameter(self, name: str, param) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(eager.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly.")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(eager Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            for store in (d["_parameters"], d["_buffers"], d["_modules"]):
                if name in store:
                    value = store[name]
                    return value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        STRUCTURE_EPOCH[0] += 1
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(eager.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                _remove_from(name, d, self._parameters, self._buffers,
                             self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (eager.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer "
                                        f"'{name}' (eager Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        STRUCTURE_EPOCH[0] += 1
        for key in ("_parameters", "_buffers", "_modules"):
            store = self.__dict__.get(key)
            if store is not None and name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        STRUCTURE_EPOCH[0] += 1
        self.__dict__.update(state)

    # -- traversal --------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse: bool = True):
        cls = type(self)
        if cls.named_parameters is not Module.named_parameters or \
                cls.named_modules is not Module.named_modules:
            for _, p in self.named_parameters(recurse=recurse):   # a subclass's own
                yield p
            return
        # named_parameters' walk without the names (called every step by optimizers'
        # constructors and clip_grad_norm_): modules in the same order, each once, each
        # parameter once
        seen = set()
        for module in (self._walk(set()) if recurse else (self,)):
            for p in module._parameters.values():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield p

    def _walk(self, seen: set):
        """This module and every one under it not in ``seen`` (ids), each once, in
        ``named_modules``' order."""
        if id(self) in seen:
            return
        seen.add(id(self))
        yield self
        for module in self._modules.values():
            if module is not None:
                yield from module._walk(seen)

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")  # noqa: TRY004 (as PyTorch)
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"{mod._get_name()} has no buffer `{name}`")
        return mod._buffers[name]

    def apply(self, fn) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes ------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")  # noqa: TRY004
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                _zero_grad_tensor(p)

    # -- dtype/device conversion -------------------------------------------------------
    def _apply(self, fn) -> Module:
        """Apply ``fn`` (array -> array) to every parameter, gradient and buffer in place:
        the Parameter objects stay the same, so optimizers keep referring to them."""
        for module in self.children():
            module._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            new = fn(p._data)
            if new is not p._data:
                p._data = new
                if p.grad is not None:
                    p.grad._data = fn(p.grad._data)
        for b in self._buffers.values():
            if b is not None:
                new = fn(b._data)
                if new is not b._data:
                    b._data = new
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers in place (``to(device)``,
        ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``); only floating point
        values change dtype.  The Parameter objects stay the same."""
        dev, dtype = to_args(args, kwargs)
        npd = None
        if dtype is not None:
            npd = _dt.to_numpy(dtype)
            if not _isf(npd):
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                                f"desired dtype={_dt.from_numpy(npd)}")
        def convert(a):  # (moving a tensor checks the device: none to move, no error)
            if dev is not None and Tensor._make(a).device.type != dev:
                a = to_device(Tensor._make(a), dev)._data
            if npd is not None and _isf(a.dtype) and a.dtype != npd:
                a = Tensor._make(a).to(npd)._data
            return a
        return self._apply(convert)

    def float(self) -> Module:
        return self.to(_dt.float32)

    def double(self) -> Module:
        return self.to(_dt.float64)

    def half(self) -> Module:
        return self.to(_dt.float16)

    def bfloat16(self) -> Module:
        return self.to(_dt.bfloat16)

    def type(self, dst_type) -> Module:
        return self.to(dst_type)

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, device=None) -> Module:
        """Move the parameters and buffers to the CUDA device ``device`` (an int, a string
        or an ``eager.device``; None: the current device), each as ``Tensor.cuda(device)``
        does: an index this machine does not have raises PyTorch's invalid device ordinal,
        a non-CUDA device ``RuntimeError`` (a module without tensors is returned as is)."""
        def convert(a):
            if isinstance(device, (str, _device)) and _device(device).type != "cuda":
                raise RuntimeError("Invalid device, must be cuda device")
            return to_device(Tensor._make(a), cuda_device(device))._data
        return self._apply(convert)

    # -- state dict -------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        if args:  # legacy positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, strict, missing_keys,
                              unexpected_keys, error_msgs, assign=False):
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in list(self._parameters.items()) + list(persistent.items())
                       if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            arr = _as_array(value)
            if arr is None:
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f"Tensor or array-like object from checkpoint but received "
                                  f"{type(value)}")
                continue
            if param.ndim == 0 and arr.ndim == 1 and arr.shape[0] == 1:
                arr = arr.reshape(())
            if arr.shape != param._data.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{Size(arr.shape)!r} from checkpoint, the shape in current "
                                  f"model is {param.shape!r}.")
                continue
            try:
                if assign:
                    self._assign_loaded(name, param, value, arr)
                else:
                    _copy_into(param, arr)
            except Exception as exc:  # noqa: BLE001 (reported like PyTorch)
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.shape!r} and whose dimensions in "
                                  f"the checkpoint are {tuple(arr.shape)}, an exception "
                                  f"occurred : {exc.args}.")
        if strict:
            for key in state_dict:
                if not isinstance(key, str) or not key.startswith(prefix):
                    continue
                parts = key[len(prefix):].split(".", 1)
                if len(parts) > 1:
                    if parts[0] not in self._modules:
                        unexpected_keys.append(key)
                elif parts[0] not in local_state:
                    unexpected_keys.append(key)

    def _assign_loaded(self, name, param, value, arr):
        t = value if isinstance(value, Tensor) else Tensor._make(np.array(arr))
        if name in self._parameters:
            p = t if isinstance(t, Parameter) else Parameter(t, param.requires_grad)
            self._parameters[name] = p
        else:
            self._buffers[name] = t

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []

        def load(module, prefix=""):
            module._load_from_state_dict(state_dict, prefix, True, missing_keys,
                                         unexpected_keys, error_msgs, assign)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        with no_grad():
            load(self)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # -- repr ---------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
