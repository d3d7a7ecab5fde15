"""Fusion: group maximal convex sets of elementwise nodes into ``FusedElementwise`` nodes.

Which nodes fuse
    What the device can fuse decides (a :class:`runtime.device.Device`: its ``dtypes``,
    its ``math`` table, its ``reductions`` and ``singleton_min``), so fusion decisions are
    testable without compiling anything.  Nodes whose op is elementwise
    (``op.elementwise``, which includes ``Cast``) and whose scalar expression the device
    can write (:func:`eager.ops.scalarexpr.supports`: dtypes it computes in, math it has,
    literal params) fuse.  All members of a group have the
    same output shape, the group's *loop shape*; their inputs may be anything that
    broadcasts to it.  An ``Expand`` feeding a group is absorbed (the group reads the
    unexpanded value with broadcast indexing instead of a materialized copy).

Convexity and maximality
    Nodes are visited in order; a fusible node joins the union of its producers' groups
    when the union stays convex — no path leaves the group and comes back into it (it
    would make the group both before and after an outside node).  If the union is not
    convex it tries each producer group alone, else starts a new group.  Then groups
    of the same loop shape that read a common input are merged when convex (sibling
    fusion: the input is read once).  Convexity is checked with ancestor/descendant
    bitsets: ``anc(U) & desc(U) - U`` must be empty.

Effects and guards
    Guards split fusion regions: a group never contains nodes on both sides of a guard,
    so no computation moves across the point where a guard runs.  Random ops are chained
    (each depends on the previous effect) so that the new order keeps their order, and
    so the generator is drawn in eager's order.  The new node order is a topological
    order of the units (groups and single nodes) that takes units by first position.

Representation
    A group becomes one node ``FusedElementwise(*external_inputs, graph=body)``; ``body``
    is a :class:`ScalarGraph` — an ordinary :class:`~compiler.ir.Graph` whose inputs are
    the group's external input Values, whose nodes are the member nodes (unchanged, in
    order) and whose outputs are the group outputs: members used outside the group or
    returned by the graph.  Other members live only inside the kernel (registers).  The
    IR stays single-output: a one-output group's node defines that Value itself; a
    group with k > 1 outputs defines a tuple value (dtype ``object``, shape ``(k,)``)
    followed by ``TupleGet(t, index=i)`` nodes that define the original Values.
    ``FusedElementwise.forward`` evaluates the body with NumPy (``run_graph``), so the
    interpreter and the python backend run fused graphs too; the numba backend replaces
    it with a generated kernel.

Reductions
    A ``sum``/``mean``/``amax``/``amin`` over the trailing dimensions whose input is
    computed by a group, and that is the only user of the group's values, joins the
    group: the node becomes ``FusedReduction(*inputs, graph=body)`` whose body ends with
    the reduction; the kernel accumulates while it computes the prologue, whose values
    are never written to memory.  A trailing reduction that joins no group (its input
    is an input of the graph or the result of a NumPy op) is a ``FusedReduction`` of
    its own, with no prologue, from the device's ``lone_reduce_min`` input elements: on
    the CPU its kernel is ~3x faster than NumPy's reduce call (LayerNorm's backward
    takes four means over a short last dimension, cast to float64).  Sums and means
    accumulate in float64 (at least as accurate as NumPy's pairwise sums; not its bits).

Fusion is a pass like the others (``fuse(graph, device)``, or :func:`fusion_for`'s
``Graph -> Graph``) but not in :data:`compiler.passes.PASSES`: ``optimize`` keeps the
graph one op per node for the generated-Python tier, and each device's code generator
fuses for itself.
"""

from __future__ import annotations

import heapq

import numpy as np

from eager.ops import reduce as _R
from eager.ops import scalarexpr
from eager.ops.base import Op
from eager.ops.shape import Expand
from runtime.device import Device
from runtime.device import get as get_device

from ..ir import Graph, Guard, Node, Value, next_value_id, run_graph
from .dce import dce


