"""Every table of a leaderboard, in order."""

from __future__ import annotations

from harness.report.leaderboard.benchmark_tables import benchmark_table, pass_hat_k_table
from harness.report.leaderboard.rows import MetricValue, RunResult
from harness.report.leaderboard.summary import summary_table
from harness.report.leaderboard.table import Column, Table, benchmarks_of, identity_cells


def extra_table(results: list[RunResult]) -> Table | None:
    """Published numbers that fit no benchmark column (e.g. a two-benchmark mean)."""
    names = sorted({k for r in results for k in r.extra})
    if not names:
        return None
    columns = [Column("run", "run"), Column("model", "model"), Column("strategy", "strategy")]
    columns += [Column(f"extra:{n}", n, "metric") for n in names]
    rows = []
    for result in results:
        if result.extra:
            cells = identity_cells(result)
            cells.update({f"extra:{n}": MetricValue(result.extra.get(n)) for n in names})
            rows.append(cells)
    return Table("extra", "Other published numbers (in %)", columns, rows)


def build_tables(results: list[RunResult]) -> list[Table]:
    tables = [summary_table(results)]
    for bench in benchmarks_of(results):
        tables.append(benchmark_table(results, bench))
        curve = pass_hat_k_table(results, bench)
        if curve is not None:
            tables.append(curve)
    extra = extra_table(results)
    if extra is not None:
        tables.append(extra)
    return tables
