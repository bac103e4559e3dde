"""``harness score RUN_DIR``: regrade a run from its stored trajectories."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "regrade a run from its stored trajectories"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path)
    parser.add_argument(
        "--no-rescore", action="store_true", help="aggregate the stored scores only"
    )


def run(args: argparse.Namespace) -> int:
    from harness.leaderboard import render
    from harness.scoring import score_run

    scores = score_run(args.run_dir, rescore=not args.no_rescore)
    regrade = scores["regrade"]
    print(
        f"{args.run_dir}: regraded {regrade['regraded']} records ({regrade['changed']} changed, "
        f"{regrade['failed']} failed); wrote {args.run_dir / 'scores.json'}",
        file=sys.stderr,
    )
    print(render([args.run_dir], "md"))
    return 0
