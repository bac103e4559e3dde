"""``harness score RUN_DIR``: regrade a run from its stored trajectories."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.boundary.json_value import JsonObject

HELP = "regrade a run from its stored trajectories"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path)
    parser.add_argument(
        "--no-rescore", action="store_true", help="aggregate the stored scores only"
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="BENCH.KEY=VALUE",
        help=(
            "regrade with another load option than the run was made with (e.g. "
            "another prompt source); recorded in scores.json. Without it a regrade "
            "uses what the run used, and refuses in one line what is not there"
        ),
    )


def parse_overrides(items: list[str]) -> dict[str, JsonObject]:
    """``BENCH.KEY=VALUE`` items as benchmark -> {key: value} (VALUE read as YAML)."""
    from harness.config.validate import parse_yaml
    from harness.errors import ConfigError

    overrides: dict[str, JsonObject] = {}
    for item in items:
        target, sep, text = item.partition("=")
        bench, dot, key = target.partition(".")
        if not sep or not dot or not bench or not key:
            raise ConfigError(f"--option {item!r}: expected BENCH.KEY=VALUE")
        value = parse_yaml(text, f"--option {item!r}") if text else ""
        if not isinstance(value, (str, int, float, bool)) and value is not None:
            raise ConfigError(f"--option {item!r}: VALUE must be a single value")
        overrides.setdefault(bench, {})[key] = value
    return overrides


def run(args: argparse.Namespace) -> int:
    from harness.commands.run import print_wrapped
    from harness.report.leaderboard import write_run_tables
    from harness.run.scoring import score_run

    overrides = parse_overrides(args.option)
    scores = score_run(args.run_dir, rescore=not args.no_rescore, overrides=overrides)
    regrade = scores.regrade
    print_wrapped(
        f"{args.run_dir}: regraded {regrade['regraded']} records ({regrade['changed']} changed, "
        f"{regrade['failed']} failed); wrote {args.run_dir / 'scores.json'}"
    )
    # The run folder's full tables follow its new scores; the terminal gets the compact one.
    print(write_run_tables(args.run_dir), end="")
    return 0
