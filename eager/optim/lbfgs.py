"""``LBFGS`` -- PyTorch's L-BFGS (``torch.optim.LBFGS``), step for step: the same two-loop
recursion over the same history, the same first step size, the same termination tests and
the same optional strong-Wolfe line search (``line_search_fn="strong_wolfe"``, cubic
interpolation, bracketing and zoom phases as ``torch.optim.lbfgs._strong_wolfe``).

Scalars the algorithm computes from tensors (``ys``, ``H_diag``, ``ro``, the first ``t``,
``gtd``) stay 0-d tensors of the parameters' dtype, as PyTorch's do, so float32 problems
round as PyTorch's float32 does."""

from __future__ import annotations

from ..autograd.grad_mode import enable_grad, no_grad
from ..factories import zeros
from ..fn.shape import cat
from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    # the minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """PyTorch's strong-Wolfe line search (after minFunc): returns
    ``(f_new, g_new, t, ls_func_evals)``."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        # bracketing phase
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:   # reached the maximum number of iterations
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase: a point satisfying the criteria, or the bracket too small
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # test that we are making sufficient progress
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos] = t
            bracket_f[high_pos] = f_new
            bracket_g[high_pos] = g_new.clone()
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos] = t
            bracket_f[low_pos] = f_new
            bracket_g[low_pos] = g_new.clone()
            bracket_gtd[low_pos] = gtd_new

    t = bracket[low_pos]
    return bracket_f[low_pos], bracket_g[low_pos], t, ls_func_evals


class LBFGS(Optimizer):
    """L-BFGS, PyTorch's algorithm (after minFunc), step for step.

    A quasi-Newton method: it approximates the inverse Hessian from the last
    ``history_size`` pairs of parameter and gradient changes.  Each :meth:`step` runs up
    to ``max_iter`` iterations and calls ``closure`` (which clears the gradients, computes
    the loss, calls ``backward()`` and returns the loss) as often as it needs.  It takes
    a single parameter group, and keeps its state (the history included) on the first
    parameter.

    Args:
        params (iterable): parameters to optimize (a single group).
        lr (float or Tensor): step length of an iteration (the line search's first trial
            with ``line_search_fn``). Default: ``1``
        max_iter (int): iterations per :meth:`step`. Default: ``20``
        max_eval (int, optional): calls of ``closure`` per :meth:`step`; ``None`` means
            ``max_iter * 5 // 4``. Default: ``None``
        tolerance_grad (float): stop once the largest absolute gradient entry is at most
            this. Default: ``1e-7``
        tolerance_change (float): stop once the loss or the parameters change by less than
            this in an iteration. Default: ``1e-9``
        history_size (int): number of past update pairs kept. Default: ``100``
        line_search_fn (str, optional): ``"strong_wolfe"`` for a line search satisfying
            the strong Wolfe conditions, or ``None`` for fixed steps of length ``lr``.
            Default: ``None``

    Example::

        >>> model = nn.Linear(3, 1)
        >>> x = eager.randn(16, 3)
        >>> y = x @ eager.tensor([[1.0], [-2.0], [0.5]]) + 0.3
        >>> opt = optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = F.mse_loss(model(x), y)
        ...     loss.backward()
        ...     return loss
        >>> first_loss = opt.step(closure)   # the loss before this step's iterations
        >>> F.mse_loss(model(x), y).item() < 1e-8
        True
        >>> round(model.bias.item(), 4)
        0.3
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval=None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        views = []
        for p in self._params:
            if p.grad is None:
                views.append(zeros(p.numel(), dtype=p.dtype))
            else:
                views.append(p.grad.reshape(-1))
        return cat(views, 0)

    def _add_grad(self, step_size, update) -> None:
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=step_size)
            offset += numel
        assert offset == self._numel()

    def _clone_param(self):
        return [p.clone() for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, pdata in zip(self._params, params_data):
            p.copy_(pdata)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations.

        Args:
            closure (Callable): re-evaluates the model and returns the loss (it runs with
                gradients enabled, and must call ``backward()``).

        Returns:
            The loss of the first ``closure()`` call of this step.
        """
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        assert len(self.param_groups) == 1
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr = group["lr"]
        lr = float(lr) if isinstance(lr, Tensor) else lr
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # the state is kept on the first parameter (as PyTorch, for state_dict)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        opt_cond = flat_grad.abs().max() <= tolerance_grad
        if opt_cond:   # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the descent direction
            d, old_dirs, old_stps, ro, H_diag = _direction(
                state, flat_grad, prev_flat_grad, d, t, old_dirs, old_stps, ro, H_diag,
                history_size)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the step size
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr

            gtd = flat_grad.dot(d)   # directional derivative
            if gtd > -tolerance_change:
                break

            loss, flat_grad, t, ls_func_evals, opt_cond = self._line_step(
                closure, line_search_fn, loss, flat_grad, t, d, gtd, max_eval, current_evals,
                tolerance_grad, n_iter != max_iter, opt_cond)
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # the conditions
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:   # lack of progress
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_stps, ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return orig_loss

    def _line_step(self, closure, line_search_fn, loss, flat_grad, t, d, gtd, max_eval,
                   current_evals, tolerance_grad, evaluate, opt_cond):
        """Move along ``d``; ``(loss, flat_grad, t, evaluations, opt_cond)`` after the step."""
        ls_func_evals = 0
        if line_search_fn is not None:
            if line_search_fn != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = self._clone_param()

            def obj_func(x, t, d):
                return self._directional_evaluate(closure, x, t, d)

            loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                obj_func, x_init, t, d, loss, flat_grad, gtd,
                max_ls=max_eval - current_evals)
            self._add_grad(t, d)
            opt_cond = flat_grad.abs().max() <= tolerance_grad
        else:
            # a fixed step
            self._add_grad(t, d)
            if evaluate:
                # re-evaluate (not on the last iteration: the next step() does)
                with enable_grad():
                    loss = closure()
                loss = float(loss)
                flat_grad = self._gather_flat_grad()
                opt_cond = flat_grad.abs().max() <= tolerance_grad
                ls_func_evals = 1
        return loss, flat_grad, t, ls_func_evals, opt_cond


def _direction(state, flat_grad, prev_flat_grad, d, t, old_dirs, old_stps, ro, H_diag,
               history_size):
    """The descent direction (two-loop recursion) and the updated history and scale."""
    if state["n_iter"] == 1:
        return flat_grad.neg(), [], [], [], 1
    # the L-BFGS update (memory kept as lists)
    y = flat_grad.sub(prev_flat_grad)
    s = d.mul(t)
    ys = y.dot(s)
    if ys > 1e-10:
        if len(old_dirs) == history_size:   # shift the history
            old_dirs.pop(0)
            old_stps.pop(0)
            ro.pop(0)
        old_dirs.append(y)
        old_stps.append(s)
        ro.append(1.0 / ys)
        H_diag = ys / y.dot(y)   # an initial Hessian scale
    num_old = len(old_dirs)
    if "al" not in state:
        state["al"] = [None] * history_size
    al = state["al"]
    # the two-loop recursion
    q = flat_grad.neg()
    for i in range(num_old - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q.add_(old_dirs[i], alpha=-al[i])
    d = r = q.mul(H_diag)
    for i in range(num_old):
        be_i = old_dirs[i].dot(r) * ro[i]
        r.add_(old_stps[i], alpha=al[i] - be_i)
    return d, old_dirs, old_stps, ro, H_diag
