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
    """Multiply the lr by ``gamma`` every ``step_size`` epochs."""

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
    """Multiply the lr by ``lr_lambda(epoch)`` every epoch."""

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
    """``lr * factor`` for the first ``total_iters`` epochs, then ``lr``."""

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
    """The lr factor goes linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs, then stays."""

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
    """Decay the lr to 0 over ``total_iters`` epochs as ``(1 - t/total_iters) ** power``."""

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
    """``eta_min + (base - eta_min) * (1 + cos(pi * t / T_max)) / 2`` (recursively, so it
    follows other changes to the lr, and keeps cycling after ``T_max``)."""

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
