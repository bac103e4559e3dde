"""The layout of harness/: one folder per concept, in layers, and a short top level.

The import graph is read with ``ast`` from the source. Every import counts: at
module level, inside a function, and under ``if TYPE_CHECKING:`` (a type-only
import still ties two modules together, for a reader and for the type checker).
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys

from support import REPO, import_cycles, import_graph, source_modules

PACKAGE = REPO / "harness"

# The concepts of harness/ from the bottom up: a module may import its own concept
# and those listed before it, never one listed after it.
LAYERS = [
    "__init__",  # harness itself: its public names, imported on first use
    "adapters",  # the face of the top-level adapters/ folder
    "errors",
    "boundary",  # untrusted input made safe; time and effect bounds
    "types",  # the value types every layer shares
    "models",  # model clients
    "task",  # the adapter contract
    "config",  # what a run is asked to do
    "store",  # what a run writes
    "episode",  # one episode played: the loop, its attempts, the tap on the actor
    "strategies",  # one sample played by a strategy around the episode
    "serving",  # model servers the harness starts
    "run",  # one suite run
    "results",  # numbers from run folders
    "report",  # results rendered for people
    "view",  # the report's page served live over run folders
    "evaluate",  # run_suite
    "executors",  # where sweep runs go
    "commands",  # the command line's commands
    "cli",
    "testing",  # fake servers for tests and benchmarks
]
TOP_LEVEL_LIMIT = 8
# What the contract may never depend on: how runs are executed, scored, reported.
NOT_IN_THE_CONTRACT = {
    "run",
    "results",
    "report",
    "view",
    "commands",
    "strategies",
    "serving",
    "executors",
}
# Who may import the rendering of results.
REPORT_USERS = {"report", "view", "commands"}


MODULES = source_modules({"harness": PACKAGE})
# The benchmark adapters are the package harness.adapters once installed.
WITH_ADAPTERS = source_modules({"harness": PACKAGE, "harness.adapters": REPO / "adapters"})


def concept(module: str) -> str:
    """harness.run.runner -> run; harness.cli -> cli; harness -> __init__."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


GRAPH = import_graph(MODULES)


def importers_of(prefix: str) -> dict[str, set[str]]:
    """Modules outside ``prefix`` -> what they import inside it."""
    found: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        if module == prefix or module.startswith(prefix + "."):
            continue
        inside = {t for t in targets if t == prefix or t.startswith(prefix + ".")}
        if inside:
            found[module] = inside
    return found


def cycles() -> list[list[str]]:
    return import_cycles(GRAPH)


def test_the_graph_is_read_with_type_only_imports():
    assert "harness.task.contract" in GRAPH["harness.task.registry"]
    # The contract names the model client only under TYPE_CHECKING.
    assert "harness.models.base" in GRAPH["harness.task.contract"]


def test_no_import_cycle_even_through_type_only_imports():
    assert cycles() == []


def test_no_import_cycle_under_harness_or_adapters():
    # The adapters too, lazy and type-only imports included: a cycle is named by
    # the modules in it.
    graph = import_graph(WITH_ADAPTERS)
    assert "harness.adapters.tau2.domains" in graph["harness.adapters.tau2.evaluation"]
    found = import_cycles(graph)
    assert not found, f"import cycles (each the modules in it): {found}"


def test_every_concept_has_a_layer():
    assert {concept(m) for m in MODULES} <= set(LAYERS)


def test_each_concept_imports_only_those_below_it():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if rank[concept(target)] > rank[concept(module)]
    )
    assert not upward, upward


def test_the_contract_imports_nothing_of_runs_results_or_reports():
    found = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if concept(module) == "task"
        for target in targets
        if concept(target) in NOT_IN_THE_CONTRACT
    )
    assert not found, found


def test_the_commands_are_imported_by_the_cli_alone():
    assert importers_of("harness.commands") == {}
    # The command line loads its commands by module name.
    from harness.cli import COMMANDS

    assert {module for _, module in COMMANDS} <= {m for m in MODULES if concept(m) == "commands"}


def test_the_report_is_used_by_the_commands_alone():
    users = {concept(module) for module in importers_of("harness.report")}
    assert users <= REPORT_USERS, importers_of("harness.report")


def test_the_top_level_is_short():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_LEVEL_LIMIT, top


