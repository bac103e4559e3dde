"""The leaderboard as a terminal shows it: one row per run, one headline column per
benchmark (its primary metric, or the ``--columns`` chosen) with its interval, a mark
on numbers over less than the official set (``*``) or from a non-standard
configuration (``§``), and under the table each run's coverage said once.

It fits ``WIDTH`` columns for up to four benchmarks: values in percent with one
decimal and ± half the width of the interval, headers wrapped, the run name cut when the row would not fit, every note wrapped. The full
tables (every metric, identity and cost column) are one command away: ``harness
leaderboard --format md``, and a run folder keeps them in ``leaderboard.md``.
"""

from __future__ import annotations

import textwrap

from harness.report.leaderboard.cells import zero_width_text
from harness.report.leaderboard.columns import OVERALL, Cell, ColumnSpec, column_cell
from harness.report.leaderboard.rows import RunResult
from harness.results import conditions, nonstandard, stats
from harness.results.composite import default_composite
from harness.results.coverage import PARTIAL_MARK
from harness.results.entries import NO_COUNTS
from harness.results.headlines import benchmark_info, benchmark_label
from harness.results.stats import Interval

WIDTH = 100
GAP = "  "
RUN_MIN = 12  # the run column is cut to no less than this when a row is too wide
RUN_MAX = 36  # and to this at most, so the numbers stay near the names
FULL_TABLES_HINT = (
    "Every metric, cost and setting: harness leaderboard --format md RUN... "
    "(a run folder keeps them in leaderboard.md)."
)


def run_folder_hint(path: object) -> str:
    """Where the full tables of one run are, for the table printed after it."""
    return f"Every metric, cost and setting: {path}"


def metric_name(spec: ColumnSpec, results: list[RunResult]) -> str:
    """The metric a column shows, as its header names it."""
    if spec.benchmark == OVERALL:
        definition = default_composite()
        return definition.label if definition is not None else "composite"
    if spec.metric:
        return spec.metric
    declared = benchmark_info(spec.benchmark).primary
    if declared:
        return declared
    for result in results:
        entry = result.benchmarks.get(spec.benchmark)
        if entry is not None and entry.primary:
            return entry.primary
    return "?"


def column_headers(columns: list[ColumnSpec], results: list[RunResult]) -> list[tuple[str, str]]:
    """(benchmark, metric) of each column, the two lines of its header."""
    return [
        (
            "overall" if s.benchmark == OVERALL else benchmark_label(s.benchmark),
            metric_name(s, results),
        )
        for s in columns
    ]


def row_label(result: RunResult) -> str:
    return f"{result.model} ({result.reference})" if result.is_reference else result.name


def spread_text(interval: Interval) -> str:
    """'±h', h half the interval's width in percent; '(n=N)' when it has no width."""
    if interval.zero_width:
        return f"({zero_width_text(interval)})"
    return f"±{100 * (interval.high - interval.low) / 2:.1f}"


def cell_text(cell: Cell) -> str:
    """'73.3 ±3.2*' in percent; '73.3 (n=2)' when the interval has no width."""
    if cell.value is None:
        return "-"
    text = f"{100 * cell.value:.1f}"
    if cell.interval is not None:
        text += " " + spread_text(cell.interval)
    if cell.partial:
        text += PARTIAL_MARK
    if cell.nonstandard:
        text += nonstandard.NONSTANDARD_MARK
    if cell.drift:
        text += conditions.DRIFT_MARK
    return text


def _unscored_text(result: RunResult, spec: ColumnSpec) -> str:
    entry = result.benchmarks.get(spec.benchmark)
    return "no score" if entry is not None and entry.unscored else "-"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _counts(result: RunResult) -> tuple[str, str]:
    if result.is_reference:
        return "", ""
    counts = [e.counts or NO_COUNTS for e in result.benchmarks.values()]
    return str(sum(c.records for c in counts)), str(sum(c.errors for c in counts))


def _layout(header: list[tuple[str, str]], rows: list[list[str]], width: int) -> list[int]:
    """Column widths (a header's first line wraps at spaces, so it needs only its
    longest word); the run column (first) gives way when the row is too wide."""
    widths = [
        max(len(bottom), *(len(word) for word in top.split() or [""]), *(len(r[i]) for r in rows))
        for i, (top, bottom) in enumerate(header)
    ]
    widths[0] = min(widths[0], RUN_MAX)
    over = len(GAP) * (len(widths) - 1) + sum(widths) - width
    if over > 0:
        widths[0] = max(RUN_MIN, widths[0] - over)
    return widths


def _header_lines(header: list[tuple[str, str]], widths: list[int]) -> list[list[str]]:
    """The header's lines: each column's first line wrapped to its width, bottom-aligned,
    then its second."""
    tops = [textwrap.wrap(top, size) or [""] for (top, _), size in zip(header, widths, strict=True)]
    depth = max(len(lines) for lines in tops)
    tops = [[""] * (depth - len(lines)) + lines for lines in tops]
    return [[lines[i] for lines in tops] for i in range(depth)] + [[b for _, b in header]]


