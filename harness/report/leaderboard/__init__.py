"""Leaderboards over runs: a summary across benchmarks plus one detail table per benchmark.

Every row names what produced it (model, strategy, user simulator, judge, whether
the environment's feedback was the standard one) and shows its infrastructure
errors, missing samples and not-run subsets beside the metrics, so that no number
is read without its conditions. Primary metrics carry a 95% bootstrap interval
over tasks (see ``harness.results.stats``). Published numbers can be shown beside the runs
(``reference=``, see ``harness.results.reference``).

One unit per output: metrics are stored as fractions; the human tables (Markdown,
LaTeX, the report) show percent and say so in every metric column's header; CSV
and JSON keep fractions and name their unit (a ``unit`` column, ``unit`` fields).
Notes under a table never state a unit, so they cannot contradict its cells.

The package holds one concept a module: ``rows`` (what a row holds), ``loading``
(a run folder as a row), ``composite_score``, ``reference_rows`` (published rows),
``table``/``summary``/``benchmark_tables``/``money``/``tables`` (the tables),
``cells`` (cell text) and one renderer a format (``markdown``, ``latex``,
``csv_table``, ``json_doc``). The names below are the public interface.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import ConfigError
from harness.report.leaderboard.cells import format_cell, format_metric, format_seconds
from harness.report.leaderboard.composite_score import composite_of
from harness.report.leaderboard.csv_table import CSV_HEADER, render_csv
from harness.report.leaderboard.json_doc import render_json, result_json
from harness.report.leaderboard.latex import latex_escape, render_latex
from harness.report.leaderboard.loading import (
    env_feedback_label,
    load_board,
    load_run,
    strategy_label,
)
from harness.report.leaderboard.markdown import render_markdown
from harness.report.leaderboard.reference_rows import reference_notes, reference_rows
from harness.report.leaderboard.rows import (
    CI_TOLERANCE,
    FRACTION,
    STANDARD_FEEDBACK,
    BenchmarkCounts,
    BenchmarkEntry,
    Composite,
    Cost,
    MetricValue,
    RunResult,
    metric_interval,
)
from harness.report.leaderboard.table import PERCENT_HEADER, Column, Table
from harness.report.leaderboard.tables import build_tables
from harness.results import stats
from harness.results.frames import training_step

__all__ = [
    "CI_TOLERANCE",
    "CSV_HEADER",
    "FORMATS",
    "FRACTION",
    "PERCENT_HEADER",
    "STANDARD_FEEDBACK",
    "BenchmarkCounts",
    "BenchmarkEntry",
    "Column",
    "Composite",
    "Cost",
    "MetricValue",
    "RunResult",
    "Table",
    "build_tables",
    "composite_of",
    "env_feedback_label",
    "format_cell",
    "format_metric",
    "format_seconds",
    "latex_escape",
    "load_board",
    "load_run",
    "metric_interval",
    "reference_notes",
    "reference_rows",
    "render",
    "render_csv",
    "render_json",
    "render_latex",
    "render_markdown",
    "result_json",
    "strategy_label",
    "training_step",
]


FORMATS = ("md", "csv", "json", "latex")


def render(
    run_dirs: list[Path],
    fmt: str = "md",
    reference: str | list[str] | None = None,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> str:
    """The leaderboard of ``run_dirs`` (and published rows) as md, csv, json or latex."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown leaderboard format '{fmt}' (known: {', '.join(FORMATS)})")
    results, references = load_board(run_dirs, reference, n_boot, seed)
    if fmt == "json":
        return render_json(results, references, n_boot, seed)
    if fmt == "csv":
        return render_csv(results)
    tables = build_tables(results)
    footer = reference_notes(references)
    if fmt == "latex":
        return render_latex(tables, footer)
    return render_markdown(tables, footer)
