"""Learning-rate schedulers with PyTorch's formulas (its chainable ``get_lr`` forms, and
the closed forms used by ``step(epoch)``): ``StepLR``, ``MultiStepLR``, ``ExponentialLR``,
``LambdaLR``, ``MultiplicativeLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``,
``CosineAnnealingLR``, ``OneCycleLR``, ``SequentialLR``, ``ChainedScheduler`` and
``ReduceLROnPlateau``.

A scheduler writes ``group["lr"]``; the optimizers read it at every step."""

from __future__ import annotations

import math
from bisect import bisect_right

from .lr_base import LRScheduler
from .lr_composite import ChainedScheduler, OneCycleLR, ReduceLROnPlateau, SequentialLR

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "ExponentialLR",
           "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR", "MultiplicativeLR",
           "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR", "StepLR"]


class StepLR(LRScheduler):
    """Multiply the learning rate of each parameter group by ``gamma`` every ``step_size``
    epochs: ``lr = initial_lr * gamma ** (epoch // step_size)`` when nothing else changes it.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        step_size (int): number of epochs between two decays.
        gamma (float): multiplicative factor of each decay. Default: ``0.1``
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.1, 0.1, 0.05, 0.05, 0.025, 0.025]
    """

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate of each parameter group by ``gamma`` each time the epoch
    count reaches one of the ``milestones`` (a milestone listed twice decays twice).

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        milestones (list of int): the epochs at which to decay.
        gamma (float): multiplicative factor of each decay. Default: ``0.1``
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 5], gamma=0.1)
        >>> lrs = []
        >>> for epoch in range(7):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001]
    """

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = sorted(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        n = self.milestones.count(self.last_epoch)
        return [g["lr"] * self.gamma ** n for g in groups]

    def _get_closed_form_lr(self) -> list:
        n = bisect_right(self.milestones, self.last_epoch)
        return [base * self.gamma ** n for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate of each parameter group by ``gamma`` every epoch.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        gamma (float): multiplicative factor of the decay.
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.1, 0.05, 0.025, 0.0125, 0.00625]
    """

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class LambdaLR(LRScheduler):
    """Set the learning rate of each parameter group to its initial learning rate times
    ``lr_lambda(epoch)``: any schedule given as a function of the epoch count, as a warm-up.
    Its :meth:`state_dict` leaves the functions out.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        lr_lambda (callable or list of callables): the factor as a function of the
            epoch count; a list gives one function per parameter group.
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> warmup = lambda epoch: min(1.0, (epoch + 1) / 4)
        >>> sched = optim.lr_scheduler.LambdaLR(opt, lr_lambda=warmup)
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.025, 0.05, 0.075, 0.1, 0.1, 0.1]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) \
            else [lr_lambda] * n
        if len(self.lr_lambdas) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


class MultiplicativeLR(LRScheduler):
    """Multiply the learning rate of each parameter group by ``lr_lambda(epoch)`` at every
    epoch (the factors compound, unlike :class:`LambdaLR`'s).  Its :meth:`state_dict`
    leaves the functions out.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        lr_lambda (callable or list of callables): the factor as a function of the
            epoch count; a list gives one function per parameter group.
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.9)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.1, 0.09, 0.081, 0.0729, 0.06561]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) \
            else [lr_lambda] * n
        if len(self.lr_lambdas) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, groups)]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


class ConstantLR(LRScheduler):
    """Scale the learning rate of each parameter group by ``factor`` for the first
    ``total_iters`` epochs, then restore it.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        factor (float): the scale, between 0 and 1. Default: ``1/3``
        total_iters (int): the number of scaled epochs. Default: ``5``
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=3)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.05, 0.05, 0.05, 0.1, 0.1]
    """

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch != self.total_iters:
            return [g["lr"] for g in groups]
        return [g["lr"] * (1.0 / self.factor) for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate of each parameter group by a factor that changes linearly from
    ``start_factor`` to ``end_factor`` over ``total_iters`` epochs, then stays at
    ``end_factor`` (a linear warm-up, or decay).

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        start_factor (float): the factor at epoch 0, in (0, 1]. Default: ``1/3``
        end_factor (float): the factor from epoch ``total_iters`` on, in [0, 1]. Default: ``1.0``
        total_iters (int): the number of epochs the change takes. Default: ``5``
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.025, 0.05, 0.075, 0.1, 0.1]
    """

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        d = self.end_factor - self.start_factor
        return [g["lr"] * (1.0 + d / (self.total_iters * self.start_factor
                                      + (self.last_epoch - 1) * d)) for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rate of each parameter group to 0 over ``total_iters`` epochs:
    ``lr = initial_lr * (1 - epoch / total_iters) ** power``, then 0.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        total_iters (int): the number of epochs the decay takes. Default: ``5``
        power (float): the power of the polynomial. Default: ``1.0``
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
        >>> lrs = []
        >>> for epoch in range(6):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.1, 0.05625, 0.025, 0.00625, 0.0, 0.0]
    """

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self._is_initial or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        factor = ((1.0 - self.last_epoch / self.total_iters)
                  / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [g["lr"] * factor for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal the learning rate of each parameter group from its initial value to ``eta_min``
    along half a cosine period of ``T_max`` epochs:
    ``lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``.  It is
    computed recursively from the current lr (so it composes with other changes to it),
    and keeps going after ``T_max``: the lr climbs back over the next ``T_max`` epochs.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        T_max (int): the number of epochs of the descent (half a period).
        eta_min (float): the lowest learning rate. Default: ``0.0``
        last_epoch (int): the index of the last epoch when resuming a schedule; ``-1``
            starts afresh (and records each group's ``lr`` as its ``initial_lr``).
            Default: ``-1``

    Example::

        >>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
        >>> sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
        >>> lrs = []
        >>> for epoch in range(9):
        ...     lrs.append(round(sched.get_last_lr()[0], 5))
        ...     opt.step()      # an epoch of training would go here
        ...     sched.step()
        >>> lrs
        [0.1, 0.08682, 0.055, 0.02318, 0.01, 0.02318, 0.055, 0.08682, 0.1]
    """

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and t > 0:
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]
