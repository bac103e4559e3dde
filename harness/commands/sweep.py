"""``harness sweep --checkpoints 'ckpts/step_*' --suite S``: every checkpoint of a training run.

Each checkpoint is served in turn (``--serve``, vLLM by default) and evaluated
by an ordinary ``harness run`` into its own run folder under the sweep folder
(``--out``), whose manifest records the checkpoint and its training step
(``step_200`` -> 200). Every ``harness run`` flag applies to each run. A rerun
of the same command resumes: finished checkpoints are skipped without
starting their server, unfinished ones continue where they stopped. The sweep
ends with the leaderboard (one row per checkpoint, with its step) and the
score-against-step plot (``step.png`` and ``step.pdf`` in the sweep folder).

``--parts K`` splits each checkpoint into K jobs (``--shard 1/K`` ... ``K/K``,
each with its own server) that are merged into the checkpoint's run folder
afterwards; with ``--executor ray`` the jobs run at once on a Ray cluster, each
reserving the GPUs its server needs.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

HELP = "evaluate every checkpoint of a training run (serving each), then score against step"

_GLOB_CHARS = re.compile(r"[*?\[]")


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


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "checkpoint"


def find_checkpoints(patterns: list[str]) -> list[str]:
    """The checkpoints the patterns name, ordered by training step then name."""
    from harness.errors import ConfigError
    from harness.serving.checkpoints import checkpoint_name, checkpoint_step

    found: list[str] = []
    for pattern in patterns:
        if _GLOB_CHARS.search(pattern):
            import glob

            matches = sorted(glob.glob(os.path.expanduser(pattern)))
            if not matches:
                raise ConfigError(f"--checkpoints '{pattern}' matches nothing")
            found.extend(matches)
        else:
            found.append(pattern)  # a path, or a hub id the server resolves
    unique = list(dict.fromkeys(found))

    def order(checkpoint: str) -> tuple[bool, int, str]:
        step = checkpoint_step(checkpoint)
        return (step is None, step or 0, checkpoint_name(checkpoint))

    return sorted(unique, key=order)


def job_config(config: Any, checkpoint: str, run_dir: Path, shard: str | None) -> Any:
    """The RunConfig of one job, its paths absolute (``portable``)."""
    from dataclasses import replace

    from harness.executors.base import portable

    return replace(
        portable(config),
        model=None,  # each checkpoint is served under its own name
        serve=replace(config.serve, checkpoint=checkpoint),
        out=run_dir.resolve(),
        shard=shard,
        progress=False,
    )


def default_sweep_dir(args: argparse.Namespace, checkpoints: list[str]) -> Path:
    from harness.config.run_config import RESULTS_DIR

    first = Path(checkpoints[0]).expanduser()
    training_run = first.resolve().parent.name if first.exists() else first.parent.name
    return RESULTS_DIR / f"sweep__{_slug(Path(args.suite).stem)}__{_slug(training_run or 'hub')}"


def _job_gpus(args: argparse.Namespace, config: Any) -> float:
    from harness.serving.specs import SPECS

    if args.gpus_per_job is not None:
        return args.gpus_per_job
    if not SPECS[config.serve.serve].uses_gpus:
        return 0
    return config.serve.tensor_parallel_size * config.serve.data_parallel_size


def checkpoint_folders(checkpoints: list[str], sweep_dir: Path) -> dict[str, Path]:
    """Each checkpoint's run folder in the sweep folder, named after the checkpoint."""
    from harness.errors import ConfigError
    from harness.serving.checkpoints import checkpoint_name

    names = [_slug(checkpoint_name(c)) for c in checkpoints]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"several checkpoints are named {', '.join(twice)}; sweep them apart")
    return {c: sweep_dir / name for c, name in zip(checkpoints, names, strict=True)}


