"""Headless Chromium for the report tests.

``.ci/install-chromium.sh`` installs it. A test that needs it fails when it is
missing, unless HARNESS_SKIP_BROWSER=1 asks to skip it on purpose. Set
HARNESS_TEST_ARTIFACTS to a folder to keep screenshots and dumped pages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def chromium() -> str:
    path = (
        os.environ.get("HARNESS_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )
    if path:
        return path
    if os.environ.get("HARNESS_SKIP_BROWSER") == "1":
        pytest.skip("HARNESS_SKIP_BROWSER=1: browser test skipped on request")
    pytest.fail("Chromium not found; run .ci/install-chromium.sh (or set HARNESS_CHROMIUM)")


def run_chromium(profile_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """Chromium headless, offline, with a fresh profile; JavaScript gets 5 s of virtual time."""
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile_dir / 'chromium-profile'}",
        "--virtual-time-budget=5000",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def dump_dom(profile_dir: Path, url: str) -> str:
    done = run_chromium(profile_dir, "--dump-dom", url)
    assert "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


def keep_artifact(path: Path) -> None:
    folder = os.environ.get("HARNESS_TEST_ARTIFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(folder) / path.name)
