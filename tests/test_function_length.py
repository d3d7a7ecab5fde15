"""No function in eager/, compiler/ or runtime/ runs longer than MAX_LINES lines (issue 24).

Long functions are split at their natural seams into named helpers; a function that
cannot be split yet is listed in ALLOWED with the reason.  Lines are counted from the
``def`` line (decorators excluded) to the function's last line, nested functions
included in their parent's count and checked on their own as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("eager", "compiler", "runtime")
MAX_LINES = 120

#: "path::qualified name" -> why it may stay longer than MAX_LINES
ALLOWED: dict = {}


def _functions(tree):
    """Yield ``(qualified name, node)`` for every function and method in ``tree``."""
    stack = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    yield name, child
                stack.append((name + ".", child))
            else:
                stack.append((prefix, child))


def _long_functions() -> dict:
    """``"path::name" -> lines`` for each function longer than MAX_LINES."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            for name, node in _functions(tree):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    found[f"{rel}::{name}"] = lines
    return found


def test_no_function_exceeds_the_limit():
    over = {k: n for k, n in _long_functions().items() if k not in ALLOWED}
    assert not over, (
        f"functions longer than {MAX_LINES} lines (split them at their natural seams into "
        "named helpers, or list them in ALLOWED with a reason): "
        + ", ".join(f"{k} ({n})" for k, n in sorted(over.items())))


def test_allow_list_entries_still_exist():
    """An entry whose function was split (or removed) leaves the allow-list."""
    existing = set()
    for key in ALLOWED:
        rel, name = key.split("::")
        path = ROOT / rel
        if path.exists():
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            existing.update(f"{rel}::{n}" for n, _ in _functions(tree))
    assert set(ALLOWED) <= existing, sorted(set(ALLOWED) - existing)
