"""Chosen columns of a results table and their cells: ``BENCH`` (its primary metric),
``BENCH:METRIC`` (any headline metric of the benchmark, e.g. a subset's
``pass^1/<subset>``) or ``overall`` (the composite). ``harness paper``'s table and the
leaderboard's compact and LaTeX tables take their ``--columns`` here.

A cell holds the value, its 95% bootstrap interval over tasks (only where the
interval was recomputed to the official value) and its marks.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import ConfigError
from harness.report.leaderboard.rows import CI_TOLERANCE, RunResult, metric_interval
from harness.results import stats
from harness.results.headlines import benchmark_info, benchmark_label, estimator_for, primary_metric
from harness.results.stats import Interval

ALPHA = 0.05
OVERALL = "overall"


@dataclass(frozen=True)
class ColumnSpec:
    benchmark: str  # or "overall"
    metric: str | None  # None: the benchmark's primary metric

    @property
    def header(self) -> str:
        if self.benchmark == OVERALL:
            return "Overall"
        label = benchmark_label(self.benchmark)
        return label if self.metric is None else f"{label} {self.metric}"


@dataclass
class Cell:
    value: float | None  # a fraction
    interval: Interval | None = None
    partial: bool = False
    p_value: float | None = None  # raw, against the baseline
    p_adjusted: float | None = None  # Holm, within the run's tested columns
    bold: bool = False
    nonstandard: bool = False  # not the benchmark's own configuration (harness.results.nonstandard)
    drift: bool = False  # other score conditions than its column's (harness.results.conditions)

    @property
    def significant(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < ALPHA


def parse_columns(text: str | None, results: list[RunResult]) -> list[ColumnSpec]:
    """Columns from ``--columns`` (comma-separated), default every benchmark's primary
    metric, then the composite when some run has it."""
    runs = [r for r in results if not r.is_reference]
    if not text:
        from harness.results.headlines import sort_benchmarks

        specs = [
            ColumnSpec(b, None) for b in sort_benchmarks({b for r in runs for b in r.benchmarks})
        ]
        if any(r.composite.value is not None for r in runs):
            specs.append(ColumnSpec(OVERALL, None))
        return specs
    known = {b for r in results for b in r.benchmarks}
    specs = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        bench, _, metric = item.partition(":")
        if bench == OVERALL and not metric:
            specs.append(ColumnSpec(OVERALL, None))
            continue
        if bench not in known:
            raise ConfigError(
                f"--columns: no run has benchmark '{bench}' (have: {', '.join(sorted(known))}"
                f"{', overall' if known else ''})"
            )
        if metric and not any(
            metric in r.benchmarks[bench].headline for r in results if bench in r.benchmarks
        ):
            raise ConfigError(f"--columns: no run of '{bench}' has the metric '{metric}'")
        specs.append(ColumnSpec(bench, metric or None))
    if not specs:
        raise ConfigError("--columns names no column")
    return specs


def _metric_interval(
    result: RunResult, spec: ColumnSpec, value: float, n_boot: int, seed: int
) -> Interval | None:
    """The 95% interval of a non-primary headline metric, when its adapter declares an
    estimator that reproduces the official value."""
    if spec.metric not in benchmark_info(spec.benchmark).estimators:
        return None
    tasks = [t for t in result.tasks.values() if t.benchmark == spec.benchmark]
    if not tasks:
        return None
    found = stats.estimate(
        stats.by_subset(tasks),
        estimator_for(spec.benchmark, spec.metric),
        n_boot,
        stats.derive_seed(seed, spec.benchmark, spec.metric),
    )
    return found.interval if abs(found.value - value) <= CI_TOLERANCE else None


def column_cell(result: RunResult, spec: ColumnSpec, n_boot: int, seed: int) -> Cell:
    if spec.benchmark == OVERALL:
        composite = result.composite
        return Cell(composite.value, composite.interval, bool(composite.caveats))
    entry = result.benchmarks.get(spec.benchmark)
    if entry is None:
        return Cell(None)
    metric = spec.metric or primary_metric(spec.benchmark, entry.headline)
    value = entry.headline.get(metric) if metric else None
    if metric is None or value is None:
        return Cell(None)
    if metric == entry.primary or metric_interval(entry, metric) is not None:
        interval = metric_interval(entry, metric)
    elif result.is_reference:
        interval = None
    else:
        interval = _metric_interval(result, spec, float(value), n_boot, seed)
    cell = Cell(float(value), interval, entry.metric_partial(metric))
    cell.nonstandard = bool(entry.nonstandard)
    cell.drift = bool(entry.drift)
    return cell
