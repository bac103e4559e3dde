"""``harness run --parts K [--executor ray]``: one run as K jobs, merged into its run folder.

The run's (sample, trial) pairs are split as ``--shard 1/K`` ... ``K/K`` split
them. Each part is an ordinary run in a folder of its own,
``<parent>/.parts/<run folder>/I-of-K`` (``part_folder``), run by the executor
(here at once, a process each, or at once as Ray tasks with ``--executor ray``), and
the parts are then merged into the run folder as ``harness merge`` merges
shards. A rerun of the same command resumes every part where it stopped (a
finished part has nothing left to do) and merges again.

The parts share the run's model endpoint: an API model, an ``--api-base``
server or the replicas of ``--model-config``, which every worker must reach.
``--serve`` is refused: it starts a server inside the run, which parts running
elsewhere could not share (``harness sweep --parts`` starts one per part).
``--concurrency`` applies to each part, and so does ``--workers`` (default one
process a part: the parts themselves fill the cores).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from harness.config.run_config import RunConfig
from harness.errors import ConfigError
from harness.executors.base import Job, JobResult, part_folder, portable
from harness.executors.choice import make_executor, run_reporting_failures

RERUN = "rerun the same command to retry them (each part resumes, then they are merged again)"


@dataclass(frozen=True)
class PartsOutcome:
    run_dir: Path  # the merged run folder (the run's own folder with one part)
    exit_code: int


def check_parts(config: RunConfig, parts: int) -> None:
    """ConfigError, one line, for a run that cannot be split into ``parts`` jobs."""
    if parts < 1:
        raise ConfigError("--parts must be positive")
    if parts > 1 and config.shard:
        raise ConfigError("--parts splits the run into shards itself; drop --shard")
    if config.serve.serve:
        raise ConfigError(
            "--serve starts a server inside the run, which its parts (--parts, --executor ray) "
            "cannot share; serve the model yourself and pass --api-base, or use "
            "harness sweep --parts (a server per part)"
        )


def plan_parts(config: RunConfig, parts: int) -> tuple[Path, list[Job]]:
    """The run folder and one job per part (with one part: the run itself)."""
    from harness.serving.plan import plan_endpoint

    model = plan_endpoint(config).model  # the name the run folder is named after
    assert model is not None  # plan_endpoint names the model or raises
    run_dir = config.run_dir(model).resolve()
    base = portable(config)
    if parts == 1:
        return run_dir, [Job(run_dir.name, "", run_dir, replace(base, out=run_dir, progress=False))]
    jobs = []
    for index in range(1, parts + 1):
        label = f"{index}/{parts}"
        folder = part_folder(run_dir, index, parts)
        workers = 1 if config.workers is None else config.workers
        job = replace(base, out=folder, shard=label, progress=False, workers=workers)
        jobs.append(Job(f"part {label}", "", folder, job))
    return run_dir, jobs


def _completed(result: JobResult) -> bool:
    """The part ran to its end (exit code 1: some samples failed, kept and
    retried on a rerun); its records can be merged."""
    return result.error is None and result.exit_code in (0, 1)


def run_in_parts(
    config: RunConfig, executor_name: str, parts: int, ray_address: str | None = None
) -> PartsOutcome:
    """Run ``config`` as ``parts`` jobs on the executor, then merge them."""
    from harness.config.suites import load_suite
    from harness.config.validate import writable_folder
    from harness.run.merge import check_merge_target, merge_runs, merged_lines

    check_parts(config, parts)
    flag = "--out" if config.out else "the run folder (in results/)"
    run_dir, jobs = plan_parts(config, parts)
    writable_folder(run_dir, flag)
    if parts > 1:
        check_merge_target(run_dir, flag)  # before any work, not after every part
    load_suite(config.suite)  # a bad suite is one line here, not one per part
    executor = make_executor(executor_name, ray_address, at_once=True)
    print(
        f"run: {len(jobs)} part(s) on the {executor.name} executor, into {run_dir}",
        file=sys.stderr,
    )
    results = run_reporting_failures(executor, jobs, "run")
    code = 0 if all(result.ok for result in results) else 1
    if parts == 1:
        return PartsOutcome(run_dir, code)
    if not all(_completed(result) for result in results):
        print(f"run: the parts are not merged; {RERUN}", file=sys.stderr)
        return PartsOutcome(run_dir, 1)
    gaps = merge_runs([job.run_dir for job in jobs], run_dir)
    for line in merged_lines(run_dir, parts, gaps, rerun=RERUN):
        print(line, file=sys.stderr)
    return PartsOutcome(run_dir, code)
