"""Schedulers beyond a formula of the epoch: ``OneCycleLR`` (also cycles momentum),
``SequentialLR`` and ``ChainedScheduler`` (made of other schedulers) and
``ReduceLROnPlateau`` (driven by a metric).  Exported by ``eager.optim.lr_scheduler``."""

from __future__ import annotations

import math
import warnings
from bisect import bisect_right

from .lr_base import EPOCH_DEPRECATION_WARNING, LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = ["ChainedScheduler", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR"]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2018), stepped after every batch: the learning rate
    rises from ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start`` of
    ``total_steps``, then anneals down to ``max_lr / div_factor / final_div_factor``
    (``three_phase``: first back to the starting lr, then down).  With ``cycle_momentum``,
    the momentum (or Adam's ``beta1``) moves the opposite way between ``max_momentum`` and
    ``base_momentum``.  Stepping past ``total_steps`` raises ``ValueError``.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        max_lr (float or list of floats): the peak learning rate, or one per group.
        total_steps (int, optional): the length of the cycle; if ``None``,
            ``epochs * steps_per_epoch``. Default: ``None``
        epochs (int, optional): the number of epochs, with ``steps_per_epoch``.
            Default: ``None``
        steps_per_epoch (int, optional): the number of steps per epoch, with ``epochs``.
            Default: ``None``
        pct_start (float): the fraction of the cycle spent raising the lr. Default: ``0.3``
        anneal_strategy (str): ``"cos"`` for cosine annealing, ``"linear"`` for linear.
            Default: ``"cos"``
        cycle_momentum (bool): cycle the momentum inversely to the lr (the optimizer needs a
            ``momentum`` or ``betas`` hyperparameter). Default: ``True``
        base_momentum (float or list of floats): the lowest momentum, reached with the peak
            lr. Default: ``0.85``
        max_momentum (float or list of floats): the highest momentum, at the start and the
            end of the cycle. Default: ``0.95``
        div_factor (float): the starting lr is ``max_lr / div_factor``. Default: ``25.0``
        final_div_factor (float): the final lr is the starting lr divided by this.
            Default: ``1e4``
        three_phase (bool): go back down to the starting lr before the final annealing.
            Default: ``False``
        last_epoch (int): the index of the last batch when resuming a schedule.
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1, momentum=0.9)
        >>> sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=6)
        >>> for batch in range(6):
        ...     group = opt.param_groups[0]
        ...     print(round(group["lr"], 4), round(group["momentum"], 4))
        ...     opt.step()      # a batch of training would go here
        ...     sched.step()
        0.04 0.95
        0.9944 0.8506
        0.8117 0.8688
        0.4626 0.9037
        0.1335 0.9367
        0.0 0.95
    """

    def __init__(self, optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        up = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                 "base_momentum", "max_momentum"),
                (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            max_ms = _format_param("max_momentum", optimizer, max_momentum)
            base_ms = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_m, b_m, group in zip(max_ms, base_ms, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m_m, *group["betas"][1:])
                    else:
                        group["momentum"] = m_m
                    group["max_momentum"] = m_m
                    group["base_momentum"] = b_m
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, lr0, lr1, m0, m1) in enumerate(self._schedule_phases):
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal(group[lr0], group[lr1], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal(group[m0], group[m1], pct)
                    break
                start_step = end_step
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


def _check_schedulers(name: str, optimizer, schedulers, what: str) -> None:
    if len(schedulers) < 1:
        raise ValueError(f"{name} expects at least one scheduler{what}, but got no scheduler.")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {i} in the given schedulers sequence.")
        if optimizer != s.optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {s.__class__.__name__} at index {i} has "
                             f"{s.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


class _Composite(LRScheduler):
    """State dicts of schedulers made of schedulers: each one's own state dict."""

    def state_dict(self) -> dict:
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, inner):
            s.load_state_dict(sd)


class SequentialLR(_Composite):
    """Run schedulers one after another: ``schedulers[0]`` until epoch ``milestones[0]``, then
    ``schedulers[1]`` (restarted from its own epoch 0) until ``milestones[1]``, and so on.
    Typically a warm-up followed by a decay.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled (all the
            schedulers must belong to it).
        schedulers (list of LRScheduler): the schedulers, in order (no
            :class:`ReduceLROnPlateau`).
        milestones (list of int): the epochs at which the next scheduler takes over (one
            fewer than the schedulers).
        last_epoch (int): the index of the last epoch. Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> warmup = optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2)
        >>> decay = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[3])
        >>> lrs = []
        >>> for epoch in range(7):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.01, 0.055, 0.1, 0.1, 0.05, 0.025, 0.0125]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1):
        _check_schedulers(self.__class__.__name__, optimizer, schedulers, "")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:   # undo the schedulers' initial steps
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step several schedulers together at every epoch: each one changes the learning rate in
    turn, so their effects compose.

    Args:
        schedulers (list of LRScheduler): the schedulers (no :class:`ReduceLROnPlateau`),
            all of one optimizer.
        optimizer (Optimizer, optional): their optimizer; by default the first scheduler's.
            Default: ``None``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.ChainedScheduler([
        ...     optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2),
        ...     optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)])
        >>> lrs = []
        >>> for epoch in range(4):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.05, 0.045, 0.081, 0.0729]
    """

    def __init__(self, schedulers, optimizer=None):
        optimizer = optimizer or (schedulers[0].optimizer if schedulers else None)
        _check_schedulers(self.__class__.__name__, optimizer, schedulers, " to be chained")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in schedulers[-1].optimizer.param_groups]

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate of each parameter group by ``factor`` once a monitored
    metric, passed to :meth:`step`, has stopped improving for more than ``patience``
    epochs; then wait ``cooldown`` epochs before counting again.  The lr never goes below
    ``min_lr``, and changes smaller than ``eps`` are skipped.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        mode (str): ``"min"`` when the metric should decrease (a loss), ``"max"`` when it
            should increase (an accuracy). Default: ``"min"``
        factor (float): the multiplicative factor of a reduction, below 1.
            Default: ``0.1``
        patience (int): the number of epochs without improvement tolerated before a
            reduction. Default: ``10``
        threshold (float): how much the metric must beat the best value so far to
            count as an improvement (see ``threshold_mode``). Default: ``1e-4``
        threshold_mode (str): ``"rel"`` to measure it relative to the best value so far
            (``best * (1 - threshold)`` in ``"min"`` mode), ``"abs"`` in absolute terms
            (``best - threshold``). Default: ``"rel"``
        cooldown (int): the number of epochs after a reduction during which bad epochs are
            not counted. Default: ``0``
        min_lr (float or list of floats): the lower bound of the lr, or one per group.
            Default: ``0``
        eps (float): the smallest change of the lr applied. Default: ``1e-8``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
        >>> lrs = []
        >>> for val_loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8]:
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step(val_loss)
        ...     lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025]
    """

    def __init__(self, optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr=0, eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, group in enumerate(groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a, best) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
