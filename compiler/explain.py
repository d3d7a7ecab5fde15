"""``explain()``: what a compiled function traced and why.

``str(f.explain())`` is a short summary, about 50 lines at most for 8 traces, in the spirit
of ``torch._dynamo.explain``: calls, hits, traces (each with its hits and why it was
recorded, its guards, branch points, lifted tensors and kernels counted), the guards every
trace shares and those that tell traces apart, the branch points (where a data-dependent
``if``/``bool()`` splits the traces), kernels counted with the math-library calls in them,
and every fallback to eager with a hint.

The full dump -- each trace's guards (argument shapes, dtypes, requires_grad, grad mode,
scalar arguments; lifted tensors; Python values), branch points with source line and
outcome, the generated program and the fused kernels' source, and every fallback -- is
``str(f.explain().full())`` (or ``f.explain().verbose = True``; ``f.explain().summary()``
is the short form as a string). The attributes ``traces``, ``kernels``, ``fallbacks``,
``always_eager``, ``regions`` and ``stats`` hold the same facts as data.
"""

from __future__ import annotations

import re

from .check import inexact_ops
from .guards import DYNAMIC, SELF, _leaves, _name, dtype_name
from .ir import Guard
from .refs import ArgTensor
from .tensor_guards import Declared, GradNone, alias_text

_SHOWN_GUARDS = 6      # guards listed in a summary's shared section (the rest counted)
_OWN_LINES = 16        # lines for the guards that tell traces apart, shared by the traces
_SHOWN_BRANCHES = 6    # distinct branch points listed
_SHOWN_KERNELS = 6     # kernel names listed
_LINE = 160            # longest line a summary writes (longer ones end in "...")

# A fallback reason's start -> what to do about it (first match wins).
_HINTS = (
    ("max_traces=", "the guard named keeps changing: pass dynamic=True (sizes become "
     "symbolic), make the varying Python value a tensor, or raise max_traces"),
    ("this call could not be traced", "move the Python-side work named (printing, "
     ".item()/.tolist(), I/O) out of the compiled function, or mark it "
     "compiler.disable"),
    ("float16/bfloat16", "kernels run float32/float64: compile the float32 model and use "
     "autocast outside, or accept eager speed for this key"),
    ("replay error", "the compiled replay raised where the trace did not: a bug to "
     "report; compile(f, check=True) compares each replay with eager"),
    ("arguments share memory", "pass distinct tensors (x.clone()) when the function writes "
     "into one of its arguments"),
    ("called inside eager.func.vmap", "expected: vmap(compile(f)) runs f eagerly on the "
     "batched tensors; compile the vmapped function instead"),
    ("compile error", "a bug to report; backend='python' avoids Numba"),
    ("kernels not built", "a bug to report; backend='python' avoids Numba"),
    ("this key's trace could not be compiled", "see the compile error above; "
     "backend='python' avoids Numba"),
    ("runs eagerly on every call", "a graph break in a function that cannot be split at "
     "its line (no source, a lambda, a generator, cells): the body runs eagerly (each "
     "Module call still compiled); move the line out of the compiled function to compile "
     "the whole step, or mark it compiler.disable"),
)


def hint_for(reason: str) -> str:
    """A one-line suggestion for a fallback reason (the full report has the details)."""
    for start, hint in _HINTS:
        if start in reason:
            return hint
    return "explain().full() shows the traces and guards involved"


