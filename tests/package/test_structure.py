"""The core stays benchmark-agnostic: benchmarks live in adapters/, never in harness/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from support import REPO

CORE = REPO / "harness"
# The official benchmark packages the adapters wrap (import names).
BENCHMARK_PACKAGES = {"bfcl_eval", "tau2"}


def adapter_names() -> list[str]:
    return sorted(p.name for p in (REPO / "adapters").iterdir() if (p / "__init__.py").is_file())


def core_files() -> list[Path]:
    return sorted(p for p in CORE.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_adapter_names_are_found_by_this_test():
    assert {"bfcl", "tau2", "vitabench", "finmcp"} <= set(adapter_names())


def name_pattern(names: list[str]) -> re.Pattern[str]:
    """A benchmark's name as a whole word or a whole part of an identifier, in any
    case: ``bfcl_eval``, ``tau2_mean``, ``FinMCP-Bench``, ``FinMCPAdapter`` (a part
    ends where a lower-case letter or digit does not follow), never inside another
    word (an adapter named ``parity`` is not found in ``disparity``). "τ²" is how
    tau2 is printed."""
    words = "|".join(re.escape(name) for name in names)
    return re.compile(rf"(?<![a-z0-9])(?i:{words})(?![a-z0-9])|τ²")


def benchmark_mentions(names: list[str], files: list[Path]) -> list[str]:
    pattern = name_pattern(names)
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    return found


def test_no_core_file_names_a_benchmark():
    # In code, comments and docstrings alike.
    found = benchmark_mentions(adapter_names(), core_files())
    assert not found, "benchmark names in the core:\n" + "\n".join(found)


def test_benchmark_names_are_matched_as_whole_identifiers():
    pattern = name_pattern(["bfcl", "tau2", "finmcp", "parity"])
    for text in (
        "from bfcl_eval import x",
        "tau2_mean",
        "FinMCP-Bench",
        "FinMCPAdapter",
        "BFCL's",
        "a parity check",
        "τ² bench",
        "harness.adapters.tau2",
    ):
        assert pattern.search(text), text
    for text in ("disparity", "comparity", "tau22", "mybfcl", "finmcpx", "tau2x"):
        assert not pattern.search(text), text


def test_an_adapter_named_after_a_common_word_passes_the_core_check():
    assert benchmark_mentions(["parity"], core_files()) == []


def test_no_core_module_imports_a_benchmark_package():
    found = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in BENCHMARK_PACKAGES or name.startswith("harness.adapters."):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {name}")
    assert not found, "benchmark imports in the core:\n" + "\n".join(found)
