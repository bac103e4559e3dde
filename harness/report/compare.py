"""A paired comparison of two runs as a table: Markdown and JSON (``harness
compare``), and the rows the HTML report shows.

``CompareJSON`` types the JSON document; every value, difference, interval and
MDE in it is a fraction (``unit``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TypedDict

from harness.results.coverage import LEGEND, PARTIAL_MARK

if TYPE_CHECKING:
    from harness.report.leaderboard import RunResult
    from harness.results.coverage import Coverage, CoverageJSON
    from harness.results.stats import BenchmarkComparison, Interval, PairedComparison


DEFINITIONS = (
    "Δ = B − A on the tasks both runs hold. Bootstrap CI: 95% paired bootstrap over tasks "
    "(a task's trials stay together; resampled within subsets), 'degenerate' when every "
    "resample gave the same Δ. Newcombe CI: 95% hybrid score interval for paired "
    "proportions (Newcombe 1998, method 10) of the per-task pass/fail difference (pass = "
    "a majority of the task's trials; that difference is shown before the interval when "
    "it is not Δ). McNemar p: exact two-sided test on the tasks that passed in only one "
    "run; Holm p: adjusted over every row below. MDE: minimum detectable effect, "
    "(z0.975 + z0.80) × SE of Δ under no difference for these tasks (for a pass rate "
    "sqrt(flipped tasks) / n) — a true difference smaller than this is found "
    "significant less than 80% of the time."
)


# A and B in percent, differences in percentage points (pts); JSON keeps fractions.
COLUMNS = (
    "scope",
    "metric",
    "tasks",
    "A (%)",
    "B (%)",
    "Δ (pts)",
    "bootstrap 95% CI (pts)",
    "Newcombe 95% CI (pts)",
    "MDE (pts)",
    "A only",
    "B only",
    "McNemar p",
    "Holm p",
)


class IntervalJSON(TypedDict):
    low: float
    high: float
    level: float


class PassFailJSON(TypedDict):
    """Tasks by pass/fail in A and B (pass = a majority of the task's trials)."""

    both: int
    a_only: int
    b_only: int
    neither: int


class WarningJSON(TypedDict):
    kind: str  # a key of ``warning_notes``
    message: str


class RowJSON(TypedDict):
    """One benchmark headline or subset. Numbers are None (``unscored`` says why)
    where a run scored nothing."""

    label: str
    metric: str
    n_tasks: int
    errored_tasks: int
    unscored: str
    value_a: float | None
    value_b: float | None
    diff: float | None  # value_b − value_a
    bootstrap_interval: IntervalJSON | None
    bootstrap_degenerate: bool
    pass_fail: PassFailJSON | None
    pass_fail_diff: float | None  # B's minus A's per-task pass rate (Newcombe's Δ)
    newcombe_interval: IntervalJSON | None
    mde: float | None  # None when no task differs
    null_se: float | None  # SE of Δ under no difference, the MDE's basis
    p_value: float | None  # exact McNemar, raw
    p_holm: float | None  # Holm-adjusted over every row of the comparison
    a_only: list[str]  # task keys A passed and B failed
    b_only: list[str]
    warnings: list[WarningJSON]


class BenchmarkJSON(TypedDict):
    benchmark: str
    headline: RowJSON
    subsets: list[RowJSON]
    only_a: int  # tasks only A holds (not compared)
    only_b: int
    partial: dict[str, bool]  # row label -> compared on less than its official set
    coverage: dict[str, CoverageJSON | None]  # "a"/"b" -> the run's coverage of it


class CompareJSON(TypedDict):
    a: str
    b: str
    fingerprints: dict[str, str | None]
    warnings: list[str]
    definitions: str
    unit: str  # "fraction": of values, differences, intervals and MDEs
    n_boot: int
    seed: int
    min_paired_tasks: int  # below this many tasks a row warns (harness.results.stats)
    warning_notes: dict[str, str]  # warning kind -> what it means
    partial_mark: dict[str, str]  # symbol and meaning of the partial mark
    benchmarks: list[BenchmarkJSON]


# A cell with no number ('-'): only an unscored row has none, and it shows why instead.
def _pts(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.2f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _interval(interval: Interval | None) -> str:
    return "-" if interval is None else f"[{_pts(interval.low)}, {_pts(interval.high)}]"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def newcombe_cell(item: PairedComparison) -> str:
    """Newcombe's interval, preceded by its own Δ (the per-task pass/fail difference)
    when that is not the metric's Δ (a weighted or non-pass metric, several trials)."""
    text = _interval(item.newcombe)
    if item.table is not None and item.diff is not None:
        if abs(item.table.diff - item.diff) > 1e-9:
            text = f"{_pts(item.table.diff)} {text}"
    return text


def mde_cell(mde: float | None) -> str:
    """An MDE past 100 points means no possible difference is detectable."""
    if mde is None:
        return "-"
    return "> 100" if mde > 1.0 else f"{100 * mde:.2f}"


def row_cells(item: PairedComparison, partial: bool = False) -> list[str]:
    """The cells after scope and metric of one comparison row (``PairedComparison``);
    a scope where a run scored nothing shows no number, only why. ``partial``: the
    scope is compared on less than its official set (both values are marked)."""
    if item.unscored:
        return [str(item.n_tasks), "-", "-", "-", item.unscored, *["-"] * 6]
    mark = PARTIAL_MARK if partial else ""
    return [
        str(item.n_tasks),
        _pct(item.value_a) + mark,
        _pct(item.value_b) + mark,
        _pts(item.diff),
        "degenerate" if item.bootstrap_degenerate else _interval(item.interval),
        newcombe_cell(item),
        mde_cell(item.mde),
        str(len(item.a_only)),
        str(len(item.b_only)),
        _p(item.p_value),
        _p(item.p_holm),
    ]


def _scope_coverage(run: RunResult, label: str) -> Coverage | None:
    """A run's coverage of a comparison scope ('bench' or 'bench/subset'), or None."""
    bench, _, subset = label.partition("/")
    entry = run.benchmarks.get(bench)
    if entry is None or entry.coverage is None:
        return None
    return entry.coverage.restrict([subset]) if subset else entry.coverage


def scope_partial(a: RunResult, b: RunResult, label: str) -> bool:
    """Whether a scope is compared on less than its official set: the shared tasks
    are no more than either run's, so one partial run makes the comparison partial."""
    coverages = [_scope_coverage(run, label) for run in (a, b)]
    return any(c is not None and c.partial for c in coverages)


def coverage_notes(a: RunResult, b: RunResult, comparison: BenchmarkComparison) -> list[str]:
    """The partial mark explained once, then what each run covers where it is marked."""
    notes = []
    for item in [comparison.headline, *comparison.subsets]:
        if item.unscored or not scope_partial(a, b, item.label):
            continue
        sides = [
            f"{name} ({run.name}) {coverage.describe()}"
            for name, run in (("A", a), ("B", b))
            if (coverage := _scope_coverage(run, item.label)) is not None
        ]
        notes.append(f"{PARTIAL_MARK} {item.label}: " + "; ".join(sides))
    return [LEGEND, *notes] if notes else []


def aligned_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table whose columns line up in a terminal (still valid Markdown)."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return [line(header), rule, *(line(row) for row in rows)]


def _flip_list(keys: list[str], limit: int) -> str:
    shown = keys if limit <= 0 else keys[:limit]
    more = len(keys) - len(shown)
    return ", ".join(shown) + (f" … and {more} more" if more else "")


def _run_label(result: RunResult) -> str:
    weights = f", weights {result.fingerprint}" if result.fingerprint else ""
    return (
        f"{result.name} ({result.model}, {result.strategy}, "
        f"env feedback {result.env_feedback}{weights})"
    )


def same_weights_warning(a: RunResult, b: RunResult) -> str | None:
    """A warning when both runs evaluated the same weights (by fingerprint): two
    checkpoints that were meant to differ, or a comparison of a run with itself."""
    if a.fingerprint and a.fingerprint == b.fingerprint:
        return (
            f"WARNING: both runs evaluated the same weights (fingerprint {a.fingerprint}); "
            "differences are sampling or settings, not checkpoints."
        )
    return None


def nonstandard_warnings(a: RunResult, b: RunResult, benchmarks: set[str]) -> list[str]:
    """A warning per compared benchmark whose runs differ in settings that are not the
    benchmark's own (harness.results.nonstandard), e.g. one run with a benchmark's own prompts
    and the other with this project's wording."""
    from harness.results.headlines import benchmark_label

    warnings = []
    for bench in sorted(benchmarks):
        left, right = a.benchmarks.get(bench), b.benchmarks.get(bench)
        if left is None or right is None or left.nonstandard == right.nonstandard:
            continue
        warnings.append(
            f"WARNING: {benchmark_label(bench)}: the runs differ in settings that are not the "
            f"benchmark's own (A: {'; '.join(left.nonstandard) or 'standard'}; "
            f"B: {'; '.join(right.nonstandard) or 'standard'}); the difference mixes the "
            "model with them."
        )
    return warnings


def condition_warnings(a: RunResult, b: RunResult, benchmarks: set[str]) -> list[str]:
    """One line per compared benchmark whose runs were made under different score
    conditions (harness.results.conditions): versions, task set, prompts, user/judge."""
    from harness.results.conditions import comparison_line

    lines = []
    for bench in sorted(benchmarks):
        left, right = a.benchmarks.get(bench), b.benchmarks.get(bench)
        if left is not None and right is not None:
            line = comparison_line(bench, left.score_conditions, right.score_conditions)
            if line:
                lines.append(line)
    return lines


def warning_lines(rows: list[PairedComparison]) -> list[str]:
    """One line of warnings per row that has any, then each kind explained once."""
    from harness.results.stats import WARNING_NOTES

    flagged = [item for item in rows if item.warnings]
    if not flagged:
        return []
    lines = ["", "Warnings:"]
    lines += [f"- {item.label}: " + "; ".join(map(str, item.warnings)) for item in flagged]
    kinds = dict.fromkeys(w.kind for item in flagged for w in item.warnings)
    lines += ["", "Why:"] + [f"- {kind.replace('_', ' ')}: {WARNING_NOTES[kind]}" for kind in kinds]
    return lines


def render_markdown(
    a: RunResult, b: RunResult, comparisons: list[BenchmarkComparison], max_flips: int
) -> str:
    from harness.results.headlines import benchmark_label

    lines = [
        f"## A = {_run_label(a)}",
        f"## B = {_run_label(b)}",
        "",
        DEFINITIONS,
    ]
    if (a.user_model, a.judge_model) != (b.user_model, b.judge_model):
        lines.append(
            f"\nWARNING: the runs used different user/judge models (A: {a.user_model} / "
            f"{a.judge_model}; B: {b.user_model} / {b.judge_model}); the difference mixes "
            "the model with its evaluation conditions."
        )
    if a.env_feedback != b.env_feedback:
        lines.append("\nWARNING: the runs used different environment feedback.")
    for warning in nonstandard_warnings(a, b, {c.benchmark for c in comparisons}):
        lines.append("\n" + warning)
    same = same_weights_warning(a, b)
    if same:
        lines.append("\n" + same)
    compared = {c.benchmark for c in comparisons}
    unshared = sorted((set(a.benchmarks) | set(b.benchmarks)) - compared)
    if unshared:
        lines.append("\nNot compared (no shared tasks): " + ", ".join(unshared))
    for comparison in comparisons:
        bench = comparison.benchmark
        lines += ["", f"### {benchmark_label(bench)} ({bench})", ""]
        if comparison.only_a or comparison.only_b:
            lines.append(
                f"{comparison.only_a} task(s) only in A and {comparison.only_b} only in B "
                "are left out.\n"
            )
        rows = [comparison.headline, *comparison.subsets]
        lines += aligned_table(
            list(COLUMNS),
            [
                [item.label, item.metric, *row_cells(item, scope_partial(a, b, item.label))]
                for item in rows
            ],
        )
        partial_notes = coverage_notes(a, b, comparison)
        if partial_notes:
            lines.append("")
            lines += [f"- {note}" for note in partial_notes]
        lines += warning_lines(rows)
        head = comparison.headline
        lines.append("")
        lines.append(
            f"A passed, B failed ({len(head.a_only)}): {_flip_list(head.a_only, max_flips) or '-'}"
        )
        lines.append(
            f"B passed, A failed ({len(head.b_only)}): {_flip_list(head.b_only, max_flips) or '-'}"
        )
    return "\n".join(lines) + "\n"


def _interval_json(interval: Interval | None) -> IntervalJSON | None:
    if interval is None:
        return None
    return {"low": interval.low, "high": interval.high, "level": interval.level}


def row_json(item: PairedComparison) -> RowJSON:
    table = item.table
    return {
        "label": item.label,
        "metric": item.metric,
        "n_tasks": item.n_tasks,
        "errored_tasks": item.errored_tasks,
        "unscored": item.unscored,
        "value_a": item.value_a,
        "value_b": item.value_b,
        "diff": item.diff,
        "bootstrap_interval": _interval_json(item.interval),
        "bootstrap_degenerate": item.bootstrap_degenerate,
        "pass_fail": None
        if table is None
        else {
            "both": table.both,
            "a_only": table.a_only,
            "b_only": table.b_only,
            "neither": table.neither,
        },
        "pass_fail_diff": None if table is None else table.diff,
        "newcombe_interval": _interval_json(item.newcombe),
        "mde": item.mde,
        "null_se": item.null_se,
        "p_value": item.p_value,
        "p_holm": item.p_holm,
        "a_only": list(item.a_only),
        "b_only": list(item.b_only),
        "warnings": [{"kind": w.kind, "message": w.message} for w in item.warnings],
    }


def benchmark_json(a: RunResult, b: RunResult, comparison: BenchmarkComparison) -> BenchmarkJSON:
    rows = [comparison.headline, *comparison.subsets]
    return {
        "benchmark": comparison.benchmark,
        "headline": row_json(comparison.headline),
        "subsets": [row_json(item) for item in comparison.subsets],
        "only_a": comparison.only_a,
        "only_b": comparison.only_b,
        "partial": {item.label: scope_partial(a, b, item.label) for item in rows},
        "coverage": {
            name: None if coverage is None else coverage.to_dict()
            for name, run in (("a", a), ("b", b))
            for coverage in [_scope_coverage(run, comparison.benchmark)]
        },
    }


def render_json(
    a: RunResult,
    b: RunResult,
    comparisons: list[BenchmarkComparison],
    n_boot: int = 2000,
    seed: int = 0,
) -> str:
    from harness.results.stats import MIN_PAIRED_TASKS, WARNING_NOTES

    data: CompareJSON = {
        "a": a.name,
        "b": b.name,
        "fingerprints": {"a": a.fingerprint, "b": b.fingerprint},
        "warnings": [
            w
            for w in [
                same_weights_warning(a, b),
                *nonstandard_warnings(a, b, {c.benchmark for c in comparisons}),
                *condition_warnings(a, b, {c.benchmark for c in comparisons}),
            ]
            if w
        ],
        "definitions": DEFINITIONS,
        "unit": "fraction",
        "n_boot": n_boot,
        "seed": seed,
        "min_paired_tasks": MIN_PAIRED_TASKS,
        "warning_notes": dict(WARNING_NOTES),
        "partial_mark": {"symbol": PARTIAL_MARK, "meaning": LEGEND},
        "benchmarks": [benchmark_json(a, b, c) for c in comparisons],
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def different_task_sets(a: RunResult, b: RunResult, name_a: str, name_b: str) -> str:
    """Why benchmarks of one family that only one run has each are not paired ('' if none)."""
    from harness.task.registry import find_adapter

    def names(result: RunResult) -> set[str]:
        return set(result.benchmarks) | {task.benchmark for task in result.tasks.values()}

    only_a = sorted(names(a) - names(b))
    only_b = sorted(names(b) - names(a))
    for left in only_a:
        for right in only_b:
            adapter_a, adapter_b = find_adapter(left), find_adapter(right)
            if adapter_a is None or adapter_b is None:
                continue
            shown_a, shown_b = adapter_a.reporting, adapter_b.reporting
            if shown_a.family and shown_a.family == shown_b.family:
                return (
                    f"{name_a} ran {shown_a.label_for(left)} ({left}) and {name_b} ran "
                    f"{shown_b.label_for(right)} ({right}): different task sets of one "
                    "benchmark are never paired"
                )
    return ""
