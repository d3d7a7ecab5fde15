"""``RAdam`` -- PyTorch's single-tensor (``foreach=False``) algorithm, step for step, with its
defaults, errors and state (``step`` a 0-d float32 tensor, ``exp_avg``, ``exp_avg_sq``).

The step-dependent factors are Python floats read from the step tensor, as PyTorch's default
path computes them, and the rectified update is taken only once the approximated SMA length
``rho_t`` exceeds 5.  While a compiler tracer records (or with ``capturable=True``) the same
formulas run as 0-d float64 tensor ops on the step tensor, and both updates are computed
and one is picked with ``where``: the same values as eager's branch, without baking the
step count (or the branch) into a compiled step.
"""

from __future__ import annotations

from .. import dtypes as _dt
from .._state import STATE
from ..factories import zeros, zeros_like
from ..fn import elementwise as _ew
from .optimizer import Optimizer, _no_grad_step, check_adam_hyperparameters
from .rmsprop import _lerp_

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019), PyTorch's
    single-tensor algorithm.

    While few steps have been taken the variance of the adaptive term is large; RAdam then
    steps with the bias-corrected momentum alone (SGD with momentum).  Once the length of
    the approximated simple moving average ``rho_t`` exceeds 5, the Adam update is used,
    scaled by the variance rectification term.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): learning rate. Default: ``1e-3``
        betas (tuple of 2 floats): decay rates of the running averages of the gradient
            and of its square. Default: ``(0.9, 0.999)``
        eps (float): added to the denominator for numerical stability. Default: ``1e-8``
        weight_decay (float): weight decay coefficient (an L2 penalty added to the
            gradient, or a decoupled decay, see ``decoupled_weight_decay``). Default: ``0``
        decoupled_weight_decay (bool): shrink the parameters by ``1 - lr * weight_decay``
            before the update (AdamW style) instead of adding an L2 term to the gradient.
            Default: ``False``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        capturable (bool): compute the step-dependent factors as 0-d tensor ops on the
            step count instead of Python floats (the same values). Default: ``False``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``

    Example::

        >>> model = nn.Linear(3, 1)
        >>> opt = optim.RAdam(model.parameters(), lr=0.01, decoupled_weight_decay=True,
        ...                   weight_decay=0.01)
        >>> x, y = eager.randn(8, 3), eager.randn(8, 1)
        >>> for _ in range(10):
        ...     opt.zero_grad()
        ...     loss = F.mse_loss(model(x), y)
        ...     loss.backward()
        ...     opt.step()
        >>> opt.state[model.bias]["step"].item()
        10.0
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = zeros((), dtype=_dt.float32)
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
        return state

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            lr = self._hyper(group, "lr")
            beta1, beta2 = group["betas"]
            eps, weight_decay = group["eps"], group["weight_decay"]
            decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
            as_tensor = group["capturable"] or STATE.tracer is not None
            # the maximum length of the approximated SMA
            rho_inf = 2 / (1 - beta2) - 1
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self._init_state(p)
                if maximize:
                    grad = grad.neg()
                exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], \
                    state["step"]
                step_t.add_(1)
                # a Python float, or a 0-d float64 tensor: the formulas below are the same
                step = _ew.cast(step_t, _dt.float64) if as_tensor else step_t.item()
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p.mul(weight_decay))
                _lerp_(exp_avg, grad, 1 - beta1)
                # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                exp_avg_sq.mul_(beta2).add_(grad.mul(1 - beta2).mul_(grad))
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                momentum = exp_avg.div(bias_correction1).mul_(lr)
                # the length of the approximated SMA at this step
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if not as_tensor:
                    if rho_t > 5.0:
                        p.sub_(momentum.mul_(_adaptive_lr(exp_avg_sq, bias_correction2, eps))
                               .mul_(_rectification(rho_t, rho_inf)))
                    else:
                        p.sub_(momentum)
                elif rho_inf <= 5.0:
                    p.sub_(momentum)     # rho_t < rho_inf: never rectified
                else:
                    # (rho_t - 4) * (rho_t - 2) < 0 while 2 < rho_t < 4: that branch is
                    # not taken, but clamp so that its root is no NaN
                    rect = _rectification(rho_t, rho_inf, clamp=True)
                    adapted = momentum.mul(_adaptive_lr(exp_avg_sq, bias_correction2, eps)) \
                        .mul_(rect)
                    p.sub_(_ew.where(_ew.gt(rho_t, 5.0), adapted, momentum))


def _rectification(rho_t, rho_inf: float, clamp: bool = False):
    """The variance rectification term ``r_t`` (a Python float, or a 0-d tensor)."""
    ratio = (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
    if clamp:
        ratio = _ew.clamp_min(ratio, 0.0)
    return ratio ** 0.5


def _adaptive_lr(exp_avg_sq, bias_correction2, eps: float):
    """``sqrt(bias_correction2) / (sqrt(exp_avg_sq) + eps)``."""
    return (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