def test_the_contract_face_hands_on_every_public_name_of_the_contract():
    import harness.task
    from harness.task import contract

    tree = ast.parse(MODULES["harness.task.contract"].read_text(encoding="utf-8"))
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and not node.name.startswith("_")
    }
    assert defined <= set(harness.task.__all__)
    for name in defined:
        assert getattr(harness.task, name) is getattr(contract, name)


def test_the_results_face_gives_the_tables_of_frames():
    from harness import results
    from harness.results import frames

    for name in ("records", "aggregates", "runs", "task_outcomes"):
        assert getattr(results, name) is getattr(frames, name)
    assert not hasattr(results, "no_such_table")


def test_the_results_face_loads_no_tables_for_its_light_modules():
    # Tables, marks and statistics import harness.results.coverage and nonstandard
    # (adapters too); asking the face for them must not import pandas.
    code = (
        "import sys; from harness.results import coverage, nonstandard, unscored; "
        "print(sorted(m for m in ('pandas', 'harness.results.frames') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def documented_names() -> list[str]:
    """The harness names README.md and docs/ show: `harness.x.y` in backticks and
    the names of their ``from harness... import`` lines."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        found += re.findall(r"`(harness(?:\.[A-Za-z_]\w*)+)", text)
        for module, names in re.findall(r"^from (harness[\w.]*) import ([\w, ]+)$", text, re.M):
            found += [f"{module}.{name.strip()}" for name in names.split(",")]
    return sorted(set(found))


def test_every_name_the_docs_show_resolves():
    names = documented_names()
    assert "harness.task.Adapter" in names and "harness.results" in names
    missing = []
    for name in names:
        parts = name.split(".")
        for size in range(len(parts), 0, -1):
            try:
                value = importlib.import_module(".".join(parts[:size]))
            except ImportError:
                continue
            try:
                for attribute in parts[size:]:
                    value = getattr(value, attribute)
            except AttributeError:
                missing.append(name)
            break
        else:
            missing.append(name)
    assert not missing, missing


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_the_adapter_guide_names_only_the_contract_module():
    # An adapter author imports from harness.task (and checks with harness.testing);
    # `harness.adapters` is the entry-point group's name, not a module to import.
    import harness.task

    guide = (REPO / "docs" / "adapters.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\bharness(?:\.[A-Za-z_]\w*)+", guide))
    allowed = {"harness.adapters", "harness.testing", "harness.testing.check_adapter"}
    allowed |= {f"harness.task.{name}" for name in harness.task.__all__}
    assert named, "the guide names no harness module"
    assert named <= allowed, sorted(named - allowed)


def reachable_from(module: str) -> set[str]:
    """Every module ``module`` imports, directly or through others."""
    seen: set[str] = set()
    stack = [module]
    while stack:
        for target in GRAPH[stack.pop()]:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


# The test-time rehearsal machinery: rehearsals, the rehearser, its prompts, its
# memory, its simulated world and the world-model probe.
REHEARSAL_MODULES = {
    f"harness.strategies.{name}"
    for name in ("rehearsal", "rehearser", "prompts", "memory", "sandbox", "world_model")
}


def test_the_episode_loop_has_a_home_of_its_own():
    assert {"harness.episode.loop", "harness.episode.attempts", "harness.episode.tap"} <= set(
        MODULES
    )
    assert not any(concept(t) == "strategies" for t in reachable_from("harness.episode"))


def test_the_plain_strategy_loads_no_rehearsal_code():
    assert REHEARSAL_MODULES <= set(MODULES)  # the names above are real modules
    assert reachable_from("harness.strategies.plain") & REHEARSAL_MODULES == set()
    # ... while a rehearsal strategy does reach them (the check can fail).
    assert reachable_from("harness.strategies.rehearsal") & REHEARSAL_MODULES


def test_scoring_loads_no_strategy():
    loaded = reachable_from("harness.run.scoring")
    assert sorted(m for m in loaded if concept(m) == "strategies") == []


def test_the_registry_is_asked_in_few_places():
    """Stages ask a sample (or the run's adapters), not the registry again."""
    calls = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "get_adapter(" in line and "def get_adapter" not in line
    ]
    assert len(calls) <= 9, calls


def test_record_statuses_are_spelled_in_one_place():
    """harness/store/records.py names the statuses; every other module imports them."""
    spelled = sorted(
        str(path.relative_to(REPO))
        for path in PACKAGE.rglob("*.py")
        if '"infra_error"' in path.read_text(encoding="utf-8")
    )
    assert spelled == ["harness/store/records.py"], spelled
