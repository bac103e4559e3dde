"""``harness sweep --checkpoints 'ckpts/step_*' --suite S``: every checkpoint of a training run.

The flags become a ``SweepConfig`` and ``harness.run_sweep`` does the work
(harness/executors/sweep.py): each checkpoint served in turn (``--serve``, vLLM
by default) and evaluated by an ordinary run into its own folder under the sweep
folder (``--out``); every ``harness run`` flag applies to each run. The sweep
ends with the leaderboard (one row per checkpoint, with its step) and the
score-against-step plot (``step.png`` and ``step.pdf`` in the sweep folder).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.executors.sweep import SweepConfig

HELP = "evaluate every checkpoint of a training run (serving each), then score against step"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.run import add_arguments as add_run_arguments

    # Every `harness run` flag applies to each checkpoint's run (--executor,
    # --ray-address and --parts too: K parts per checkpoint, each with its own server).
    add_run_arguments(parser)
    parser.description = (
        "Serve and evaluate each checkpoint in turn; takes every `harness run` flag. "
        "--out is the sweep folder (one run folder per checkpoint inside it); "
        "--serve defaults to vllm; --parts K splits each checkpoint into K jobs, "
        "each a shard with its own server."
    )
    parser.add_argument(
        "--checkpoints",
        nargs="+",
        required=True,
        metavar="PATH_OR_GLOB",
        help="checkpoint folders or files, globs ('ckpts/step_*', quoted) or hub ids",
    )
    parser.add_argument(
        "--gpus-per-job",
        type=float,
        metavar="N",
        help="GPUs a job reserves with --executor ray (default: tensor x data parallel size "
        "for vllm and sglang, 0 for llamacpp and custom)",
    )


def sweep_config(args: argparse.Namespace) -> SweepConfig:
    """The ``harness sweep`` flags as a SweepConfig."""
    from dataclasses import replace

    from harness.commands.run import run_config
    from harness.executors.sweep import SweepConfig

    config = run_config(args)
    return SweepConfig(
        run=replace(config, out=None),
        checkpoints=tuple(args.checkpoints),
        out=args.out,
        parts=args.parts,
        executor=args.executor,
        ray_address=args.ray_address,
        gpus_per_job=args.gpus_per_job,
    )


def report(sweep_dir: Path, run_dirs: list[Path], quiet: bool) -> None:
    """Each checkpoint's full tables, the leaderboard over the checkpoints and the
    score-against-step plot."""
    from harness.report.leaderboard import load_run, render, write_run_tables
    from harness.report.plots import save_plots, step_plot

    for run_dir in run_dirs:  # each checkpoint's folder keeps its full tables
        write_run_tables(run_dir)
    if not quiet:
        print(render(run_dirs, "table"), end="")
    plot = step_plot([load_run(d) for d in run_dirs])
    if plot is None:
        print("score-against-step plot: needs two checkpoints with a step", file=sys.stderr)
        return
    for path in save_plots([plot], sweep_dir):
        print(path, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from harness.executors.sweep import run_sweep

    summary = run_sweep(sweep_config(args))
    report(summary.sweep_dir, summary.run_dirs, args.quiet)
    return 0 if summary.ok else 1
