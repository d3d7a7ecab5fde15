"""``eager.autograd.Function``: custom ops with a user-written forward and backward."""

from __future__ import annotations

import numpy as np

from .. import dispatch as _dispatch  # a module: dispatch imports autograd.node
from .._state import STATE
from ..ops.base import Op
from ..tensor import Tensor
from .grad_mode import no_grad
from .node import Node


class FunctionCtx:
    """The ``ctx`` passed to a custom Function's forward and backward."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()
        self._non_differentiable = ()

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        pass


class _CustomOp(Op):
    abstract = True
    name = "custom_function"

    def backward(F, g, saved, node):
        fn, ctx = node.params["function"], node.params["ctx"]
        as_tensors = F is _dispatch.T
        gt = g if as_tensors else Tensor._make(np.asarray(g))
        grads = fn.backward(ctx, gt)
        if not isinstance(grads, tuple):
            grads = (grads,)
        n_args = len(node.next)
        if len(grads) != n_args:
            raise RuntimeError(f"function {fn.__name__}Backward returned an incorrect number of "
                               f"gradients (expected {n_args}, got {len(grads)})")
        out = []
        for gi in grads:
            if gi is None:
                out.append(None)
            elif as_tensors:
                out.append(gi)
            else:
                out.append(gi._data if isinstance(gi, Tensor) else np.asarray(gi))
        return tuple(out)


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``.apply(*args)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        if STATE.tracer is not None:
            STATE.tracer.on_unsupported(f"custom autograd.Function {cls.__name__}")
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args)
        if isinstance(out, tuple):
            raise NotImplementedError(f"{cls.__name__}.forward returned a tuple: custom "
                                      "Functions with several outputs are not supported yet")
        if not isinstance(out, Tensor):
            raise TypeError(f"{cls.__name__}.forward must return a Tensor, got "
                            f"{type(out).__name__}")
        if STATE.grad_enabled and any(ctx.needs_input_grad) and \
                out not in ctx._non_differentiable:
            op = type(cls.__name__, (_CustomOp,),
                      {"abstract": True, "grad_name": cls.__name__})
            res = Tensor._make(out._data, True)
            res.grad_fn = Node(op, args, {"function": cls, "ctx": ctx}, res)
            return res
        return out
