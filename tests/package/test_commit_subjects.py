"""scripts/check_commit_subjects.py: subjects of at most 72 characters, for the
commits after a base commit only; a clone without that base checks nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import REPO

SCRIPT = REPO / "scripts" / "check_commit_subjects.py"
LONG = "Subject " + "x" * 65  # 73 characters
SHORT = "A subject that fits"
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def git(folder: Path, *args: str) -> str:
    env = {**os.environ, **IDENTITY}
    done = subprocess.run(
        ["git", *args], cwd=folder, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(folder: Path, subject: str) -> str:
    git(folder, "commit", "-q", "--allow-empty", "-m", subject, "-m", "A body line.")
    return git(folder, "rev-parse", "HEAD")


def check(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=folder, capture_output=True, text=True
    )


def history(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose history before the base has a long subject; the base."""
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q")
    commit(folder, LONG)  # older history: never checked
    base = commit(folder, SHORT)
    return folder, base


def test_subjects_after_the_base_within_the_limit_pass(tmp_path):
    folder, base = history(tmp_path)
    commit(folder, "x" * 72)
    done = check(folder, base)
    assert done.returncode == 0, done.stdout
    assert "1 commits after" in done.stdout and "0 over 72" in done.stdout


def test_a_long_subject_after_the_base_fails_and_is_named(tmp_path):
    folder, base = history(tmp_path)
    commit(folder, SHORT)
    long_one = commit(folder, LONG)
    done = check(folder, base)
    assert done.returncode == 1
    assert f"{long_one[:7]}" in done.stdout and "73 characters" in done.stdout
    assert "1 over 72" in done.stdout


def test_a_branch_from_before_the_base_is_older_history(tmp_path):
    # Commits merged in from a branch that left before the base are not new.
    folder, base = history(tmp_path)
    git(folder, "checkout", "-q", "-b", "old", f"{base}~1")
    commit(folder, LONG)
    git(folder, "checkout", "-q", "-")
    git(folder, "merge", "-q", "--no-edit", "old")
    done = check(folder, base)
    assert done.returncode == 0, done.stdout
    assert "1 commits after" in done.stdout  # the merge commit alone


def test_a_shallow_clone_without_the_base_checks_nothing_and_says_so(tmp_path):
    folder, base = history(tmp_path)
    commit(folder, LONG)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{folder}", str(clone))
    done = check(clone, base)
    assert done.returncode == 0
    assert "is not in this clone; nothing checked" in done.stdout


def test_a_folder_that_is_no_repository_checks_nothing(tmp_path):
    done = check(tmp_path)
    assert done.returncode == 0
    assert "nothing checked" in done.stdout


def test_the_lint_step_runs_the_check():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "scripts/check_commit_subjects.py" in lint
