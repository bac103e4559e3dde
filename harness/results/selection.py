"""Which runs the folders on a command line name (``leaderboard``, ``report``,
``compare``, ``plot``, ``paper``).

A folder given is a run folder (it holds ``manifest.json``), a folder of run folders
(a sweep: each checkpoint's run inside it, in name order), or neither (``results/``'s
published tables, a figures folder, a file a glob caught): those are skipped and named
in one line, so ``leaderboard results/*`` reads every run there. A run folder without
a single record did not start (its preflight failed, or it was stopped before its
first sample): it is no result, and is listed apart rather than shown as a run of 0
records. Only a path that does not exist, or a selection left with no run, is an error.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import ConfigError
from harness.store.run_store import MANIFEST, SAMPLES


@dataclass
class Selection:
    """The runs that command-line folders name, and what was left out and why."""

    runs: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)  # folders or files that hold no run
    not_started: list[Path] = field(default_factory=list)  # run folders without a record

    def notes(self) -> list[str]:
        """One line for each kind of folder left out (none when nothing was)."""
        lines = []
        if self.skipped:
            lines.append(f"skipped, not run folders: {_names(self.skipped)}")
        if self.not_started:
            lines.append(f"not started (no record), left out: {_names(self.not_started)}")
        return lines


def _names(paths: list[Path]) -> str:
    return ", ".join(str(p) for p in paths)


def is_run_folder(path: Path) -> bool:
    return (path / MANIFEST).is_file()


def started(run_dir: Path) -> bool:
    """Whether a run folder holds at least one record. Samples that are there but not
    a file count as started: reading the run then says what is wrong with them."""
    samples = run_dir / SAMPLES
    if not samples.exists():
        return False
    if not samples.is_file():
        return True
    with samples.open("rb") as handle:
        return any(line.strip() for line in handle)


def _add_run(selection: Selection, run_dir: Path) -> None:
    if started(run_dir):
        selection.runs.append(run_dir)
    else:
        selection.not_started.append(run_dir)


def select_runs(paths: Iterable[str | Path]) -> Selection:
    """The runs ``paths`` name (see the module's docstring); ConfigError for a path
    that does not exist."""
    selection = Selection()
    for path in map(Path, paths):
        if not path.exists():
            raise ConfigError(f"{path}: no such file or folder")
        if is_run_folder(path):
            _add_run(selection, path)
            continue
        inside = sorted(p for p in path.iterdir() if is_run_folder(p)) if path.is_dir() else []
        if not inside:
            selection.skipped.append(path)
        for run_dir in inside:
            _add_run(selection, run_dir)
    return selection


def runs_or_error(paths: Iterable[str | Path], quiet: bool = False) -> list[Path]:
    """The run folders ``paths`` name, saying on stderr (one line a kind) what was left
    out; ConfigError when no run is left."""
    given = list(paths)
    selection = select_runs(given)
    if not selection.runs:  # one line: the error says what was left out
        why = "; ".join(selection.notes()) or "nothing given"
        raise ConfigError(f"no run among {_names([Path(p) for p in given])} ({why})")
    if not quiet:
        for line in selection.notes():
            print(f"harness: {line}", file=sys.stderr)
    return selection.runs


def one_run(path: str | Path) -> Path:
    """The single run ``path`` is (``compare``'s A and B); ConfigError otherwise."""
    run_dir = Path(path)
    if not run_dir.exists():
        raise ConfigError(f"{run_dir}: no such file or folder")
    if not is_run_folder(run_dir):
        inside = [p for p in run_dir.iterdir() if is_run_folder(p)] if run_dir.is_dir() else []
        kind = f"a folder of {len(inside)} runs; name one of them" if inside else "not a run folder"
        raise ConfigError(f"{run_dir} is {kind}")
    if not started(run_dir):
        raise ConfigError(f"{run_dir} did not start: it holds no record")
    return run_dir
