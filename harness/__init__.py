"""harness: one evaluation harness for tool-using LLM agents.

The Python entry point (see harness/evaluate/)::

    from harness import RunConfig, run_suite

    summary = run_suite(RunConfig(suite="smoke", model="oracle"))

and every checkpoint of a training run with ``run_sweep(SweepConfig(...))``
(harness/executors/sweep.py).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "RunConfig",
    "RunSummary",
    "ServeConfig",
    "SweepConfig",
    "SweepSummary",
    "run_suite",
    "run_suite_async",
    "run_sweep",
]

# Where each public name lives; imported on first use, so that `import harness`
# (and `harness --help`) stays cheap.
_PUBLIC = {
    "RunConfig": "harness.config.run_config",
    "ServeConfig": "harness.config.run_config",
    "RunSummary": "harness.evaluate",
    "run_suite": "harness.evaluate",
    "run_suite_async": "harness.evaluate",
    "SweepConfig": "harness.executors.sweep",
    "SweepSummary": "harness.executors.sweep",
    "run_sweep": "harness.executors.sweep",
}


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_PUBLIC[name]), name)
