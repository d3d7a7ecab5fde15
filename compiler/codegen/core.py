"""The scalar core of a fused kernel, for any device.

The core is one line per IR node, the node as a comment above it, each written by the
node's op (``Op.scalar``, see :mod:`eager.ops.scalarexpr`) with the device's math
table.  Every external input is loaded as ``a0, a1, ..`` and internal values are named
``t0, t1, ..`` by position in the group — never by IR ids or source lines, so the text
(the cache key) depends only on the computation.  A device's loop template wraps it.
"""

from __future__ import annotations

import weakref

import numpy as np

from eager.ops import scalarexpr

from ..ir import Graph, Value
from .pysource import _literal


def _canon(x, names) -> str:
    return names[x.id] if type(x) is Value else repr(x)


#: the whole-body cores written so far, by body (a fused body is not changed once made;
#: a kernel storing into its inputs is written from the same core again)
_CORES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_DTYPE_NAMES: dict = {}   # (``str(dtype)`` is a Python-level NumPy property: slow)


def _dtype_name(dt) -> str:
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = str(dt)
    return name


def core_source(body: Graph, math: dict, nodes=None, outputs=None) -> tuple:
    """(core lines, output variable names) of a fused body (or of its first ``nodes``
    computing ``outputs``) with the device math table ``math``; inputs are ``a0, a1, ..``.
    Raises :class:`eager.ops.scalarexpr.Unsupported` for a node the device cannot write."""
    if nodes is None and outputs is None:
        known = _CORES.get(body)
        if known is not None and known[0] is math:
            return list(known[1]), list(known[2])
        lines, outs = _core(body, math, body.nodes, body.outputs)
        _CORES[body] = (math, lines, outs)
        return list(lines), list(outs)
    return _core(body, math, body.nodes if nodes is None else nodes,
                 body.outputs if outputs is None else outputs)


def _core(body: Graph, math: dict, nodes, outputs) -> tuple:
    names = {v.id: f"a{k}" for k, v in enumerate(body.inputs)}
    lines = []
    for j, n in enumerate(nodes):
        args = [_canon(a, names) for a in n.inputs]
        args += [f"{key}={val!r}" for key, val in n.params.items() if _literal(val)
                 or isinstance(val, np.dtype)]
        target = f"t{j}"
        lines.append(f"# {target}: {_dtype_name(n.out.dtype)} = {n.op.name}({', '.join(args)})")
        lines.extend(scalarexpr.emit(n, names, target, math))
        names[n.out.id] = target
    return lines, [names[v.id] for v in outputs]
