"""The summary table: one row per run, the primary metric of every benchmark."""

from __future__ import annotations

from harness.report.leaderboard.money import money_cells, money_notes
from harness.report.leaderboard.rows import BenchmarkEntry, MetricValue, RunResult
from harness.report.leaderboard.table import (
    Column,
    Table,
    benchmarks_of,
    binned_column,
    column_label,
    coverage_note,
    drift_note,
    identity_cells,
    nonstandard_note,
    with_legend,
)
from harness.results import conditions, nonstandard
from harness.results.composite import CompositeDefinition, default_composite
from harness.results.coverage import PARTIAL_MARK
from harness.results.entries import NO_COUNTS
from harness.results.headlines import benchmark_info, benchmark_label


def _not_run_cell(entries: list[BenchmarkEntry]) -> str:
    items = [f"{e.benchmark}/{s}" for e in entries for s in sorted(e.not_run)]
    return ", ".join(items) or "-"


def summary_table(results: list[RunResult]) -> Table:
    benchmarks = benchmarks_of(results)
    identity = [
        Column("run", "run"),
        Column("model", "model"),
        Column("strategy", "strategy"),
        Column("env_feedback", "env feedback"),
        Column("user", "user model"),
        Column("judge", "judge model"),
    ]
    if any(r.step is not None for r in results):
        identity.append(Column("step", "step"))
    if any(r.fingerprint for r in results):
        identity.append(Column("weights", "weights"))
    columns = list(identity)
    for bench in benchmarks:
        metric = benchmark_info(bench).primary or _first_primary(results, bench) or "?"
        columns.append(
            Column(f"bench:{bench}", f"{column_label(bench, results)} {metric}", "metric")
        )
    composite = _shown_composite(results)
    if composite is not None:
        columns.append(Column("composite", composite.label, "metric"))
    columns += [
        Column("records", "records", "count"),
        Column("errors", "infra/score errors", "count"),
        *binned_column(results, benchmarks),
        Column("missing", "missing", "count"),
        Column("not_run", "not run"),
        Column("calls", "model calls", "count"),
        Column("prompt_tokens", "prompt tokens", "tokens"),
        Column("completion_tokens", "completion tokens", "tokens"),
        Column("cost_usd", "cost (USD)", "usd"),
        Column("gpu_s", "GPU-s", "gpu_seconds"),
        Column("rehearsal_ratio", "rehearsal cost ×"),
        Column("cached_calls", "cached calls", "count"),
        Column("wall_s", "wall time", "seconds"),
    ]
    rows = []
    notes = []
    if composite is not None:
        notes.append(
            f"{composite.definition} ({composite.source}); a row without all of "
            f"{', '.join(benchmark_label(b) for b in composite.benchmarks)} has none; "
            f"{PARTIAL_MARK} on it: a component is partial."
        )
    notes.append(
        "Intervals: 95% bootstrap over tasks (trials of a task kept together, resampled "
        "within subsets); published rows have none."
    )
    coverage_notes: list[str] = []
    nonstandard_notes: list[str] = []
    drift_notes: list[str] = []
    for result in results:
        cells = identity_cells(result)
        entries = list(result.benchmarks.values())
        for bench in benchmarks:
            entry = result.benchmarks.get(bench)
            if entry is None:
                cells[f"bench:{bench}"] = MetricValue(None)
            elif entry.unscored:
                cells[f"bench:{bench}"] = MetricValue(None, note=entry.unscored)
            else:
                cells[f"bench:{bench}"] = MetricValue(
                    entry.primary_value,
                    entry.interval,
                    "" if entry.primary else "-",
                    partial=entry.partial,
                    nonstandard=bool(entry.nonstandard),
                    drift=bool(entry.drift),
                )
                if entry.partial and entry.primary_value is not None:
                    coverage_notes.append(coverage_note(result, entry))
                if entry.nonstandard:
                    nonstandard_notes.append(nonstandard_note(result, entry))
                if entry.drift:
                    drift_notes.append(drift_note(result, entry))
        if composite is not None:
            cells["composite"] = result.composite.metric()
            if result.composite.value is not None:
                for caveat in result.composite.caveats:
                    coverage_notes.append(
                        f"{PARTIAL_MARK} {result.name} {composite.label}: {caveat}"
                    )
        for entry in entries:
            if entry.ci_note:  # a missing interval is always explained where it is missing
                notes.append(f"{result.name} {benchmark_label(entry.benchmark)}: {entry.ci_note}")
        if not result.is_reference:
            cells["records"] = sum((e.counts or NO_COUNTS).records for e in entries)
            cells["errors"] = sum(e.errors for e in entries)
            cells["binned"] = sum((e.counts or NO_COUNTS).excluded for e in entries)
            cells["missing"] = sum(e.missing for e in entries)
            cells["not_run"] = _not_run_cell(entries)
        if result.cost is not None:
            cells["calls"] = result.cost.calls
            cells["prompt_tokens"] = result.cost.prompt_tokens
            cells["completion_tokens"] = result.cost.completion_tokens
            cells["cached_calls"] = result.cost.cached_calls
            cells["wall_s"] = result.cost.wall_s
            cells.update(money_cells(result.cost.money))
        rows.append(cells)
    notes += with_legend(coverage_notes)
    notes += nonstandard.with_legend(nonstandard_notes)
    notes += conditions.with_legend(drift_notes)
    notes += money_notes([r for r in results if not r.is_reference])
    return Table("summary", "Summary across benchmarks (metrics in %)", columns, rows, notes)


def _shown_composite(results: list[RunResult]) -> CompositeDefinition | None:
    """The composite definition, when some row holds every benchmark it names."""
    definition = default_composite()
    if definition is None:
        return None
    if any(definition.applies_to(set(r.benchmarks)) or r.composite.published for r in results):
        return definition
    return None


def _first_primary(results: list[RunResult], bench: str) -> str | None:
    for result in results:
        entry = result.benchmarks.get(bench)
        if entry is not None and entry.primary:
            return entry.primary
    return None
