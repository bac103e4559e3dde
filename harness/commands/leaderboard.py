"""``harness leaderboard RUN_DIR...``: tables over one or more runs.

On a terminal the compact table (one row per run, each benchmark's headline with its
interval); elsewhere, or with ``--format md``, every table in full; csv and json for
programs; latex for a paper column. ``--columns`` picks the table's and LaTeX's columns.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.config import validate

HELP = "tables over one or more runs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.results.reference import available as reference_names

    parser.add_argument(
        "run_dirs",
        type=Path,
        nargs="+",
        help="run folders, or folders of them (a sweep); other folders are skipped",
    )
    parser.add_argument(
        "--format",
        choices=["table", "md", "csv", "json", "latex"],
        help="table: one row per run, the headlines (default on a terminal); md: every "
        "table in full (default otherwise); latex: a table that fits a paper column",
    )
    parser.add_argument(
        "--columns",
        help="columns of the table and of latex, comma-separated: BENCH (its headline), "
        "BENCH:METRIC (any headline metric) or overall (default: every headline)",
    )
    parser.add_argument(
        "--with-reference",
        action="append",
        metavar="NAME",
        help=f"published rows beside the runs: {', '.join(reference_names())}, "
        "or a YAML file (repeatable)",
    )
    parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for 95%% CIs")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")


def run(args: argparse.Namespace) -> int:
    from harness.report.leaderboard import render
    from harness.results.selection import runs_or_error

    validate.n_boot(args.n_boot)
    fmt = args.format or ("table" if sys.stdout.isatty() else "md")
    print(
        render(
            runs_or_error(args.run_dirs),
            fmt,
            reference=args.with_reference,
            n_boot=args.n_boot,
            seed=args.seed,
            columns=args.columns,
        ),
        end="" if fmt == "table" else "\n",
    )
    return 0