def _clip(text: str, width: int = _LINE) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class Explanation:
    """The report ``compiled.explain()`` returns: ``str()`` is a short summary,
    :meth:`full` the whole dump.

    Attributes:
        traces (list of dict): per trace: ``reason``, ``hits``, ``guards``, ``lifted``,
            ``branches``, ``graph`` (the generated program), ``kernels``,
            ``writebacks``, ``effects``, ``unbuilt``.
        kernels (list): ``(name, source)`` of every fused kernel.
        fallbacks (list of str): why calls ran eagerly.
        always_eager (str or None): set when every call runs eagerly, and why.
        graph_breaks (list of str): the lines that keep the function from being traced
            whole (``torch._dynamo.explain``'s break reasons), each naming its file and
            line; the function is then split there (``pieces``), or where it cannot be
            split, its body runs eagerly with each Module call a compiled region.
        pieces (list): ``(lines, Explanation or None)`` per piece of a function split at
            its graph breaks (:mod:`compiler.split`): a compiled piece's own report, or
            None for the statements that run eagerly.
        regions (list): compiled regions (Module calls of a body running eagerly).
        stats (dict): the counters of ``compiled.stats()``.
        verbose (bool): when True, ``str()`` is the full dump. Default: False.

    Example::

        >>> print(f.explain())            # the summary
        >>> print(f.explain().full())     # guards, graphs and kernel source of every trace
    """

    verbose = False

    def __init__(self, cf):
        self.name = cf.__name__
        self.stats = cf.stats()
        self.fallbacks = list(cf._fallback_reasons)
        self.always_eager = cf._always_eager
        self.graph_breaks = list(cf._breaks if cf._split is None else cf._split.reasons)
        self.regions = cf._regions.summary() if cf._regions is not None else []
        split = cf._split
        self.pieces = [] if split is None else \
            [(p.lines, None if p.compiled_fn is None else Explanation(p.compiled_fn))
             for p in split.pieces]
        self.traces = []
        for key, variant, path, reason in cf._records:
            self.traces.append(_trace_info(key, variant, path, reason, cf._argnames))

    @property
    def kernels(self) -> list:
        return [k for t in self.traces for k in t["kernels"]] + \
            [k for _, ex in self.pieces if ex is not None for k in ex.kernels]

    def __str__(self) -> str:
        return self.full() if self.verbose else self.summary()

    __repr__ = __str__

    def _header(self) -> list:
        s = self.stats
        out = [f"compiled function {self.name}: {s['calls']} calls, {s['hits']} hits, "
               f"{s['traces']} traces, {s['fallbacks']} eager fallbacks, "
               f"{s['compile_seconds']:.3f} s compiling"]
        if self.pieces:
            out.append(f"  {_plural(len(self.graph_breaks), 'graph break')}: the function "
                       f"runs in {len(self.pieces)} pieces, compiled around the statements "
                       "that break (those run eagerly, each nn.Module they call compiled)")
            out += [_clip(f"    - {b}") for b in self.graph_breaks]
            for lines, ex in self.pieces:
                if ex is None:
                    out.append(f"    {lines}: runs eagerly")
                else:
                    st = ex.stats
                    out.append(f"    {lines}: compiled ({st['calls']} calls, {st['hits']} "
                               f"hits, {st['traces']} traces)")
        elif self.graph_breaks:
            out.append(f"  {_plural(len(self.graph_breaks), 'graph break')}: the body runs "
                       "eagerly, each nn.Module it calls compiled on its own")
            out += [_clip(f"    - {b}") for b in self.graph_breaks]
        elif self.always_eager:
            out.append(f"  {self.always_eager}")
        return out

    def summary(self) -> str:
        """The short report (what ``str()`` gives): counts per trace, the guards shared
        and those that differ, branch points, kernels counted, fallbacks with hints."""
        out = self._header()
        if self.regions:
            out.append("  compiled regions (Module calls of a body running eagerly): "
                       + _clip(", ".join(f"{name} ({st['calls']} calls, {st['hits']} hits, "
                                         f"{st['traces']} traces)"
                                         for name, st in self.regions[:4])
                               + (f", and {len(self.regions) - 4} more"
                                  if len(self.regions) > 4 else ""), _LINE - 62))
        traces = self.traces
        if traces:
            shared = [g for g in traces[0]["guards"]
                      if all(g in t["guards"] for t in traces[1:])]
            shared_set = set(shared)
            out.append(f"traces ({len(traces)}):")
            for i, t in enumerate(traces):
                parts = [_plural(t["hits"], "hit"), _plural(len(t["guards"]), "guard")]
                if t["branches"]:
                    parts.append(_plural(len(t["branches"]), "branch point"))
                if t["lifted"]:
                    parts.append(_plural(len(t["lifted"]), "lifted tensor"))
                parts.append(_plural(len(t["kernels"]), "kernel"))
                if t["effects"]:
                    parts.append(_plural(len(t["effects"]), "Python side effect"))
                if t["unbuilt"]:
                    parts.append("kernels not built yet")
                out.append(_clip(f"  trace {i}: {', '.join(parts)}; recorded because: "
                                 f"{t['reason']}"))
                own = [g for g in t["guards"] if g not in shared_set]
                if own and len(traces) > 1:
                    # a line budget shared by the traces: all of them for 2 traces, 2
                    # each for 8
                    room = max(1, _OWN_LINES // len(traces))
                    out.append("    its own guards:")
                    out.extend(_clip(f"      {g}") for g in own[:room])
                    if len(own) > room:
                        out[-1] += f"   (and {len(own) - room} more)"
            title = "guards (checked before every replay)" if len(traces) == 1 else \
                f"guards shared by all {len(traces)} traces"
            out.append(f"{title}: {len(shared)}")
            shown = _SHOWN_GUARDS if len(traces) > 1 else 2 * _SHOWN_GUARDS
            out.extend(_clip(f"  {g}") for g in shared[:shown])
            if len(shared) > shown:
                out.append(f"  ... and {len(shared) - shown} more")
            lifted = {}
            for t in traces:
                for x in t["lifted"]:
                    lifted[x] = lifted.get(x, 0) + 1
            if lifted:
                items = list(lifted)
                out.append(_clip(f"lifted tensors (read at every call, {len(items)} kinds): "
                                 + ", ".join(items[:4])
                                 + (f", and {len(items) - 4} more" if len(items) > 4 else "")))
            out.extend(self._branch_lines())
            out.extend(self._kernel_lines())
        if self.fallbacks:
            out.append(f"fallbacks to eager ({len(self.fallbacks)}):")
            for r in self.fallbacks:
                out.append(_clip(f"  {r}"))
                out.append(_clip(f"    hint: {hint_for(r)}"))
        out.extend(self._piece_lines("summary"))
        if traces or self.fallbacks or self.pieces:
            out.append(f"full report (guards, graphs, kernel source): "
                       f"print({self.name}.explain().full())")
        return "\n".join(out)

    def _piece_lines(self, how: str) -> list:
        """Each compiled piece's own report (``summary`` or ``full``), indented."""
        out = []
        for lines, ex in self.pieces:
            if ex is not None:
                out.append(f"piece {lines}:")
                text = getattr(ex, how)().splitlines()
                out.extend("  " + ln for ln in text if not ln.startswith("full report"))
        return out

    def _branch_lines(self) -> list:
        seen: dict = {}
        for i, t in enumerate(self.traces):
            for b in t["branches"]:
                where, _, outcome = b.rpartition(" was ")
                seen.setdefault(where, {}).setdefault(outcome, []).append(i)
        if not seen:
            return []
        out = [f"branch points (data-dependent control flow, guarded at replay): {len(seen)}"]
        for where, outcomes in list(seen.items())[:_SHOWN_BRANCHES]:
            place, _, kind = where.rpartition(": ")   # "file:line in fn", "bool()"
            out.append(_clip(f"  {place}: " + "; ".join(
                f"{kind} was {o} in {_traces_text(ix)}" for o, ix in outcomes.items())))
        if len(seen) > _SHOWN_BRANCHES:
            out.append(f"  ... and {len(seen) - _SHOWN_BRANCHES} more")
        return out

    def _kernel_lines(self) -> list:
        kernels = self.kernels
        if not kernels:
            return ["kernels: none (generated Python only)"]
        counts: dict = {}
        for n, _ in kernels:   # one kernel (by name) can serve several traces
            counts[n] = counts.get(n, 0) + 1
        names = [n if c == 1 else f"{n} x{c}" for n, c in counts.items()]
        calls = sorted({"mathlib." + m for _, src in kernels
                        for m in re.findall(r"mathlib\.(\w+)", src)})
        more = len(names) - _SHOWN_KERNELS
        line = (f"kernels: {len(kernels)} in all traces, {len(counts)} distinct ("
                + ", ".join(names[:_SHOWN_KERNELS])
                + (f", and {more} more" if more > 0 else "") + ")")
        out = [_clip(line)]
        inexact = inexact_ops(kernels)
        if calls or inexact:
            out.append(_clip("  math library calls: " + (", ".join(calls) or "none")
                             + ("; within 3 ulp of eager: " + ", ".join(inexact)
                                if inexact else "")))
        return out

    def full(self) -> str:
        """The whole report: every trace's guards, lifted tensors, branch points,
        write-backs, side effects, generated program and kernel source, and every
        fallback."""
        out = self._header()
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
            elif t["python_replays"] is not None:
                out.append(f"  kernels in use after {t['python_replays']} replays as "
                           "generated Python")
            out.append("  graph:")
            out.extend("    " + ln for ln in t["graph"].splitlines())
            for name, src in t["kernels"]:
                out.append(f"  kernel {name}:")
                out.extend("    " + ln for ln in src.splitlines())
        if self.fallbacks:
            out.append("\nfallbacks:")
            for r in self.fallbacks:
                out.append(f"  {r}")
                out.append(f"    hint: {hint_for(r)}")
        out.extend(self._piece_lines("full"))
        return "\n".join(out)


def _traces_text(ix: list) -> str:
    if len(ix) == 1:
        return f"trace {ix[0]}"
    if len(ix) > 4:
        return f"{len(ix)} traces ({', '.join(map(str, ix[:3]))}, ...)"
    return "traces " + ", ".join(map(str, ix))


def _trace_info(key, variant, path, reason, argnames) -> dict:
    args_key, kw_key, grad_mode, alias, autocast, default_device = key
    guards = [f"grad mode enabled == {grad_mode}"]
    if autocast is not None:
        guards.append(f"autocast == {autocast}")
    if default_device is not None:
        guards.append(f"default device == {default_device}")
    if alias:
        guards.append(f"argument tensors sharing memory: {alias_text(alias)}")
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
    guards.extend(str(g) for g in variant.pre.guards if type(g) is Declared)
    if variant.pre.pystate is not None:
        guards.extend(str(g) for g in variant.pre.pystate.guards)
    for g in variant.pre.guards:
        if type(g) is GradNone:
            r = g.ref
            what = _name((r.index,), argnames) if isinstance(r, ArgTensor) else r.describe()
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
            # replays that ran as generated Python before the kernels were swapped in
            # (0: from the first replay on, loaded from the disk cache); None: not yet
            "python_replays": path.python_replays,
            "unbuilt": None if path.build_later is None else
            "never replayed, and a later trace of the same arguments took over (built at "
            "its first replay)" if path.superseded else
            "not replayed yet (built at its first replay or compiler.wait())"}
