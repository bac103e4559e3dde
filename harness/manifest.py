"""The run manifest: everything that affects a number, written before the first sample."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from harness import __version__
from harness.errors import ConfigError

# Settings that must match for a rerun to resume a run folder (anything else,
# such as --limit or --trials, may change between resumes).
IDENTITY_KEYS = (
    "model",
    "strategy",
    "sampling",
    "user_model",
    "judge_model",
    "env_feedback",
    "suite_name",
)


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def git_sha() -> str:
    root = Path(__file__).resolve().parents[1]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    sha = out.stdout.strip()
    if out.returncode != 0 or not sha:
        return "unknown"
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        timeout=5,
    ).stdout.strip()
    return sha + ("-dirty" if dirty else "")


def base_versions() -> dict[str, str]:
    return {
        "harness": __version__,
        "harness_git": git_sha(),
        "python": platform.python_version(),
        "litellm": package_version("litellm"),
        "platform": f"{sys.platform}-{platform.machine()}",
    }


def identity(manifest: dict[str, Any]) -> dict[str, Any]:
    return {key: manifest.get(key) for key in IDENTITY_KEYS}


def check_resumable(old: dict[str, Any], new: dict[str, Any], run_dir: Path) -> None:
    """Refuse to mix two different runs in one folder."""
    before, after = identity(old), identity(new)
    changed = [key for key in IDENTITY_KEYS if before.get(key) != after.get(key)]
    if changed:
        raise ConfigError(
            f"{run_dir} holds a run with different {', '.join(changed)}; use another --out folder"
        )
