"""``harness report RUN_DIR... --out report.html``: one self-contained HTML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "self-contained HTML report: leaderboard, comparisons, plots and a sample viewer"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, default=Path("report.html"), help="HTML file to write")
    parser.add_argument(
        "--with-reference",
        action="append",
        metavar="NAME",
        help="published rows to show beside the runs (see `leaderboard --help`; repeatable)",
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        default=20_000,
        help="cut longer strings in the sample viewer (0: keep everything)",
    )
    parser.add_argument(
        "--baseline",
        metavar="RUN",
        help="run (folder name) the others are compared against (default: the first; "
        "the page offers the others too)",
    )
    parser.add_argument("--no-plots", action="store_true", help="leave the plots out")
    parser.add_argument("--title", default="harness report")
    parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for CIs")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")


def run(args: argparse.Namespace) -> int:
    from harness.config.validate import n_boot, writable_file
    from harness.errors import ConfigError
    from harness.report.html import ReportOptions, build_report
    from harness.results.selection import runs_or_error

    if args.max_chars < 0:
        raise ConfigError("--max-chars must be >= 0")
    n_boot(args.n_boot)
    writable_file(args.out, "--out")
    options = ReportOptions(
        reference=args.with_reference,
        n_boot=args.n_boot,
        seed=args.seed,
        max_chars=args.max_chars,
        plots=not args.no_plots,
        title=args.title,
        baseline=args.baseline,
    )
    summary = build_report(runs_or_error(args.run_dirs), args.out, options)
    print(
        f"wrote {summary.path} ({summary.samples} samples, {summary.size_bytes / 1e6:.1f} MB)",
        file=sys.stderr,
    )
    return 0
