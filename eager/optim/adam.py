"""``Adam`` and ``AdamW`` (amsgrad optional) — PyTorch's single-tensor (``foreach=False``)
algorithm, step for step.

``state["step"]`` is a 0-d float32 tensor, as PyTorch.  Outside a compiler trace the bias
corrections are Python floats computed from its value (PyTorch's default path).  While a
tracer records, the same formulas run as 0-d float64 tensor ops on the step tensor (the
same IEEE operations as the Python floats: ``pow`` of 0-d values is C's ``pow``, as
Python's ``**``), so a compiled step does not bake the count in and computes eager's
bits.  ``capturable=True`` takes PyTorch's capturable formulas (in float64), which round
differently.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from .._state import STATE
from ..factories import zeros, zeros_like
from ..fn import elementwise as _ew
from ..inplace import inplace
from .optimizer import Optimizer, _no_grad_step, check_adam_hyperparameters

__all__ = ["Adam", "AdamW"]

_ndarray = np.ndarray


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014), PyTorch's single-tensor algorithm step for step.

    Keeps running averages of the gradient (``exp_avg``) and of its square
    (``exp_avg_sq``), corrects both for their zero start, and moves each parameter by
    ``lr * m_hat / (sqrt(v_hat) + eps)``.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): learning rate. Default: ``1e-3``
        betas (tuple of 2 floats): decay rates of the running averages of the gradient
            and of its square. Default: ``(0.9, 0.999)``
        eps (float): added to the denominator for numerical stability. Default: ``1e-8``
        weight_decay (float): weight decay coefficient (an L2 penalty added to the
            gradient, or a decoupled decay, see ``decoupled_weight_decay``). Default: ``0``
        amsgrad (bool): the AMSGrad variant: divide by the largest ``exp_avg_sq`` seen so
            far (kept in ``max_exp_avg_sq``). Default: ``False``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        capturable (bool): keep the step count a tensor and use PyTorch's capturable
            formulas (the same update, rounded differently). Default: ``False``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``
        fused (bool, optional): not supported: ``fused=True`` raises ``RuntimeError``.
            Default: ``None``
        decoupled_weight_decay (bool): shrink the parameters by ``1 - lr * weight_decay``
            before the update (that is, :class:`AdamW`) instead of adding an L2 term to the
            gradient. Default: ``False``

    Example::

        >>> model = nn.Linear(3, 1)
        >>> opt = optim.Adam(model.parameters(), lr=0.05)
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
        >>> state = opt.state[model.weight]
        >>> sorted(state), state["step"].item()
        (['exp_avg', 'exp_avg_sq', 'step'], 20.0)
    """
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False):
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        if fused:
            raise RuntimeError(f"{type(self).__name__}: fused=True is not supported by eager")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                        "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                        "capturable": capturable, "differentiable": differentiable, "fused": fused,
                        "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _init_state(self, p, group) -> dict:
        state = self.state[p]
        if not state:
            state["step"] = zeros((), dtype=_dt.float32)
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like(p)
        return state

    @_no_grad_step
    def step(self):
        for group in self.param_groups:
            lr = self._hyper(group, "lr")
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            amsgrad = group["amsgrad"]
            maximize = group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            capturable = group["capturable"]
            traced = STATE.tracer is not None
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self._init_state(p, group)
                if not capturable and not traced and _numpy_step(
                        p, grad, state, lr, beta1, beta2, eps, weight_decay, decoupled,
                        amsgrad, maximize):
                    continue
                if maximize:
                    grad = grad.neg()
                exp_avg = state["exp_avg"]
                exp_avg_sq = state["exp_avg_sq"]
                step_t = state["step"]
                step_t.add_(1)
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p.mul(weight_decay))
                # exp_avg.lerp_(grad, 1 - beta1), in lerp's own form for weight < 0.5
                exp_avg.add_(grad.sub(exp_avg).mul_(1 - beta1))
                # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                exp_avg_sq.mul_(beta2).add_(grad.mul(1 - beta2).mul_(grad))
                if amsgrad:
                    mx = state["max_exp_avg_sq"]
                    _write(mx, _ew.maximum(mx, exp_avg_sq))   # max_exp_avg_sq.copy_(...)
                    second = mx
                else:
                    second = exp_avg_sq
                if capturable:
                    # PyTorch's capturable formulas: the step count stays a tensor.  The
                    # bias corrections are taken in float64 (0-d, so they do not promote
                    # the parameter's dtype): 1 - beta2**step cancels badly in float32.
                    step64 = _ew.cast(step_t, _dt.float64)
                    bc1 = _ew.sub(1, _ew.pow(beta1, step64))
                    bc2_sqrt = _ew.sqrt(_ew.sub(1, _ew.pow(beta2, step64)))
                    step_size_neg = _ew.neg(_ew.div(lr, bc1))
                    denom = second.sqrt().div(bc2_sqrt.mul(step_size_neg))
                    denom.add_(_ew.div(eps, step_size_neg))
                    p.add_(exp_avg.div(denom))
                else:
                    if traced:
                        # the Python-float formulas below as 0-d float64 ops on the step
                        # tensor: the same IEEE operations, so the same bits
                        step = _ew.cast(step_t, _dt.float64)
                        step_size = _ew.div(lr, _ew.sub(1, _ew.pow(beta1, step)))
                        bc2_sqrt = _ew.sqrt(_ew.sub(1, _ew.pow(beta2, step)))
                        neg_step_size = _ew.neg(step_size)
                    else:
                        step = step_t.item()
                        step_size = lr / (1 - beta1 ** step)
                        bc2_sqrt = math.sqrt(1 - beta2 ** step)
                        neg_step_size = -step_size
                    denom = second.sqrt().div(bc2_sqrt)
                    denom.add_(eps)
                    # param.addcdiv_(exp_avg, denom, value=-step_size)
                    p.add_(exp_avg.div(denom).mul_(neg_step_size))


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _numpy_step(p, grad, state, lr, beta1, beta2, eps, weight_decay, decoupled, amsgrad,
                maximize) -> bool:
    """The step below on the arrays themselves, when every tensor is a float32/float64
    NumPy array of one dtype and nothing records: the same operations in the same order
    (so the same values), without a Tensor and a dispatch per operation.  False when it
    does not apply (the tensor code then runs)."""
    if type(lr) is not float and type(lr) is not int:
        return False
    P, G = p._data, grad._data
    M, V = state["exp_avg"]._data, state["exp_avg_sq"]._data
    S = state["step"]._data
    if type(P) is not _ndarray or type(G) is not _ndarray or P.dtype not in _FLOATS or \
            G.dtype != P.dtype or M.dtype != P.dtype or V.dtype != P.dtype or \
            G.shape != P.shape or type(S) is not _ndarray or not P.flags.writeable:
        return False
    X = None
    if amsgrad:
        X = state["max_exp_avg_sq"]._data
        if type(X) is not _ndarray or X.dtype != P.dtype:
            return False
    if maximize:
        G = np.negative(G)
    np.add(S, 1, out=S)
    _bump(state["step"])
    if weight_decay != 0:
        if decoupled:
            np.multiply(P, 1 - lr * weight_decay, out=P)
            _bump(p)
        else:
            G = np.add(G, np.multiply(P, weight_decay))
    t = np.subtract(G, M)
    np.multiply(t, 1 - beta1, out=t)
    np.add(M, t, out=M)
    _bump(state["exp_avg"])
    np.multiply(V, beta2, out=V)
    np.multiply(G, 1 - beta2, out=t)
    np.multiply(t, G, out=t)
    np.add(V, t, out=V)
    _bump(state["exp_avg_sq"], 2)
    second = V
    if X is not None:
        np.maximum(X, V, out=X)
        _bump(state["max_exp_avg_sq"])
        second = X
    step = float(S)
    step_size = lr / (1 - beta1 ** step)
    bc2_sqrt = math.sqrt(1 - beta2 ** step)
    np.sqrt(second, out=t)
    np.divide(t, bc2_sqrt, out=t)
    np.add(t, eps, out=t)
    np.divide(M, t, out=t)
    np.multiply(t, -step_size, out=t)
    np.add(P, t, out=P)
    _bump(p)
    return True


