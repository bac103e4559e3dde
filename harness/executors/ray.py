"""Sweep jobs on a Ray cluster: ``harness sweep ... --executor ray``.

Each job becomes one Ray task that reserves the GPUs its server needs
(``num_gpus``: tensor x data parallel size for vLLM and SGLang, 0 for
llama.cpp and custom servers), so Ray runs as many checkpoints at once as the
cluster has GPUs and sets ``CUDA_VISIBLE_DEVICES`` for each. A task runs the
same ``run_job`` as the local executor; its server listens on 127.0.0.1 of the
node it runs on. The run folders must be on a filesystem that every node sees.

Ray is optional (``pip install 'harness[ray]'``) and imported only here.
"""

from __future__ import annotations

import os
from typing import Any

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


def _ray() -> Any:
    # Ray reads the switch when it is first imported.
    os.environ.setdefault(UV_RUN_SWITCH, "0")
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor ray needs Ray: pip install 'harness[ray]' (or pip install ray)"
        ) from None
    return ray


class RayExecutor:
    """Runs the jobs as Ray tasks and waits for all of them."""

    name = "ray"

    def __init__(self, address: str | None = None, cpus_per_job: float = 1.0):
        _ray()  # ConfigError now, before the sweep says what it will do, if Ray is missing
        self.address = address
        self.cpus_per_job = cpus_per_job

    def _connect(self, ray: Any) -> bool:
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
        try:
            task = ray.remote(run_job)
            futures = [
                task.options(num_gpus=job.gpus, num_cpus=self.cpus_per_job, name=job.name).remote(
                    job
                )
                for job in jobs
            ]
            try:
                return list(ray.get(futures))
            except KeyboardInterrupt:
                # Killing a task's worker process also stops its server (the
                # server receives SIGTERM when its parent dies).
                for future in futures:
                    ray.cancel(future, force=True)
                raise
        finally:
            if connected:
                ray.shutdown()
