"""The import structure of eager/, compiler/ and runtime/, measured from the source (AST),
counting every import of our own modules, including those inside functions.

The layers the docs describe (docs/ARCHITECTURE-*.md: runtime below eager below compiler,
eager's core below its ops, nn and optim) are not yet what the imports say: eager, compiler
and runtime form one tangle held together by imports placed inside functions.  Until that
is untangled, this test is a ratchet: it fails when the tangle grows (a larger strongly
connected set of files, more imports inside functions, or a new upward import from runtime
into eager/compiler or from eager into compiler at module level).  Lower the bounds as the
structure improves; they must only go down.
"""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("eager", "compiler", "runtime")

#: the bounds as measured when the ratchet was set (lower them as imports are untangled)
MAX_LARGEST_CYCLE = 185          # files in the largest strongly connected set
MAX_IMPORTS_IN_FUNCTIONS = 139   # imports of our own modules placed inside functions


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def _files():
    for pkg in PACKAGES:
        for dirpath, _, names in os.walk(os.path.join(ROOT, pkg)):
            for n in names:
                if n.endswith(".py"):
                    yield os.path.join(dirpath, n)


def _resolve(mod: str, node, modules: set) -> list:
    """Our modules an import statement in ``mod`` names."""
    out = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = mod.split(".")
            is_pkg = mod in _PACKAGES_SEEN
            parts = parts[:len(parts) - node.level + (1 if is_pkg else 0)]
            base = ".".join(parts + ([base] if base else []))
        names = [base] + [f"{base}.{a.name}" for a in node.names]
    for n in names:
        while n and n not in modules:
            n = n.rpartition(".")[0]
        if n and n.split(".")[0] in PACKAGES:
            out.append(n)
    return out


_PACKAGES_SEEN: set = set()


def _graph():
    paths = list(_files())
    modules = {_module_name(p) for p in paths}
    _PACKAGES_SEEN.update(_module_name(p) for p in paths if p.endswith("__init__.py"))
    edges: dict = {m: set() for m in modules}
    inner = []
    for p in paths:
        mod = _module_name(p)
        with open(p, encoding="utf-8") as f:
            tree = ast.parse(f.read(), p)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(mod, node, modules):
                    if target != mod:
                        edges[mod].add(target)
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)) and \
                            _resolve(mod, node, modules):
                        inner.append((mod, node.lineno))
    return edges, inner


def _largest_scc(edges: dict) -> int:
    """Tarjan's algorithm, iterative."""
    index, low, on, stack, best = {}, {}, set(), [], 0
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                size = 0
                while True:
                    w = stack.pop()
                    on.discard(w)
                    size += 1
                    if w == v:
                        break
                best = max(best, size)
    return best


def test_the_import_tangle_does_not_grow():
    edges, inner = _graph()
    assert len(edges) > 150  # the walk found the packages
    largest = _largest_scc(edges)
    assert largest <= MAX_LARGEST_CYCLE, (
        f"the largest import cycle spans {largest} files (bound {MAX_LARGEST_CYCLE}): an "
        "import added an edge back up the layers")
    assert len(inner) <= MAX_IMPORTS_IN_FUNCTIONS, (
        f"{len(inner)} imports of our own modules inside functions (bound "
        f"{MAX_IMPORTS_IN_FUNCTIONS}): import at module level from a lower layer instead")


def _module_level_imports(prefix: str):
    """(module, our module it imports) for the module-level imports of ``prefix``'s files."""
    edges, _ = _graph()
    for path in _files():
        mod = _module_name(path)
        if not mod.startswith(prefix):
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(mod, node, set(edges)):
                    yield mod, target


def test_runtime_imports_neither_eager_nor_compiler_at_module_level():
    for mod, target in _module_level_imports("runtime"):
        assert not target.startswith(("eager", "compiler")), (
            f"{mod} imports {target} at module level: runtime is the bottom layer")


def test_eager_never_imports_the_compiler_at_module_level():
    for mod, target in _module_level_imports("eager"):
        assert not target.startswith("compiler"), (
            f"{mod} imports {target} at module level (eager.compile is a lazy alias)")
