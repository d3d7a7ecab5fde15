"""``RMSprop`` (centered and momentum variants) — PyTorch's single-tensor (``foreach=False``)
algorithm, step for step, with its defaults, errors and state (``step`` a 0-d float32
tensor, ``square_avg``, ``momentum_buffer`` when ``momentum > 0``, ``grad_avg`` when
``centered``)."""

from __future__ import annotations

from .. import dtypes as _dt
from ..factories import zeros, zeros_like
from .optimizer import Optimizer, _no_grad_step

__all__ = ["RMSprop"]


def _lerp_(start, end, weight: float):
    """``start.lerp_(end, weight)`` in PyTorch's two-sided form (exact at both ends)."""
    if weight < 0.5:
        return start.add_(end.sub(start).mul_(weight))
    return start.copy_(end.sub(end.sub(start).mul_(1 - weight)))


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes), PyTorch's single-tensor algorithm.

    Keeps a running average of the squared gradient, ``v = alpha * v + (1 - alpha) * g**2``
    (``square_avg``), and moves each parameter by ``lr * g / (sqrt(v) + eps)``.  Centered,
    it subtracts the square of the running average of the gradient (``grad_avg``) from
    ``v`` first (an estimate of the variance); with momentum, ``g / (sqrt(v) + eps)`` goes
    into a momentum buffer (``momentum_buffer``) and the buffer is applied.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): learning rate. Default: ``1e-2``
        alpha (float): decay rate of the running averages. Default: ``0.99``
        eps (float): added to the denominator for numerical stability. Default: ``1e-8``
        weight_decay (float): L2 penalty coefficient, added to the gradient as
            ``weight_decay * p``. Default: ``0``
        momentum (float): momentum factor (0 disables the buffer). Default: ``0``
        centered (bool): normalize by the estimated variance of the gradient instead of
            its second moment. Default: ``False``
        capturable (bool): accepted for compatibility (the step count is not used by the
            update). Default: ``False``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``

    Example::

        >>> model = nn.Linear(3, 1)
        >>> opt = optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5, centered=True)
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
        >>> sorted(opt.state[model.bias])
        ['grad_avg', 'momentum_buffer', 'square_avg', 'step']
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = zeros((), dtype=_dt.float32)
            state["square_avg"] = zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        return state

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            lr, alpha, eps = self._hyper(group, "lr"), group["alpha"], group["eps"]
            weight_decay, momentum = group["weight_decay"], group["momentum"]
            centered, maximize = group["centered"], group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self._init_state(p, group)
                if maximize:
                    grad = grad.neg()
                square_avg = state["square_avg"]
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(p.mul(weight_decay))
                # square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                square_avg.mul_(alpha).add_(grad.mul(1 - alpha).mul_(grad))
                if centered:
                    grad_avg = _lerp_(state["grad_avg"], grad, 1 - alpha)
                    avg = square_avg.sub(grad_avg.mul(grad_avg)).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).add_(grad.div(avg))   # addcdiv_(grad, avg)
                    p.add_(buf.mul(-lr))
                else:
                    p.add_(grad.div(avg).mul_(-lr))          # addcdiv_(grad, avg, -lr)
