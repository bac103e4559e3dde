"""A run's scores.json read as typed results: ``read_scores(path) -> RunScores``.

scores.json holds each benchmark's official aggregates; the intervals and the
coverage are computed from the records of its run folder (manifest.json and
samples.jsonl beside it), as the leaderboard computes them, so that a script's
numbers are the leaderboard's::

    from harness.results import read_scores

    scores = read_scores("results/smoke__oracle__plain")
    entry = scores.benchmarks["<benchmark>"]
    entry.headline, entry.interval, entry.coverage, entry.counts
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError
from harness.results import frames, stats
from harness.results.entries import BenchmarkEntry, benchmark_entries
from harness.store.run_store import SCORES, RunStore


@dataclass(frozen=True)
class RunScores:
    """What each benchmark of one run came to, as scored last."""

    run_dir: Path
    run_id: str
    benchmarks: dict[str, BenchmarkEntry]  # in the order of scores.json


def _run_dir(path: str | Path) -> Path:
    """The run folder of a scores.json path, or the folder itself."""
    given = Path(path)
    if given.is_dir():
        return given
    if given.name == SCORES and given.parent.is_dir():
        return given.parent
    raise ConfigError(f"{given}: no such run folder or {SCORES}")


def read_scores(path: str | Path, n_boot: int = stats.N_BOOT, seed: int = stats.SEED) -> RunScores:
    """The typed results of the run folder ``path`` (or of the folder holding the
    scores.json ``path`` names), with the leaderboard's intervals (``n_boot``
    bootstrap replicates from ``seed``). ConfigError, in one line, when there is no
    scores.json (score the run: ``harness score``), when it is not readable, or
    when the folder is not a run folder."""
    run_dir = _run_dir(path)
    store = RunStore(run_dir)
    if not store.scores_path.is_file():
        raise ConfigError(
            f"{run_dir} has no {SCORES}; score the run first: harness score {run_dir}"
        )
    # One line if there is no manifest.json beside it, or scores.json is not readable.
    run = frames.load(run_dir, conversation=False)  # numbers only
    tasks = frames.task_outcomes(frames.records_of([run]))
    return run_scores(run, benchmark_entries(run, tasks, n_boot, seed))


def run_scores(run: frames.LoadedRun, entries: dict[str, BenchmarkEntry]) -> RunScores:
    """The results of a loaded run whose entries are computed (``benchmark_entries``:
    the leaderboard's row of the run holds them too)."""
    return RunScores(
        run_dir=run.run_dir,
        run_id=str(run.scores.get("run_id") or run.run_id),
        benchmarks=dict(entries),  # a copy: the leaderboard marks drift in its own
    )
