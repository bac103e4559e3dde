"""Jobs on a Ray cluster: ``harness sweep ... --executor ray`` and ``harness run
... --executor ray --parts K``.

Each job becomes one Ray task that reserves the GPUs its server needs
(``num_gpus``: tensor x data parallel size for vLLM and SGLang in a sweep, 0
for llama.cpp, custom servers and the parts of a run, which call a server the
user runs), so Ray runs as many jobs at once as the cluster has room for and
sets ``CUDA_VISIBLE_DEVICES`` for each. A task runs the same ``run_job`` as the
local executor; a sweep's server listens on 127.0.0.1 of the node it runs on.
The run folders must be on a filesystem that every node sees.

A task whose worker dies (the process killed, its node lost) is run again by
Ray, up to ``MAX_RETRIES`` times. The new attempt resumes the job's run folder
as a rerun of the command would: the records the lost attempt appended are
kept and skipped, so a pair is never run (or written) twice by a retry. Before
it starts, an attempt waits until the lost one's process has let go of the run
folder's lock. Each attempt appends one line to ``ray-attempts.jsonl`` in the
job's run folder, which is how the driver knows, and says in one line, what
was retried.

Ray is optional (``pip install 'harness[ray]'``) and imported only here.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from harness.errors import ConfigError
from harness.executors.base import Job, JobResult, run_job

# Settings a task needs that a remote node's environment would not have.
# Credentials are never passed: Ray records a task's environment.
FORWARDED_ENV = ("HARNESS_ADAPTERS", "PYTHONPATH", "LITELLM_LOCAL_MODEL_COST_MAP")


# Run under `uv run`, Ray by default starts each worker with `uv run` in an
# unpacked copy of the working directory, which builds a second environment
# there (slow, and without network it never starts). The harness's tasks need
# the environment the harness runs in, so that is off unless the user turns it on.
UV_RUN_SWITCH = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"

# How often Ray runs a task again after its worker died (not after an error the
# task raised: that would only repeat).
MAX_RETRIES = 3
# One line per attempt of a task on a run folder (in that folder).
ATTEMPTS_FILE = "ray-attempts.jsonl"
# How long an attempt waits for a lost attempt's process to release the run
# folder; a process that is still writing after this is not lost, and the
# attempt stops with the store's one-line "in use" error.
LOCK_WAIT_S = 300.0


def _whole(value: object) -> int:
    """A whole number of an attempts file line (``int()`` of it)."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"not a whole number: {value!r}")


def _ray() -> ModuleType:
    # Ray reads the switch when it is first imported.
    os.environ.setdefault(UV_RUN_SWITCH, "0")
    # The workers' lines Ray prints on the driver: without colour codes, which the
    # harness's output would show as escapes (harness/boundary/terminal.py).
    os.environ.setdefault("RAY_COLOR_PREFIX", "0")
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor ray needs Ray: pip install 'harness[ray]' (or pip install ray)"
        ) from None
    return ray


@dataclass(frozen=True)
class Attempt:
    """One attempt of a job's task, as ``ray-attempts.jsonl`` records it."""

    run: str  # the invocation of the command that submitted it
    job: str
    node: str  # the Ray node it ran on
    pid: int
    records: int  # (sample, trial) pairs the run folder already held when it started
    started_at: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Attempt:
        return cls(
            str(data["run"]),
            str(data["job"]),
            str(data["node"]),
            _whole(data["pid"]),
            _whole(data["records"]),
            str(data.get("started_at", "")),
        )


def wait_for_run_folder(run_dir: Path, wait_s: float = LOCK_WAIT_S) -> None:
    """Return once no process holds ``run_dir``'s lock (or after ``wait_s``).

    A lost attempt's process can outlive its node's raylet for a moment; the OS
    releases its lock when it exits. The run takes the lock itself afterwards,
    so this only peeks.
    """
    from harness.store.run_store import LOCK

    lock = run_dir / LOCK
    deadline = time.monotonic() + wait_s
    while lock.is_file():
        with lock.open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                fcntl.flock(handle, fcntl.LOCK_UN)
                return
        if time.monotonic() > deadline:
            return
        time.sleep(0.2)


