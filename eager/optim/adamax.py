"""``Adamax`` -- PyTorch's single-tensor (``foreach=False``) algorithm, step for step, with its
defaults, errors and state (``step`` a 0-d float32 tensor, ``exp_avg``, ``exp_inf``).

The bias correction is a Python float read from the step tensor, as PyTorch's default path
computes it.  While a compiler tracer records (or with ``capturable=True``) the same formula
runs as 0-d float64 tensor ops on the step tensor (the same values), so a compiled step
does not bake the step count in.
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._state import STATE
from ..factories import zeros, zeros_like
from ..fn import elementwise as _ew
from .optimizer import Optimizer, _no_grad_step, check_adam_hyperparameters
from .rmsprop import _lerp_

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax: the infinity-norm variant of Adam (Kingma & Ba, 2014), PyTorch's single-tensor
    algorithm.

    The second moment of Adam is replaced by an exponentially weighted infinity norm,
    ``u_t = max(beta2 * u_{t-1}, |g_t| + eps)``; the parameters move by
    ``lr / (1 - beta1 ** t) * m_t / u_t``.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): learning rate. Default: ``2e-3``
        betas (tuple of 2 floats): decay rates of the running average of the gradient and
            of the infinity norm. Default: ``(0.9, 0.999)``
        eps (float): added to ``|g_t|`` inside the infinity norm, so that it is never
            zero. Default: ``1e-8``
        weight_decay (float): L2 penalty added to the gradient. Default: ``0``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``
        capturable (bool): compute the bias correction as 0-d tensor ops on the step count
            instead of a Python float (the same value). Default: ``False``

    Example::

        >>> w = nn.Parameter(eager.tensor([1.0, -2.0]))
        >>> opt = optim.Adamax([w], lr=0.1)
        >>> for _ in range(3):
        ...     opt.zero_grad()
        ...     (w ** 2).sum().backward()
        ...     opt.step()
        >>> w.detach()
        tensor([ 0.7155, -1.7076])
        >>> opt.state[w]["exp_inf"]     # the first (largest) |gradient|, decayed twice
        tensor([1.9960, 3.9920])
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = zeros((), dtype=_dt.float32)
            state["exp_avg"] = zeros_like(p)
            state["exp_inf"] = zeros_like(p)
        return state

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            lr = self._hyper(group, "lr")
            beta1, beta2 = group["betas"]
            eps, weight_decay = group["eps"], group["weight_decay"]
            maximize = group["maximize"]
            as_tensor = group["capturable"] or STATE.tracer is not None
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self._init_state(p)
                if maximize:
                    grad = grad.neg()
                exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
                step_t.add_(1)
                if weight_decay != 0:
                    grad = grad.add(p.mul(weight_decay))
                _lerp_(exp_avg, grad, 1 - beta1)
                # the exponentially weighted infinity norm
                exp_inf.mul_(beta2)
                exp_inf.copy_(_ew.maximum(exp_inf, grad.abs().add_(eps)))
                step = _ew.cast(step_t, _dt.float64) if as_tensor else step_t.item()
                clr = lr / (1 - beta1 ** step)
                # param.addcdiv_(exp_avg, exp_inf, value=-clr)
                p.add_(exp_avg.mul(-clr).div_(exp_inf))
