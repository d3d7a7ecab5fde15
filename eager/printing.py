"""``repr`` of tensors in PyTorch's format: ``tensor([1., 2.], requires_grad=True)``.

A port of PyTorch's ``torch/_tensor_str.py`` (default print options): one formatter per
tensor decides integer/fixed/scientific mode and a common column width from the
(summarized) values; rows wrap at 80 characters; more than 1000 elements are summarized
with 3 edge items.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dt
from .tensor import host

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


class _Formatter:
    def __init__(self, arr: np.ndarray):
        self.floating = _dt.is_float(arr.dtype)
        if self.floating and arr.dtype.kind != "f":  # bfloat16: format its float32 values
            arr = arr.astype(np.float32)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absd = np.abs(vals.astype(np.float64))
        lo, hi = absd.min(), absd.max()
        vl = vals.tolist()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                width = max(len(f"{v:.{PRECISION}e}") for v in vl)
            else:
                width = max(len(f"{v:.0f}") + 1 for v in vl)
        elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
            self.sci_mode = True
            width = max(len(f"{v:.{PRECISION}e}") for v in vl)
        else:
            width = max(len(f"{v:.{PRECISION}f}") for v in vl)
        self.max_width = max(self.max_width, width)

    def format(self, v) -> str:
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{PRECISION}f}"
        else:
            s = f"{v}"
        return (self.max_width - len(s)) * " " + s


def _summarized(a: np.ndarray) -> np.ndarray:
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:EDGEITEMS], a[-EDGEITEMS:])) if a.shape[0] > 2 * EDGEITEMS \
            else a
    if a.shape[0] > 2 * EDGEITEMS:
        rows = [a[i] for i in range(EDGEITEMS)] + [a[i] for i in range(len(a) - EDGEITEMS,
                                                                         len(a))]
    else:
        rows = list(a)
    return np.stack([_summarized(x) for x in rows])


def _vector_str(a, indent, summarize, fmt) -> str:
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / (fmt.max_width + 2))))
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in a[:EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in a[-EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(a, indent, summarize, fmt) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    n = a.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        idx = list(range(EDGEITEMS)) + [None] + list(range(n - EDGEITEMS, n))
    else:
        idx = range(n)
    slices = ["..." if i is None else _tensor_str(a[i], indent + 1, summarize, fmt)
              for i in idx]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    return array_repr(t._data, *repr_facts(t))


def repr_facts(t) -> tuple:
    """(device text or None, autograd text or None): what a tensor's repr shows besides its
    array (a compiled replay prints an intermediate from these, taken when traced)."""
    device = None if type(t._data) is np.ndarray else f"device='{t.device}'"
    if t.grad_fn is not None:
        return device, f"grad_fn=<{t.grad_fn.name()}>"
    return device, "requires_grad=True" if t.requires_grad else None


def array_repr(data, device: str | None = None, grad: str | None = None) -> str:
    """``tensor(...)`` of an array (host or device storage), with the suffixes of
    :func:`repr_facts`."""
    arr = host(data)
    prefix = "tensor("
    indent = len(prefix)
    shown = arr.astype(np.float32) if _dt.is_half(arr.dtype) else arr
    if arr.size == 0:
        body = "[]"
    else:
        summarize = arr.size > THRESHOLD
        fmt = _Formatter(_summarized(shown) if summarize else shown)
        body = _tensor_str(shown, indent, summarize, fmt)
    suffixes = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(int(s) for s in arr.shape)}")
        if arr.dtype != _dt.DEFAULT_FLOAT.np:
            suffixes.append(f"dtype={_dt.from_numpy(arr.dtype)!r}")
    elif arr.dtype not in (_dt.DEFAULT_FLOAT.np, _dt.DEFAULT_INT.np, _dt.bool_.np):
        suffixes.append(f"dtype={_dt.from_numpy(arr.dtype)!r}")
    if device is not None:
        suffixes.insert(0, device)
    if grad is not None:
        suffixes.append(grad)
    return _add_suffixes(prefix + body, suffixes, indent)
