"""``harness compare RUN_A RUN_B``: is B better than A, or is it noise?

Pairs the two runs on the tasks both hold and reports, per benchmark (its primary
metric) and per subset: Δ = B − A with a paired bootstrap 95% CI, McNemar's exact
test on pass/fail, the tasks that flipped each way, and warnings when the
difference is below what the number of tasks can detect.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from harness.coverage import LEGEND, PARTIAL_MARK

HELP = "paired comparison of two runs: difference with CI, McNemar test, flipped tasks"

DEFINITIONS = (
    "Δ = B − A on the tasks both runs hold. CI: 95% paired bootstrap over tasks (a task's "
    "trials stay together; resampled within subsets). McNemar: exact two-sided test on tasks "
    "that passed in only one run (pass = a majority of the task's trials). MDE: minimum "
    "detectable effect, (z0.975 + z0.80) × bootstrap SE of Δ — a true difference smaller "
    "than this is found significant less than 80% of the time with this many tasks."
)


# A and B in percent, differences in percentage points (pts); JSON keeps fractions.
COLUMNS = (
    "scope",
    "metric",
    "tasks",
    "A (%)",
    "B (%)",
    "Δ (pts)",
    "95% CI of Δ (pts)",
    "MDE (pts)",
    "A only passed",
    "B only passed",
    "McNemar p",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", type=Path, help="baseline run folder (A)")
    parser.add_argument("run_b", type=Path, help="candidate run folder (B)")
    parser.add_argument("--format", choices=["md", "json"], default="md")
    parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument(
        "--max-flips", type=int, default=25, help="flipped tasks listed per direction (0: all)"
    )


def _pts(value: float) -> str:
    return f"{100 * value:+.2f}"


def _pct(value: float) -> str:
    return f"{100 * value:.2f}"


def row_cells(item: Any, partial: bool = False) -> list[str]:
    """The cells after scope and metric of one comparison row (``PairedComparison``);
    a scope where a run scored nothing shows no number, only why. ``partial``: the
    scope is compared on less than its official set (both values are marked)."""
    if item.unscored:
        return [str(item.n_tasks), "-", "-", "-", item.unscored, "-", "-", "-", "-"]
    mark = PARTIAL_MARK if partial else ""
    return [
        str(item.n_tasks),
        _pct(item.value_a) + mark,
        _pct(item.value_b) + mark,
        _pts(item.diff),
        f"[{_pts(item.interval.low)}, {_pts(item.interval.high)}]",
        f"{100 * item.mde:.2f}",
        str(len(item.a_only)),
        str(len(item.b_only)),
        f"{item.p_value:.4g}",
    ]


def _scope_coverage(run: Any, label: str) -> Any:
    """A run's coverage of a comparison scope ('bench' or 'bench/subset'), or None."""
    bench, _, subset = label.partition("/")
    entry = run.benchmarks.get(bench)
    if entry is None or entry.coverage is None:
        return None
    return entry.coverage.restrict([subset]) if subset else entry.coverage


def scope_partial(a: Any, b: Any, label: str) -> bool:
    """Whether a scope is compared on less than its official set: the shared tasks
    are no more than either run's, so one partial run makes the comparison partial."""
    coverages = [_scope_coverage(run, label) for run in (a, b)]
    return any(c is not None and c.partial for c in coverages)


def coverage_notes(a: Any, b: Any, comparison: Any) -> list[str]:
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


def _flip_list(keys: list[str], limit: int) -> str:
    shown = keys if limit <= 0 else keys[:limit]
    more = len(keys) - len(shown)
    return ", ".join(shown) + (f" … and {more} more" if more else "")


def _run_label(result: Any) -> str:
    weights = f", weights {result.fingerprint}" if result.fingerprint else ""
    return (
        f"{result.name} ({result.model}, {result.strategy}, "
        f"env feedback {result.env_feedback}{weights})"
    )


def same_weights_warning(a: Any, b: Any) -> str | None:
    """A warning when both runs evaluated the same weights (by fingerprint): two
    checkpoints that were meant to differ, or a comparison of a run with itself."""
    if a.fingerprint and a.fingerprint == b.fingerprint:
        return (
            f"WARNING: both runs evaluated the same weights (fingerprint {a.fingerprint}); "
            "differences are sampling or settings, not checkpoints."
        )
    return None


def render_markdown(a: Any, b: Any, comparisons: list[Any], max_flips: int) -> str:
    from harness.headlines import benchmark_label

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
        lines.append("| " + " | ".join(COLUMNS) + " |")
        lines.append("|" + "---|" * len(COLUMNS))
        rows = [comparison.headline, *comparison.subsets]
        for item in rows:
            cells = row_cells(item, scope_partial(a, b, item.label))
            lines.append("| " + " | ".join([item.label, item.metric, *cells]) + " |")
        partial_notes = coverage_notes(a, b, comparison)
        if partial_notes:
            lines.append("")
            lines += [f"- {note}" for note in partial_notes]
        warnings = [(item.label, w) for item in rows for w in item.warnings]
        if warnings:
            lines.append("")
            lines += [f"- WARNING {label}: {text}" for label, text in warnings]
        head = comparison.headline
        lines.append("")
        lines.append(
            f"A passed, B failed ({len(head.a_only)}): {_flip_list(head.a_only, max_flips) or '-'}"
        )
        lines.append(
            f"B passed, A failed ({len(head.b_only)}): {_flip_list(head.b_only, max_flips) or '-'}"
        )
    return "\n".join(lines) + "\n"


def render_json(a: Any, b: Any, comparisons: list[Any]) -> str:
    data = {
        "a": a.name,
        "b": b.name,
        "fingerprints": {"a": a.fingerprint, "b": b.fingerprint},
        "warnings": [w for w in [same_weights_warning(a, b)] if w],
        "definitions": DEFINITIONS,
        "unit": "fraction",  # of values, differences, intervals and MDEs below
        "partial_mark": {"symbol": PARTIAL_MARK, "meaning": LEGEND},
        "benchmarks": [_comparison_json(a, b, c) for c in comparisons],
    }
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def _comparison_json(a: Any, b: Any, comparison: Any) -> dict[str, Any]:
    data = asdict(comparison)
    data["partial"] = {
        item.label: scope_partial(a, b, item.label)
        for item in [comparison.headline, *comparison.subsets]
    }
    data["coverage"] = {
        name: None if coverage is None else coverage.to_dict()
        for name, run in (("a", a), ("b", b))
        for coverage in [_scope_coverage(run, comparison.benchmark)]
    }
    return data


def run(args: argparse.Namespace) -> int:
    from harness.errors import ConfigError
    from harness.leaderboard import load_run
    from harness.stats import compare_runs
    from harness.validate import n_boot

    n_boot(args.n_boot)
    if args.max_flips < 0:
        raise ConfigError("--max-flips must be >= 0 (0: list all)")
    a = load_run(args.run_a, n_boot=args.n_boot, seed=args.seed)
    b = load_run(args.run_b, n_boot=args.n_boot, seed=args.seed)
    comparisons = compare_runs(a.tasks, b.tasks, n_boot=args.n_boot, seed=args.seed)
    if not comparisons:
        raise ConfigError(f"{args.run_a} and {args.run_b} share no tasks")
    same = same_weights_warning(a, b)
    if same:
        print(f"harness: {same}", file=sys.stderr)
    if args.format == "json":
        print(render_json(a, b, comparisons))
    else:
        print(render_markdown(a, b, comparisons, args.max_flips))
    return 0
