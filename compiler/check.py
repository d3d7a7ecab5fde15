"""Checking mode: every replay is also run eagerly, and the two must agree.

``compile(f, check=True)`` (or ``DYNGRAPH_CHECK=1``) replays the compiled path, records its
outputs, the tensors it wrote, the ``.grad`` it set and the Python effects it would make,
then puts the state back, runs ``f`` eagerly from the same state (same random-generator
state too), and compares.  The first difference raises :class:`CheckError`, naming the
trace and its guards; otherwise the eager result is returned (so the program's state is
exactly eager's).

Floats agree as the compiler's contract says (README, "Exactness"): bit for bit when the
program that ran computes eager's operations (the generated Python; Numba programs whose
kernels are arithmetic, casts, comparisons and BLAS products: :func:`exact`); otherwise
(a kernel calls a :mod:`runtime.cpu.mathlib` transcendental, or accumulates a sum in
float64) within a few ULPs plus a relative ``rtol`` of the array's largest value, as a
few-ULP difference inside a kernel can cancel to more ULPs of a small result.  NaNs and
the signs of zeros match exactly in both cases.
"""

from __future__ import annotations

import re

import numpy as np

from eager import random as _random
from eager.tensor import Tensor

from .pystate.effects import CallMethod, SetAttr, SetCell, SetItem, materialize
from .pystate.guards import same_value

#: kernel code that does not compute eager's bits: runtime.cpu.mathlib's functions (within
#: 1-2 ULP of NumPy's), Numba's libm exp/log in native log-softmax code, and sums that
#: accumulate in float64 (NumPy sums float32 pairwise in float32)
_INEXACT = re.compile(r"mathlib\.|radd\(|np\.(exp|log|log1p|expm1|tanh)\(|"
                      r"np\.zeros\([^\n]*np\.float64\)|\+= np\.float64\(")


def exact(program) -> bool:
    """Whether ``program`` (a compiled path's program) promises eager's bits: the
    generated Python, or kernels whose code is exact arithmetic (no transcendental from
    runtime.cpu.mathlib, no float64-accumulated sum)."""
    return not any(_INEXACT.search(src) for _, src in getattr(program, "kernels", ()))


def inexact_ops(kernels) -> list:
    """What in these kernels (``(name, source)`` pairs, as ``explain().kernels``) does not
    compute eager's bits, by name: ``mathlib.tanh`` and the like, ``np.exp`` (Numba's
    libm call in native code), ``float64 sum``."""
    found = set()
    for _, src in kernels:
        for m in _INEXACT.finditer(src):
            t = m.group(0)
            if t.startswith("mathlib"):
                found.add("mathlib." + re.match(r"mathlib\.(\w+)", src[m.start():]).group(1))
            elif t.startswith("np.") and "(" in t and "zeros" not in t:
                found.add(t[:-1])
            else:
                found.add("float64 sum")
    return sorted(found)


#: the relative part of the bound, of the array's largest value.  A few ulp per op compound
#: within one step: the LSTM example's gradients go back through 24 time steps of mathlib
#: gates, and Adam's squared gradient doubles their relative difference; its checked steps
#: differ from eager by up to 1.1e-5 of the array's largest value (float32), which 1e-5
#: failed on some runs.  A wrong op is off by far more.
_RTOL = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-12}


class CheckError(AssertionError):
    """A compiled replay differs from eager (raised in checking mode)."""


class _TensorState:
    """The data, version and ``.grad`` of the tensors a replay may touch."""

    def __init__(self, tensors):
        self.items = []
        seen = set()
        for t in tensors:
            if id(t) in seen:
                continue
            seen.add(id(t))
            g = t._grad
            self.items.append((t, t._data.copy(), t._version[0], g,
                               None if g is None else g._data.copy(),
                               t.requires_grad, t.grad_fn))

    def restore(self) -> None:
        for t, data, version, g, gdata, rg, fn in self.items:
            if t._data.flags.writeable:  # (an expanded view cannot have been written)
                np.copyto(t._data, data)
            t._version[0] = version
            t.requires_grad, t.grad_fn = rg, fn
            t._grad = g
            if g is not None:
                np.copyto(g._data, gdata)


def snapshot(tensors, pre) -> _TensorState:
    """The state a replay may change, taken before it runs (kernels write in place)."""
    return _TensorState(list(tensors) + pre.lifted_tensors)


def checked_replay(cf, path, outs, tensors, args, kwargs, before: _TensorState, rng_state):
    """Finish a replay in checking mode (see the module docstring)."""
    bitwise = exact(path.program)
    compiled = path.finish(outs, tensors, apply_effects=False, args=args, kwargs=kwargs)
    after = [(t, t._data.copy(), None if t._grad is None else t._grad._data.copy())
             for t, *_ in before.items]
    before.restore()
    if rng_state is not None:
        _random.restore(rng_state)   # every generator, explicit ones too
    expected = cf.fn(*args, **kwargs)
    problems = []
    _compare(compiled, expected, "result", problems, bitwise)
    for t, data, grad in after:
        label = f"tensor {list(t._data.shape)} {t._data.dtype}"
        _compare_arrays(data, t._data, f"{label} after the call", problems, bitwise)
        if (grad is None) != (t._grad is None):
            problems.append(f".grad of {label}: compiled {'None' if grad is None else 'set'},"
                            f" eager {'None' if t._grad is None else 'set'}")
        elif grad is not None:
            _compare_arrays(grad, t._grad._data, f".grad of {label}", problems, bitwise)
    for e in path.effects:
        _compare_effect(e, problems, outs, args, kwargs or {})
    if problems:
        raise CheckError(_report(cf, path, problems))
    return expected


