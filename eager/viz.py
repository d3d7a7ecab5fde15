"""Look at the graph that produced a tensor: Graphviz DOT text or a tree in the terminal.

    import eager as torch
    from eager import viz

    x = torch.randn(3, requires_grad=True)
    y = (x.tanh() * x).sum()
    print(viz.to_dot(y))        # paste into `dot -Tsvg` or https://dreampuf.github.io/
    viz.print_graph(y)          # an indented tree, shared subgraphs printed once

Both walk ``grad_fn`` edges with an explicit stack (no recursion, so a graph thousands
of ops deep is fine) in a fixed order: the first argument first, so the same program
gives the same text on every run.  Grad nodes show the op name (``grad_fn.name()``) and
the shape/dtype of the value they produced where that is known (it is known for the
root, and for every node whose output is an argument of another node); leaves show
their shape, dtype and ``requires_grad``.  ``params`` (e.g.
``dict(model.named_parameters())``) names leaves by identity.
"""

from __future__ import annotations

import sys

import numpy as np

from .autograd.node import AccumulateGrad, Node
from .tensor import Tensor

__all__ = ["graph_nodes", "print_graph", "to_dot"]


# -- the walk ----------------------------------------------------------------------------

class _Item:
    """One vertex of the drawn graph: a grad node, a leaf tensor or a constant argument."""

    __slots__ = ("dtype", "id", "inputs", "kind", "label", "obj", "shape", "users")

    def __init__(self, kind, obj, ident):
        self.kind = kind        # "op" | "leaf" | "const"
        self.obj = obj
        self.id = ident
        self.label = ""
        self.shape = None       # output shape (op), tensor shape (leaf/const)
        self.dtype = None
        self.inputs = []        # list of (arg index, _Item)
        self.users = 0


def _children(fn) -> list:
    """(arg index, entry, shape, dtype) for each argument of a grad node.

    ``entry`` is a grad node, a leaf Tensor, or None (no gradient flows there)."""
    if isinstance(fn, Node):
        return [(i, e, fn.shapes[i], fn.dtypes[i]) for i, e in enumerate(fn.next)]
    out = []
    for i, (e, _) in enumerate(getattr(fn, "next_functions", ())):  # foreign node types
        if isinstance(e, AccumulateGrad):
            e = e.variable
        out.append((i, e, None, None))
    return out


def _fmt_shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _fmt_dtype(dtype) -> str:
    return np.dtype(dtype).name if dtype is not None else "?"


