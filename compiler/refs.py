"""References to the tensors a replay touches, resolved anew at each call: an argument of
the call (:class:`ArgTensor`, by its index among the call's tensors), a tensor the trace
holds on to (:class:`HeldTensor`: a lifted global, a parameter read from a closure), or
the current ``.grad`` of one of those (:class:`GradTensor`).  Write-backs, ``.grad``
writes, the inputs of compiled backward nodes and the ``.grad`` guards all name tensors
through these; :mod:`compiler.pystate.sources` does the same for Python values."""

from __future__ import annotations


class TensorRef:
    __slots__ = ()

    def resolve(self, tensors):
        """The tensor named, for a call whose tensors (flattened arguments) are ``tensors``."""
        raise NotImplementedError

    def ident(self) -> tuple:
        """A hashable identity: equal for references to the same tensor."""
        raise NotImplementedError

    def expr(self, env: dict, name: str) -> str:
        """Python source reading the tensor in a generated guard function (whose
        parameter is ``tensors``), binding a held object in ``env`` under ``name``."""
        raise NotImplementedError

    def describe(self, argnames=None) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


class ArgTensor(TensorRef):
    """The ``index``-th tensor among the call's (flattened) arguments."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def resolve(self, tensors):
        return tensors[self.index]

    def ident(self):
        return ("arg", self.index)

    def expr(self, env, name):
        return f"tensors[{self.index}]"

    def describe(self, argnames=None):
        if argnames and self.index < len(argnames):
            return f"argument {argnames[self.index]}"
        return f"argument tensor {self.index}"


class HeldTensor(TensorRef):
    """A tensor the trace holds on to (read from a global, a closure or a module)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def resolve(self, tensors):
        return self.tensor

    def ident(self):
        return ("obj", id(self.tensor))

    def expr(self, env, name):
        env[name] = self.tensor
        return name

    def describe(self, argnames=None):
        return f"lifted tensor {list(self.tensor._data.shape)}"


class GradTensor(TensorRef):
    """The current ``.grad`` of the tensor ``of`` names (a write-back target)."""

    __slots__ = ("of",)

    def __init__(self, of: TensorRef):
        self.of = of

    def resolve(self, tensors):
        return self.of.resolve(tensors)._grad

    def ident(self):
        return ("grad", self.of.ident())

    def expr(self, env, name):
        return f"{self.of.expr(env, name)}._grad"

    def describe(self, argnames=None):
        return f".grad of {self.of.describe(argnames)}"
