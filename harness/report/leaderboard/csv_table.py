"""The leaderboard as one tidy CSV: a row per (run, benchmark, metric)."""

from __future__ import annotations

import csv
import io

from harness.report.leaderboard.rows import FRACTION, RunResult, metric_interval
from harness.results.coverage import Coverage
from harness.results.entries import COUNT_NAMES, NO_COUNTS
from harness.results.headlines import is_count_metric, sort_benchmarks
from harness.results.stats import Interval

CSV_HEADER = [
    "benchmark",
    "run",
    "model",
    "strategy",
    "env_feedback",
    "user_model",
    "judge_model",
    "step",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "unit",
    "partial",
    "samples_scored",
    "samples_official",
    "subsets_run",
    "subsets_official",
    "trials",
    "source",
    "note",
    # Settings that are not the benchmark's own (harness.results.nonstandard), "; "-joined.
    "nonstandard",
]
# How a row's score conditions differ from its column's (harness.results.conditions);
# present only when some row's do.
DRIFT_COLUMN = "drift"
# The coverage columns of a row that has none (counts, cost, published numbers).
_NO_COVERAGE = ["", "", "", "", "", ""]


def _coverage_cells(coverage: Coverage | None) -> list[str | int]:
    """CSV cells: partial (true/false) and what the value covers."""
    if coverage is None:
        return list(_NO_COVERAGE)
    official = coverage.samples_official
    return [
        "true" if coverage.partial else "false",
        coverage.samples_scored,
        "" if official is None else official,
        len(coverage.subsets_run),
        len(coverage.official_subsets) if coverage.declared else "",
        coverage.trials,
    ]


def _csv_rows(result: RunResult) -> list[list[object]]:
    ident = [
        result.name,
        result.model,
        result.strategy,
        result.env_feedback,
        result.user_model,
        result.judge_model,
        "" if result.step is None else result.step,
    ]
    source = f"published:{result.reference}" if result.is_reference else "run"
    rows: list[list[object]] = []

    def add(
        bench: str,
        metric: str,
        value: object,
        unit: str,
        interval: Interval | None = None,
        note: str = "",
        coverage: Coverage | None = None,
    ) -> None:
        low = "" if interval is None else interval.low
        high = "" if interval is None else interval.high
        value = "" if value is None else value
        covered = _coverage_cells(coverage)
        entry = result.benchmarks.get(bench)
        departs = "; ".join(entry.nonstandard) if entry is not None else ""
        rows.append(
            [bench, *ident, metric, value, low, high, unit, *covered, source, note, departs]
        )

    for bench in sort_benchmarks(set(result.benchmarks)):
        entry = result.benchmarks[bench]
        for name, value in entry.headline.items():
            unit = "count" if is_count_metric(name) else FRACTION
            coverage = None
            if entry.coverage is not None and unit == FRACTION and value is not None:
                coverage = entry.metric_coverage(name)
            note = (
                entry.why_none(name)
                if value is None
                else "; ".join(coverage.reasons() if coverage is not None else [])
            )
            add(bench, name, value, unit, metric_interval(entry, name), note, coverage)
        for subset, curve in sorted(entry.pass_hat_k.items()):
            coverage = entry.coverage.restrict([subset]) if entry.coverage else None
            for k, found in curve.items():
                if f"pass^{k}/{subset}" in entry.headline:
                    continue  # the adapter's own row above, with this interval
                reasons = "; ".join(coverage.reasons()) if coverage is not None else ""
                add(
                    bench,
                    f"pass^{k}/{subset}",
                    found.value,
                    FRACTION,
                    found.interval,
                    reasons,
                    coverage,
                )
        if not result.is_reference:
            counts = (entry.counts or NO_COUNTS).to_dict()
            for name in COUNT_NAMES:
                add(bench, name, counts[name], "count")
            add(bench, "missing", entry.missing, "count")
            add(bench, "not_run", ";".join(sorted(entry.not_run)), "subsets")
    composite = result.composite
    if composite.value is not None:
        caveats = "; ".join(composite.caveats)
        add("composite", "overall", composite.value, FRACTION, composite.interval, caveats)
        rows[-1][CSV_HEADER.index("partial")] = "true" if composite.caveats else "false"
    elif composite.missing:
        add("composite", "overall", "", "partial: no " + ";".join(composite.missing))
    for name, value in result.extra.items():
        add("extra", name, value, FRACTION)
    if result.cost is not None:
        add("run", "calls", result.cost.calls, "count")
        add("run", "prompt_tokens", result.cost.prompt_tokens, "tokens")
        add("run", "completion_tokens", result.cost.completion_tokens, "tokens")
        add("run", "cached_calls", result.cost.cached_calls, "count")
        add("run", "wall_s", "" if result.cost.wall_s is None else result.cost.wall_s, "s")
        money = result.cost.money
        if money is not None:
            add("run", "cost_usd", money.usd, "USD", note=money.usd_note)
            add("run", "gpu_seconds", money.gpu_seconds, "GPU-s", note=money.gpu_note)
            add("run", "server_seconds", money.server_seconds, "s")
            ratio_unit = f"ratio ({money.rehearsal_basis})" if money.rehearsal_basis else "ratio"
            add(
                "run",
                "rehearsal_ratio",
                money.rehearsal_ratio,
                ratio_unit,
                note=money.rehearsal_note,
            )
    return rows


def render_csv(results: list[RunResult]) -> str:
    """One row per (run, benchmark, metric): a tidy table for pandas and spreadsheets.
    Metrics are fractions; counts, tokens and seconds carry their unit."""
    out = io.StringIO()
    writer = csv.writer(out)
    # The drift column only where some row has other score conditions than its
    # column's, so tables of comparable runs read as they always did.
    drift = any(entry.drift for result in results for entry in result.benchmarks.values())
    writer.writerow([*CSV_HEADER, *([DRIFT_COLUMN] if drift else [])])
    for result in results:
        for row in _csv_rows(result):
            entry = result.benchmarks.get(str(row[0]))
            writer.writerow([*row, *([entry.drift if entry else ""] if drift else [])])
    return out.getvalue()
