"""The import graph of the core: no cycles, and the model layer at the bottom.

Read with ``ast`` from the source (nothing is imported). Every import counts,
also one inside a function: a lazy import still ties the two modules together.
Imports under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import REPO, import_cycles

PACKAGE = REPO / "harness"
# What the model layer may use besides itself: the value types and small helpers
# every layer shares. Nothing that knows about tasks, adapters, runs or serving.
MODEL_LAYER_MAY_IMPORT = {
    "harness.types",
    "harness.errors",
    "harness.boundary.sanitise",
    "harness.boundary.threadsafe_ast",  # the call-text parser's (models/calls.py)
    "harness.boundary.deadline",  # a leaf: asyncio only
    "harness.boundary.atomic",  # a leaf: the one file writer (the response cache's)
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _known(name: str) -> str | None:
    """The module of the package that ``name`` (a module or a name in one) is in."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (child.level - 1)]
                    base = ".".join([*parts, *([child.module] if child.module else [])])
                names = [f"{base}.{alias.name}" for alias in child.names] or [base]
            else:
                visit(child)
                continue
            for name in names:
                target = _known(name)
                if target is not None and target != module:
                    found.add(target)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def cycles() -> list[list[str]]:
    return import_cycles(GRAPH)


def test_the_graph_is_read():
    assert "harness.models.base" in GRAPH["harness.models.cache"]
    assert "harness.task.contract" in GRAPH["harness.task.registry"]


def test_no_import_cycle_in_the_core():
    assert cycles() == []


def test_the_model_layer_imports_nothing_above_it():
    above = {
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if module.startswith("harness.models")
        for target in targets
        if not target.startswith("harness.models") and target not in MODEL_LAYER_MAY_IMPORT
    }
    assert not above, sorted(above)
