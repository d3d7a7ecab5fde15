"""``NAdam`` -- PyTorch's single-tensor (``foreach=False``) algorithm, step for step, with its
defaults, errors and state (``step`` and ``mu_product`` 0-d float32 tensors, ``exp_avg``,
``exp_avg_sq``).

The step-dependent factors (the momentum schedule ``mu``, the bias correction) are Python
floats read from the step tensor, as PyTorch's default path computes them.  While a
compiler tracer records (or with ``capturable=True``) the same formulas run as 0-d float64
tensor ops on the step tensor -- the same IEEE operations, so the same values -- and a
compiled step does not bake the step count in.
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._state import STATE
from ..factories import ones, zeros, zeros_like
from ..fn import elementwise as _ew
from .optimizer import Optimizer, _no_grad_step, check_adam_hyperparameters
from .rmsprop import _lerp_

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam: Adam with Nesterov momentum (Dozat, 2016), PyTorch's single-tensor algorithm.

    Each step the momentum coefficient follows the schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``; the update mixes the
    current gradient (weighted by ``1 - mu_t``) with the running average of gradients
    (weighted by the next step's ``mu_{t+1}``), each divided by the bias-corrected root of
    the running average of squared gradients.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): learning rate. Default: ``2e-3``
        betas (tuple of 2 floats): decay rates of the running averages of the gradient
            and of its square. Default: ``(0.9, 0.999)``
        eps (float): added to the denominator for numerical stability. Default: ``1e-8``
        weight_decay (float): weight decay coefficient (an L2 penalty added to the
            gradient, or a decoupled decay, see ``decoupled_weight_decay``). Default: ``0``
        momentum_decay (float): how fast the momentum schedule ``mu_t`` approaches
            ``beta1``. Default: ``4e-3``
        decoupled_weight_decay (bool): shrink the parameters by ``1 - lr * weight_decay``
            before the update (AdamW style, "NAdamW") instead of adding an L2 term to the
            gradient. Default: ``False``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        capturable (bool): compute the step-dependent factors as 0-d tensor ops on the
            step count instead of Python floats (the same values). Default: ``False``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``

    Example::

        >>> model = nn.Linear(3, 1)
        >>> opt = optim.NAdam(model.parameters(), lr=0.01)
        >>> x, y = eager.randn(8, 3), eager.randn(8, 1)
        >>> for _ in range(3):
        ...     opt.zero_grad()
        ...     loss = F.mse_loss(model(x), y)
        ...     loss.backward()
        ...     opt.step()
        >>> state = opt.state[model.weight]
        >>> sorted(state)
        ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
        >>> state["step"].item()
        3.0
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = zeros((), dtype=_dt.float32)
            state["mu_product"] = ones((), dtype=_dt.float32)
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
        return state

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            lr = self._hyper(group, "lr")
            beta1, beta2 = group["betas"]
            eps, weight_decay = group["eps"], group["weight_decay"]
            momentum_decay = group["momentum_decay"]
            decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
            as_tensor = group["capturable"] or STATE.tracer is not None
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self._init_state(p)
                if maximize:
                    grad = grad.neg()
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                mu_product, step_t = state["mu_product"], state["step"]
                step_t.add_(1)
                # a Python float, or a 0-d float64 tensor: the formulas below are the same
                step = _ew.cast(step_t, _dt.float64) if as_tensor else step_t.item()
                bias_correction2 = 1 - beta2 ** step
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p.mul(weight_decay))
                # the momentum schedule at this step and the next
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                if as_tensor:
                    # a Python float multiplies mu_product in mu_product's dtype: so here
                    mu_product.mul_(_ew.cast(mu, mu_product.dtype))
                    mu_prod = _ew.cast(mu_product, _dt.float64)
                else:
                    mu_product.mul_(mu)
                    mu_prod = mu_product.item()
                _lerp_(exp_avg, grad, 1 - beta1)
                # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                exp_avg_sq.mul_(beta2).add_(grad.mul(1 - beta2).mul_(grad))
                denom = exp_avg_sq.div(bias_correction2).sqrt_().add_(eps)
                mu_product_next = mu_prod * mu_next
                # param.addcdiv_(t, denom, value=v) is param + (v * t) / denom
                p.add_(grad.mul(-lr * (1.0 - mu) / (1.0 - mu_prod)).div_(denom))
                p.add_(exp_avg.mul((-lr * mu_next) / (1.0 - mu_product_next)).div_(denom))