class ScalarGraph(Graph):
    """The body of a fused node; prints as a short summary inside a node's params."""

    def __repr__(self) -> str:
        return f"<{len(self.nodes)} ops: {' '.join(n.op.name for n in self.nodes)}>"

    def __str__(self) -> str:
        return Graph.__str__(self)


class FusedElementwise(Op):
    """A fused group of elementwise nodes; ``graph`` is its :class:`ScalarGraph`.

    Returns the single output array, or an object array holding the outputs (read with
    :class:`TupleGet`) when the group has several.
    """
    abstract = True
    name = "fused"
    differentiable = False
    any_device = True   # the body's nodes run on their device

    def forward(*arrays, graph):
        outs = run_graph(graph, *arrays)
        if len(outs) == 1:
            return outs[0]
        t = np.empty(len(outs), dtype=object)
        for i, o in enumerate(outs):
            t[i] = o
        return t


class FusedReduction(Op):
    """A fused group whose last body node is a reduction (sum, mean, amax, amin over the
    trailing dimensions) of the value the rest of the body computes elementwise."""
    abstract = True
    name = "fused_reduce"
    differentiable = False
    any_device = True

    def forward(*arrays, graph):
        return run_graph(graph, *arrays)[0]


_REDUCTIONS = (_R.Sum, _R.Mean, _R.Amax, _R.Amin)


def reduction_ok(n: Node, device: Device) -> bool:
    """A reduction the device's kernels compute after an elementwise prologue: over
    trailing dimensions, of a supported dtype (mean of floats; amax/amin of numbers)."""
    DTYPES = device.dtypes
    if n.out is not None and n.out.device != device.type:
        return False
    if n.op not in _REDUCTIONS or n.op.name not in device.reductions or n.out is None \
            or type(n.inputs[0]) is not Value:
        return False
    v = n.inputs[0]
    dims = n.params.get("dim")
    nd = len(v.shape)
    if not dims or tuple(dims) != tuple(range(nd - len(dims), nd)):
        return False
    if v.dtype not in DTYPES or n.out.dtype not in DTYPES:
        return False
    if n.op is _R.Mean:   # (accumulated in float64, then cast: dtype= may differ)
        return v.dtype.kind == "f" and n.out.dtype.kind == "f"
    if n.op is _R.Sum:
        return (v.dtype.kind == "f") == (n.out.dtype.kind == "f")
    return v.dtype.kind in "iuf" and n.out.dtype == v.dtype


class TupleGet(Op):
    """Output ``index`` of a multi-output fused node."""
    abstract = True
    name = "tuple_get"
    differentiable = False
    any_device = True

    def forward(t, index):
        return t[index]

    def emit(node, names, glb):
        out = f"v{node.out.id}"
        names[node.out.id] = out
        return [f"{out} = {names[node.inputs[0].id]}[{node.params['index']}]"]


def _is_effect(n: Node) -> bool:
    return n.op is Guard or getattr(n.op, "random", False)


def fusible(n: Node, device: Device) -> bool:
    """Whether the device's kernels can compute ``n`` inside a fused group."""
    if n.out is None or not getattr(n.op, "elementwise", False) or _is_effect(n):
        return False
    if n.out.device != device.type or any(v.device != device.type for v in n.values()):
        return False   # a value on another device (a CPU scalar in a GPU graph) stays out
    return scalarexpr.supports(n, device.dtypes, device.math)


class _Group:
    __slots__ = ("anc", "bits", "desc", "gid", "members", "seg", "shape")

    def __init__(self, gid, i, anc, desc, shape, seg):
        self.gid = gid
        self.members = [i]
        self.bits = 1 << i
        self.anc = anc
        self.desc = desc
        self.shape = shape
        self.seg = seg


def _convex(bits: int, anc: int, desc: int, groups) -> bool:
    """Whether the nodes ``bits`` (ancestors ``anc``, descendants ``desc``, node-level)
    can become one unit without a cycle among the units.

    A group is one unit, and a horizontally merged group holds nodes with no path
    between them, so node-level reachability is not enough: if any node of a group
    ``H`` is an ancestor of the candidate, the whole unit ``H`` and its ancestors are
    (and likewise for descendants).  Close ``anc``/``desc`` over the groups to a
    fixpoint, then the candidate is convex when no node outside it is both."""
    others = [H for H in groups.values() if not H.bits & bits]
    changed = True
    while changed:
        if anc & desc & ~bits:
            return False
        changed = False
        for H in others:
            if H.bits & anc and (H.bits | H.anc) & ~anc:
                anc |= H.bits | H.anc
                changed = True
            if H.bits & desc and (H.bits | H.desc) & ~desc:
                desc |= H.bits | H.desc
                changed = True
    return True