def _compare(got, want, what, problems, bitwise=False) -> None:
    if isinstance(want, Tensor):
        if not isinstance(got, Tensor):
            problems.append(f"{what}: compiled gave {type(got).__name__}, eager a tensor")
            return
        if got.requires_grad != want.requires_grad:
            problems.append(f"{what}: requires_grad {got.requires_grad} != "
                            f"{want.requires_grad}")
        _compare_arrays(got._data, want._data, what, problems, bitwise)
    elif isinstance(want, (list, tuple)):
        if type(got) is not type(want) or len(got) != len(want):
            problems.append(f"{what}: compiled {type(got).__name__} of {len(got)}, eager "
                            f"{type(want).__name__} of {len(want)}")
            return
        for i, (a, b) in enumerate(zip(got, want)):
            _compare(a, b, f"{what}[{i}]", problems, bitwise)
    elif isinstance(want, dict):
        if not isinstance(got, dict) or got.keys() != want.keys():
            problems.append(f"{what}: keys differ")
            return
        for k in want:
            _compare(got[k], want[k], f"{what}[{k!r}]", problems, bitwise)
    elif not (got is want or same_value(got, want) or got == want):
        problems.append(f"{what}: compiled {got!r}, eager {want!r}")


def _compare_arrays(got: np.ndarray, want: np.ndarray, what, problems,
                    bitwise=False) -> None:
    if got.shape != want.shape or got.dtype != want.dtype:
        problems.append(f"{what}: compiled {got.dtype}{list(got.shape)}, eager "
                        f"{want.dtype}{list(want.shape)}")
        return
    if want.dtype.kind != "f":
        bad = got != want
    elif bitwise:  # the same bits, NaNs equal to NaNs (any payload), zeros signed
        bad = ~((got == want) & (np.signbit(got) == np.signbit(want))
                | np.isnan(got) & np.isnan(want))
    else:
        nan_g, nan_w = np.isnan(got), np.isnan(want)
        zero = (got == 0) & (want == 0)
        rtol = _RTOL.get(want.dtype, 1e-4)
        finite = np.abs(want[np.isfinite(want)])
        scale = float(finite.max()) if finite.size else 0.0  # sums in another order
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(got.astype(np.float64) - want) <= rtol * (np.abs(want) + scale) \
                + 4 * np.spacing(np.abs(want).astype(want.dtype))
        close |= (got == want)
        bad = (nan_g != nan_w) | (~nan_w & ~close) | (zero & (np.signbit(got) !=
                                                            np.signbit(want)))
    if np.any(bad):
        i = tuple(int(k) for k in np.argwhere(np.asarray(bad))[0]) if got.ndim else ()
        problems.append(f"{what}: at index {list(i)} compiled {got[i]!r}, eager {want[i]!r} "
                        f"({int(np.sum(bad))} of {got.size} elements differ)")


def _compare_effect(e, problems, outs, args, kwargs) -> None:
    value = materialize(e.value, outs, args, kwargs)
    obj = e.target(args, kwargs)
    if isinstance(e, SetAttr):
        now = getattr(obj, e.name, _MISSING)
    elif isinstance(e, SetItem):
        now = obj.get(e.key, _MISSING) if isinstance(obj, dict) else obj[e.key]
    elif isinstance(e, SetCell):
        now = obj.cell_contents
    elif isinstance(e, CallMethod) and e.method == "append":
        now, value = (obj[-1] if len(obj) else _MISSING), value[0]
    else:
        return  # Print and other container methods: eager made them
    if not (now is value or same_value(now, value) or _eq(now, value)):
        problems.append(f"Python effect {e.describe()} at {e.where}: eager left {now!r}")


def _eq(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


_MISSING = object()


def _report(cf, path, problems) -> str:
    index = next((i for i, rec in enumerate(cf._records) if rec[2] is path), "?")
    reason = next((rec[3] for rec in cf._records if rec[2] is path), "?")
    lines = [f"check: compiled {cf.__name__} differs from eager (trace {index}, recorded "
             f"because: {reason}):"]
    lines += [f"  {p}" for p in problems[:10]]
    if len(problems) > 10:
        lines.append(f"  ... and {len(problems) - 10} more")
    return "\n".join(lines)


def training_verdict(steps, params, csteps, cparams, step, checked_run) -> str:
    """An eager and a compiled training run compared as the compiler promises (README,
    "Exactness"), as one line: ``steps``/``params`` are eager's per-step losses and final
    parameter arrays, ``csteps``/``cparams`` the compiled run's, ``step`` the compiled
    step function and ``checked_run()`` reruns a few compiled epochs with ``check=True``
    and returns the number of steps checked (used only where a kernel ran an inexact
    op).  The examples print it."""
    if csteps == steps and all(np.array_equal(a, b) for a, b in zip(params, cparams)):
        return "same losses and parameters as eager, bit for bit"
    inexact = inexact_ops(step.explain(wait=False).kernels)
    first = next((k for k, (a, b) in enumerate(zip(steps, csteps)) if a != b), len(steps))
    if not inexact:
        return (f"LOSSES DIFFER FROM EAGER (from step {first}; bit for bit was promised: "
                "no kernel computed anything but eager's operations)")
    print(f"compiled losses differ from eager's from step {first}: its kernels compute "
          f"{', '.join(inexact)}, not eager's bits (README, \"Exactness\": within 3 ulp "
          "per op), which training amplifies; checking every compiled step against "
          "eager's from the same state (check=True):")
    try:
        n = checked_run()
    except CheckError as e:
        return f"COMPILED STEP OUTSIDE THE STATED BOUND: {e}"
    return f"within the stated bound of eager at each of {n} checked steps"
