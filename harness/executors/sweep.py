"""``run_sweep(SweepConfig) -> SweepSummary``: every checkpoint of a training run.

What ``harness sweep`` does once its flags are a ``SweepConfig``, for a Python
caller too::

    from harness import RunConfig, ServeConfig, SweepConfig, run_sweep

    base = RunConfig(suite="smoke", serve=ServeConfig(serve="vllm"))
    summary = run_sweep(SweepConfig(run=base, checkpoints=("ckpts/step_*",)))
    print(summary.run_dirs, summary.ok)

Each checkpoint is served in turn (vLLM unless ``run.serve`` names another
server) and evaluated by an ordinary run into its own run folder under the sweep
folder, whose manifest records the checkpoint and its training step
(``step_200`` -> 200). A rerun resumes: finished checkpoints are skipped without
starting their server. ``parts`` K splits each checkpoint into K jobs (``--shard
1/K`` ... ``K/K``, each with its own server), merged into the checkpoint's run
folder afterwards; with the ``ray`` executor the jobs run at once on a Ray
cluster, each reserving the GPUs its server needs. ``harness sweep`` then prints
the leaderboard and writes the score-against-step plot (harness.report).
"""

from __future__ import annotations

import glob
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.config.run_config import RESULTS_DIR, RunConfig
from harness.errors import ConfigError
from harness.executors.base import Job, JobResult, part_folder, portable
from harness.executors.choice import make_executor, run_reporting_failures
from harness.serving.checkpoints import checkpoint_name, checkpoint_step

_GLOB_CHARS = re.compile(r"[*?\[]")
DEFAULT_SERVER = "vllm"


@dataclass(frozen=True)
class SweepConfig:
    """One sweep: the run every checkpoint gets, and where its jobs go."""

    run: RunConfig  # each checkpoint's run (no model or checkpoint of its own)
    checkpoints: tuple[str, ...]  # folders or files, globs ('ckpts/step_*') or hub ids
    out: Path | None = None  # the sweep folder; None: results/sweep__<suite>__<training run>
    parts: int = 1  # jobs (shards) per checkpoint, each with its own server
    executor: str = "local"  # local (one after another) or ray (at once)
    ray_address: str | None = None
    gpus_per_job: float | None = None  # None: tensor x data parallel size (vllm, sglang)


@dataclass
class SweepPlan:
    """The checkpoints found, their run folders and the jobs that evaluate them."""

    config: SweepConfig
    run: RunConfig  # the run with its server's kind filled in
    checkpoints: list[str]
    sweep_dir: Path
    folders: dict[str, Path]  # checkpoint -> its run folder
    jobs: list[Job]


@dataclass
class SweepSummary:
    """What a sweep did: its folder, the checkpoints' scored run folders (in step
    order), every job's result, and the checkpoints whose parts could not be merged."""

    sweep_dir: Path
    run_dirs: list[Path]
    results: list[JobResult]
    unmerged: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every job ran to its end with every sample scored."""
        return all(result.ok for result in self.results)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "checkpoint"


def find_checkpoints(patterns: list[str] | tuple[str, ...]) -> list[str]:
    """The checkpoints the patterns name, ordered by training step then name."""
    found: list[str] = []
    for pattern in patterns:
        if _GLOB_CHARS.search(pattern):
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


def job_config(config: RunConfig, checkpoint: str, run_dir: Path, shard: str | None) -> RunConfig:
    """The RunConfig of one job, its paths absolute (``portable``)."""
    return replace(
        portable(config),
        model=None,  # each checkpoint is served under its own name
        serve=replace(config.serve, checkpoint=checkpoint),
        out=run_dir.resolve(),
        shard=shard,
        progress=False,
    )


def default_sweep_dir(suite: str, checkpoints: list[str]) -> Path:
    """results/sweep__<suite>__<the folder holding the first checkpoint>."""
    first = Path(checkpoints[0]).expanduser()
    training_run = first.resolve().parent.name if first.exists() else first.parent.name
    return RESULTS_DIR / f"sweep__{_slug(Path(suite).stem)}__{_slug(training_run or 'hub')}"


def _job_gpus(config: SweepConfig, run: RunConfig) -> float:
    from harness.serving.specs import SPECS

    if config.gpus_per_job is not None:
        return config.gpus_per_job
    if run.serve.serve is None or not SPECS[run.serve.serve].uses_gpus:
        return 0
    return run.serve.tensor_parallel_size * run.serve.data_parallel_size


def checkpoint_folders(checkpoints: list[str], sweep_dir: Path) -> dict[str, Path]:
    """Each checkpoint's run folder in the sweep folder, named after the checkpoint."""
    names = [_slug(checkpoint_name(c)) for c in checkpoints]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"several checkpoints are named {', '.join(twice)}; sweep them apart")
    return {c: sweep_dir / name for c, name in zip(checkpoints, names, strict=True)}


