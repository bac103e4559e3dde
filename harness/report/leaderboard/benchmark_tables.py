"""One table per benchmark: every headline metric, and pass^k by subset."""

from __future__ import annotations

from harness.report.leaderboard.rows import BenchmarkEntry, MetricValue, RunResult, metric_interval
from harness.report.leaderboard.table import (
    Column,
    Table,
    binned_column,
    column_label,
    coverage_note,
    drift_note,
    identity_cells,
    nonstandard_note,
    scope_name,
    with_legend,
)
from harness.results import conditions, nonstandard
from harness.results.coverage import PARTIAL_MARK, Coverage
from harness.results.entries import NO_COUNTS
from harness.results.headlines import benchmark_label, is_count_metric


def _scoped_note(result: RunResult, entry: BenchmarkEntry, scoped: dict[str, Coverage]) -> str:
    """One note for a row's partial per-subset (or per-group) metrics: what each covers."""
    parts = []
    for name, coverage in scoped.items():
        text = f"{name} {coverage.samples_scored}/{coverage.samples_official}"
        if coverage.trials > 1:
            text += f" ({coverage.pairs_scored}/{coverage.pairs_official} pairs)"
        parts.append(text)
    label = benchmark_label(entry.benchmark)
    return f"{PARTIAL_MARK} {result.name} {label} by scope, samples scored/official: " + "; ".join(
        parts
    )


def _metric_columns(results: list[RunResult], bench: str) -> list[tuple[str, str]]:
    """(column id, label) over all rows' headline keys: primary first, counts last."""
    labels: dict[str, str] = {}
    primary_id: str | None = None
    for result in results:
        entry = result.benchmarks.get(bench)
        if entry is None:
            continue
        if entry.primary and primary_id is None:
            primary_id = entry.primary
        for key in entry.headline:
            labels.setdefault(key, key)
    ordered = list(labels)
    if primary_id in labels:
        ordered = [primary_id] + [c for c in ordered if c != primary_id]
    fractions = [(c, labels[c]) for c in ordered if not is_count_metric(labels[c])]
    return fractions + [(c, labels[c]) for c in ordered if is_count_metric(labels[c])]


def _lookup(entry: BenchmarkEntry, column: str) -> float | None:
    return entry.headline.get(column)


def benchmark_table(results: list[RunResult], bench: str) -> Table:
    metric_columns = _metric_columns(results, bench)
    columns = [
        Column("run", "run"),
        Column("model", "model"),
        Column("strategy", "strategy"),
        Column("user", "user model"),
        Column("judge", "judge model"),
    ]
    columns += [
        Column(f"metric:{c}", label, "count" if is_count_metric(label) else "metric")
        for c, label in metric_columns
    ]
    columns += [
        Column("coverage", "coverage"),
        Column("records", "records", "count"),
        Column("infra_errors", "infra errors", "count"),
        *binned_column(results, [bench]),
        Column("score_errors", "score errors", "count"),
        Column("missing", "missing", "count"),
        Column("not_run", "not run"),
    ]
    rows = []
    notes: list[str] = []
    coverage_notes: list[str] = []
    nonstandard_notes: list[str] = []
    drift_notes: list[str] = []
    for result in results:
        entry = result.benchmarks.get(bench)
        if entry is None:
            continue
        if entry.nonstandard:
            nonstandard_notes.append(nonstandard_note(result, entry))
        if entry.drift:
            drift_notes.append(drift_note(result, entry))
        cells = identity_cells(result)
        scoped: dict[str, Coverage] = {}  # partial metrics over part of the benchmark
        for column, label in metric_columns:
            value = _lookup(entry, column)
            if is_count_metric(label):
                cells[f"metric:{column}"] = None if value is None else int(value)
                continue
            partial = value is not None and entry.metric_partial(column)
            # A metric over subsets none of which ran shows '-', like a subset not run.
            why = "" if column in entry.not_run_metrics else entry.why_none(column)
            cells[f"metric:{column}"] = MetricValue(
                value,
                metric_interval(entry, column),
                why,
                partial=partial,
                nonstandard=bool(entry.nonstandard),
                drift=bool(entry.drift),
            )
            coverage = entry.metric_coverage(column) if partial else None
            if coverage is None:
                continue
            if coverage is entry.coverage:
                coverage_notes.append(coverage_note(result, entry))
            else:
                scoped[scope_name(entry, column, coverage)] = coverage
        if scoped:
            coverage_notes.append(_scoped_note(result, entry, scoped))
        if entry.coverage is not None:
            cells["coverage"] = entry.coverage.summary()
        if not result.is_reference:
            counts = entry.counts or NO_COUNTS
            cells["records"] = counts.records
            cells["infra_errors"] = counts.infra_errors
            cells["binned"] = counts.excluded
            cells["score_errors"] = counts.score_errors
            cells["missing"] = entry.missing
            cells["not_run"] = (
                ", ".join(
                    f"{subset} ({reason})" if reason else subset
                    for subset, reason in sorted(entry.not_run.items())
                )
                or "-"
            )
            if entry.ci_note:
                notes.append(f"{result.name}: {entry.ci_note}")
        for note in entry.notes:
            if note not in notes and not result.is_reference:
                notes.append(note)
        rows.append(cells)
    notes += with_legend(coverage_notes)
    notes += nonstandard.with_legend(nonstandard_notes)
    notes += conditions.with_legend(drift_notes)
    title = f"{column_label(bench, results)} ({bench}; metrics in %)"
    return Table(bench, title, columns, rows, notes)