def _bump(t, n: int = 1) -> None:
    v = t._version
    v[0] += n
    v[1] = "add_"


def _write(dst, value):
    inplace(dst, value, "copy_")


class AdamW(Adam):
    """AdamW: Adam with decoupled weight decay (Loshchilov & Hutter, 2019), PyTorch's
    single-tensor algorithm.

    Each step first shrinks the parameters by ``1 - lr * weight_decay``, then applies the
    Adam update to the gradient as it is (no L2 term is added to it): ``Adam`` with
    ``decoupled_weight_decay=True`` and a nonzero default decay.

    Args:
        params (iterable): parameters, or dicts defining parameter groups, to optimize.
        lr (float or Tensor): learning rate. Default: ``1e-3``
        betas (tuple of 2 floats): decay rates of the running averages of the gradient
            and of its square. Default: ``(0.9, 0.999)``
        eps (float): added to the denominator for numerical stability. Default: ``1e-8``
        weight_decay (float): decoupled weight decay coefficient. Default: ``1e-2``
        amsgrad (bool): the AMSGrad variant: divide by the largest ``exp_avg_sq`` seen so
            far. Default: ``False``
        maximize (bool): maximize the objective instead of minimizing it. Default: ``False``
        foreach (bool, optional): accepted for compatibility; eager always runs the
            single-tensor algorithm. Default: ``None``
        capturable (bool): keep the step count a tensor and use PyTorch's capturable
            formulas (the same update, rounded differently). Default: ``False``
        differentiable (bool): accepted for compatibility; steps always run under
            ``no_grad``. Default: ``False``
        fused (bool, optional): not supported: ``fused=True`` raises ``RuntimeError``.
            Default: ``None``

    Example::

        >>> w = nn.Parameter(eager.ones(2))
        >>> opt = optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> w.grad = eager.zeros(2)    # no gradient: only the decay moves w
        >>> opt.step()
        >>> w.detach()
        tensor([0.9500, 0.9500])
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
