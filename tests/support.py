"""What tests in every folder share: where the tests are, the toy suite, the
perfect toy agent a fake server plays, and the harness as a child process."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_llm_server import toy_agent

# This folder: the helper modules (toy_adapter.py, fake_llm_server.py...) that
# harness processes started by a test import through PYTHONPATH.
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

# ../shared beside the project: benchmark data that is not on PyPI and vendored
# official code for the parity tests. CI has it; a user's clone does not, and there
# the tests that need it are skipped (CI=true: they fail), counted in one summary
# line (conftest.py). Each part has a variable of its own; HARNESS_SHARED moves all.
SHARED = Path(os.environ.get("HARNESS_SHARED") or REPO.parent / "shared")
# kind: (variable, default location, what must be inside it, what it is)
SHARED_KINDS = {
    "data": ("HARNESS_SHARED_DATA", SHARED / "data", ("vitabench", "finmcp"), "VitaBench and FinMCP data"),
    "tau2-bench": ("HARNESS_TAU2_CHECKOUT", SHARED / "vendor/tau2-bench", ("src/tau2",), "tau2-bench v1.0.1 checkout"),
    "vitabench-code": ("HARNESS_VITA_SOURCE", SHARED / "vendor/vitabench", ("src/vita",), "VitaBench's official code"),
}  # fmt: skip
SHARED_SKIP = "../shared missing:"  # how every such skip reason starts
# The id of the one case a parametrisation read from ../shared at collection has
# without it: the test asks for the part (a fixture), which skips it, or fails in CI.
SHARED_PLACEHOLDER = "shared-missing"
shared_missing: set[str] = set()  # the kinds a test of this session asked for and lacked


def shared_location(kind: str) -> Path:
    """Where that part of ../shared is looked for (it may not be there)."""
    variable, default, _, _ = SHARED_KINDS[kind]
    return Path(os.environ.get(variable) or default)


def shared_available(kind: str) -> bool:
    """Whether that part is there (for what runs at collection, before any test)."""
    _, _, inside, _ = SHARED_KINDS[kind]
    return all((shared_location(kind) / entry).is_dir() for entry in inside)


def shared_path(kind: str) -> Path:
    """That part of ../shared; the test is skipped where it is missing, and fails
    there under CI (CI=true), where it must exist."""
    if shared_available(kind):
        return shared_location(kind)
    variable, _, _, what = SHARED_KINDS[kind]
    reason = f"{SHARED_SKIP} {what} not found at {shared_location(kind)} ({variable})"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason, pytrace=False)
    shared_missing.add(kind)
    pytest.skip(reason)


# The toy adapter (toy_adapter.py) under the benchmark name its suites use.
TOY_ADAPTER = "toy=toy_adapter:ToyAdapter"
TOY_SUITE = "name: toy\nentries:\n  - benchmark: toy\n    subsets: [easy, hard]\n"

# What in a record depends on the clock.
TIMING = {"started_at", "latency_s", "wall_time_s"}

# A fake server's handler that solves every toy task: add(n=target), then an answer.
toy_reply = toy_agent(1.0)


def harness_process(argv: list[str], **popen: object) -> subprocess.Popen:
    """``python -m harness.cli ARGV`` as a child process, its output piped as text
    (``popen`` overrides, e.g. ``stdout=subprocess.DEVNULL``)."""
    options: dict = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    # Ctrl-C as a terminal delivers it: a shell's background job (the tests run
    # with `&`, under nohup) starts with SIGINT ignored, and a child would inherit that.
    options["preexec_fn"] = _default_sigint
    options.update(popen)
    return subprocess.Popen([sys.executable, "-m", "harness.cli", *argv], **options)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def fill_disk(room_bytes: int):
    """A ``preexec_fn`` for a harness child process (``harness_process(argv,
    preexec_fn=fill_disk(N))``) on a disk with ``room_bytes`` left: no file it
    writes may grow past that size. The kernel refuses the write that would
    (RLIMIT_FSIZE: EFBIG, "File too large", where a full disk says ENOSPC), inside
    whatever library is writing, so every error path from a real write is taken;
    SIGXFSZ, which would kill the process instead, is ignored. Needs no root,
    unlike a small filesystem mounted for the test."""
    import resource

    def limit() -> None:
        _default_sigint()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (room_bytes, room_bytes))

    return limit


def wait_for_lines(path: Path, count: int, timeout_s: float = 60.0) -> bool:
    """Whether ``path`` holds at least ``count`` lines within ``timeout_s`` (a run's
    samples.jsonl while it is being written)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= count:
            return True
        time.sleep(0.02)
    return False


def without_timing(value):
    """A record with what depends on the clock left out (everything else of two
    equal runs must match)."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def source_modules(packages: dict[str, Path]) -> dict[str, Path]:
    """Module name -> source file, for packages given as name -> folder
    (``{"harness.adapters": REPO / "adapters"}``: the folder's files are named
    as that package's modules)."""
    found = {}
    for package, folder in packages.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imported_names(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """The dotted names an import statement reads (a module, or a name in one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    return [f"{base}.{alias.name}" for alias in node.names] or [base]


def import_graph(modules: dict[str, Path], type_checking: bool = True) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports, read with ``ast`` (nothing is
    imported). Every import statement counts: at module level, inside a function
    (a lazy import still ties two modules together) and, with ``type_checking``,
    under ``if TYPE_CHECKING:``."""

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    def imports_of(module: str) -> set[str]:
        path = modules[module]
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found: set[str] = set()
        pending: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
        while pending:
            for child in ast.iter_child_nodes(pending.pop()):
                if not type_checking and _is_type_checking(child):
                    continue
                if isinstance(child, ast.Import | ast.ImportFrom):
                    targets = {owner(name) for name in _imported_names(child, package)}
                    found |= {t for t in targets if t is not None and t != module}
                else:
                    pending.append(child)
        return found

    return {module: imports_of(module) for module in modules}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module in an import graph
    (module -> the modules it imports), by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return groups
