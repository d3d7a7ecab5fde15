"""``eager.amp.GradScaler``: loss scaling for float16 training, PyTorch's API and rules.

``scaler.scale(loss).backward()`` multiplies the loss by the scale; ``scaler.step(opt)``
unscales the gradients (unless :meth:`unscale_` already did), and skips ``opt.step()``
when any gradient is inf or NaN; ``scaler.update()`` then halves the scale after such a
step (``backoff_factor``) or multiplies it by ``growth_factor`` after ``growth_interval``
finite steps in a row.
"""

from __future__ import annotations

import math
import warnings

from runtime import device as runtime_device

from ..autograd.grad_mode import no_grad
from ..construct import tensor
from ..fn.elementwise import isfinite
from ..tensor import Tensor

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)``.

    As PyTorch, ``device`` defaults to ``"cuda"``, and a CUDA scaler without CUDA warns and
    disables itself: pass ``"cpu"`` for CPU training.  The scale is held as a float32 value
    (``get_scale()`` returns it as a Python float), as PyTorch's scale tensor."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            if not runtime_device.available("cuda"):
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available."
                              "  Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale = None  # float once first used, as PyTorch's lazily made tensor
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer_states: dict[int, dict] = {}

    # -- scaling -------------------------------------------------------------------------
    def _lazy_init(self):
        if self._scale is None:
            self._scale = _f32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker

    def _state(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(
            id(optimizer), {"stage": _READY, "found_inf": None})

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples of tensors) times the scale."""
        if not self._enabled:
            return outputs
        self._lazy_init()
        if isinstance(outputs, Tensor):
            return outputs * self._scale_tensor(outputs)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _scale_tensor(self, like: Tensor):
        return tensor(self._scale, dtype="float32", device=like.device)

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place, and note whether any of
        them holds an inf or a NaN (then :meth:`step` skips the optimizer step)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._state(optimizer)
        if state["stage"] is _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = _f32(1.0 / self._scale)  # PyTorch: scale.double().reciprocal().float()
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype.name == "float16":
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not found and not bool(isfinite(g).all()):
                        found = True  # (the values before unscaling, as PyTorch's kernel)
                    g.mul_(inv)
        state["found_inf"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done) and run ``optimizer.step(*args, **kwargs)``, skipping it
        when a gradient is inf or NaN; returns what ``optimizer.step`` returned (or None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._state(optimizer)
        if state["stage"] is _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Back off after a skipped step, grow after ``growth_interval`` good ones (or set
        ``new_scale``, a float or a one-element tensor); ready for the next iteration."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a single-element tensor.")
                if new_scale.requires_grad:
                    raise AssertionError("new_scale should be a float or a 1-element "
                                         "torch.FloatTensor with requires_grad=False.")
                new_scale = new_scale.item()
            self._scale = _f32(float(new_scale))
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            # PyTorch's _amp_update_scale_: float32 arithmetic; a growth that would overflow
            # float32 keeps the scale (and still restarts the count)
            if any(found):
                self._scale = _f32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = _f32(self._scale * self._growth_factor)
                    if math.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
        self._per_optimizer_states = {}

    def _check_scale_growth_tracker(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate "
                                 "your script did not use scaler.scale(loss or outputs) earlier "
                                 "in the iteration.")

    # -- accessors -----------------------------------------------------------------------
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else \
            self._growth_tracker

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` (empty when disabled), as PyTorch."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = _f32(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker


def _f32(x: float) -> float:
    """``x`` rounded to float32 (inf past its range), as PyTorch's scale tensor holds it."""
    import numpy as np
    with np.errstate(over="ignore"):
        return float(np.float32(x))
