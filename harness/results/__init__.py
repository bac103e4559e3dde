"""Numbers from run folders: records, aggregates and runs as DataFrames (``frames``),
statistics and intervals (``stats``), what each benchmark headlines
(``headlines``), what a number covers and how it is marked (``coverage``,
``nonstandard``, ``unscored``), composite scores, published reference tables
(``reference``) and prices (``pricing``).

``from harness import results`` gives the tables of ``frames`` (``results.records(...)``,
``results.aggregates(...)``, ...), imported on first use: the modules here that need
no pandas (coverage, marks, statistics) stay light to import.
"""

from __future__ import annotations

from typing import Any

# The names of ``frames`` this package hands on.
FRAMES = (
    "LoadedRun",
    "aggregates",
    "load",
    "records",
    "records_of",
    "run_folders",
    "runs",
    "task_outcomes",
)
__all__ = list(FRAMES)


def __getattr__(name: str) -> Any:
    # Only the listed names: any other (a submodule being imported) must not pull
    # in pandas by asking frames first.
    if name not in FRAMES:
        raise AttributeError(f"module 'harness.results' has no attribute {name!r}")
    from harness.results import frames

    return getattr(frames, name)
