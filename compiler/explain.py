"""``explain()``: a readable report of what a compiled function traced and why.

``str(explanation)`` lists each trace with its guards (argument shapes, dtypes,
requires_grad, grad mode, scalar arguments; lifted tensors; Python values), its branch
points with source line and outcome, the generated program and fused kernels, and every
fallback with its reason.
"""

from __future__ import annotations

from .guards import DYNAMIC, SELF, _alias_text, _leaves, _name, dtype_name
from .ir import Guard


class Explanation:
    def __init__(self, cf):
        self.name = cf.__name__
        self.stats = cf.stats()
        self.fallbacks = list(cf._fallback_reasons)
        self.always_eager = cf._always_eager
        self.regions = cf._regions.summary() if cf._regions is not None else []
        self.traces = []
        for key, variant, path, reason in cf._records:
            self.traces.append(_trace_info(key, variant, path, reason, cf._argnames))

    @property
    def kernels(self) -> list:
        return [k for t in self.traces for k in t["kernels"]]

    def __str__(self) -> str:
        s = self.stats
        out = [f"compiled function {self.name}: {s['calls']} calls, {s['hits']} hits, "
               f"{s['traces']} traces, {s['fallbacks']} eager fallbacks, "
               f"{s['compile_seconds']:.3f} s compiling"]
        if self.always_eager:
            out.append(f"  {self.always_eager}")
        if self.regions:
            out.append("  compiled regions (Module calls of a body running eagerly):")
            out.extend(f"    {name}: {st['calls']} calls, {st['hits']} hits, "
                       f"{st['traces']} traces" for name, st in self.regions)
        for i, t in enumerate(self.traces):
            out.append(f"\ntrace {i} (recorded because: {t['reason']}), {t['hits']} hits")
            out.append("  guards:")
            out.extend(f"    {g}" for g in t["guards"])
            if t["lifted"]:
                out.append("  lifted tensors (read at every call):")
                out.extend(f"    {x}" for x in t["lifted"])
            if t["branches"]:
                out.append("  branch points:")
                out.extend(f"    {b}" for b in t["branches"])
            if t["writebacks"]:
                out.append(f"  writes back: {t['writebacks']}")
            if t["effects"]:
                out.append("  Python side effects replayed on every call:")
                out.extend(f"    {e}" for e in t["effects"])
            if t["unbuilt"]:
                out.append("  kernels not built: " + t["unbuilt"])
            out.append("  graph:")
            out.extend("    " + ln for ln in t["graph"].splitlines())
            for name, src in t["kernels"]:
                out.append(f"  kernel {name}:")
                out.extend("    " + ln for ln in src.splitlines())
        if self.fallbacks:
            out.append("\nfallbacks:")
            out.extend(f"  {r}" for r in self.fallbacks)
        return "\n".join(out)

    __repr__ = __str__


def _trace_info(key, variant, path, reason, argnames) -> dict:
    args_key, kw_key, grad_mode, alias, autocast = key
    guards = [f"grad mode enabled == {grad_mode}"]
    if autocast is not None:
        guards.append(f"autocast == {autocast}")
    if alias:
        guards.append(f"argument tensors sharing memory: {_alias_text(alias)}")
    leaves = []
    _leaves(args_key, (), leaves)
    for name, sub in kw_key:
        _leaves(sub, (name,), leaves)
    for p, k in leaves:
        label = _name(p, argnames)
        if k[0] == "T":
            guards.append(f"{label}: tensor shape {k[1]}, dtype {dtype_name(k[2])}, "
                          f"requires_grad={k[3]}")
        elif k[0] == "id":
            guards.append(f"{label}: the same {k[1]} object")
        elif k == SELF:
            guards.append(f"{label}: the instance this cache belongs to (a compiled method)")
        elif k[0] == "obj":
            guards.append(f"{label} == {k[2]!r} (a {k[1].__name__})")
        elif k[-1] == DYNAMIC:
            guards.append(f"{label}: a {k[0]}, an input of the trace")
        else:
            guards.append(f"{label} == {k[-1]!r}")
    for where, _, value in variant.pre.py:
        text = repr(value)
        guards.append(f"{where} == {text}" if len(text) <= 60 else f"{where} unchanged")
    if variant.pre.pystate is not None:
        guards.extend(str(g) for g in variant.pre.pystate.guards)
    for kind, obj in variant.pre.grad_none:
        what = _name((obj,), argnames) if kind == "arg" else \
            f"lifted tensor {list(obj._data.shape)}"
        guards.append(f".grad of {what} is None")
    lifted = [f"{list(t._data.shape)} {t._data.dtype} requires_grad={t.requires_grad}"
              for t in path.lifted]
    branches = [f"{n.params['where']}: {n.params['kind']}() was {n.params['expected']!r}"
                for n in path.graph.nodes if n.op is Guard]
    kernels = list(path.program.kernels)
    for bw in path.backwards:
        program = getattr(bw, "program", None)
        if program is not None:
            kernels += list(program.kernels)
    return {"reason": reason, "hits": path.hits, "guards": guards, "lifted": lifted,
            "branches": branches, "graph": path.program.source,
            "writebacks": len(path.writebacks) + len(path.grad_writes), "kernels": kernels,
            "effects": [str(e) for e in path.effects],
            "unbuilt": None if path.build_later is None else
            "never replayed, and a later trace of the same arguments took over (built at "
            "its first replay)" if path.superseded else
            "not replayed yet (built at its first replay or compiler.wait())"}
