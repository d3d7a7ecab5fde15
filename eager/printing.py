"""``repr`` of tensors in PyTorch's format: ``tensor([1., 2.], requires_grad=True)``."""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt


def _float_formatter(arr: np.ndarray):
    finite = arr[np.isfinite(arr)] if arr.size else arr
    if finite.size == 0 or np.all(finite == np.round(finite)):
        big = finite.size and np.abs(finite).max() >= 1e8
        if big:
            return lambda v: f"{v:.4e}"
        return lambda v: (f"{v:.0f}." if np.isfinite(v) else str(v))
    absf = np.abs(finite[finite != 0])
    if absf.size and (absf.max() >= 1e8 or absf.min() < 1e-4 or absf.max() / absf.min() > 1e3
                      and absf.max() >= 1e3):
        return lambda v: f"{v:.4e}"
    return lambda v: f"{v:.4f}" if np.isfinite(v) else str(v)


def tensor_repr(t) -> str:
    arr = t._data
    kind = arr.dtype.kind
    if kind == "f":
        fmt = _float_formatter(arr.astype(np.float64))
        formatter = {"float_kind": fmt}
    elif kind == "b":
        formatter = {"bool": lambda v: "True" if v else "False"}
    else:
        formatter = None
    if arr.ndim == 0:
        body = fmt(float(arr)) if kind == "f" else (("True" if arr else "False") if kind == "b"
                                                    else str(arr.item()))
    else:
        body = np.array2string(arr, separator=", ", formatter=formatter, prefix="tensor(",
                               threshold=1000, edgeitems=3, max_line_width=80)
    parts = [body]
    default = {_dt.DEFAULT_FLOAT.np, _dt.DEFAULT_INT.np, _dt.bool_.np}
    if arr.size == 0 and arr.ndim > 1:
        parts.append(f"size={tuple(arr.shape)}")
    if arr.dtype not in default:
        parts.append(f"dtype={_dt.from_numpy(arr.dtype)!r}")
    if t.grad_fn is not None:
        parts.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        parts.append("requires_grad=True")
    return "tensor(" + ", ".join(parts) + ")"
