"""Padding: ``pad`` (constant, reflect, replicate, circular) and its adjoint, each the
other's backward.

Params are canonical: ``pads`` is a tuple of ``(lo, hi)`` pairs for the trailing
``len(pads)`` dimensions in their natural order (the public ``F.pad`` turns PyTorch's
last-dimension-first flat list into this); a negative amount crops.  As in PyTorch,
reflect and replicate pad relative to the uncropped input, circular wraps the cropped
one.
"""

from __future__ import annotations

import numpy as np

from .base import Op

_NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _key(ndim: int, axis: int, s) -> tuple:
    k = [slice(None)] * ndim
    k[axis] = s
    return tuple(k)


def _crop(a: np.ndarray, axis: int, lo: int, hi: int) -> np.ndarray:
    """Drop ``-lo``/``-hi`` elements from the ends where the amount is negative."""
    n = a.shape[axis]
    return a[_key(a.ndim, axis, slice(max(-lo, 0), n - max(-hi, 0)))]


def _grow(a: np.ndarray, axis: int, lo: int, hi: int) -> np.ndarray:
    """Adjoint of :func:`_crop`: zeros where the crop dropped elements."""
    if lo >= 0 and hi >= 0:
        return a
    shape = list(a.shape)
    shape[axis] += max(-lo, 0) + max(-hi, 0)
    out = np.zeros(shape, dtype=a.dtype)
    out[_key(a.ndim, axis, slice(max(-lo, 0), max(-lo, 0) + a.shape[axis]))] = a
    return out


def _fold_back(g: np.ndarray, axis: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """Adjoint of padding ``g``'s source by ``lo``/``hi`` >= 0 along ``axis`` in ``mode``."""
    nd = g.ndim
    n = g.shape[axis] - lo - hi
    out = np.array(g[_key(nd, axis, slice(lo, lo + n))])
    left = g[_key(nd, axis, slice(0, lo))]
    right = g[_key(nd, axis, slice(lo + n, lo + n + hi))]
    if mode == "reflect":
        out[_key(nd, axis, slice(1, lo + 1))] += np.flip(left, axis)
        out[_key(nd, axis, slice(n - 1 - hi, n - 1))] += np.flip(right, axis)
    elif mode == "replicate":
        out[_key(nd, axis, slice(0, 1))] += left.sum(axis=axis, keepdims=True)
        out[_key(nd, axis, slice(n - 1, n))] += right.sum(axis=axis, keepdims=True)
    elif mode == "circular":
        out[_key(nd, axis, slice(n - lo, n))] += left
        out[_key(nd, axis, slice(0, hi))] += right
    return out


def _pos(pads: tuple) -> tuple:
    return tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)


class Pad(Op):
    """Pad (or crop) the trailing dimensions of ``x``; ``value`` fills in constant mode."""

    def forward(x, pads, mode="constant", value=0):
        lead = x.ndim - len(pads)
        if mode == "constant":
            shape = list(x.shape)
            for i, (lo, hi) in enumerate(pads):
                shape[lead + i] += lo + hi
                if shape[lead + i] < 0:
                    raise RuntimeError(f"pad: padding {pads} makes dimension {lead + i} of "
                                       f"size {x.shape[lead + i]} negative")
            out = np.full(shape, value, dtype=x.dtype)
            src, dst = [slice(None)] * lead, [slice(None)] * lead
            for i, (lo, hi) in enumerate(pads):
                n = x.shape[lead + i]
                s0, s1 = max(-lo, 0), n - max(-hi, 0)
                src.append(slice(s0, max(s1, s0)))
                dst.append(slice(max(lo, 0), max(lo, 0) + max(s1 - s0, 0)))
            out[tuple(dst)] = x[tuple(src)]
            return out
        widths = [(0, 0)] * lead + list(_pos(pads))
        if mode == "circular":
            for i, (lo, hi) in enumerate(pads):
                x = _crop(x, lead + i, lo, hi)
            return np.pad(x, widths, mode="wrap")
        out = np.pad(x, widths, mode=_NP_MODE[mode])
        for i, (lo, hi) in enumerate(pads):
            out = _crop(out, lead + i, lo, hi)
        return np.ascontiguousarray(out)

    def backward(F, g, saved, node):
        p = node.params
        return (F.pad_adjoint(g, pads=p["pads"], mode=p.get("mode", "constant"),
                              shape=node.shapes[0]),)


class PadAdjoint(Op):
    """Adjoint of :class:`Pad`: the gradient of the padded tensor summed back onto the
    input of ``shape`` (border copies fold onto the elements they copied)."""

    def forward(g, pads, mode, shape):
        lead = g.ndim - len(pads)
        out = g
        for i, (lo, hi) in enumerate(pads):
            ax = lead + i
            if mode == "circular":
                out = _fold_back(out, ax, max(lo, 0), max(hi, 0), mode)
                out = _grow(out, ax, lo, hi)
            else:
                out = _grow(out, ax, lo, hi)
                out = _fold_back(out, ax, max(lo, 0), max(hi, 0), mode)
        if out.shape != tuple(shape):
            raise RuntimeError(f"pad_adjoint: gradient of shape {g.shape} does not pad "
                               f"{tuple(shape)} by {pads}")
        return np.ascontiguousarray(out) if out is not g else out.copy()

    def backward(F, gg, saved, node):
        p = node.params
        return (F.pad(gg, pads=p["pads"], mode=p["mode"], value=0),)
