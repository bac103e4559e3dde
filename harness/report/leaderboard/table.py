"""A leaderboard table (columns with a kind, rows of cells) and the notes its tables share."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.report.leaderboard.rows import BenchmarkEntry, RunResult
from harness.results import conditions, nonstandard
from harness.results.coverage import LEGEND, PARTIAL_MARK, Coverage
from harness.results.entries import NO_COUNTS
from harness.results.headlines import benchmark_label, sort_benchmarks

PERCENT_HEADER = " (%)"


@dataclass
class Column:
    key: str
    label: str
    kind: str = "text"  # text | metric | count | tokens | seconds

    @property
    def header(self) -> str:
        """The label as a human table shows it: a metric column names its unit."""
        return self.label + PERCENT_HEADER if self.kind == "metric" else self.label


@dataclass
class Table:
    key: str  # "summary" or a benchmark name
    title: str
    columns: list[Column]
    rows: list[dict[str, object]]
    notes: list[str] = field(default_factory=list)


def column_label(bench: str, results: list[RunResult]) -> str:
    """The benchmark's label with what its rows were measured under (e.g. the user
    simulator), each condition once, in the rows' order."""
    conditions: list[str] = []
    for result in results:
        entry = result.benchmarks.get(bench)
        for condition in entry.conditions if entry is not None else []:
            if condition not in conditions:
                conditions.append(condition)
    label = benchmark_label(bench)
    return f"{label} [{'; '.join(conditions)}]" if conditions else label


def binned_column(results: list[RunResult], benchmarks: list[str]) -> list[Column]:
    """The column of records a benchmark's own rule left out (binned), where a run has any."""
    shown = any(
        (entry.counts or NO_COUNTS).excluded
        for result in results
        if not result.is_reference
        for bench, entry in result.benchmarks.items()
        if bench in benchmarks
    )
    return [Column("binned", "binned by rule", "count")] if shown else []


def identity_cells(result: RunResult) -> dict[str, object]:
    return {
        "run": result.name,
        "model": result.model,
        "strategy": result.strategy,
        "env_feedback": result.env_feedback,
        "user": result.user_model,
        "judge": result.judge_model,
        "step": "-" if result.step is None else str(result.step),
        "weights": result.fingerprint or "-",
    }


def benchmarks_of(results: list[RunResult]) -> list[str]:
    return sort_benchmarks({b for r in results for b in r.benchmarks})


def coverage_note(result: RunResult, entry: BenchmarkEntry, metric: str = "") -> str:
    """The note that explains a partial mark: what the marked number covers (the
    benchmark, or the subsets a per-subset metric is over)."""
    coverage = entry.metric_coverage(metric) if metric else entry.coverage
    assert coverage is not None  # only partial numbers get a note
    where = benchmark_label(entry.benchmark)
    if coverage is not entry.coverage:
        where += " " + scope_name(entry, metric, coverage)
    return f"{PARTIAL_MARK} {result.name} {where}: {coverage.describe()}"


def nonstandard_note(result: RunResult, entry: BenchmarkEntry) -> str:
    """The note that explains a non-standard mark: what departed from the benchmark's own."""
    return nonstandard.note(result.name, benchmark_label(entry.benchmark), entry.nonstandard)


def drift_note(result: RunResult, entry: BenchmarkEntry) -> str:
    """The note that explains a drift mark: what the run's conditions differ in."""
    label = result.name if not result.is_reference else f"{result.model} ({result.reference})"
    return conditions.note(label, benchmark_label(entry.benchmark), entry.drift)


def scope_name(entry: BenchmarkEntry, metric: str, coverage: Coverage) -> str:
    """A group score by its name; a per-subset metric by the subsets it is over."""
    if metric in entry.metric_scopes:
        return metric
    return ", ".join(s.name for s in coverage.subsets)


def with_legend(coverage_notes: list[str]) -> list[str]:
    """The partial mark's meaning once, then what each marked number covers."""
    unique = list(dict.fromkeys(coverage_notes))
    return [LEGEND, *unique] if unique else []