def _note_attempt(job: Job, run: str) -> None:
    """Append this attempt's line to the job's ``ray-attempts.jsonl``."""
    from harness.store.records import now_iso
    from harness.store.run_store import SAMPLES, read_records

    ray = _ray()
    job.run_dir.mkdir(parents=True, exist_ok=True)
    attempt = {
        "run": run,
        "job": job.name,
        "node": ray.get_runtime_context().get_node_id(),
        "pid": os.getpid(),
        "records": len(read_records(job.run_dir / SAMPLES).latest),
        "started_at": now_iso(),
    }
    # One short line per write, opened for appending: attempts on several nodes
    # never interleave within a line.
    with (job.run_dir / ATTEMPTS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(attempt) + "\n")


def run_attempt(job: Job, run: str) -> JobResult:
    """The Ray task: wait for a lost attempt to let go of the run folder, note
    this attempt, then run (or resume) the job."""
    wait_for_run_folder(job.run_dir)
    _note_attempt(job, run)
    return run_job(job)


def attempts_of(job: Job, run: str) -> list[Attempt]:
    """The attempts of ``job`` that the invocation ``run`` submitted."""
    path = job.run_dir / ATTEMPTS_FILE
    if not path.is_file():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            attempt = Attempt.from_dict(json.loads(line))
        except (ValueError, KeyError, TypeError):
            continue  # a line torn by a kill mid-write
        if attempt.run == run and attempt.job == job.name:
            found.append(attempt)
    return found


def retried_line(jobs: list[Job], run: str) -> str | None:
    """One line naming each job that needed more than one attempt, or None."""
    parts = []
    for job in jobs:
        attempts = attempts_of(job, run)
        if len(attempts) < 2:
            continue
        lost = ", ".join(f"{a.node[:8]} (pid {a.pid})" for a in attempts[:-1])
        last = attempts[-1]
        parts.append(
            f"{job.name}: {len(attempts) - 1} attempt(s) lost with their worker on node "
            f"{lost}; attempt {len(attempts)} on node {last.node[:8]} resumed with "
            f"{last.records} record(s) already written"
        )
    if not parts:
        return None
    return f"ray: retried {len(parts)} job(s) whose worker died: " + "; ".join(parts)


class RayExecutor:
    """Runs the jobs as Ray tasks and waits for all of them."""

    name = "ray"

    def __init__(self, address: str | None = None, cpus_per_job: float = 1.0):
        _ray()  # ConfigError now, before the command says what it will do, if Ray is missing
        self.address = address
        self.cpus_per_job = cpus_per_job

    def _connect(self, ray: ModuleType) -> bool:
        """Connect unless already connected; True when this call connected."""
        if ray.is_initialized():
            return False
        env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
        ray.init(
            address=self.address,
            runtime_env={"env_vars": env} if env else None,
            log_to_driver=True,
            include_dashboard=False,
        )
        return True

    def run(self, jobs: list[Job]) -> list[JobResult]:
        ray = _ray()
        connected = self._connect(ray)
        run = uuid.uuid4().hex  # tells this invocation's attempts from earlier ones
        try:
            task = ray.remote(run_attempt)
            futures = [
                task.options(
                    num_gpus=job.gpus,
                    num_cpus=self.cpus_per_job,
                    name=job.name,
                    max_retries=MAX_RETRIES,
                    retry_exceptions=False,
                ).remote(job, run)
                for job in jobs
            ]
            try:
                results = [
                    self._result(ray, job, future)
                    for job, future in zip(jobs, futures, strict=True)
                ]
            except BaseException:
                # Ctrl-C, or an error that stops the command: killing a task's
                # worker process also stops its server (the server receives
                # SIGTERM when its parent dies).
                for future in futures:
                    ray.cancel(future, force=True)
                raise
            line = retried_line(jobs, run)
            if line is not None:
                print(line, file=sys.stderr)
            return results
        finally:
            if connected:
                ray.shutdown()

    @staticmethod
    def _result(ray: ModuleType, job: Job, future: object) -> JobResult:
        """The job's result; a ConfigError the task raised is raised here (the
        command is wrong, for every job), and a task that lost its worker more
        than MAX_RETRIES times is this job's failure (a rerun resumes it)."""
        try:
            result: JobResult = ray.get(future)
            return result
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, ConfigError):
                raise ConfigError(str(exc.cause)) from None
            raise
        except ray.exceptions.RayError as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return JobResult(
                job.name,
                job.run_dir,
                1,
                f"lost its Ray worker {MAX_RETRIES + 1} times ({reason}); rerun to resume",
            )
