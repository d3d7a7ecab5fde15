"""matmul and linear on CUDA (every product through :func:`runtime.cuda.blas.gemm`: cuBLAS
via CuPy on a GPU where CuPy is installed, else the tiled GEMM kernel; linear's bias added
to the product) and the NLL loss's kernels."""

from __future__ import annotations

import numpy as np

from runtime.cuda import blas, launch

from ..ops import linalg as L
from .elementwise import contiguous, full, reshape


def _gemm(a3, b3, bias=None):
    """``a3 @ b3`` for (B|1, M, K) and (B|1, K, N) views (+ bias over N): (B, M, N)."""
    _check_floats(a3, b3)
    return blas.gemm(a3, b3, bias)


def _check_floats(a, b) -> None:
    if a.dtype.kind != "f" or b.dtype != a.dtype:
        raise NotImplementedError(f"Could not run 'matmul' with arguments from the 'cuda' "
                                  f"device for dtypes {a.dtype} and {b.dtype}")


def matmul(a, b):
    L.check_same_dtype(a, b)
    na, nb = a.ndim, b.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if a.shape[-1] != b.shape[-2 if nb >= 2 else 0]:
        raise L.matmul_shape_error("matmul", a.shape, b.shape)
    a2 = a.unsqueeze((0,)) if na == 1 else a
    b2 = b.unsqueeze((1,)) if nb == 1 else b
    batch = L._batch_shape("matmul", a2.shape, b2.shape) if max(na, nb) > 2 else ()
    bn = int(np.prod(batch)) if batch else 1

    def as3(x):
        if x.ndim == 2:
            return x.unsqueeze((0,))
        xb = x.broadcast_to(batch + x.shape[-2:]) if x.shape[:-2] != batch else x
        if xb.shape[:-2] and int(np.prod(xb.shape[:-2])) != 1 and not _batch_flat(xb):
            xb = contiguous(xb)
        return reshape(xb, (int(np.prod(xb.shape[:-2])),) + xb.shape[-2:])

    shape = batch + (a2.shape[-2], b2.shape[-1])
    if not bn or not a2.shape[-1] or 0 in shape:   # nothing to multiply: empty, or zeros
        _check_floats(a, b)
        out = full(shape, 0, a.dtype)
    else:
        a3, b3 = as3(a2), as3(b2)
        if a3.shape[0] == 1 and bn > 1:
            a3 = a3.broadcast_to((bn,) + a3.shape[1:])
        out = _gemm(a3, b3)
    if na == 1:
        shape = shape[:-2] + shape[-1:]
    if nb == 1:
        shape = shape[:-1]
    return out.reshape(shape)


def _batch_flat(x) -> bool:
    """Whether the batch dimensions of ``x`` merge into one stride."""
    st, sh = x.estrides[:-2], x.shape[:-2]
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(len(st) - 1))


def linear(x, weight, bias=None):
    L.check_same_dtype(x, weight)
    if x.ndim == 0 or weight.ndim != 2 or x.shape[-1] != weight.shape[1]:
        return L.Linear.forward(np.empty(x.shape, x.dtype), np.empty(weight.shape, x.dtype))
    x2 = reshape(x, (int(np.prod(x.shape[:-1])), x.shape[-1])) if x.ndim != 1 \
        else x.unsqueeze((0,))
    out = _gemm(x2.unsqueeze((0,)), weight.transpose((1, 0)).unsqueeze((0,)), bias)
    return out.reshape(x.shape[:-1] + weight.shape[:1])


# -- loss ----------------------------------------------------------------------------------

def nll_loss(logp, target, ignore_index=-100, reduction="mean"):
    return launch.nll_loss(logp, target, int(ignore_index), reduction == "mean")


def nll_loss_grad(g, target, shape, ignore_index=-100, reduction="mean"):
    out = full(shape, 0, g.dtype)
    return launch.nll_loss_grad(g, target, out, int(ignore_index), reduction == "mean")

