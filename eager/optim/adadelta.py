"""``Adadelta`` -- PyTorch's single-tensor (``foreach=False``) algorithm, step for step, with
its defaults (``lr=1.0, rho=0.9, eps=1e-6``), errors and state (``step`` a 0-d float32
tensor, ``square_avg``, ``acc_delta``)."""

from __future__ import annotations

from .. import dtypes as _dt
from ..factories import zeros, zeros_like
from .optimizer import Optimizer, _no_grad_step

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012).

    Args:
        params (iterable): parameters or parameter groups to optimize.
        lr (float): scale of the update. Default: 1.0.
        rho (float): decay of the running averages. Default: 0.9.
        eps (float): added inside the square roots. Default: 1e-6.
        weight_decay (float): L2 penalty. Default: 0.
        maximize (bool): ascend instead of descend. Default: False.

    Example::

        >>> opt = eager.optim.Adadelta(model.parameters())
        >>> loss_fn(model(x), y).backward(); opt.step(); opt.zero_grad()
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = zeros((), dtype=_dt.float32)
            state["square_avg"] = zeros_like(p)
            state["acc_delta"] = zeros_like(p)
        return state

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            lr, rho, eps = self._hyper(group, "lr"), group["rho"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self._init_state(p)
                state["step"].add_(1)
                if maximize:
                    grad = grad.neg()
                if weight_decay != 0:
                    grad = grad.add(p.mul(weight_decay))
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).add_(grad.mul(1 - rho).mul_(grad))
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                acc_delta.mul_(rho).add_(delta.mul(1 - rho).mul_(delta))
                p.add_(delta.mul(-lr))
