"""A run folder as a leaderboard row: its benchmarks' entries (headline, interval,
coverage, pass^k: ``harness.results.entries``), composite and cost."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.report.leaderboard.composite_score import composite_of
from harness.report.leaderboard.reference_rows import reference_rows
from harness.report.leaderboard.rows import STANDARD_FEEDBACK, Cost, RunResult
from harness.results import frames as results
from harness.results import stats
from harness.results.conditions import column_drift
from harness.results.entries import BenchmarkEntry, benchmark_entries
from harness.results.pricing import run_money
from harness.results.reference import ReferenceTable, load_references
from harness.store.manifest import Manifest
from harness.store.scores import ScoresFile


def _label(value: object) -> str:
    if isinstance(value, dict):
        return str(value.get("name") or "-")
    return "-" if value in (None, "") else str(value)


def strategy_label(value: object) -> str:
    """A strategy's own label when it has one (it names e.g. the rehearser), else its name."""
    if isinstance(value, dict) and value.get("label"):
        return str(value["label"])
    return _label(value)


def env_feedback_label(value: object) -> str:
    if value in (None, STANDARD_FEEDBACK):
        return STANDARD_FEEDBACK
    return f"{value} (NON-STANDARD)"


def _cost(scores: dict[str, Any], manifest: Manifest) -> Cost:
    usage = scores.get("usage") or {}
    return Cost(
        calls=sum(int(u.get("calls", 0)) for u in usage.values()),
        prompt_tokens=sum(int(u.get("prompt_tokens", 0)) for u in usage.values()),
        completion_tokens=sum(int(u.get("completion_tokens", 0)) for u in usage.values()),
        cached_calls=sum(int(u.get("cached_calls", 0)) for u in usage.values()),
        wall_s=results.wall_seconds(manifest),
        by_role=usage,
        money=run_money(ScoresFile.from_dict(scores), manifest),
    )


def _env_feedback(settings: Mapping[str, object], manifest: Manifest, strategy: object) -> object:
    """The run's environment feedback; a strategy that rewrites it says so in its settings."""
    value = settings.get("env_feedback", manifest.env_feedback)
    if value in (None, STANDARD_FEEDBACK) and isinstance(strategy, dict):
        return strategy.get("env_feedback", value)
    return value


def load_run(run_dir: Path, n_boot: int = stats.N_BOOT, seed: int = stats.SEED) -> RunResult:
    """Everything the leaderboard, plots and report show about one run folder (its
    numbers: the report reads the transcripts it shows itself)."""
    return run_row(results.load(run_dir, conversation=False), n_boot, seed)


def run_row(
    run: results.LoadedRun,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
    entries: dict[str, BenchmarkEntry] | None = None,
    outcomes: results.RunOutcomes | None = None,
) -> RunResult:
    """The leaderboard row of a loaded run: the official aggregates of its scores.json,
    with intervals, coverage and pass^k over the tasks of its record table (the
    table ``harness.results.frames.records`` gives a notebook). ``entries``: those
    computed already (``benchmark_entries`` with the same ``n_boot`` and ``seed``);
    ``outcomes``: the run's record table and tasks, built already."""
    manifest, scores = run.manifest, run.scores
    settings = scores.get("settings") or {}
    if outcomes is None:
        outcomes = results.run_outcomes(run)
    tasks = outcomes.tasks
    if entries is None:
        entries = benchmark_entries(run, tasks, n_boot, seed)
    else:  # a copy: the row's entries are marked with drift in place
        entries = dict(entries)
    name = str(scores.get("run_id") or manifest.run_id or run.run_dir.name)
    strategy = settings.get("strategy", manifest.strategy)
    return RunResult(
        name=name,
        model=_label(settings.get("model", manifest.model)),
        strategy=strategy_label(strategy),
        env_feedback=env_feedback_label(_env_feedback(settings, manifest, strategy)),
        user_model=_label(settings.get("user_model", manifest.user_model)),
        judge_model=_label(settings.get("judge_model", manifest.judge_model)),
        benchmarks=entries,
        composite=composite_of(entries),
        cost=_cost(scores, manifest),
        step=results.training_step(manifest, name),
        strategy_settings=strategy if isinstance(strategy, dict) else {"name": strategy},
        run_dir=run.run_dir,
        fingerprint=(manifest.fingerprint or {}).get("id"),
        tasks=tasks,
        outcomes=outcomes,
    )


def load_board(
    run_dirs: list[Path],
    reference: str | list[str] | None = None,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> tuple[list[RunResult], list[ReferenceTable]]:
    """The rows of ``run_dirs``, then the published rows of the reference tables named."""
    tables = load_references(reference)
    rows = [load_run(Path(d), n_boot, seed) for d in run_dirs]
    for table in tables:
        rows.extend(reference_rows(table))
    mark_drift(rows)
    return rows, tables


def mark_drift(rows: list[RunResult]) -> None:
    """Set each benchmark entry's ``drift``: how its score conditions differ from its
    column's (``harness.results.conditions.column_drift``)."""
    for bench in {b for row in rows for b in row.benchmarks}:
        holding = [row for row in rows if bench in row.benchmarks]
        found = column_drift(
            [(row.benchmarks[bench].score_conditions, row.is_reference) for row in holding]
        )
        for row, difference in zip(holding, found, strict=True):
            row.benchmarks[bench] = replace(row.benchmarks[bench], drift=difference)
