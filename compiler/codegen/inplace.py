"""When a program may compute a write-back straight into the input array it replaces.

A write-back (``p.add_(u)``, an optimizer's state update) is an output that replaces an
input's contents.  Computed into that input's array, it costs no result array and no copy
afterwards — the Python tier writes through a ufunc's ``out=``, the Numba kernels through
their output argument.  Allowed when nothing after the writing node reads the old
contents: no node reads the input or a view of it, no guard follows (a failed guard
reruns the call from the inputs), and no graph output is the input or one of its views.
"""

from __future__ import annotations

from ..ir import Guard


class Overwrites:
    """Which nodes of ``nodes`` may write their output into an input's array
    (:meth:`allowed`), from one pass over the graph: the last node reading each memory
    (a value and the views of it), the last guard, the memories graph outputs expose."""

    def __init__(self, nodes: list, outputs: list):
        root = {}          # value id -> id of the value whose memory it views
        last = {}          # memory id -> index of the last node reading it
        self.last_guard = -1
        for i, n in enumerate(nodes):
            if n.op is Guard:
                self.last_guard = i
            for v in n.inputs:
                vid = getattr(v, "id", None)
                if vid is not None:
                    last[root.get(vid, vid)] = i
            if getattr(n.op, "view", False) and n.inputs and n.out is not None:
                vid = getattr(n.inputs[0], "id", None)
                if vid is not None:
                    root[n.out.id] = root.get(vid, vid)
        self.root, self.last = root, last
        self.exposed = {root.get(v.id, v.id) for v in outputs}
        self.count = {}
        for v in outputs:
            self.count[v.id] = self.count.get(v.id, 0) + 1
        self.nodes = nodes

    def allowed(self, i: int, src, out_id: int | None = None) -> bool:
        """Whether node ``i`` may write its output (``out_id``: the value of its outputs
        that is written back, when it has several) into ``src``'s array: nothing after it
        (no node, no guard) reads ``src`` or a view of it, no graph output is one of
        those, node ``i`` reads no other view of it (a kernel would read elements it has
        overwritten), and the written value is one graph output once."""
        mem = self.root.get(src.id, src.id)
        node = self.nodes[i]
        if any(getattr(v, "id", None) not in (None, src.id) and
               self.root.get(v.id, v.id) == mem for v in node.inputs):
            return False
        out_id = node.out.id if out_id is None else out_id
        return (self.last.get(mem, -1) <= i and self.last_guard < i
                and mem not in self.exposed and self.count.get(out_id) == 1)
