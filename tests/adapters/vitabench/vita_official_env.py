"""A Python with VitaBench's official package (``vita``) installed, for parity tests.

The package comes from the vendored copy beside the project
(``<repo>/../shared/vendor/vitabench``, or ``HARNESS_VITA_SOURCE``; the test is
skipped where it is missing, and fails under CI: ``support.shared_path``), installed
without its declared dependencies (the web UI, plotting and LLM clients it lists
are not needed) plus the few packages its tools, prompts and evaluator import,
pinned to the versions the specification was verified with. The environment is
separate from the project's, built once under a cache folder keyed by the source
and the pins, and reused; ``HARNESS_VITA_OFFICIAL_PYTHON`` names a ready-made one
instead.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from support import shared_path

CACHE_ROOT = Path(
    os.environ.get("HARNESS_TEST_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "harness-tests"
)
DRIVER = Path(__file__).with_name("vita_official_driver.py")

# What vita's tools, prompts, data models and evaluator import (the pins that shape
# tool outputs and judge parsing are those the specification names).
REQUIREMENTS = [
    "pydantic==2.14.4",
    "thefuzz==0.22.1",
    "rapidfuzz==3.14.6",
    "holidays==0.109",
    "json-repair==0.64.6",
    "pyyaml>=6",
    "loguru>=0.7",
    "python-dotenv>=1",
    "deepdiff>=8",
    "toml>=0.10",
    "addict>=2.4",
    "docstring-parser>=0.16",
    "requests>=2",
    "pandas>=2",
]


def _uv() -> list[str]:
    # On PATH, or as a module of python3 (how scripts/bootstrap.sh installs it).
    found = shutil.which("uv")
    return [found] if found else ["python3", "-m", "uv"]


BUILD_RECIPE = 2  # bump when _build changes


def _source_digest(source: Path) -> str:
    recipe = [BUILD_RECIPE, REQUIREMENTS, sys.version_info[:2]]
    digest = hashlib.sha256(json.dumps(recipe).encode())
    for path in sorted(source.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(source)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])}... failed:\n{done.stderr[-2000:]}")


def _build(folder: Path, vita_source: Path) -> None:
    if folder.exists():
        shutil.rmtree(folder)  # a build that did not finish
    folder.mkdir(parents=True)
    # Installed from a copy: the shared folder may be read-only, and the build
    # backend writes beside the sources.
    source = folder / "src"
    shutil.copytree(vita_source, source, ignore=shutil.ignore_patterns("__pycache__", ".git"))
    python = folder / "venv" / "bin" / "python"
    _run([*_uv(), "venv", "--quiet", "--python", sys.executable, str(folder / "venv")])
    # Byte-compiled at install: the driver starts in a second, also where
    # PYTHONDONTWRITEBYTECODE is set.
    install = [*_uv(), "pip", "install", "--quiet", "--compile-bytecode", "--python", str(python)]
    _run([*install, "--no-deps", str(source)])
    _run([*install, *REQUIREMENTS])
    (folder / "ready").write_text("ok\n")


def official_python() -> Path:
    """The interpreter of an environment where ``import vita`` is the benchmark's."""
    given = os.environ.get("HARNESS_VITA_OFFICIAL_PYTHON")
    if given:
        return Path(given)
    vita_source = shared_path("vitabench-code")
    folder = CACHE_ROOT / f"vita-official-{_source_digest(vita_source)}"
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / "vita-official.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time on a shared machine
        if not (folder / "ready").is_file():
            _build(folder, vita_source)
            for stale in CACHE_ROOT.glob("vita-official-*"):  # builds of older sources
                if stale.is_dir() and stale != folder:
                    shutil.rmtree(stale, ignore_errors=True)
    return folder / "venv" / "bin" / "python"


def official_package_dir(python: Path) -> Path:
    """The installed ``vita`` package folder of that environment."""
    done = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('vita').origin)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip()).parent


def run_driver(python: Path, request: dict, workdir: Path) -> dict:
    """Run one request through the driver in the official environment."""
    request_path = workdir / "request.json"
    answer_path = workdir / "answer.json"
    request_path.write_text(json.dumps(request, ensure_ascii=False), encoding="utf-8")
    # The C.UTF-8 locale is the one the specification's reference outputs were
    # captured under (the holiday tool's names follow the process locale).
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    env.pop("VITA_MODEL_CONFIG_PATH", None)
    done = subprocess.run(
        [str(python), str(DRIVER), str(request_path), str(answer_path)],
        capture_output=True,
        text=True,
        cwd=workdir,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"official driver failed:\n{done.stderr[-4000:]}")
    return json.loads(answer_path.read_text(encoding="utf-8"))