def fusion_for(device: Device):
    """The fusion pass for ``device``: a ``Graph -> Graph`` function."""
    def fusion(graph: Graph) -> Graph:
        return fuse(graph, device)
    fusion.__name__ = f"fuse_{device.type}"
    return fusion


def fuse(graph: Graph, device: Device | None = None, singleton_min: int | None = None) -> Graph:
    """Return a graph where groups ``device`` can fuse (the CPU when None) are
    :class:`FusedElementwise` / :class:`FusedReduction` nodes.  ``singleton_min``
    (default: the device's): a lone node smaller than this stays unfused."""
    if device is None:
        device = get_device("cpu")
    if singleton_min is None:
        singleton_min = device.singleton_min
    nodes = graph.nodes
    prod: dict = {}
    for i, n in enumerate(nodes):
        if n.out is not None:
            prod[n.out.id] = i
    parents, seg, anc, desc = _dependencies(nodes, prod)
    ok = [fusible(n, device) for n in nodes]
    group_of, groups = _group_vertical(nodes, ok, parents, seg, anc, desc)
    out_ids = {v.id for v in graph.outputs}
    consumers: dict = {}
    for i, n in enumerate(nodes):
        for v in n.values():
            consumers.setdefault(v.id, []).append(i)
    reduce_of = _attach_reductions(nodes, device, prod, group_of, groups, seg, anc, desc,
                                   consumers, out_ids)
    _merge_horizontal(nodes, group_of, groups, reduce_of)
    fused = _chosen_groups(nodes, groups, reduce_of, singleton_min)
    attached = set(reduce_of.values())
    lone = {r for r, n in enumerate(nodes)
            if r not in attached and reduction_ok(n, device)
            and int(np.prod(n.inputs[0].shape)) >= device.lone_reduce_min}
    if not fused and not lone:
        return graph
    return _rebuild(graph, nodes, fused, reduce_of, parents, prod, consumers, out_ids, lone)


def _dependencies(nodes, prod) -> tuple:
    """Per node: producers (with effect-chain edges), guard segment, ancestor/descendant bits."""
    n_nodes = len(nodes)
    parents: list = []
    seg: list = []
    s = 0
    last_effect = None
    for i, n in enumerate(nodes):
        ps = []
        for v in n.values():
            p = prod.get(v.id)
            if p is not None and p not in ps:
                ps.append(p)
        if _is_effect(n):
            if last_effect is not None and last_effect not in ps:
                ps.append(last_effect)
            last_effect = i
        parents.append(ps)
        if n.op is Guard:
            s += 1
        seg.append(s)
    anc = [0] * n_nodes
    for i in range(n_nodes):
        a = 0
        for p in parents[i]:
            a |= anc[p] | (1 << p)
        anc[i] = a
    desc = [0] * n_nodes
    for i in range(n_nodes - 1, -1, -1):
        d = desc[i] | (1 << i)
        for p in parents[i]:
            desc[p] |= d
    return parents, seg, anc, desc


