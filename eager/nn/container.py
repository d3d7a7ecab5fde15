"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict``."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Self

from ..tensor import Tensor
from ._util import _addindent
from .module import Module
from .parameter import Parameter

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _index(idx, n: int, what: str) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx + n if idx < 0 else idx


class Sequential(Module):
    """A module that calls its submodules one after another.

    ``forward`` passes its single input to the first module, that module's output to the
    second, and so on, and returns the last output (an empty ``Sequential`` returns its
    input).  The submodules are registered as children, so their parameters belong to
    the ``Sequential``.  It can be indexed and sliced like a list (a slice is a new
    ``Sequential`` sharing the modules and keeping their names), iterated, and changed
    with ``append``, ``insert``, ``extend``, ``pop``, item assignment and ``del``;
    ``seq1 + seq2`` concatenates two of them.  Deleting or inserting renumbers the
    modules ``"0"``, ``"1"``, ... again.

    Args:
        *args (Module): the modules to chain, named ``"0"``, ``"1"``, ... in order; or a
            single ``collections.OrderedDict`` mapping names to modules (a plain ``dict``
            is not accepted for named modules).

    Example::

        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> model(eager.randn(3, 4)).shape
        eager.Size([3, 2])
        >>> model
        Sequential(
          (0): Linear(in_features=4, out_features=8, bias=True)
          (1): ReLU()
          (2): Linear(in_features=8, out_features=2, bias=True)
        )
        >>> model[-1]
        Linear(in_features=8, out_features=2, bias=True)
        >>> from collections import OrderedDict
        >>> named = nn.Sequential(OrderedDict([("fc", nn.Linear(4, 2)), ("act", nn.Tanh())]))
        >>> named.fc
        Linear(in_features=4, out_features=2, bias=True)
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        return self._modules[keys[_index(idx, len(keys), "Sequential")]]

    def __setitem__(self, idx, module) -> None:
        keys = list(self._modules)
        setattr(self, keys[_index(idx, len(keys), "Sequential")], module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[_index(idx, len(keys), "Sequential")])
        # keep integer names contiguous, as PyTorch does
        items = list(self._modules.items())
        self._modules.clear()
        for i, (_, m) in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "  # noqa: TRY004
                             f"{type(other)} is given.")
        ret = Sequential()
        for m in list(self) + list(other):
            ret.append(m)
        return ret

    def append(self, module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")  # noqa: TRY004
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m
        return self

    def extend(self, sequential) -> Sequential:
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v


class ModuleList(Module):
    """Holds submodules in a list, registered as children ``"0"``, ``"1"``, ...

    Unlike a Python ``list``, a ``ModuleList`` makes its modules visible to the owning
    module: their parameters appear in ``parameters()``, and ``to()``, ``train()`` and
    ``state_dict()`` reach them.  It has no ``forward``; the owner decides how to call
    the modules.  It supports indexing and slicing (a slice is a new ``ModuleList``),
    ``len``, iteration, ``append``, ``extend``, ``insert``, ``pop``, ``+``, ``+=``, item
    assignment and ``del`` (which renumber the names).  Its repr collapses runs of
    identical modules, as PyTorch's does.

    Args:
        modules (iterable, optional): modules to add, in order. Default: ``None``.

    Example::

        >>> layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        >>> layers
        ModuleList(
          (0-2): 3 x Linear(in_features=4, out_features=4, bias=True)
        )
        >>> len(list(layers.parameters()))
        6
        >>> x = eager.randn(2, 4)
        >>> for layer in layers:
        ...     x = layer(x)
        >>> x.shape
        eager.Size([2, 4])
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module) -> None:
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_index(idx, len(self), "ModuleList")))
        mods = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules) -> Self:
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        return ModuleList(list(self) + list(other))

    def insert(self, index: int, module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def append(self, module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> ModuleList:
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def pop(self, key=-1):
        v = self[key]
        del self[key]
        return v

    def __repr__(self) -> str:
        """Compresses runs of identical reprs, as PyTorch: ``(0-2): 3 x Linear(...)``."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        spans = [[0, 0]]
        blocks = [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (start, end), b in zip(spans, blocks):
            local = f"({start}): {b}" if start == end else f"({start}-{end}): " \
                                                          f"{end - start + 1} x {b}"
            lines.append(_addindent(local, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Holds submodules in an ordered dictionary, registered as children under their keys.

    Like ``ModuleList``, it makes the modules part of the owner (parameters, ``to()``,
    ``state_dict()``) and has no ``forward``.  It supports ``d[key]``, assignment,
    ``del``, ``in``, ``len``, iteration over keys, ``keys()``, ``values()``, ``items()``,
    ``update()``, ``pop()`` and ``clear()``.  Insertion order is kept, for a plain
    ``dict`` as well.  Keys must be strings that are valid module names (non-empty, no
    ``"."``, not an existing attribute).

    Args:
        modules (mapping or iterable, optional): a mapping of names to modules (``dict``,
            ``OrderedDict`` or ``ModuleDict``), or an iterable of ``(name, module)`` pairs.
            Default: ``None``.

    Example::

        >>> blocks = nn.ModuleDict({"conv": nn.Conv2d(1, 2, 3), "act": nn.ReLU()})
        >>> list(blocks.keys())
        ['conv', 'act']
        >>> blocks["act"]
        ReLU()
        >>> blocks["conv"](eager.randn(1, 1, 5, 5)).shape
        eager.Size([1, 2, 3, 3])
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str):
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        if hasattr(modules, "items"):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, pair in enumerate(modules):
                if len(pair) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                     f"{len(pair)}; 2 is required")
                self[pair[0]] = pair[1]


# -- parameter containers ----------------------------------------------------------------

def _param_str(p) -> str:
    """``Parameter containing: [eager.float32 of size 2x3]`` for PyTorch's reprs."""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"{kind} containing: [{{}} of size {'x'.join(str(s) for s in p.shape)}]"


def _as_parameter(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """Holds parameters in a list, registered as ``"0"``, ``"1"``, ...

    Tensors added to it are wrapped as ``nn.Parameter`` (``Parameter`` objects are kept
    as they are), so the owning module sees them in ``parameters()``.  Objects that are
    not tensors are stored too, but as plain attributes that are not parameters.  It
    supports indexing, slicing, ``len``, iteration, item assignment, ``append``,
    ``extend`` and ``+=``; unlike ``ModuleList`` it has no ``insert``, ``pop`` or ``del``.
    Calling it raises ``RuntimeError``.

    Args:
        values (iterable, optional): the initial values, in order. Default: ``None``.

    Example::

        >>> params = nn.ParameterList([nn.Parameter(eager.randn(2, 3)), eager.zeros(3)])
        >>> params
        ParameterList(
            (0): Parameter containing: [eager.float32 of size 2x3]
            (1): Parameter containing: [eager.float32 of size 3]
        )
        >>> type(params[1]).__name__
        'Parameter'
        >>> len(list(params.parameters()))
        2
    """

    def __init__(self, values=None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx) -> str:
        return str(_index(idx, len(self), "ParameterList"))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx, param) -> None:
        setattr(self, self._get_abs_string_index(idx), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters) -> Self:
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value) -> ParameterList:
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                lines.append(f"  ({k}): " + _param_str(p).format(p.dtype))
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Holds parameters in an ordered dictionary under string keys.

    Tensors added to it are wrapped as ``nn.Parameter`` (``Parameter`` objects are kept
    as they are), so the owning module sees them in ``parameters()``; other objects are
    stored as plain attributes.  As in PyTorch, the items of a plain ``dict`` (given to
    the constructor or ``update``) are added in sorted key order, while an
    ``OrderedDict``, a ``ParameterDict`` or a sequence of pairs keeps its order.  It
    supports the usual dict operations (``d[key]``, assignment, ``del``, ``in``, ``len``,
    ``keys``, ``values``, ``items``, ``get``, ``pop``, ``popitem``, ``setdefault``,
    ``update``, ``copy``, ``fromkeys``, ``clear`` and ``|``).  Keys must be strings.
    Calling it raises ``RuntimeError``.

    Args:
        parameters (mapping or iterable, optional): a mapping of names to tensors or
            other values, or an iterable of ``(name, value)`` pairs. Default: ``None``.

    Example::

        >>> params = nn.ParameterDict({"w": eager.randn(2, 3), "b": eager.zeros(2)})
        >>> list(params.keys())
        ['b', 'w']
        >>> params
        ParameterDict(
            (b): Parameter containing: [eager.FloatTensor of size 2]
            (w): Parameter containing: [eager.FloatTensor of size 2x3]
        )
        >>> type(params["w"]).__name__
        'Parameter'
    """

    def __init__(self, parameters=None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not "
                            f"a string (type is '{type(key).__name__}'). Open an issue on "
                            "github if you need non-string keys.")
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        attr = self._key_to_attr(key)
        self._keys[key] = None
        setattr(self, attr, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k, _ = self._keys.popitem()
        self._keys[k] = None   # back, so that __delitem__ finds it
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None) -> ParameterDict:
        return ParameterDict(OrderedDict((k, default) for k in keys))

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be "
                                    f"Iterable; is{type(p).__name__}")
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(p)}; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                lines.append(f"  ({k}): " + _param_str(p).format(p.type()))
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> Self:
        self.update(other)
        return self
