"""The executor ``--executor NAME`` names (its own module: the Ray executor
imports base.py, so base.py cannot import it)."""

from __future__ import annotations

import sys

from harness.executors.base import Executor, Job, JobResult, LocalExecutor


def make_executor(name: str, ray_address: str | None = None, at_once: bool = False) -> Executor:
    """``local`` or ``ray`` (ConfigError, one line, for ray without Ray installed);
    ``at_once``: the local executor runs the jobs in processes at once."""
    if name == "ray":
        from harness.executors.ray import RayExecutor

        return RayExecutor(address=ray_address)
    return LocalExecutor(at_once=at_once)


def run_reporting_failures(executor: Executor, jobs: list[Job], command: str) -> list[JobResult]:
    """Run the jobs and write one line on stderr for each that failed, prefixed
    with the command's name (``run``, ``sweep``)."""
    results = executor.run(jobs)
    for result in results:
        if not result.ok:
            print(
                f"{command}: {result.name}: {result.error or f'exit code {result.exit_code}'}",
                file=sys.stderr,
            )
    return results
