"""Jobs and the local executor.

A job is one ``harness run``: a sweep's checkpoint, or one part (``--shard I/N``)
of a checkpoint or of a run split with ``harness run --parts K``, evaluated into
its own run folder (with the server it needs, in a sweep). An executor takes a
list of jobs and returns one result per job, in the same order. The local
executor runs them one after another in this process (a sweep), or each in a
process of its own at once (the parts of one run); ``harness.executors.ray``
spreads them over a Ray cluster. Both call ``run_job``, so a job gives the same
records wherever it runs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harness.config.run_config import RunConfig

# Where the parts of a run folder are kept until they are merged into it:
# <parent>/.parts/<run folder name>/<I>-of-<K>, beside the run folder rather than
# in it (a merge writes into a folder that holds nothing but an earlier merge).
PARTS_DIR = ".parts"


def part_folder(run_dir: Path, index: int, count: int) -> Path:
    """The folder of part ``index`` (1-based) of ``count`` of ``run_dir``."""
    return run_dir.parent / PARTS_DIR / run_dir.name / f"{index}-of-{count}"


def portable(config: RunConfig) -> RunConfig:
    """The config with every path it names made absolute, so that a job gives the
    same run wherever (and from whichever folder) it runs."""
    from dataclasses import replace

    suite = config.suite
    if Path(suite).suffix in (".yaml", ".yml") and Path(suite).is_file():
        suite = str(Path(suite).resolve())

    def absolute(path: Path | None) -> Path | None:
        return Path(path).expanduser().resolve() if path is not None else None

    return replace(
        config,
        suite=suite,
        out=absolute(config.out),
        cache_dir=absolute(config.cache_dir),
        model_config=absolute(config.model_config),
        data_dirs=config.data_dirs.absolute(),
    )


@dataclass(frozen=True)
class Job:
    """One ``harness run`` of a sweep or of a run's parts, as its complete RunConfig."""

    name: str
    checkpoint: str  # the sweep's checkpoint ("" for the parts of one run)
    run_dir: Path
    config: RunConfig
    gpus: float = 0  # what a scheduler reserves for the job's server (Ray takes fractions)


@dataclass(frozen=True)
class JobResult:
    name: str
    run_dir: Path
    exit_code: int
    error: str | None = None  # a server that failed to start or died

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def run_job(job: Job) -> JobResult:
    """Run one job in this process. A server failure is this job's result (the
    sweep goes on with the next checkpoint); any other ConfigError means the
    command itself is wrong and stops the sweep."""
    from harness.evaluate import run_suite
    from harness.serving.process import ServerError

    try:
        summary = run_suite(job.config)
    except ServerError as exc:
        return JobResult(job.name, job.run_dir, 2, str(exc))
    for line in summary.report_lines():
        print(line, file=sys.stderr)
    return JobResult(job.name, job.run_dir, summary.exit_code)


class Executor(Protocol):
    name: str

    def run(self, jobs: list[Job]) -> list[JobResult]: ...


class LocalExecutor:
    """Runs the jobs on this machine: one after another in this process, or
    (``at_once``, the parts of one run) each in a process of its own, all at once,
    so that K parts use K cores. A sweep's jobs go one after another: each starts
    a server that may take the machine's GPUs."""

    name = "local"

    def __init__(self, at_once: bool = False):
        self.at_once = at_once

    def run(self, jobs: list[Job]) -> list[JobResult]:
        if not self.at_once or len(jobs) < 2:
            return [run_job(job) for job in jobs]
        return run_at_once(jobs)


def run_at_once(jobs: list[Job]) -> list[JobResult]:
    """Each job in a process of its own, all at once; a job whose process died
    is its result (the others go on), a ConfigError stops the command."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from harness.errors import ConfigError

    context = multiprocessing.get_context("spawn")
    results = []
    with ProcessPoolExecutor(max_workers=len(jobs), mp_context=context) as pool:
        futures = [pool.submit(run_job, job) for job in jobs]
        for job, future in zip(jobs, futures, strict=True):
            try:
                results.append(future.result())
            except ConfigError:
                raise
            except BrokenProcessPool:
                results.append(JobResult(job.name, job.run_dir, 1, "its process died"))
    return results
