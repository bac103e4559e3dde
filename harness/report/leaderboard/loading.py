"""A run folder as a leaderboard row: headline, interval, coverage, pass^k, cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.report.leaderboard.composite_score import composite_of
from harness.report.leaderboard.reference_rows import reference_rows
from harness.report.leaderboard.rows import (
    CI_TOLERANCE,
    STANDARD_FEEDBACK,
    BenchmarkEntry,
    Cost,
    RunResult,
)
from harness.results import frames as results
from harness.results import stats, unscored
from harness.results.coverage import run_limit
from harness.results.headlines import benchmark_info, estimator_for, is_count_metric, primary_metric
from harness.results.pricing import run_money
from harness.results.reference import ReferenceTable, load_references
from harness.results.stats import Estimate, TaskOutcome
from harness.store.manifest import Manifest


def _label(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("name") or "-")
    return "-" if value in (None, "") else str(value)


def strategy_label(value: Any) -> str:
    """A strategy's own label when it has one (it names e.g. the rehearser), else its name."""
    if isinstance(value, dict) and value.get("label"):
        return str(value["label"])
    return _label(value)


def env_feedback_label(value: Any) -> str:
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
        money=run_money(scores, manifest),
    )


def _primary_interval(
    entry: BenchmarkEntry, tasks: list[TaskOutcome], n_boot: int, seed: int
) -> None:
    """Attach the bootstrap CI of the primary metric, if it can be recomputed exactly."""
    official = entry.primary_value
    if official is None or not tasks:
        entry.ci_note = "no CI: no scored tasks" if official is not None else ""
        return
    estimator = estimator_for(entry.benchmark, entry.primary)
    result = stats.estimate(
        stats.by_subset(tasks), estimator, n_boot, stats.derive_seed(seed, entry.benchmark)
    )
    if abs(result.value - float(official)) > CI_TOLERANCE:
        entry.ci_note = (
            f"no CI: {entry.primary} could not be recomputed from the records "
            f"({result.value:.4f} vs official {float(official):.4f})"
        )
        return
    entry.interval = result.interval
    entry.replicates = result.replicates


def _drop_not_run(entry: BenchmarkEntry) -> None:
    """A metric over subsets none of which was run shows no number (a group score
    that the official formula would put at 0), only that it was not run."""
    scope_of = benchmark_info(entry.benchmark).metric_subsets
    for metric in entry.headline:
        scope = scope_of(metric)
        if scope is not None:
            entry.metric_scopes[metric] = tuple(scope)
    coverage = entry.coverage
    if coverage is None or not coverage.declared:
        return
    for metric, scope in entry.metric_scopes.items():
        if is_count_metric(metric) or coverage.restrict(scope).samples_scored:
            continue
        entry.not_run_metrics[metric] = "not run"
        entry.headline[metric] = None


def _pass_hat_k(
    benchmark: str, tasks: list[TaskOutcome], n_boot: int, seed: int
) -> dict[str, dict[int, Estimate]]:
    mode = benchmark_info(benchmark).pass_hat_k_trials
    if not mode or not tasks:
        return {}
    return stats.pass_hat_k_estimates(tasks, mode == "scored", n_boot, seed)


def _drop_unscored(entry: BenchmarkEntry, tasks: list[TaskOutcome]) -> None:
    """No number where nothing was scored: an aggregate over error records only is
    a formula applied to nothing. Clears the benchmark's fractional headline values,
    or those of a subset (headline keys name their subset as a '/'-separated part)."""
    why = unscored.tasks_reason(tasks)
    if why:
        entry.unscored = why
    else:
        for subset, group in stats.by_subset(tasks).items():
            why = unscored.tasks_reason(group)
            if why:
                entry.unscored_subsets[subset] = why
    entry.headline = {
        key: None if entry.why_none(key) and not is_count_metric(key) else value
        for key, value in entry.headline.items()
    }


def _env_feedback(settings: dict[str, Any], manifest: Manifest, strategy: Any) -> Any:
    """The run's environment feedback; a strategy that rewrites it says so in its settings."""
    value = settings.get("env_feedback", manifest.env_feedback)
    if value in (None, STANDARD_FEEDBACK) and isinstance(strategy, dict):
        return strategy.get("env_feedback", value)
    return value


def load_run(run_dir: Path, n_boot: int = stats.N_BOOT, seed: int = stats.SEED) -> RunResult:
    """Everything the leaderboard, plots and report show about one run folder."""
    return run_row(results.load(run_dir), n_boot, seed)


def run_row(
    run: results.LoadedRun, n_boot: int = stats.N_BOOT, seed: int = stats.SEED
) -> RunResult:
    """The leaderboard row of a loaded run: the official aggregates of its scores.json,
    with intervals, coverage and pass^k over the tasks of its record table (the
    table ``harness.results.frames.records`` gives a notebook)."""
    manifest, scores = run.manifest, run.scores
    settings = scores.get("settings") or {}
    records = results.records_of([run])
    tasks = results.task_outcomes(records)
    tasks_by_benchmark = stats.by_benchmark(tasks.values())
    entries: dict[str, BenchmarkEntry] = {}
    for benchmark, result in (scores.get("benchmarks") or {}).items():
        headline = result.get("headline") or {}
        entry = BenchmarkEntry(
            benchmark=benchmark,
            headline=headline,
            primary=primary_metric(benchmark, headline),
            counts=result.get("counts") or {},
            missing=sum((scores.get("missing_samples") or {}).get(benchmark, {}).values()),
            not_run={
                subset: (result.get("not_run_reasons") or {}).get(subset, "")
                for subset in result.get("not_run") or []
            },
            notes=list(result.get("notes") or []),
            subsets=result.get("subsets") or {},
            nonstandard=[str(item) for item in result.get("nonstandard") or []],
        )
        group = tasks_by_benchmark.get(benchmark, [])
        _drop_unscored(entry, group)
        _primary_interval(entry, group, n_boot, seed)
        trials = settings.get("trials") or manifest.trials or 1
        entry.coverage = results.benchmark_coverage(
            benchmark, group, trials, run_limit(manifest, benchmark), result.get("official_set")
        )
        _drop_not_run(entry)
        entry.pass_hat_k = _pass_hat_k(benchmark, group, n_boot, seed)
        entries[benchmark] = entry
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
        records=records,
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
    return rows, tables
