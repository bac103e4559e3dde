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
``table``/``summary``/``benchmark_tables``/``money``/``tables`` (the full tables),
``columns`` (chosen headline columns and their cells), ``cells`` (cell text) and one
renderer a format (``compact``: the terminal table; ``markdown``, ``latex``,
``csv_table``, ``json_doc``). The names below are the public interface.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import ConfigError
from harness.report.leaderboard.cells import format_cell, format_metric, format_seconds
from harness.report.leaderboard.columns import column_cell, parse_columns
from harness.report.leaderboard.compact import (
    column_headers,
    render_compact,
    row_label,
    run_folder_hint,
    table_notes,
)
from harness.report.leaderboard.composite_score import composite_of
from harness.report.leaderboard.csv_table import CSV_HEADER, render_csv
from harness.report.leaderboard.json_doc import render_json, result_json
from harness.report.leaderboard.latex import latex_escape, render_column_latex, render_latex
from harness.report.leaderboard.loading import (
    env_feedback_label,
    load_board,
    load_run,
    mark_drift,
    run_row,
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
from harness.results.frames import LoadedRun, RunOutcomes, training_step

__all__ = [
    "CI_TOLERANCE",
    "CSV_HEADER",
    "COLUMN_FORMATS",
    "FORMATS",
    "FRACTION",
    "PERCENT_HEADER",
    "RUN_TABLES",
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
    "mark_drift",
    "metric_interval",
    "reference_notes",
    "reference_rows",
    "render",
    "render_csv",
    "render_columns",
    "render_compact",
    "render_json",
    "render_latex",
    "render_markdown",
    "result_json",
    "strategy_label",
    "training_step",
    "write_run_tables",
]


# table: the compact terminal table; md: every table in full.
FORMATS = ("table", "md", "csv", "json", "latex")
# The formats that show chosen columns (``columns=``); the others show every metric.
COLUMN_FORMATS = ("table", "latex")


def render(
    run_dirs: list[Path],
    fmt: str = "md",
    reference: str | list[str] | None = None,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
    columns: str | None = None,
) -> str:
    """The leaderboard of ``run_dirs`` (and published rows) as the compact table, md,
    csv, json or latex; ``columns`` (``BENCH[:METRIC],overall``) for table and latex."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown leaderboard format '{fmt}' (known: {', '.join(FORMATS)})")
    if columns is not None and fmt not in COLUMN_FORMATS:
        raise ConfigError(
            f"--columns is for --format {' or '.join(COLUMN_FORMATS)} (--format {fmt} shows "
            "every metric)"
        )
    results, references = load_board(run_dirs, reference, n_boot, seed)
    if fmt in COLUMN_FORMATS:
        return render_columns(results, fmt, columns, n_boot, seed)
    if fmt == "json":
        return render_json(results, references, n_boot, seed)
    if fmt == "csv":
        return render_csv(results)
    return render_markdown(build_tables(results), reference_notes(references))


RUN_TABLES = "leaderboard.md"  # the full tables, in the run folder


def write_run_tables(
    run_dir: Path,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
    loaded: LoadedRun | None = None,
    entries: dict[str, BenchmarkEntry] | None = None,
    outcomes: RunOutcomes | None = None,
) -> str:
    """Write the full tables of a scored run into its folder (``RUN_TABLES``); return
    its compact table ('' when the run has no scores.json to show). ``loaded``,
    ``entries`` and ``outcomes``: the run as its end read it (``RunSummary.run``,
    its results' entries, computed with the same ``n_boot`` and ``seed``, and
    its record table and tasks), not read or built again."""
    if not (run_dir / "scores.json").is_file():
        return ""
    if loaded is None:
        results, _ = load_board([run_dir], None, n_boot, seed)
    else:
        results = [run_row(loaded, n_boot, seed, entries, outcomes)]
        mark_drift(results)  # as load_board marks its rows
    path = run_dir / RUN_TABLES
    path.write_text(render_markdown(build_tables(results), []), encoding="utf-8")
    return render_compact(
        results, parse_columns(None, results), n_boot, seed, hint=run_folder_hint(path)
    )


def render_columns(
    results: list[RunResult],
    fmt: str,
    columns: str | None = None,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> str:
    """The compact terminal table, or the LaTeX table for a paper column, of the
    chosen ``columns`` (default: every benchmark's headline, then the composite)."""
    specs = parse_columns(columns, results)
    if fmt == "table":
        return render_compact(results, specs, n_boot, seed)
    cells = [[column_cell(r, spec, n_boot, seed) for spec in specs] for r in results]
    labels = [row_label(r) for r in results]
    notes = table_notes(results, cells, specs)
    return render_column_latex(labels, cells, column_headers(specs, results), notes)
