"""The import graph of the core: no cycles, and the model layer at the bottom.

Read with ``ast`` from the source (nothing is imported). Every import counts,
also one inside a function: a lazy import still ties the two modules together.
Imports under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

from support import REPO, import_cycles, import_graph, source_modules

PACKAGE = REPO / "harness"
# What the model layer may use besides itself: the value types and small helpers
# every layer shares. Nothing that knows about tasks, adapters, runs or serving.
MODEL_LAYER_MAY_IMPORT = {
    "harness.types",
    "harness.errors",
    "harness.boundary.sanitise",
    "harness.boundary.json_value",  # the JSON type names: no dependencies of its own
    "harness.boundary.threadsafe_ast",  # the call-text parser's (models/calls.py)
    "harness.boundary.deadline",  # a leaf: asyncio only
    "harness.boundary.atomic",  # a leaf: the one file writer (the response cache's)
}


MODULES = source_modules({"harness": PACKAGE})
# Type-only imports never run: left out here (the layout tests count them).
GRAPH = import_graph(MODULES, type_checking=False)


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