def _line(cells: list[str], widths: list[int], right: list[bool]) -> str:
    parts = []
    for text, size, is_right in zip(cells, widths, right, strict=True):
        text = _cut(text, size)
        parts.append(text.rjust(size) if is_right else text.ljust(size))
    return GAP.join(parts).rstrip()


def table_notes(
    results: list[RunResult], cells: list[list[Cell]], columns: list[ColumnSpec]
) -> list[str]:
    """Each run's coverage once (not once per table), then the other marks' meaning."""
    notes = []
    intervals = [c.interval for row in cells for c in row if c.interval is not None]
    if intervals:
        text = "±: half the width of the 95% bootstrap interval over tasks"
        if any(i.zero_width for i in intervals):
            text += "; (n=N): an interval of no width over N tasks (too few, or all alike)"
        notes.append(text + ".")
    partial = [
        (result, row)
        for result, row in zip(results, cells, strict=True)
        if any(c.partial for c in row)
    ]
    if partial:
        notes.append(f"{PARTIAL_MARK} partial: over less than the benchmark's official set.")
        # Runs that cover the same (a sweep's checkpoints) share one line.
        by_coverage: dict[str, list[str]] = {}
        for result, row in partial:
            shown = {s.benchmark for s, c in zip(columns, row, strict=True) if c.partial}
            parts = [
                f"{benchmark_label(b)} {e.coverage.summary()}"
                for b, e in result.benchmarks.items()
                if e.coverage is not None
                and e.coverage.partial
                and (b in shown or OVERALL in shown)
            ]
            by_coverage.setdefault("; ".join(parts), []).append(result.name)
        for text, names in by_coverage.items():
            notes.append(f"  {', '.join(names)}: {text}")
    tables = sorted({r.reference for r in results if r.reference})
    if tables:
        notes.append(
            f"({', '.join(tables)}): published rows, without intervals; their sources and "
            "settings: --format md."
        )
    notes += conditions.with_legend(drift_notes(results, cells, columns))
    for result in results:
        for bench, entry in result.benchmarks.items():
            if entry.nonstandard:
                notes.append(
                    nonstandard.note(result.name, benchmark_label(bench), entry.nonstandard)
                )
            if entry.unscored:
                notes.append(f"{row_label(result)} {benchmark_label(bench)}: {entry.unscored}")
            elif entry.ci_note and any(s.benchmark == bench for s in columns):
                notes.append(f"{row_label(result)} {benchmark_label(bench)}: {entry.ci_note}")
    return notes


def drift_notes(
    results: list[RunResult], cells: list[list[Cell]], columns: list[ColumnSpec]
) -> list[str]:
    """What each marked cell's run differs in from the rest of its column."""
    return [
        conditions.note(row_label(result), benchmark_label(spec.benchmark), entry.drift)
        for result, row in zip(results, cells, strict=True)
        for spec, cell in zip(columns, row, strict=True)
        if cell.drift and (entry := result.benchmarks.get(spec.benchmark)) is not None
    ]


def render_compact(
    results: list[RunResult],
    columns: list[ColumnSpec],
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
    width: int = WIDTH,
    hint: str = FULL_TABLES_HINT,
) -> str:
    """The compact table of ``results`` over ``columns`` (``parse_columns``), every line
    at most ``width`` characters when it can be (a run name is cut to fit)."""
    cells = [[column_cell(r, spec, n_boot, seed) for spec in columns] for r in results]
    # A checkpoint series shows each run's training step beside its name.
    steps = any(r.step is not None for r in results)
    header = [("run", ""), *([("step", "")] if steps else [])]
    header += [(top, f"{bottom} %") for top, bottom in column_headers(columns, results)]
    header += [("records", ""), ("errors", "")]
    rows = []
    for result, row in zip(results, cells, strict=True):
        texts = [
            cell_text(c) if c.value is not None else _unscored_text(result, s)
            for s, c in zip(columns, row, strict=True)
        ]
        step = [] if not steps else ["-" if result.step is None else str(result.step)]
        rows.append([row_label(result), *step, *texts, *_counts(result)])
    widths = _layout(header, rows, width)
    right = [False] + [True] * (len(header) - 1)
    lines = [
        *(_line(cells, widths, right) for cells in _header_lines(header, widths)),
        _line(["-" * w for w in widths], widths, right),
        *(_line(row, widths, right) for row in rows),
        "",
    ]
    for note in [*table_notes(results, cells, columns), hint]:
        indent = " " * (len(note) - len(note.lstrip()))
        lines += textwrap.wrap(note, width, subsequent_indent=indent + "  ", break_on_hyphens=False)
    return "\n".join(lines) + "\n"
