"""Introspection of the autograd graph: :func:`saved_tensor_bytes`, the memory a graph
holds for its backward (what activation checkpointing saves)."""

from __future__ import annotations

import numpy as np

from ..ops.base import OUT
from ..tensor import Tensor
from .node import Node

__all__ = ["saved_tensor_bytes"]


def _root(arr: np.ndarray) -> np.ndarray:
    """The array owning ``arr``'s memory (views count once, with their base)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def saved_tensor_bytes(*outputs: Tensor) -> int:
    """Bytes of the distinct buffers the grad nodes behind ``outputs`` keep for backward:
    every tensor a node saved (an input of its op, or its output) counted once, a view with
    its base.  Parameters an op saved count too (they are alive anyway; the difference
    between two graphs of the same model is their activations).  Counts what eager's grad
    nodes save; a custom ``autograd.Function``'s ``ctx.saved_tensors`` are not seen.  After
    ``backward()`` without ``retain_graph`` the nodes have dropped what they saved: 0."""
    buffers: dict[int, int] = {}
    seen: set[int] = set()
    stack = [t.grad_fn for t in outputs if isinstance(t, Tensor) and t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for entry in node.saved or ():
            if entry is OUT:
                arr = node.out_data
            else:
                t = entry[0]
                if not isinstance(t, Tensor):
                    continue
                arr = t._data
            if isinstance(arr, np.ndarray):
                root = _root(arr)
                buffers[id(root)] = root.nbytes
        for nx in node.next:
            if type(nx) is Node:
                stack.append(nx)
    return sum(buffers.values())
