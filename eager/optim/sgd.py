"""``SGD`` with momentum, dampening, Nesterov, weight decay and maximize — PyTorch's
single-tensor (``foreach=False``) algorithm."""

from __future__ import annotations

import numpy as np

from .._state import STATE
from .adam import _FLOATS, _bump
from .optimizer import Optimizer, _no_grad_step, required

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum, PyTorch's single-tensor
    algorithm.

    With momentum, the buffer starts as the first gradient and then follows
    ``b = momentum * b + (1 - dampening) * g``; the parameters move by ``-lr * b``, or by
    ``-lr * (g + momentum * b)`` with Nesterov momentum.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): learning rate. Default: ``1e-3``
        momentum (float): momentum factor (0 disables the buffer). Default: ``0``
        dampening (float): scales down the gradient added to the momentum buffer by
            ``1 - dampening``. Default: ``0``
        weight_decay (float): L2 penalty coefficient, added to the gradient as
            ``weight_decay * p``. Default: ``0``
        nesterov (bool): use Nesterov momentum (needs ``momentum > 0`` and zero
            ``dampening``). Default: ``False``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``
        fused (bool, optional): not supported: ``fused=True`` raises ``RuntimeError``.
            Default: ``None``

    Example::

        >>> model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        >>> opt = optim.SGD([{"params": model[0].parameters()},
        ...                  {"params": model[2].parameters(), "lr": 0.01}],
        ...                 lr=0.1, momentum=0.9)
        >>> [group["lr"] for group in opt.param_groups]
        [0.1, 0.01]
        >>> x, y = eager.randn(16, 3), eager.randn(16, 1)
        >>> losses = []
        >>> for _ in range(10):
        ...     opt.zero_grad()
        ...     loss = F.mse_loss(model(x), y)
        ...     loss.backward()
        ...     opt.step()
        ...     losses.append(loss.item())
        >>> losses[-1] < losses[0]
        True
        >>> sorted(opt.state[model[0].weight])
        ['momentum_buffer']
    """
    def __init__(self, params, lr=1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if fused:
            raise RuntimeError("SGD: fused=True is not supported by eager")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                        "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                        "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            lr = self._hyper(group, "lr")
            momentum = group["momentum"]
            dampening = group["dampening"]
            weight_decay = group["weight_decay"]
            nesterov = group["nesterov"]
            maximize = group["maximize"]
            plain = STATE.tracer is None and type(lr) in (float, int)
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if plain and _numpy_step(p, grad, self.state, lr, momentum, dampening,
                                         weight_decay, nesterov, maximize):
                    continue
                if maximize:
                    grad = grad.neg()
                if weight_decay != 0:
                    grad = grad.add(p.mul(weight_decay))
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = grad.detach().clone()
                        state["momentum_buffer"] = buf
                    else:
                        buf.mul_(momentum)
                        buf.add_(grad if dampening == 0 else grad.mul(1 - dampening))
                    if nesterov:
                        grad = grad.add(buf.mul(momentum))
                    else:
                        grad = buf
                p.add_(grad.mul(-lr))


def _numpy_step(p, grad, state, lr, momentum, dampening, weight_decay, nesterov,
                maximize) -> bool:
    """The step above on the arrays themselves, when the parameter, its gradient and its
    momentum buffer are float32/float64 NumPy arrays of one dtype: the same operations in
    the same order (the same values), without a Tensor and a dispatch per operation.
    False when it does not apply, or at the first momentum step (the buffer is made by
    the tensor code)."""
    P, G = p._data, grad._data
    if type(P) is not np.ndarray or type(G) is not np.ndarray or P.dtype not in _FLOATS \
            or G.dtype != P.dtype or G.shape != P.shape or not P.flags.writeable:
        return False
    buf = None
    if momentum != 0:
        st = state.get(p)
        buf = None if st is None else st.get("momentum_buffer")
        if buf is None or type(buf._data) is not np.ndarray or buf._data.dtype != P.dtype:
            return False
    if maximize:
        G = np.negative(G)
    if weight_decay != 0:
        G = np.add(G, np.multiply(P, weight_decay))
    if buf is not None:
        B = buf._data
        np.multiply(B, momentum, out=B)
        np.add(B, G if dampening == 0 else np.multiply(G, 1 - dampening), out=B)
        _bump(buf, 2)
        G = np.add(G, np.multiply(B, momentum)) if nesterov else B
    np.add(P, np.multiply(G, -lr), out=P)
    _bump(p)
    return True
