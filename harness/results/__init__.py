"""Numbers from run folders: records, aggregates and runs as DataFrames (``frames``),
statistics and intervals (``stats``), what each benchmark headlines
(``headlines``), what a number covers and how it is marked (``coverage``,
``nonstandard``, ``unscored``), composite scores, published reference tables
(``reference``) and prices (``pricing``).

``from harness import results`` gives the tables of ``frames`` (``results.records(...)``,
``results.aggregates(...)``, ...) and the typed results of a run's scores.json
(``results.read_scores(run_dir)``, from ``scores``; a benchmark's ``BenchmarkEntry``
is in ``entries``), imported on first use: the modules here that need no pandas
(coverage, marks, statistics) stay light to import.
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
# The typed results, and the modules they live in.
TYPED = {
    "BenchmarkCounts": "entries",
    "BenchmarkEntry": "entries",
    "RunScores": "scores",
    "read_scores": "scores",
}
__all__ = [*FRAMES, *TYPED]


def __getattr__(name: str) -> Any:
    # Only the listed names: any other (a submodule being imported) must not pull
    # in pandas by asking frames first.
    import importlib

    if name in TYPED:
        return getattr(importlib.import_module(f"harness.results.{TYPED[name]}"), name)
    if name not in FRAMES:
        raise AttributeError(f"module 'harness.results' has no attribute {name!r}")
    from harness.results import frames

    return getattr(frames, name)
