"""``harness run --suite S --model M``: run a suite against a model (resumes an existing run).

Its flags are declared on the fields of ``RunConfig`` and ``ServeConfig``
(harness/config/flags.py); ``run_config`` is the one place they become a config;
``harness sweep`` takes them too. ``--parts K`` and
``--executor ray`` are not part of the run's config but of how it is carried
out: K shard jobs, on Ray at once, merged afterwards (harness/executors/parts.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.config import validate
from harness.config.flags import add_flags, config_values
from harness.config.run_config import RunConfig, ServeConfig
from harness.errors import ConfigError

HELP = "run a suite against a model (resumes an existing run)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``harness run`` (``sweep`` takes them too): RunConfig's own
    (declared on its fields, harness/config/flags.py), the strategy settings, where
    the work runs, and the server flags (ServeConfig's)."""
    add_flags(parser, RunConfig)
    parser.add_argument(
        "--strategy-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="strategy setting, e.g. rehearser_model=openai/Qwen3-8B (repeatable)",
    )
    parser.add_argument("--strategy-config", type=Path, help="YAML mapping of strategy settings")
    parser.add_argument(
        "--parts",
        type=int,
        default=1,
        metavar="K",
        help="split the run into K shards (--shard 1/K ... K/K), each a job of its own, merged "
        "into the run folder afterwards; a sweep: K jobs per checkpoint, each with its own server",
    )
    parser.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="where the jobs run: here, at once as processes (local; a sweep's checkpoints "
        "one after another), or at once as tasks on a Ray cluster (ray, with pip install "
        "'harness[ray]')",
    )
    parser.add_argument(
        "--ray-address", help="the Ray cluster to use (default: RAY_ADDRESS, else a local Ray)"
    )
    # A server started for the run (harness/serving/).
    serving = parser.add_argument_group("serving a checkpoint (the server runs for this run only)")
    add_flags(serving, ServeConfig)


def _strategy_options(args: argparse.Namespace) -> dict[str, object]:
    """Strategy settings: the YAML file, then --strategy-opt pairs."""
    options: dict[str, object] = {}
    if args.strategy_config is not None:
        loaded = validate.read_yaml(
            args.strategy_config, f"--strategy-config {args.strategy_config}"
        )
        if not isinstance(loaded, dict):
            raise ConfigError(f"--strategy-config {args.strategy_config}: not a mapping")
        from harness.models.redact import add_config_secrets

        add_config_secrets(loaded)  # a rehearser URL or key in the settings
        options.update(loaded)
    for pair in args.strategy_opt:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--strategy-opt '{pair}' is not KEY=VALUE")
        options[key.strip()] = value
    return options


def serve_config(args: argparse.Namespace) -> ServeConfig:
    """The ``--serve`` flags as a ServeConfig."""
    return ServeConfig(**config_values(args, ServeConfig), quiet=args.quiet)


def run_config(args: argparse.Namespace) -> RunConfig:
    """The one place ``harness run`` flags become a RunConfig (checked: ConfigError)."""
    config = RunConfig(
        **config_values(args, RunConfig),
        serve=serve_config(args),
        strategy_options=_strategy_options(args),
    )
    config.check()
    return config


def print_wrapped(line: str, width: int = 100) -> None:
    """One summary line on stderr, wrapped to the width the tables keep (a path stays whole)."""
    from harness.boundary.terminal import wrap_line

    print("\n".join(wrap_line(line, width)), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from harness.report.leaderboard import write_run_tables

    config = run_config(args)
    if args.executor == "local" and args.parts == 1:
        from harness.evaluate import run_suite

        summary = run_suite(config)
        for line in summary.printed_lines(with_coverage=args.quiet):
            print(line, file=sys.stderr)
        run_dir, exit_code = summary.run_dir, summary.exit_code
        loaded, entries, outcomes = summary.run, summary.results.benchmarks, summary.outcomes
    else:
        # K shards as jobs (on Ray, at once), merged: harness/executors/parts.py.
        from harness.executors.parts import run_in_parts

        outcome = run_in_parts(config, args.executor, args.parts, args.ray_address)
        run_dir, exit_code = outcome.run_dir, outcome.exit_code
        loaded, entries, outcomes = None, None, None
    # The full tables stay in the run folder; the terminal gets the compact one.
    compact = write_run_tables(run_dir, loaded=loaded, entries=entries, outcomes=outcomes)
    if not args.quiet and compact:
        print(compact, end="")
    return exit_code