def pass_hat_k_table(results: list[RunResult], bench: str) -> Table | None:
    """pass^k per subset for every k up to the trials, each with its interval."""
    rows_of = [(r, r.benchmarks[bench]) for r in results if bench in r.benchmarks]
    rows_of = [(r, e) for r, e in rows_of if e.pass_hat_k]
    if not rows_of:
        return None
    max_k = max(k for _, e in rows_of for curve in e.pass_hat_k.values() for k in curve)
    columns = [
        Column("run", "run"),
        Column("model", "model"),
        Column("strategy", "strategy"),
        Column("subset", "subset"),
        Column("tasks", "tasks", "count"),
        Column("coverage", "coverage"),
    ]
    columns += [Column(f"k:{k}", f"pass^{k}", "metric") for k in range(1, max_k + 1)]
    rows, coverage_notes, nonstandard_notes, drift_notes = [], [], [], []
    for result, entry in rows_of:
        if entry.nonstandard:
            nonstandard_notes.append(nonstandard_note(result, entry))
        if entry.drift:
            drift_notes.append(drift_note(result, entry))
        for subset, curve in sorted(entry.pass_hat_k.items()):
            coverage = entry.coverage.restrict([subset]) if entry.coverage else None
            partial = coverage is not None and coverage.partial
            cells = identity_cells(result)
            cells["subset"] = subset
            cells["tasks"] = next(iter(curve.values())).n_tasks
            cells["coverage"] = coverage.summary() if coverage is not None else "-"
            for k in range(1, max_k + 1):
                found = curve.get(k)
                cells[f"k:{k}"] = (
                    MetricValue(
                        found.value,
                        found.interval,
                        partial=partial,
                        nonstandard=bool(entry.nonstandard),
                        drift=bool(entry.drift),
                    )
                    if found is not None
                    else MetricValue(None, note="-")
                )
            if partial:
                coverage_notes.append(coverage_note(result, entry, subset))
            rows.append(cells)
    notes = [
        "pass^k of a task with n trials of which c passed: C(c, k) / C(n, k); per subset its "
        "mean over tasks, for k up to the fewest trials of a task ('-' beyond). Intervals: "
        "95% bootstrap over tasks."
    ]
    notes += with_legend(coverage_notes)
    notes += nonstandard.with_legend(nonstandard_notes)
    notes += conditions.with_legend(drift_notes)
    title = f"{column_label(bench, results)} pass^k by subset (metrics in %)"
    return Table(f"{bench}:pass^k", title, columns, rows, notes)