def plan_jobs(args: argparse.Namespace, config: Any, folders: dict[str, Path]) -> list[Any]:
    """One job per checkpoint, or ``--parts`` jobs (shards) per checkpoint."""
    from harness.executors.base import Job, part_folder

    gpus = _job_gpus(args, config)
    jobs = []
    for checkpoint, folder in folders.items():
        if args.parts == 1:
            job = job_config(config, checkpoint, folder, config.shard)
            jobs.append(Job(folder.name, checkpoint, folder, job, gpus))
            continue
        for index in range(1, args.parts + 1):
            label = f"{index}/{args.parts}"
            part_dir = part_folder(folder, index, args.parts)
            job = job_config(config, checkpoint, part_dir, label)
            jobs.append(Job(f"{folder.name} part {label}", checkpoint, part_dir, job, gpus))
    return jobs


def check_command(args: argparse.Namespace, config: Any, jobs: list[Any]) -> None:
    """Fail once, before any job, on what would fail for every checkpoint."""
    from harness.config.suites import load_suite
    from harness.errors import ConfigError
    from harness.serving.plan import plan_endpoint

    if config.serve.checkpoint or config.model:
        raise ConfigError(
            "sweep serves each of --checkpoints under its own name; drop --checkpoint/--model"
        )
    if args.parts < 1:
        raise ConfigError("--parts must be positive")
    if args.parts > 1 and config.shard:
        raise ConfigError("--parts splits each checkpoint into shards itself; drop --shard")
    load_suite(config.suite)
    # Bad serve flags; and a server not installed, unless it runs on other machines.
    plan_endpoint(jobs[0].config, check_installed=args.executor == "local")


def merge_parts(jobs: list[Any], results: list[Any], folders: dict[str, Path]) -> list[str]:
    """Merge each checkpoint's parts into its run folder; returns what failed."""
    from harness.run.merge import merge_runs

    failed = []
    for checkpoint, folder in folders.items():
        mine = [
            (job, result)
            for job, result in zip(jobs, results, strict=True)
            if job.checkpoint == checkpoint
        ]
        # Exit code 1: the part ran but some samples failed (kept, retried on a rerun);
        # with an error, it did not run to its end (its Ray worker was lost too often).
        if all(result.error is None and result.exit_code in (0, 1) for _, result in mine):
            merge_runs([job.run_dir for job, _ in mine], folder)
        else:
            failed.append(folder.name)
    return failed


def report(sweep_dir: Path, run_dirs: list[Path], quiet: bool) -> None:
    """The leaderboard over the checkpoints and the score-against-step plot."""
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
    from dataclasses import replace

    from harness.commands.run import run_config
    from harness.config.validate import writable_folder
    from harness.errors import ConfigError
    from harness.executors.choice import make_executor, run_reporting_failures

    config = run_config(args)
    config = replace(config, serve=replace(config.serve, serve=config.serve.serve or "vllm"))
    checkpoints = find_checkpoints(args.checkpoints)
    sweep_dir = args.out or default_sweep_dir(args, checkpoints)
    writable_folder(sweep_dir, "--out")
    folders = checkpoint_folders(checkpoints, sweep_dir)
    jobs = plan_jobs(args, config, folders)
    check_command(args, config, jobs)
    executor = make_executor(args.executor, args.ray_address)
    print(
        f"sweep: {len(checkpoints)} checkpoint(s), {len(jobs)} job(s) on the {executor.name} "
        f"executor, into {sweep_dir}",
        file=sys.stderr,
    )
    results = run_reporting_failures(executor, jobs, "sweep")
    unmerged = merge_parts(jobs, results, folders) if args.parts > 1 else []
    run_dirs = [
        folder
        for folder in folders.values()
        if folder.name not in unmerged and (folder / "scores.json").is_file()
    ]
    if not run_dirs:
        raise ConfigError("no checkpoint of the sweep could be evaluated (see above)")
    report(sweep_dir, run_dirs, args.quiet)
    return 0 if all(result.ok for result in results) else 1