def _group_vertical(nodes, ok, parents, seg, anc, desc) -> tuple:
    """Vertical: each fusible node joins its producers' groups when convex (new groups)."""
    group_of: list = [None] * len(nodes)
    groups: dict = {}
    for i, n in enumerate(nodes):
        if not ok[i]:
            continue
        shape = n.out.shape
        cands = []
        for p in parents[i]:
            g = group_of[p]
            if g is not None and g not in cands and groups[g].shape == shape \
                    and groups[g].seg == seg[i]:
                cands.append(g)
        joined = False
        trials = [cands] if cands else []
        if len(cands) > 1:
            trials += [[g] for g in sorted(cands, key=lambda g: -len(groups[g].members))]
        for trial in trials:
            bits, a, d = 1 << i, anc[i], desc[i]
            for g in trial:
                G = groups[g]
                bits |= G.bits
                a |= G.anc
                d |= G.desc
            if _convex(bits, a, d, groups):
                G = groups[trial[0]]
                for g in trial[1:]:
                    H = groups.pop(g)
                    G.members.extend(H.members)
                    for m in H.members:
                        group_of[m] = G.gid
                G.members.append(i)
                G.bits, G.anc, G.desc = bits, a, d
                group_of[i] = G.gid
                joined = True
                break
        if not joined:
            groups[i] = _Group(i, i, anc[i], desc[i], shape, seg[i])
            group_of[i] = i
    return group_of, groups


def _attach_reductions(nodes, device, prod, group_of, groups, seg, anc, desc, consumers,
                       out_ids) -> dict:
    """Group id -> reduction joining it: one whose input only that group computes and uses."""
    reduce_of: dict = {}
    for r, n in enumerate(nodes):
        if not reduction_ok(n, device):
            continue
        v = n.inputs[0]
        p = prod.get(v.id)
        gid = None if p is None else group_of[p]
        if gid is None or gid in reduce_of or groups[gid].seg != seg[r]:
            continue
        G = groups[gid]
        members = set(G.members)
        ok = consumers.get(v.id) == [r] and v.id not in out_ids
        for m in G.members:
            mid = nodes[m].out.id
            if mid != v.id and (mid in out_ids or
                                any(c not in members for c in consumers.get(mid, []))):
                ok = False
        if ok:
            reduce_of[gid] = r
            G.bits |= 1 << r        # one unit with its group (for the convexity checks)
            G.anc |= anc[r] & ~G.bits
            G.desc |= desc[r]
    return reduce_of


def _merge_horizontal(nodes, group_of, groups, reduce_of) -> None:
    """Horizontal: merge groups of one loop shape that read a common value (in place)."""
    readers: dict = {}
    for gid in list(groups):
        for m in groups[gid].members:
            for v in nodes[m].values():
                readers.setdefault(v.id, [])
                if gid not in readers[v.id]:
                    readers[v.id].append(gid)
    for gids in readers.values():
        live = []
        for g in gids:  # follow merges
            while g not in groups:   # merged away: a group's id is its first node
                g = group_of[g]
            if g not in live:
                live.append(g)
        for k in range(1, len(live)):
            A = groups.get(live[0])
            B = groups.get(live[k])
            if A is None or B is None or A is B or A.shape != B.shape or A.seg != B.seg \
                    or A.gid in reduce_of or B.gid in reduce_of:
                continue
            bits, a, d = A.bits | B.bits, A.anc | B.anc, A.desc | B.desc
            if _convex(bits, a, d, groups):
                A.members.extend(B.members)
                A.members.sort()
                for m in B.members:
                    group_of[m] = A.gid
                A.bits, A.anc, A.desc = bits, a, d
                del groups[B.gid]


def _chosen_groups(nodes, groups, reduce_of, singleton_min) -> dict:
    """Group id -> group, for the groups that become fused nodes."""
    fused = {}
    for gid, G in groups.items():
        G.members.sort()
        if len(G.members) == 1 and gid not in reduce_of:
            n = nodes[G.members[0]]
            small = int(np.prod(n.out.shape)) < singleton_min and not n.op.multipass
            if small or n.op is Expand:
                continue
        fused[gid] = G
    return fused


