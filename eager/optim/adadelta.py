"""``Adadelta`` -- PyTorch's single-tensor (``foreach=False``) algorithm, step for step, with
its defaults (``lr=1.0, rho=0.9, eps=1e-6``), errors and state (``step`` a 0-d float32
tensor, ``square_avg``, ``acc_delta``)."""

from __future__ import annotations

from .. import dtypes as _dt
from ..factories import zeros, zeros_like
from .optimizer import Optimizer, _no_grad_step

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), PyTorch's single-tensor algorithm.

    Keeps running averages of the squared gradient (``square_avg``) and of the squared
    updates (``acc_delta``); each step's update is the gradient scaled by
    ``sqrt(acc_delta + eps) / sqrt(square_avg + eps)``, so its units match the
    parameters' and ``lr`` (1 by default) only rescales it.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): factor applied to the update. Default: ``1.0``
        rho (float): decay rate of the running averages. Default: ``0.9``
        eps (float): added inside the square roots for numerical stability.
            Default: ``1e-6``
        weight_decay (float): L2 penalty coefficient, added to the gradient as
            ``weight_decay * p``. Default: ``0``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        capturable (bool): accepted for compatibility (the step count is not used by the
            update). Default: ``False``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``

    Example::

        >>> model = nn.Linear(3, 1)
        >>> opt = optim.Adadelta(model.parameters())
        >>> x, y = eager.randn(32, 3), eager.randn(32, 1)
        >>> losses = []
        >>> for _ in range(20):
        ...     opt.zero_grad()
        ...     loss = F.mse_loss(model(x), y)
        ...     loss.backward()
        ...     opt.step()
        ...     losses.append(loss.item())
        >>> losses[-1] < losses[0]
        True
        >>> sorted(opt.state[model.weight])
        ['acc_delta', 'square_avg', 'step']
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
