"""``Adagrad`` — PyTorch's single-tensor (``foreach=False``) algorithm, step for step, with
its defaults, errors and state (made for every parameter at construction: ``step`` a 0-d
float32 tensor, ``sum`` filled with ``initial_accumulator_value``).

With ``lr_decay`` the step size depends on the step count: read from the step tensor
eagerly, computed with tensor ops while a compiler tracer records (so a compiled step
does not bake the count in)."""

from __future__ import annotations

from .. import dtypes as _dt
from .._state import STATE
from ..factories import full_like, tensor
from ..fn import elementwise as _ew
from .optimizer import Optimizer, _no_grad_step

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011), PyTorch's single-tensor algorithm.

    Each parameter element accumulates the sum of its squared gradients (``sum``, made at
    construction) and moves by ``clr * g / (sqrt(sum) + eps)``, where the step size
    ``clr = lr / (1 + (t - 1) * lr_decay)`` decays with the step count ``t``: elements
    with large past gradients take smaller steps.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): learning rate. Default: ``1e-2``
        lr_decay (float): decay of the step size with the step count. Default: ``0``
        weight_decay (float): L2 penalty coefficient, added to the gradient as
            ``weight_decay * p``. Default: ``0``
        initial_accumulator_value (float): the value ``sum`` starts from. Default: ``0``
        eps (float): added to the denominator for numerical stability. Default: ``1e-10``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``
        fused (bool, optional): not supported: ``fused=True`` raises ``RuntimeError``.
            Default: ``None``

    Example::

        >>> w = nn.Parameter(eager.tensor([1.0, -2.0]))
        >>> opt = optim.Adagrad([w], lr=0.5, initial_accumulator_value=0.1)
        >>> opt.state[w]["sum"]      # the state exists before the first step
        tensor([0.1000, 0.1000])
        >>> for _ in range(3):
        ...     opt.zero_grad()
        ...     (w ** 2).sum().backward()
        ...     opt.step()
        >>> opt.state[w]["step"].item()
        3.0
        >>> bool((w.detach().abs() < eager.tensor([1.0, 2.0])).all())
        True
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if fused:
            raise RuntimeError("Adagrad: fused=True is not supported by eager")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = tensor(0.0, dtype=_dt.float32)
            state["sum"] = full_like(p, self.defaults["initial_accumulator_value"])
        return state

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            lr, lr_decay, eps = self._hyper(group, "lr"), group["lr_decay"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self._init_state(p)
                step_t, state_sum = state["step"], state["sum"]
                step_t.add_(1)
                if maximize:
                    grad = grad.neg()
                if weight_decay != 0:
                    grad = grad.add(p.mul(weight_decay))
                # clr = lr / (1 + (step - 1) * lr_decay); negated for the update
                if lr_decay == 0:
                    neg_clr = -lr
                elif STATE.tracer is not None:
                    step64 = _ew.cast(step_t, _dt.float64)
                    neg_clr = _ew.div(-lr, _ew.add(_ew.mul(_ew.sub(step64, 1), lr_decay), 1))
                else:
                    neg_clr = -(lr / (1 + (step_t.item() - 1) * lr_decay))
                state_sum.add_(grad.mul(grad))            # addcmul_(grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                p.add_(grad.div(std).mul_(neg_clr))       # addcdiv_(grad, std, value=-clr)
