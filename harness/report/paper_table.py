"""The results table of a paper: chosen columns, mean ± CI, the best in bold, and
significance against a baseline run after Holm's correction. LaTeX (booktabs) and
Markdown.

A column is ``BENCH`` (its primary metric), ``BENCH:METRIC`` (any headline metric of
the benchmark, e.g. a subset's ``pass^1/<subset>``) or ``overall`` (the composite).
A cell is ``value ± h``: the value in percent and h half the width of its 95%
bootstrap interval over tasks (shown only where the interval was recomputed to the
official value). In each column the best run value, as printed, is bold (ties all
bold; published rows are never bold: their settings differ). A run's cell carries
a dagger when it differs from the baseline run's in a paired test on the tasks both
hold (McNemar's exact test of ``harness.results.stats``) with Holm-adjusted p < 0.05, the
family being the tested columns of that run. A number over less than the
benchmark's official set carries the coverage mark (``harness.results.coverage``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.report.leaderboard import RunResult, latex_escape
from harness.report.leaderboard.cells import zero_width_text
from harness.report.leaderboard.columns import (
    OVERALL,
    Cell,
    ColumnSpec,
    column_cell,
    parse_columns,
)
from harness.results import conditions, stats
from harness.results.coverage import PARTIAL_MARK
from harness.results.headlines import benchmark_info
from harness.results.nonstandard import NONSTANDARD_MARK

__all__ = ["Cell", "ColumnSpec", "build_table", "parse_columns", "render_latex", "render_markdown"]
SIGNIFICANT_LATEX = r"\textsuperscript{\dag}"
SIGNIFICANT_MD = "†"


@dataclass
class PaperRow:
    label: str
    result: RunResult
    cells: list[Cell]
    is_baseline: bool = False


@dataclass
class PaperTable:
    columns: list[ColumnSpec]
    rows: list[PaperRow]
    references: list[PaperRow] = field(default_factory=list)
    baseline: str = ""


def _p_values(
    result: RunResult, baseline: RunResult, columns: list[ColumnSpec], n_boot: int, seed: int
) -> dict[int, float]:
    """Column index -> McNemar p of the run against the baseline, for the columns that
    are a benchmark's primary metric (the paired comparison ``harness.results.stats`` makes)."""
    compared = {
        c.benchmark: c.headline
        for c in stats.compare_runs(baseline.tasks, result.tasks, n_boot, seed)
    }
    out = {}
    for i, spec in enumerate(columns):
        if spec.benchmark == OVERALL or spec.metric not in (
            None,
            benchmark_info(spec.benchmark).primary,
        ):
            continue
        found = compared.get(spec.benchmark)
        if found is not None and found.p_value is not None:
            out[i] = found.p_value
    return out


def _shown(value: float) -> str:
    return f"{100 * value:.1f}"


