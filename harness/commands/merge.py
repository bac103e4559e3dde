"""``harness merge SHARD_DIR... --out RUN_DIR``: join the shards of one run.

Shards come from ``harness run --shard I/N`` (on one machine or many). Merging
checks that they are parts of the same run (the manifest identity that a
resume checks, the same trials and planned work), that no (sample, trial) is
in two shards, that every record sits in the shard that owns it, and that
together they hold every planned (sample, trial): a gap is an error that says
what is missing (``--allow-gaps`` merges anyway and reports it). The merged
folder is an ordinary run folder: manifest.json (planned = the whole suite's
planned work), samples.jsonl (the last record of every key) and scores.json,
scored from the stored scores exactly as ``harness run`` scores its own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.run.merge import merge_runs, merged_lines

HELP = "join the shard folders of one run (harness run --shard I/N) into one run folder"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shard_dirs", type=Path, nargs="+", help="run folders of the shards")
    parser.add_argument("--out", type=Path, required=True, help="the merged run folder")
    parser.add_argument(
        "--allow-gaps",
        action="store_true",
        help="merge even when some planned (sample, trial) pairs are in no shard (reported)",
    )
    parser.add_argument("--quiet", action="store_true", help="no leaderboard")


def run(args: argparse.Namespace) -> int:
    from harness.config.validate import writable_folder

    writable_folder(args.out, "--out")
    gaps = merge_runs(args.shard_dirs, args.out, allow_gaps=args.allow_gaps)
    for line in merged_lines(args.out, len(args.shard_dirs), gaps):
        print(line, file=sys.stderr)
    if not args.quiet:
        from harness.report.leaderboard import render

        print(render([args.out], "md"))
    return 0
