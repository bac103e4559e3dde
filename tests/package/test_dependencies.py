"""Declared dependencies are exactly what the package imports."""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from importlib.metadata import packages_distributions

import tomllib
from support import REPO

from harness.boundary import threadsafe_ast

SHIPPED = ("harness", "adapters")  # what the wheel carries


def _imported_modules() -> set[str]:
    found: set[str] = set()
    for root in SHIPPED:
        for path in (REPO / root).rglob("*.py"):
            for node in ast.walk(threadsafe_ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "harness"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = {_name(r) for r in project["dependencies"]}
    optional = {_name(r) for reqs in project["optional-dependencies"].values() for r in reqs}
    return required, optional


@cache
def _installed() -> dict[str, list[str]]:
    return packages_distributions()


def _distributions(module: str) -> set[str]:
    """The distributions that provide an import name (the name itself for an
    optional one that is not installed here, e.g. ray)."""
    names = _installed().get(module) or [module]
    return {d.lower().replace("_", "-") for d in names}


def test_every_imported_package_is_declared():
    required, optional = _declared()
    undeclared = {
        module
        for module in _imported_modules()
        if not _distributions(module) & (required | optional)
    }
    assert not undeclared, f"imported but not declared: {sorted(undeclared)}"


def test_every_required_dependency_is_imported():
    required, _ = _declared()
    imported = set().union(*(_distributions(m) for m in _imported_modules()))
    assert required - imported == set(), "declared but never imported"


def test_packages_once_declared_but_unused_stay_out():
    required, _ = _declared()
    # datasets: the Hugging Face copies are raw JSON files whose records do not
    # fit one Arrow schema (adapters/vitabench/data.py, adapters/finmcp/data.py).
    assert not required & {"datasets"}
    # httpx: litellm's capped transport (harness/models/capped_transport.py).
    assert {"httpx", "huggingface-hub", "pandas"} <= required
    # aiohttp: the direct client speaks HTTP itself (harness/models/http1.py).
    assert "aiohttp" not in required
