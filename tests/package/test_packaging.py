"""Packaging: adapters live under harness.adapters only; the core needs no torch."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
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


def test_no_torch_in_the_environment():
    assert importlib.util.find_spec("torch") is None
