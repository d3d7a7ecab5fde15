"""``LRScheduler``: the base class of the learning-rate schedulers (``eager.optim.lr_scheduler``
holds them all).  ``step()`` advances one epoch through the subclass's chainable
``get_lr``; ``step(epoch)`` jumps with its closed form when it has one."""

from __future__ import annotations

import warnings

from .optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the new "
    "chainable form, where available.")


class LRScheduler:
    _is_initial = False   # True during the step made by __init__

    def __init__(self, optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        raise NotImplementedError

    def get_last_lr(self) -> list:
        return self._last_lr

    def step(self, epoch=None) -> None:
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None) -> None:
        """Advance one epoch (``get_lr``), or jump to ``epoch`` (the closed form if the
        scheduler has one)."""
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


def _format_param(name: str, optimizer, param) -> list:
    """One value per param group (a list must have one per group)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)
