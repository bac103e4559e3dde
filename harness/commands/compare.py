"""``harness compare RUN_A RUN_B``: is B better than A, or is it noise?

Pairs the two runs on the tasks both hold and reports, per benchmark (its primary
metric) and per subset: Δ = B − A with a paired bootstrap 95% CI (flagged when
degenerate) and Newcombe's paired 95% CI, McNemar's exact test on pass/fail with
its Holm-adjusted p-value over every row of the comparison, the tasks that flipped
each way, the minimum detectable effect of the design, and warnings (small n, a
degenerate bootstrap, an interval that includes 0, significance lost to the
correction, a difference below the MDE).

``--format json`` prints one object (``harness.report.compare.CompareJSON``); every value,
difference, interval and MDE in it is a fraction (``unit``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.report.compare import (
    condition_warnings,
    different_task_sets,
    render_json,
    render_markdown,
    same_weights_warning,
)

HELP = (
    "paired comparison of two runs: difference with bootstrap and Newcombe CIs, "
    "McNemar test with Holm correction, flipped tasks"
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


def run(args: argparse.Namespace) -> int:
    from harness.config.validate import n_boot
    from harness.errors import ConfigError
    from harness.report.leaderboard import load_run
    from harness.results.selection import one_run
    from harness.results.stats import compare_runs

    n_boot(args.n_boot)
    if args.max_flips < 0:
        raise ConfigError("--max-flips must be >= 0 (0: list all)")
    a = load_run(one_run(args.run_a), n_boot=args.n_boot, seed=args.seed)
    b = load_run(one_run(args.run_b), n_boot=args.n_boot, seed=args.seed)
    comparisons = compare_runs(a.tasks, b.tasks, n_boot=args.n_boot, seed=args.seed)
    unpaired = different_task_sets(a, b, args.run_a, args.run_b)
    if not comparisons:
        raise ConfigError(unpaired or f"{args.run_a} and {args.run_b} share no tasks")
    if unpaired:
        print(f"harness: {unpaired}", file=sys.stderr)
    for line in condition_warnings(a, b, {c.benchmark for c in comparisons}):
        print(f"harness: {line}", file=sys.stderr)  # a warning: the comparison goes on
    same = same_weights_warning(a, b)
    if same:
        print(f"harness: {same}", file=sys.stderr)
    if args.format == "json":
        print(render_json(a, b, comparisons, n_boot=args.n_boot, seed=args.seed))
    else:
        print(render_markdown(a, b, comparisons, args.max_flips))
    return 0
