"""``SGD`` with momentum, dampening, Nesterov, weight decay and maximize — PyTorch's
single-tensor (``foreach=False``) algorithm."""

from __future__ import annotations

from .optimizer import Optimizer, _no_grad_step, required

__all__ = ["SGD"]


class SGD(Optimizer):
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
            for p in group["params"]:
                grad = p.grad
                if grad is None:
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