def build_table(
    runs: list[RunResult],
    baseline: RunResult,
    columns: list[ColumnSpec],
    labels: dict[str, str],
    references: Sequence[RunResult] = (),
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> PaperTable:
    """``labels``: run name -> the label to print (labels file); references: published rows."""
    rows = []
    for result in runs:
        cells = [column_cell(result, spec, n_boot, seed) for spec in columns]
        is_baseline = result.name == baseline.name
        if not is_baseline:
            raw = _p_values(result, baseline, columns, n_boot, seed)
            for index, adjusted in zip(raw, stats.holm_adjust(list(raw.values())), strict=True):
                cells[index].p_value = raw[index]
                cells[index].p_adjusted = adjusted
        rows.append(PaperRow(labels.get(result.name, result.name), result, cells, is_baseline))
    for i in range(len(columns)):
        shown = [_shown(value) for row in rows if (value := row.cells[i].value) is not None]
        best = max(shown, key=float) if shown else None
        for row in rows:
            cell = row.cells[i]
            cell.bold = cell.value is not None and _shown(cell.value) == best
    published = [
        PaperRow(
            labels.get(f"ref:{r.reference}/{r.model}", f"{r.model} ({r.reference})"),
            r,
            [column_cell(r, s, n_boot, seed) for s in columns],
        )
        for r in references
    ]
    published = [row for row in published if any(c.value is not None for c in row.cells)]
    return PaperTable(columns, rows, published, labels.get(baseline.name, baseline.name))


# --- rendering ---------------------------------------------------------------------------


def _half_width(cell: Cell) -> str:
    if cell.interval is None or cell.interval.zero_width:
        return ""
    return f"{100 * (cell.interval.high - cell.interval.low) / 2:.1f}"


def _zero_width(cell: Cell) -> str:
    """'n=N' for a zero-width interval (never '± 0.0'), '' otherwise."""
    if cell.interval is None or not cell.interval.zero_width:
        return ""
    return zero_width_text(cell.interval)


def latex_cell(cell: Cell) -> str:
    if cell.value is None:
        return "--"
    text = rf"\textbf{{{_shown(cell.value)}}}" if cell.bold else _shown(cell.value)
    half = _half_width(cell)
    if half:
        text += rf" {{\scriptsize $\pm$ {half}}}"
    elif _zero_width(cell):
        text += rf" {{\scriptsize ({_zero_width(cell)})}}"
    if cell.partial:
        text += PARTIAL_MARK
    if cell.nonstandard:
        text += r"\S"
    if cell.drift:
        text += r"\ddag"
    if cell.significant:
        text += SIGNIFICANT_LATEX
    return text


def caption(table: PaperTable) -> str:
    return (
        "Values in \\%: mean $\\pm$ half the width of the 95\\% "
        "bootstrap interval over tasks"
        + ("; (n=N): an interval of no width over N tasks" if _any_zero_width(table) else "")
        + ". Bold: the best run per column. "
        f"\\dag: differs from {latex_escape(table.baseline)} (McNemar's exact test on "
        "paired tasks, Holm-adjusted $p<0.05$ over the run's columns). "
        f"{PARTIAL_MARK}: over less than the benchmark's official set."
        + (
            " \\S: not the benchmark's standard configuration (see the appendix)."
            if _any_nonstandard(table)
            else ""
        )
    )


def render_latex(table: PaperTable) -> str:
    """A booktabs table (needs ``\\usepackage{booktabs}``)."""
    spec = "l" + "r" * len(table.columns)
    lines = [
        "% Generated by harness paper; needs \\usepackage{booktabs}.",
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(["Model"] + [latex_escape(c.header) for c in table.columns]) + " \\\\",
        "\\midrule",
    ]
    for row in table.rows:
        name = latex_escape(row.label) + (" (baseline)" if row.is_baseline else "")
        lines.append(" & ".join([name] + [latex_cell(c) for c in row.cells]) + " \\\\")
    if table.references:
        lines.append("\\midrule")
        lines.append(f"\\multicolumn{{{len(table.columns) + 1}}}{{l}}{{\\emph{{Published}}}} \\\\")
        for row in table.references:
            lines.append(
                " & ".join([latex_escape(row.label)] + [latex_cell(c) for c in row.cells]) + " \\\\"
            )
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        f"\\caption{{{caption(table)}}}",
        "\\label{tab:results}",
        "\\end{table}",
        *(f"% {line}" for line in drift_lines(table)),
        "",
    ]
    return "\n".join(lines)


def markdown_cell(cell: Cell) -> str:
    if cell.value is None:
        return "-"
    value = f"**{_shown(cell.value)}**" if cell.bold else _shown(cell.value)
    half = _half_width(cell)
    text = f"{value} ± {half}" if half else value
    if _zero_width(cell):
        text += f" ({_zero_width(cell)})"
    if cell.partial:
        text += PARTIAL_MARK
    if cell.nonstandard:
        text += NONSTANDARD_MARK
    if cell.drift:
        text += conditions.DRIFT_MARK
    if cell.significant:
        text += SIGNIFICANT_MD
    return text


def render_markdown(table: PaperTable) -> str:
    headers = ["model"] + [f"{c.header} (%)" for c in table.columns]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in table.rows:
        name = row.label + (" (baseline)" if row.is_baseline else "")
        lines.append("| " + " | ".join([name] + [markdown_cell(c) for c in row.cells]) + " |")
    if table.references:
        lines.append("| *published* |" + " |" * len(table.columns))
    for row in table.references:
        cells = [markdown_cell(c) for c in row.cells]
        lines.append("| " + " | ".join([row.label] + cells) + " |")
    lines += [
        "",
        "Values in %: mean ± half the width of the 95% bootstrap interval over tasks; "
        + ("(n=N): an interval of no width over N tasks; " if _any_zero_width(table) else "")
        + "bold: the best run "
        f"per column; {SIGNIFICANT_MD}: differs from {table.baseline} (McNemar's exact test on "
        "paired tasks, Holm-adjusted p < 0.05 over the run's columns); "
        f"{PARTIAL_MARK}: over less than the benchmark's official set"
        + (
            f"; {NONSTANDARD_MARK}: not the benchmark's standard configuration (see the appendix)."
            if _any_nonstandard(table)
            else "."
        ),
        *(["", *drift_lines(table)] if drift_lines(table) else []),
        "",
    ]
    return "\n".join(lines)


def drift_lines(table: PaperTable) -> list[str]:
    """The drift mark explained once, then what each marked cell's run differs in."""
    from harness.results.headlines import benchmark_label

    return conditions.with_legend(
        [
            conditions.note(row.label, benchmark_label(spec.benchmark), entry.drift)
            for row in [*table.rows, *table.references]
            for spec, cell in zip(table.columns, row.cells, strict=True)
            if cell.drift and (entry := row.result.benchmarks.get(spec.benchmark)) is not None
        ]
    )


def _any_nonstandard(table: PaperTable) -> bool:
    return any(cell.nonstandard for row in table.rows for cell in row.cells)


def _any_zero_width(table: PaperTable) -> bool:
    return any(
        cell.interval is not None and cell.interval.zero_width
        for row in [*table.rows, *table.references]
        for cell in row.cells
    )
