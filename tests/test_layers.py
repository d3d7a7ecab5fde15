"""The import structure of eager/, compiler/ and runtime/, measured from the source (AST),
counting every import of our own modules, including those inside functions.

The layers are those the docs describe (docs/ARCHITECTURE-eager.md, "Layers"): runtime below
eager below compiler; in eager a core (dtypes, tensor, ops/base, autograd/node, dispatch and
the helpers inplace, devices, construct), then the ops, fn, the engine, factories, methods
(the binder), and nn/optim/distributions/utils on top.  This test keeps them so:

* no import cycle at all between our modules.  An edge goes to the module that defines the
  imported name: ``from eager.nn import functional`` is an edge to ``eager.nn.functional``,
  ``from eager.nn import Linear`` one to the package ``eager.nn`` (whose ``__init__``
  re-exports it);
* no import of our modules inside a function, apart from the allow-list below, each with
  its reason (a lazy import of an optional dependency, or a lazy alias);
* runtime imports neither eager nor the compiler, and eager never imports the compiler at
  module level.
"""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("eager", "compiler", "runtime")

#: (module, imported module) -> why that import stays inside a function
ALLOWED_IN_FUNCTIONS = {
    ("eager", "compiler"): "eager.compile and eager.compiler are lazy aliases: importing "
                           "eager never imports the compiler",
    ("eager.cuda", "runtime.cuda.array"): "eager.cuda.OutOfMemoryError is the CUDA "
                                          "allocator's class, looked up on first use: "
                                          "importing eager never imports numba-cuda",
}
# (compiler.codegen finds a device's backend, compiler/codegen/numba_<type>.py, by name at
# the first build, as dispatch finds eager/<type>/ops.py and runtime.device runtime/<type>/:
# numba and numba-cuda load only then, and no import statement names a device.)


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
        # the module that defines each name: a submodule when one has that name, else
        # the package or module itself
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                 for a in node.names]
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
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        for target in _resolve(mod, node, modules):
                            inner.append((mod, target, node.lineno))
    return edges, inner


def _largest_scc(edges: dict) -> list:
    """The largest strongly connected set of modules (Tarjan's algorithm, iterative)."""
    index, low, on, stack, best = {}, {}, set(), [], []
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
                members = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    members.append(w)
                    if w == v:
                        break
                if len(members) > len(best):
                    best = members
    return best


def test_no_import_cycles():
    edges, _ = _graph()
    assert len(edges) > 150  # the walk found the packages
    cycle = _largest_scc(edges)
    assert len(cycle) == 1, (
        f"an import cycle spans {len(cycle)} modules: {sorted(cycle)}; an import added an "
        "edge back up the layers (import from the lower module that defines the name)")


def test_no_imports_inside_functions_but_the_allowed():
    _, inner = _graph()
    stray = [f"{mod}:{line} imports {target}" for mod, target, line in inner
             if (mod, target) not in ALLOWED_IN_FUNCTIONS]
    assert not stray, ("imports of our own modules inside functions (import at module level "
                       "from a lower layer, or allow-list it with a reason): " + "; ".join(stray))
    assert len(inner) <= 25


def test_the_allow_list_is_used():
    _, inner = _graph()
    used = {(mod, target) for mod, target, _ in inner}
    assert set(ALLOWED_IN_FUNCTIONS) <= used, set(ALLOWED_IN_FUNCTIONS) - used


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


#: eager's modules that are the compiler's namespace, imported only when a user asks for them
COMPILER_ALIASES = {"eager.compiler"}   # torch.compiler's name: the compiler package itself


def test_eager_never_imports_the_compiler_at_module_level():
    for mod, target in _module_level_imports("eager"):
        if mod in COMPILER_ALIASES:
            continue
        assert not target.startswith("compiler"), (
            f"{mod} imports {target} at module level (eager.compile is a lazy alias)")
