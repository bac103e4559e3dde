"""``harness leaderboard RUN_DIR...``: tables over one or more runs (md, csv, json, latex)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.config import validate

HELP = "tables over one or more runs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.results.reference import available as reference_names

    parser.add_argument("run_dirs", type=Path, nargs="+")
    parser.add_argument("--format", choices=["md", "csv", "json", "latex"], default="md")
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

    validate.n_boot(args.n_boot)
    print(
        render(
            args.run_dirs,
            args.format,
            reference=args.with_reference,
            n_boot=args.n_boot,
            seed=args.seed,
        )
    )
    return 0