def _rebuild(graph, nodes, fused, reduce_of, parents, prod, consumers, out_ids,
             lone=()) -> Graph:
    """The new graph: fused groups and single nodes as units, in dependency order, dce'd;
    a reduction in ``lone`` is a fused reduction of its own (no prologue)."""
    n_nodes = len(nodes)
    next_id = next_value_id(graph)
    unit_of = list(range(n_nodes))
    for gid, G in fused.items():
        for m in G.members:
            unit_of[m] = ("g", gid)
        if gid in reduce_of:
            unit_of[reduce_of[gid]] = ("g", gid)
    unit_nodes: dict = {}
    unit_key: dict = {}
    for i, n in enumerate(nodes):
        u = unit_of[i]
        if type(u) is int:
            if i in lone:
                v = n.inputs[0]
                n = Node(FusedReduction, [v],
                         {"graph": ScalarGraph([v], [n], [n.out])}, n.out, n.where)
            unit_nodes[u] = [n]
            unit_key[u] = i
    for gid, G in fused.items():
        u = ("g", gid)
        unit_key[u] = G.members[0]
        red = nodes[reduce_of[gid]] if gid in reduce_of else None
        unit_nodes[u], next_id = _build_fused(G, nodes, prod, consumers, out_ids, next_id, red)
    deps = {u: set() for u in unit_nodes}
    for i in range(n_nodes):
        u = unit_of[i]
        for p in parents[i]:
            pu = unit_of[p]
            if pu != u:
                deps[u].add(pu)
    # absorbed Expands add reads of the Expand's input
    for gid in fused:
        u = ("g", gid)
        fnode = unit_nodes[u][0]
        for v in fnode.values():
            p = prod.get(v.id)
            if p is not None and unit_of[p] != u:
                deps[u].add(unit_of[p])
    order = _toposort(deps, unit_key)
    new_nodes = [n for u in order for n in unit_nodes[u]]
    return dce(Graph(graph.inputs, new_nodes, graph.outputs))


def _toposort(deps: dict, key: dict) -> list:
    users: dict = {u: [] for u in deps}
    count = {}
    for u, ds in deps.items():
        count[u] = len(ds)
        for d in ds:
            users[d].append(u)
    heap = [(key[u], i, u) for i, u in enumerate(deps) if count[u] == 0]
    tie = {u: i for i, u in enumerate(deps)}
    heapq.heapify(heap)
    order = []
    while heap:
        _, _, u = heapq.heappop(heap)
        order.append(u)
        for w in users[u]:
            count[w] -= 1
            if count[w] == 0:
                heapq.heappush(heap, (key[w], tie[w], w))
    if len(order) != len(deps):
        raise AssertionError("fusion: the grouped graph has a cycle (a group is not convex)")
    return order


def _build_fused(G: _Group, nodes, prod, consumers, out_ids, next_id, red=None):
    members = [nodes[m] for m in G.members]
    member_set = set(G.members)
    defined = {n.out.id for n in members}
    body_nodes = []
    ext: list = []
    ext_ids = set()
    absorbed = {}

    def add_ext(v):
        if v.id not in ext_ids:
            ext_ids.add(v.id)
            ext.append(v)

    for n in members:
        for v in n.values():
            if v.id in defined or v.id in absorbed:
                continue
            p = prod.get(v.id)
            pn = nodes[p] if p is not None else None
            if pn is not None and pn.op is Expand and type(pn.inputs[0]) is Value \
                    and pn.inputs[0].id not in defined \
                    and len(pn.inputs[0].shape) <= len(G.shape):
                absorbed[v.id] = pn
                body_nodes.append(pn)
                add_ext(pn.inputs[0])
            else:
                add_ext(v)
        body_nodes.append(n)
    where = members[-1].where
    if red is not None:
        body = ScalarGraph(ext, body_nodes + [red], [red.out])
        return [Node(FusedReduction, ext, {"graph": body}, red.out, red.where)], next_id
    outs = []
    for m, n in zip(G.members, members):
        used_outside = any(c not in member_set for c in consumers.get(n.out.id, []))
        if used_outside or n.out.id in out_ids:
            outs.append(n.out)
    body = ScalarGraph(ext, body_nodes, outs)
    if len(outs) == 1:
        return [Node(FusedElementwise, ext, {"graph": body}, outs[0], where)], next_id
    tup = Value(next_id, (len(outs),), np.dtype(object), outs[0].device)
    new = [Node(FusedElementwise, ext, {"graph": body}, tup, where)]
    for k, v in enumerate(outs):
        new.append(Node(TupleGet, [tup], {"index": k}, v, where))
    return new, next_id + 1
