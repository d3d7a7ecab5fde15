"""Moving data between devices: ``Tensor.to(device)`` is an op, so it is differentiable
(the gradient goes back to the source device) and a compiler trace records it."""

from __future__ import annotations

from runtime import device as runtime_device

from .base import Op


class ToDevice(Op):
    """A copy of ``a`` on ``device`` (a type name: "cpu", "cuda"); ``source`` is the
    device it came from, where the backward sends the gradient."""
    any_device = True

    def forward(a, device, source):
        src = runtime_device.of(a)
        dst = runtime_device.get(device)
        if src is dst:
            return a
        if dst.type == "cpu":
            return src.to_host(a).copy()
        return dst.from_host(src.to_host(a))

    def backward(F, g, saved, node):
        p = node.params
        return (F.to_device(g, device=p["source"], source=p["device"]),)