def plan_jobs(config: SweepConfig, run: RunConfig, folders: dict[str, Path]) -> list[Job]:
    """One job per checkpoint, or ``parts`` jobs (shards) per checkpoint."""
    gpus = _job_gpus(config, run)
    jobs = []
    for checkpoint, folder in folders.items():
        if config.parts == 1:
            job = job_config(run, checkpoint, folder, run.shard)
            jobs.append(Job(folder.name, checkpoint, folder, job, gpus))
            continue
        for index in range(1, config.parts + 1):
            label = f"{index}/{config.parts}"
            part_dir = part_folder(folder, index, config.parts)
            job = job_config(run, checkpoint, part_dir, label)
            jobs.append(Job(f"{folder.name} part {label}", checkpoint, part_dir, job, gpus))
    return jobs


def _check(config: SweepConfig, run: RunConfig, jobs: list[Job]) -> None:
    """Fail once, before any job, on what would fail for every checkpoint."""
    from harness.config.suites import load_suite
    from harness.serving.plan import plan_endpoint

    if run.serve.checkpoint or run.model:
        raise ConfigError(
            "sweep serves each of --checkpoints under its own name; drop --checkpoint/--model"
        )
    if config.parts < 1:
        raise ConfigError("--parts must be positive")
    if config.parts > 1 and run.shard:
        raise ConfigError("--parts splits each checkpoint into shards itself; drop --shard")
    load_suite(run.suite)
    # Bad serve flags; and a server not installed, unless it runs on other machines.
    plan_endpoint(jobs[0].config, check_installed=config.executor == "local")


def plan_sweep(config: SweepConfig) -> SweepPlan:
    """The sweep's checkpoints, folders and jobs, checked (ConfigError, one line)."""
    from harness.config.validate import writable_folder

    run = replace(
        config.run, serve=replace(config.run.serve, serve=config.run.serve.serve or DEFAULT_SERVER)
    )
    if not config.checkpoints:
        raise ConfigError("--checkpoints names no checkpoint")
    checkpoints = find_checkpoints(config.checkpoints)
    sweep_dir = config.out or default_sweep_dir(run.suite, checkpoints)
    writable_folder(sweep_dir, "--out")
    folders = checkpoint_folders(checkpoints, sweep_dir)
    jobs = plan_jobs(config, run, folders)
    _check(config, run, jobs)
    return SweepPlan(config, run, checkpoints, sweep_dir, folders, jobs)


def merge_parts(jobs: list[Job], results: list[JobResult], folders: dict[str, Path]) -> list[str]:
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


def run_sweep(config: SweepConfig) -> SweepSummary:
    """Plan, run every job and merge parts. A checkpoint that could not be
    evaluated is said in one line and left out; ConfigError when none could be."""
    plan = plan_sweep(config)
    executor = make_executor(config.executor, config.ray_address)
    print(
        f"sweep: {len(plan.checkpoints)} checkpoint(s), {len(plan.jobs)} job(s) on the "
        f"{executor.name} executor, into {plan.sweep_dir}",
        file=sys.stderr,
    )
    results = run_reporting_failures(executor, plan.jobs, "sweep")
    unmerged = merge_parts(plan.jobs, results, plan.folders) if config.parts > 1 else []
    run_dirs = [
        folder
        for folder in plan.folders.values()
        if folder.name not in unmerged and (folder / "scores.json").is_file()
    ]
    if not run_dirs:
        raise ConfigError("no checkpoint of the sweep could be evaluated (see above)")
    return SweepSummary(plan.sweep_dir, run_dirs, results, unmerged)
