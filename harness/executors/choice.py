"""The executor ``--executor NAME`` names (its own module: the Ray executor
imports base.py, so base.py cannot import it)."""

from __future__ import annotations

from harness.executors.base import Executor, LocalExecutor


def make_executor(name: str, ray_address: str | None = None) -> Executor:
    """``local`` or ``ray`` (ConfigError, one line, for ray without Ray installed)."""
    if name == "ray":
        from harness.executors.ray import RayExecutor

        return RayExecutor(address=ray_address)
    return LocalExecutor()
