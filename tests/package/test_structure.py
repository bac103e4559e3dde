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


def test_no_core_file_names_a_benchmark():
    # Names as words or parts of identifiers (bfcl_eval, tau2_mean, FinMCP-Bench),
    # in code, comments and docstrings alike; "τ²" is how tau2 is printed.
    pattern = re.compile("|".join([*map(re.escape, adapter_names()), "τ²"]), re.IGNORECASE)
    found = []
    for path in core_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "benchmark names in the core:\n" + "\n".join(found)


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