def graph_nodes(tensor: Tensor, params: dict | None = None, show_constants: bool = False):
    """The graph behind ``tensor`` as a list of items in a deterministic pre-order (root
    first, then each node's arguments left to right).  Used by :func:`to_dot` and
    :func:`print_graph`; items have ``kind``, ``id``, ``label``, ``shape``, ``dtype``,
    ``inputs`` (``[(arg index, item)]``) and ``users`` (number of consumers)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"expected a Tensor, got {type(tensor).__name__}")
    names = {}
    if params:
        for name, p in params.items():
            names[id(p)] = name
    items: list[_Item] = []
    seen: dict[int, _Item] = {}
    keep = []  # keep objects alive while ids are in use

    def item_for(kind, obj):
        key = id(obj)
        it = seen.get(key)
        if it is None:
            it = _Item(kind, obj, f"{'n' if kind == 'op' else 't'}{len(items)}")
            seen[key] = it
            items.append(it)
            keep.append(obj)
            return it, True
        return it, False

    root_fn = tensor.grad_fn
    if root_fn is None:
        it, _ = item_for("leaf", tensor)
        it.shape, it.dtype = tuple(tensor._data.shape), tensor._data.dtype
        it.label = names.get(id(tensor), "")
        return items
    root, _ = item_for("op", root_fn)
    root.shape, root.dtype = tuple(tensor._data.shape), tensor._data.dtype
    stack = [root]
    while stack:
        it = stack.pop()
        it.label = it.obj.name() if hasattr(it.obj, "name") else type(it.obj).__name__
        fresh = []
        for i, entry, shape, dtype in _children(it.obj):
            if entry is None:
                if not show_constants or shape is None:
                    continue
                c = _Item("const", None, f"c{len(items)}")
                c.shape, c.dtype, c.label = tuple(shape), dtype, "no grad"
                items.append(c)
                child, new = c, False
            elif isinstance(entry, Tensor):
                child, new = item_for("leaf", entry)
                if new:
                    child.shape, child.dtype = tuple(entry._data.shape), entry._data.dtype
                    child.label = names.get(id(entry), "")
            else:
                child, new = item_for("op", entry)
                if child.shape is None and shape is not None:
                    child.shape, child.dtype = tuple(shape), dtype
                if new:
                    fresh.append(child)
            child.users += 1
            it.inputs.append((i, child))
        stack.extend(reversed(fresh))  # first argument is expanded first
    return items


# -- DOT ---------------------------------------------------------------------------------

def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(tensor: Tensor, params: dict | None = None, show_constants: bool = False,
           name: str = "dyngraph") -> str:
    """Graphviz DOT text of the graph that produced ``tensor``.

    Grad nodes are boxes labelled with the op and the value they produced, leaves are
    blue ellipses (green when ``requires_grad`` and named through ``params``), the root
    tensor is a yellow box; edges point from inputs to the op that consumed them, labelled
    with the argument index when an op has several.  ``show_constants`` also draws
    tensor arguments no gradient flows to (grey)."""
    items = graph_nodes(tensor, params, show_constants)
    lines = [f"digraph {_q(name)} {{",
             "  rankdir=BT;",
             '  node [fontname="monospace", fontsize=10];',
             '  edge [fontname="monospace", fontsize=9];']
    for it in items:
        meta = ""
        if it.shape is not None:
            meta = f"\n{_fmt_shape(it.shape)} {_fmt_dtype(it.dtype)}"
        if it.kind == "op":
            attrs = ('shape=box, style="rounded,filled", fillcolor="#e8e8e8", '
                     f"label={_q(it.label + meta)}")
        elif it.kind == "leaf":
            t = it.obj
            title = it.label or ("leaf" if t.requires_grad else "tensor")
            text = f"{title}{meta}\nrequires_grad={t.requires_grad}"
            color = "#c6f0c6" if it.label else "#cce0ff"
            attrs = f'shape=ellipse, style=filled, fillcolor="{color}", label={_q(text)}'
        else:
            attrs = f'shape=ellipse, style="filled,dashed", fillcolor="#f4f4f4", ' \
                    f'label={_q(it.label + meta)}'
        lines.append(f"  {it.id} [{attrs}];")
    root = items[0]
    if root.kind == "op":
        lines.append(f'  out [shape=box, style=filled, fillcolor="#fff2a8", '
                     f'label={_q(_output_label(root))}];')
    for it in items:
        multi = len(it.inputs) > 1
        for i, child in it.inputs:
            lab = f" [label={_q(str(i))}]" if multi else ""
            lines.append(f"  {child.id} -> {it.id}{lab};")
    if root.kind == "op":
        lines.append(f"  {root.id} -> out;")
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- terminal tree -----------------------------------------------------------------------

def _describe(it: _Item) -> str:
    meta = "" if it.shape is None else f" {_fmt_shape(it.shape)} {_fmt_dtype(it.dtype)}"
    if it.kind == "op":
        return f"{it.label}{meta}"
    if it.kind == "leaf":
        rg = " requires_grad" if it.obj.requires_grad else ""
        name = f" '{it.label}'" if it.label else ""
        return f"leaf{name}{meta}{rg}"
    return f"(no grad){meta}"


def print_graph(tensor: Tensor, file=None, params: dict | None = None,
                show_constants: bool = False) -> None:
    """Print the graph behind ``tensor`` as an indented tree, root at the top.

    A node used by several consumers gets a tag ``[#k]`` and is expanded only the first
    time; later uses print ``-> see [#k]``.  ``params`` names leaves
    (e.g. ``dict(model.named_parameters())``)."""
    out = sys.stdout if file is None else file
    items = graph_nodes(tensor, params, show_constants)
    tags: dict[int, int] = {}
    for it in items:  # number shared vertices in pre-order: stable across runs
        if it.users > 1:
            tags[id(it)] = len(tags) + 1
    printed: set[int] = set()
    lines = []
    root = items[0]
    stack = [(root, "", "")]  # (item, prefix of this line, prefix of its children)
    while stack:
        it, pre, child_pre = stack.pop()
        tag = tags.get(id(it))
        if tag is not None and id(it) in printed:
            lines.append(f"{pre}-> see [#{tag}] {it.label or _describe(it)}")
            continue
        printed.add(id(it))
        text = _describe(it)
        if tag is not None:
            text += f"  [#{tag}]"
        lines.append(pre + text)
        kids = it.inputs
        pushed = []
        for k, (_, child) in enumerate(kids):
            last = k == len(kids) - 1
            pushed.append((child, child_pre + ("└─ " if last else "├─ "),
                           child_pre + ("   " if last else "│  ")))
        stack.extend(reversed(pushed))
    print("\n".join(lines), file=out)


def _output_label(root) -> str:
    return "output\n" + _fmt_shape(root.shape) + " " + _fmt_dtype(root.dtype)
